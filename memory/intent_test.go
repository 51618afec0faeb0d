package memory

import (
	"context"
	"slices"
	"testing"

	"mneme/intent"
)

// TestIntentHitsTakeMatchingSharedKnowledge: the shared partition's nearest
// join the user's intent hits where the ask matches them, and all are
// ordered by how closely they match, then by similarity.
func TestIntentHitsTakeMatchingSharedKnowledge(t *testing.T) {
	ask := intent.Ask{Keys: []string{"approval_threshold"}, Types: []string{"semantic", "procedural"}}
	hit := func(id, user, typ, key string, score float64) Hit {
		return Hit{Memory: Memory{ID: id, UserID: user, Type: typ, Key: key}, Score: score}
	}
	own := []Hit{hit("own-rule", "alice", "semantic", "", 0.2), hit("own-threshold", "alice", "semantic", "approval_threshold", 0.05)}
	shared := []Hit{
		hit("rule", "", "semantic", "", 0.5),                        // matches by type
		hit("threshold", "", "semantic", "approval_threshold", 0.1), // matches by key
		hit("episode", "", "episodic", "", 0.8),                     // no match
	}
	var got []string
	for _, h := range intentHits(ask, own, shared) {
		got = append(got, h.Memory.ID)
	}
	// The key matches first; then type matches by similarity.
	if want := []string{"threshold", "own-threshold", "rule", "own-rule"}; !slices.Equal(got, want) {
		t.Errorf("intent hits %v, want %v", got, want)
	}
	if got := intentHits(intent.Ask{}, nil, shared); len(got) != 0 {
		t.Errorf("with no ask, intent hits %v, want none", got)
	}
}

// "照旧" from the user is their own usual way: their preferences, where an
// agent saying it of nobody asks for the tenant's rules.
func TestRecallTheUsualAskedByTheUser(t *testing.T) {
	window := stored("mem_window", "deliveries on weekday mornings only")
	window.Type, window.Kind, window.Key = TypeProfile, "preference", "delivery_window"
	rule := stored("mem_rule", "free shipping above 5k")
	rule.UserID, rule.Type, rule.Kind = "", TypeProcedural, "rule"
	vector := []Hit{{Memory: window, Score: 0.05}, {Memory: rule, Score: 0.04}}
	for _, tt := range []struct {
		who  Principal
		want string
	}{{userAlice, "mem_window"}, {agentSupport, "mem_rule"}} {
		t.Run(tt.who.ID, func(t *testing.T) {
			f := vectorFixture(t, recallConfig, vector)
			got, err := f.svc.Recall(context.Background(), tt.who, RecallRequest{UserID: "alice", Query: "跟上次一样，照旧办", K: 10})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got.Memories {
				ids = append(ids, r.Memory.ID)
			}
			if !slices.Contains(ids, tt.want) {
				t.Errorf("%s asking: recalled %v, want %s among them", tt.who.ID, ids, tt.want)
			}
		})
	}
}
