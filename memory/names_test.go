package memory

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/relevance"
)

// fakeNames knows users' names and counts the lookups.
type fakeNames struct {
	names   map[string]string // user -> name
	err     error
	lookups int
}

func (f *fakeNames) UserName(_ context.Context, _, user string) (string, error) {
	f.lookups++
	return f.names[user], f.err
}

func TestRecallKnowsTheUserByName(t *testing.T) {
	// alice's memories share no word with the question and lie below the
	// vector floor; the question names her only as "Ethan".
	a, b := stored("mem_a", "works at Acme"), stored("mem_b", "lives in Lyon")
	tests := []struct {
		name  string
		names UserNames
		want  map[string]string // id -> gate
		embed string
	}{
		{"her name makes the question one about her", &fakeNames{names: map[string]string{"alice": "Ethan Zhou"}},
			map[string]string{"mem_a": relevance.GateSubject, "mem_b": relevance.GateSubject}, "Where does work these days?"},
		{"unknown names leave it about someone else", nil, map[string]string{}, "Where does Ethan work these days?"},
		{"a store that fails costs the name, not the recall", &fakeNames{err: errors.New("down")}, map[string]string{}, "Where does Ethan work these days?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := recallConfig
			cfg.SubjectFloor, cfg.SubjectTop = 0.1, 3
			f := newFixture(t, cfg)
			opts := f.options(t, cfg)
			opts.Names = tt.names
			f.svc = f.service(t, opts)
			f.authz.scope = aliceScope
			f.store.vector = []Hit{{a, 0.2}, {b, 0.18}}
			gates, _ := recallGates(t, f, "Where does Ethan work these days?")
			if diff := cmp.Diff(tt.want, gates); diff != "" {
				t.Errorf("gates (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([][]string{{tt.embed}}, f.embed.calls); diff != "" {
				t.Errorf("embedded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNameCache(t *testing.T) {
	now := testNow
	src := &fakeNames{names: map[string]string{"u1": "Ethan Zhou"}}
	c := newNameCache(src, func() time.Time { return now }, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	steps := []struct {
		do      func()
		want    []string
		lookups int
	}{
		{nil, []string{"u1", "Ethan Zhou"}, 1},
		{func() { now = now.Add(nameTTL - time.Second) }, []string{"u1", "Ethan Zhou"}, 1},
		{func() { src.names["u1"] = "Ethan Chen"; now = now.Add(time.Second) }, []string{"u1", "Ethan Chen"}, 2},
		{func() { src.names["u1"] = "Ethan Wu"; c.forget("t", "u1") }, []string{"u1", "Ethan Wu"}, 3},
		{func() { delete(src.names, "u1"); c.forget("t", "u1") }, []string{"u1"}, 4},
	}
	for i, st := range steps {
		if st.do != nil {
			st.do()
		}
		if got := c.of(ctx, "t", "u1"); !slices.Equal(got, st.want) || src.lookups != st.lookups {
			t.Errorf("step %d: names %q after %d lookups, want %q after %d", i, got, src.lookups, st.want, st.lookups)
		}
	}
	if got := newNameCache(nil, time.Now, slog.Default()).of(ctx, "t", "u1"); !slices.Equal(got, []string{"u1"}) {
		t.Errorf("without a source: %q", got)
	}
}
