package memory

import (
	"slices"
	"testing"

	"mneme/intent"
)

// TestSharedIntentTakesMatchingSharedVectorHits: shared knowledge joins the
// intent hits only from the vector hits, and only where the ask matches it;
// the user's own vector hits never do (they come from the user's scan).
func TestSharedIntentTakesMatchingSharedVectorHits(t *testing.T) {
	ask := intent.Ask{Keys: []string{"approval_threshold"}, Types: []string{"semantic", "procedural"}}
	hit := func(id, user, typ, key string, score float64) Hit {
		return Hit{Memory: Memory{ID: id, UserID: user, Type: typ, Key: key}, Score: score}
	}
	own := []Hit{hit("own-rule", "alice", "semantic", "", 0.2)}
	vector := []Hit{
		hit("alice-fact", "alice", "semantic", "", 0.9),             // the user's: from her own scan only
		hit("rule", "", "semantic", "", 0.5),                        // shared, matches by type
		hit("threshold", "", "semantic", "approval_threshold", 0.1), // shared, matches by key
		hit("episode", "", "episodic", "", 0.8),                     // shared, no match
	}
	var got []string
	for _, h := range sharedIntent(ask, own, vector) {
		got = append(got, h.Memory.ID)
	}
	// The key match first; then type matches by similarity.
	if want := []string{"threshold", "rule", "own-rule"}; !slices.Equal(got, want) {
		t.Errorf("intent hits %v, want %v", got, want)
	}
}
