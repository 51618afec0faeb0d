package handlers_test

import (
	"context"
	"strings"
	"testing"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/seed"
)

// TestDemoDataset loads the demo tenant the way `make run` does and checks
// the stories it exists to tell, through the real API with the demo keys.
func TestDemoDataset(t *testing.T) {
	f := apptest.Start(t)
	ds, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	key := ds.KeyOf()
	ctx := context.Background()
	if _, err := f.App.LoadDemo(ctx); err != nil {
		t.Fatalf("load demo: %v", err)
	}
	count := func() int { return len(list(t, f, key["admin"], "limit=500")) }
	first := count()
	if _, err := f.App.LoadDemo(ctx); err != nil {
		t.Fatalf("load demo again: %v", err)
	}
	if again := count(); again != first || first < seed.MinMemories-1 {
		t.Fatalf("demo memories: %d after one load, %d after two; want the same and about %d", first, again, seed.MinMemories)
	}

	contents := func(r client.RecallResult) string {
		var b strings.Builder
		for _, m := range r.Memories {
			b.WriteString(m.Memory.Content + "\n")
		}
		return b.String()
	}
	t.Run("budget is the newest version", func(t *testing.T) {
		got := recall(t, f, key["order-bot"], client.RecallRequest{UserID: "alice", Query: "What is Alice's procurement budget?"})
		if len(got.Memories) == 0 || !strings.Contains(got.Memories[0].Memory.Content, "150k") {
			t.Fatalf("recall = %q, want the 150k budget first", contents(got))
		}
		if strings.Contains(contents(got), "100k") {
			t.Errorf("the superseded 100k budget was recalled")
		}
		// Seeded memories carry embeddings: the vector side found it too.
		if e := got.Memories[0].Explain; !has(e.Sources, "vector") || !has(e.Sources, "fulltext") || e.VectorSimilarity < 0.25 {
			t.Errorf("explain = %+v, want both vector and full-text sources", e)
		}
	})
	t.Run("preference recalled", func(t *testing.T) {
		got := recall(t, f, key["support-bot"], client.RecallRequest{UserID: "alice", Query: "Does Alice prefer short answers?"})
		if len(got.Memories) == 0 || got.Memories[0].Memory.Key != "answer_style" {
			t.Fatalf("recall = %q, want the answer_style preference first", contents(got))
		}
	})
	t.Run("support reads order facts, never internal cost", func(t *testing.T) {
		orders := list(t, f, key["support-bot"], "user_id=alice&kind=order_status")
		if len(orders) == 0 {
			t.Errorf("support-bot cannot read order-bot's order facts through the demo grant")
		}
		if got := list(t, f, key["support-bot"], "kind=internal_cost"); len(got) != 0 {
			t.Errorf("support-bot lists %d internal cost memories", len(got))
		}
		if got := list(t, f, key["admin"], "kind=internal_cost"); len(got) == 0 {
			t.Errorf("admin sees no internal cost memory: the check above proves nothing")
		}
		got := recall(t, f, key["support-bot"], client.RecallRequest{UserID: "alice", Query: "internal cost margin landed cost", K: 20})
		for _, m := range got.Memories {
			if m.Memory.Kind == "internal_cost" {
				t.Errorf("support-bot recalled internal cost %s", m.Memory.ID)
			}
		}
	})
	t.Run("unrelated question", func(t *testing.T) {
		for _, who := range []string{"support-bot", "order-bot", "admin"} {
			if got := recall(t, f, key[who], client.RecallRequest{UserID: "alice", Query: "what's the weather today"}); len(got.Memories) != 0 {
				t.Errorf("%s recalled %q for the weather", who, contents(got))
			}
		}
	})
	t.Run("users see only themselves", func(t *testing.T) {
		for _, m := range list(t, f, key["bob"], "limit=500") {
			if m.UserID != "bob" {
				t.Errorf("bob lists %s about %s", m.ID, m.UserID)
			}
		}
		if got := list(t, f, key["bob"], "user_id=alice"); len(got) != 0 {
			t.Errorf("bob naming alice lists %v", ids(got))
		}
	})
}
