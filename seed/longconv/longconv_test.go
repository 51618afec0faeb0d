package longconv

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/extract"
	"mneme/internal/apptest"
	"mneme/memory"
)

func TestReadCRI(t *testing.T) {
	for _, dir := range []string{"testdata", "testdata/mia"} {
		t.Run(dir, func(t *testing.T) {
			cs, qs, err := Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 1 || cs[0].ID != "mia" || cs[0].User != "mia" {
				t.Fatalf("conversations %+v", cs)
			}
			c := cs[0]
			if len(c.Sessions) != 3 || c.Turns() != 12 || c.Sessions[2].ID != "session-003" || len(c.Sessions[2].Turns) != 4 {
				t.Errorf("sessions %+v", c.Sessions)
			}
			first := c.Sessions[0].Turns[0]
			if first.ID != "1" || first.Role != "user" || !first.At.Equal(time.Date(2025, 3, 2, 10, 0, 0, 0, time.UTC)) {
				t.Errorf("first turn %+v", first)
			}
			want := []Question{
				{ID: "change-01", Conversation: "mia", Query: "pottery class day", Category: CategoryChange, Evidence: []string{"1", "9"}},
				{ID: "conflict-01", Conversation: "mia", Query: "half marathon training", Category: CategoryConflict, Evidence: []string{"5", "7"}},
			}
			if diff := cmp.Diff(want, qs); diff != "" {
				t.Errorf("questions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadRefusesBadData(t *testing.T) {
	conv, err := os.ReadFile("testdata/mia/conversations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct{ conversations, truth string }{
		"evidence names a missing turn": {string(conv), `{"changes":[{"query_topic":"x","key_messages":[99]}]}`},
		"question without evidence":     {string(conv), `{"conflicts":[{"conflict_id":"c","topic":"x","introduced_at_messages":[]}]}`},
		"bad timestamp":                 {`{"message_id":1,"role":"user","content":"hi","timestamp":"yesterday","session_id":"s"}`, `{}`},
		"repeated message id": {`{"message_id":1,"role":"user","content":"a","timestamp":"2025-01-01T00:00:00","session_id":"s"}
{"message_id":1,"role":"user","content":"b","timestamp":"2025-01-01T00:00:00","session_id":"s"}`, `{}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bad")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "conversations.jsonl"), []byte(tt.conversations), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "ground_truth.json"), []byte(tt.truth), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Read(dir); err == nil {
				t.Error("Read accepted it")
			}
		})
	}
	if _, _, err := Read(t.TempDir()); err == nil {
		t.Error("Read accepted a directory without data")
	}
}

func TestSplitIsFixedAndBalanced(t *testing.T) {
	q := Question{ID: "change-01", Conversation: "persona-1-base"}
	if Split(q) != Split(q) {
		t.Fatal("Split is not deterministic")
	}
	held := 0
	for i := range 1000 {
		if Split(Question{ID: fmt.Sprintf("q%d", i), Conversation: "c"}) == SplitHeldOut {
			held++
		}
	}
	if held < 400 || held > 600 {
		t.Errorf("%d of 1000 questions held out, want about half", held)
	}
}

func TestTruncate(t *testing.T) {
	cs, qs, err := Read("testdata/mia")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		n         int
		turns     int
		sessions  int
		questions []string
	}{
		{0, 12, 3, []string{"change-01", "conflict-01"}},
		{4, 4, 1, nil},
		{7, 7, 2, []string{"conflict-01"}},
		{9, 9, 3, []string{"change-01", "conflict-01"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			c, q := Truncate(cs, qs, tt.n)
			var ids []string
			for _, x := range q {
				ids = append(ids, x.ID)
			}
			if c[0].Turns() != tt.turns || len(c[0].Sessions) != tt.sessions || !cmp.Equal(ids, tt.questions) {
				t.Errorf("%d turns in %d sessions, questions %v", c[0].Turns(), len(c[0].Sessions), ids)
			}
		})
	}
}

func TestScore(t *testing.T) {
	q := func(evidence ...string) Question { return Question{Evidence: evidence} }
	os := []Outcome{
		{Question: q("1", "2"), Found: 2},
		{Question: q("1", "2", "3", "4"), Found: 1, Unstored: 1},
		{Question: q("1"), Found: 0},
	}
	got := Score(os)
	want := Scores{Questions: 3, RecallAtK: (1 + 0.25 + 0) / 3, AnyAtK: 2.0 / 3, AllAtK: 1.0 / 3, Unstored: 1}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(x, y float64) bool { return math.Abs(x-y) < 1e-9 })); diff != "" {
		t.Errorf("Score (-want +got):\n%s", diff)
	}
	rep := Summarise([]Outcome{
		{Question: Question{Category: "a", Evidence: []string{"1"}}, Split: SplitHeldOut, Sessions: 2, Found: 1},
		{Question: Question{Category: "b", Evidence: []string{"1"}}, Split: SplitTune, Sessions: 1},
	})
	for g, n := range map[string]int{"all": 2, "all/a": 1, "all/b": 1, "all/multi-session": 1, "all/single-session": 1, "heldout": 1, "heldout/a": 1, "heldout/multi-session": 1, "tune/b": 1, "tune/single-session": 1} {
		if rep[g].Questions != n {
			t.Errorf("group %s has %d questions, want %d (%v)", g, rep[g].Questions, n, rep)
		}
	}
	if rep["heldout"].RecallAtK != 1 || rep["tune"].RecallAtK != 0 {
		t.Errorf("report %v", rep)
	}
}

// TestLoadAndAsk writes a small conversation through the real write
// pipeline and asks about it through real recall, with policy, Neo4j and
// the built-in embedder: one memory per turn, in its session, dated when it
// was said, and a question sharing words with its evidence finds it.
func TestLoadAndAsk(t *testing.T) {
	f := apptest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs, _, err := Read("testdata/mia")
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	f.AddUser(t, c.User)
	l, err := Load(ctx, f.App.Service, extract.NewRules(nil), f.Tenant, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.IDs)+l.Skipped+l.Refused != c.Turns() || len(l.IDs) < 10 {
		t.Fatalf("%d turns stored, %d skipped, %d refused of %d", len(l.IDs), l.Skipped, l.Refused, c.Turns())
	}
	admin := memory.Principal{Tenant: f.Tenant, Kind: memory.KindAdmin, ID: "admin", Roles: []string{"admin"}}
	for _, s := range c.Sessions {
		for _, turn := range s.Turns {
			id, ok := l.IDs[turn.ID]
			if !ok {
				continue
			}
			m, err := f.App.Service.Get(ctx, admin, id)
			if err != nil {
				t.Fatalf("turn %s: %v", turn.ID, err)
			}
			if m.Content != turn.Content || m.SessionID != s.ID || m.UserID != c.User || !m.ValidFrom.Equal(turn.At) || m.Type != memory.TypeEpisodic {
				t.Errorf("turn %s (%s, %s) stored as %+v", turn.ID, s.ID, turn.At, m)
			}
		}
	}
	// Writing the conversation again writes nothing new.
	again, err := Load(ctx, f.App.Service, extract.NewRules(nil), f.Tenant, c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l.IDs, again.IDs); diff != "" {
		t.Errorf("a second load gave other memories (-first +second):\n%s", diff)
	}
	qs := []Question{
		{ID: "studio", Conversation: c.ID, Query: "Which studio is the pottery class at?", Category: "single", Evidence: []string{"1"}},
		{ID: "race", Conversation: c.ID, Query: "Lisbon half marathon", Category: "single", Evidence: []string{"5"}},
		{ID: "other", Conversation: "someone-else", Query: "pottery", Evidence: []string{"1"}},
	}
	outcomes, err := Ask(ctx, f.App.Service, map[string]*Loaded{c.ID: l}, qs)
	if err != nil {
		t.Fatal(err)
	}
	if len(outcomes) != 2 {
		t.Fatalf("%d outcomes, want the 2 questions about a loaded conversation", len(outcomes))
	}
	for _, o := range outcomes {
		if o.Found != 1 || len(o.Got) == 0 || len(o.Got) > K || o.Sessions != 1 {
			t.Errorf("question %s: found %d, got turns %v, spans %d sessions", o.Question.ID, o.Found, o.Got, o.Sessions)
		}
	}
}

// TestHeldOut writes the data in MNEME_LONGCONV_DATA (scripts/longconv.sh
// prints the directory) through the real service with the built-in
// embedder and asks its held-out questions: every evidence turn must be
// stored and every question answered. It sets no recall floor: on the CRI
// conversation recall finds none of the evidence turns yet (the README has
// the figures). It needs the download and about twenty minutes, so it runs
// only when that variable is set.
func TestHeldOut(t *testing.T) {
	dir := os.Getenv("MNEME_LONGCONV_DATA")
	if dir == "" {
		t.Skip("MNEME_LONGCONV_DATA is not set (scripts/longconv.sh fetches the data)")
	}
	f := apptest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cs, qs, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	loaded := map[string]*Loaded{}
	for _, c := range cs {
		f.AddUser(t, c.User)
		if loaded[c.ID], err = Load(ctx, f.App.Service, extract.NewRules(nil), f.Tenant, c); err != nil {
			t.Fatal(err)
		}
	}
	var held []Question
	for _, q := range qs {
		if Split(q) == SplitHeldOut {
			held = append(held, q)
		}
	}
	outcomes, err := Ask(ctx, f.App.Service, loaded, held)
	if err != nil {
		t.Fatal(err)
	}
	s := Score(outcomes)
	t.Logf("held-out: %+v", s)
	if s.Questions < 5 || s.Unstored > 0 {
		t.Errorf("held-out: want at least 5 questions and every evidence turn stored: %+v", s)
	}
}
