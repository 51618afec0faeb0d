package eval

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/internal/apptest"
	"mneme/seed"
)

func TestQuestionsAreWellFormed(t *testing.T) {
	qs, err := Questions()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, q := range qs {
		count[q.Dataset]++
		count[q.Lang]++
		count[q.Split]++
		count[q.Split+"/"+q.Category]++
		if q.Unrelated {
			count["unrelated"]++
		}
	}
	if len(qs) < 300 || count[DatasetDemo] < 30 || count[DatasetGenerated] < 30 || count["zh"] < 60 || count["en"] < 60 || count["unrelated"] < 50 {
		t.Errorf("question set is too thin: %d questions, %v", len(qs), count)
	}
	if 3*count[SplitHeldOut] < len(qs) {
		t.Errorf("held-out part is %d of %d questions, want at least a third", count[SplitHeldOut], len(qs))
	}
	for _, c := range []string{"paraphrase", "cross-language", "about-user", "old-vs-current", "chit-chat"} {
		if count[SplitHeldOut+"/"+c] < 10 {
			t.Errorf("held-out part has %d %s questions, want at least 10", count[SplitHeldOut+"/"+c], c)
		}
	}
}

func TestCheckFindsBadQuestions(t *testing.T) {
	demo, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]*seed.Dataset{DatasetDemo: demo}
	good := Question{ID: "q", Dataset: DatasetDemo, Lang: "en", As: "support-bot", User: "alice", Query: "style?", Expect: []string{"alice-answer-style"}, Split: SplitTune, Category: "seed"}
	tests := []struct {
		name string
		edit func(*Question)
	}{
		{"unknown ref", func(q *Question) { q.Expect = []string{"nope"} }},
		{"another user's memory", func(q *Question) { q.Expect = []string{"bob-answer-style"} }},
		{"candidate expected", func(q *Question) { q.Expect = []string{"alice-english-guess"} }},
		{"expected and forbidden", func(q *Question) { q.Forbid = q.Expect }},
		{"unknown asker", func(q *Question) { q.As = "ghost-bot" }},
		{"unknown dataset", func(q *Question) { q.Dataset = "x" }},
		{"bad language", func(q *Question) { q.Lang = "fr" }},
		{"unrelated with answers", func(q *Question) { q.Unrelated = true }},
		{"no split", func(q *Question) { q.Split = "" }},
		{"unknown category", func(q *Question) { q.Category = "misc" }},
		{"chit-chat that expects memories", func(q *Question) { q.Category = "chit-chat" }},
	}
	if err := Check([]Question{good}, sets); err != nil {
		t.Fatalf("good question rejected: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := good
			tt.edit(&q)
			if Check([]Question{q}, sets) == nil {
				t.Errorf("Check accepted %+v", q)
			}
		})
	}
}

func TestGenerateIsDeterministicAndValid(t *testing.T) {
	a, b := Generate(), Generate()
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two runs differ:\n%s", diff)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	superseded := map[string]int{}
	for _, m := range a.Memories {
		if m.Key != "" {
			superseded[m.UserID+"/"+m.Key]++
		}
	}
	versions := 0
	for _, n := range superseded {
		versions += n - 1
	}
	if len(a.Users) != GeneratedUsers || len(a.Memories) < 10*GeneratedUsers || versions < GeneratedUsers {
		t.Errorf("%d users, %d memories, %d superseded versions", len(a.Users), len(a.Memories), versions)
	}
}

func TestScore(t *testing.T) {
	q := func(expect []string, unrelated bool) Question { return Question{Expect: expect, Unrelated: unrelated} }
	os := []Outcome{
		{Question: q([]string{"a"}, false), Got: []string{"a", "x"}, Hits: 1, RR: 1},
		{Question: q([]string{"a", "b"}, false), Got: []string{"x", "b"}, Hits: 1, RR: 0.5},
		{Question: q([]string{"a"}, false), Got: []string{"f"}, Forbidden: []string{"f"}},
		{Question: q(nil, true), Got: nil},
		{Question: q(nil, true), Got: []string{"x"}},
	}
	got := Score(os)
	// Each answerable question recalled one memory it does not expect: x,
	// x and the forbidden f.
	want := Scores{Questions: 5, Answerable: 3, RecallAt5: (1 + 0.5 + 0) / 3, MRR: (1 + 0.5) / 3, Forbidden: 1, Unrelated: 2, UnrelatedEmpty: 0.5, Unexpected: 1}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(x, y float64) bool { return math.Abs(x-y) < 1e-9 })); diff != "" {
		t.Errorf("Score (-want +got):\n%s", diff)
	}
}

// TestEvalOnDemoData asks the demo questions through the real service, with
// policy, Neo4j and the built-in embedder. No forbidden memory may come back;
// the floors are well below what the built-in embedder reaches, so that a
// change of ranking that breaks recall fails here while tuning does not.
func TestEvalOnDemoData(t *testing.T) {
	f := apptest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	qs, err := Questions()
	if err != nil {
		t.Fatal(err)
	}
	demo, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	l, err := Load(ctx, f.App.Service, f.App.Admin, f.App.Keys, demo, f.Tenant)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(l.IDs) != len(demo.Memories) {
		t.Fatalf("loaded %d of %d memories", len(l.IDs), len(demo.Memories))
	}
	again, err := Attach(ctx, f.App.Service, demo, f.Tenant)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	if diff := cmp.Diff(l.IDs, again.IDs); diff != "" {
		t.Errorf("Attach found other ids than Load gave (-load +attach):\n%s", diff)
	}
	outcomes, err := Run(ctx, f.App.Service, map[string]*Loaded{DatasetDemo: l}, qs)
	if err != nil {
		t.Fatal(err)
	}
	s := Score(outcomes)
	t.Logf("demo: %+v", s)
	for _, o := range outcomes {
		if len(o.Forbidden) > 0 {
			t.Errorf("question %s (%q as %s) returned forbidden %v", o.Question.ID, o.Question.Query, o.Question.As, o.Forbidden)
		}
	}
	if s.Questions < 40 || s.RecallAt5 < 0.6 || s.MRR < 0.5 || s.UnrelatedEmpty < 0.7 {
		t.Errorf("scores below the floor (questions ≥ 40, recall@5 ≥ 0.6, MRR ≥ 0.5, unrelated empty ≥ 0.7): %+v", s)
	}
}

// TestEvalHeldOut asks the held-out questions of both datasets through the
// real service with the built-in embedder and asserts floors on them, just
// below what it reaches (0.660 recall@5, 0.841 unrelated empty), so that a
// change that loses answers fails here. The targets for this
// embedder (0.85, 0.97) are higher: it shares character n-grams, not
// meaning, and reaches paraphrases sharing no word with their memory only as
// one of the user's nearest memories to a question about the user.
func TestEvalHeldOut(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the generated dataset (about 500 memories)")
	}
	f := apptest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	qs, err := Questions()
	if err != nil {
		t.Fatal(err)
	}
	demo, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	loaded := map[string]*Loaded{}
	for name, ds := range map[string]*seed.Dataset{DatasetDemo: demo, DatasetGenerated: Generate()} {
		if loaded[name], err = Load(ctx, f.App.Service, f.App.Admin, f.App.Keys, ds, f.Tenant+"-"+name[:3]); err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
	}
	var held []Question
	for _, q := range qs {
		if q.Split == SplitHeldOut {
			held = append(held, q)
		}
	}
	outcomes, err := Run(ctx, f.App.Service, loaded, held)
	if err != nil {
		t.Fatal(err)
	}
	s := Score(outcomes)
	t.Logf("held-out: %+v", s)
	if s.Questions < 300 || s.Forbidden > 0 || s.RecallAt5 < 0.60 || s.UnrelatedEmpty < 0.82 {
		t.Errorf("held-out scores below the floor (questions ≥ 300, forbidden 0, recall@5 ≥ 0.60, unrelated empty ≥ 0.82): %+v", s)
	}
}
