package memory

import (
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
