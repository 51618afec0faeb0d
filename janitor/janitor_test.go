package janitor

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

// testNow is the clock of these tests.
var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

type errTest string

func (e errTest) Error() string { return string(e) }

func TestPlan(t *testing.T) {
	now := testNow
	cfg := Config{TTL: map[string]time.Duration{memory.TypeEpisodic: 365 * Day}, ArchiveAfter: 90 * Day, Cap: 2, HalfLife: 30 * Day}
	use := func(id, user, typ, status string, imp float64, created, updated, accessed time.Duration, n int64) Usage {
		u := Usage{ID: id, UserID: user, Type: typ, Status: status, Importance: imp,
			CreatedAt: now.Add(-created), UpdatedAt: now.Add(-updated), AccessCount: n}
		if accessed > 0 {
			u.LastAccessedAt = now.Add(-accessed)
		}
		return u
	}
	tests := []struct {
		name string
		cfg  Config
		live []Usage
		want []memory.Change
	}{
		{"episodic at its TTL expires, a semantic one as old does not",
			cfg, []Usage{
				use("e", "u", memory.TypeEpisodic, memory.StatusActive, 1, 365*Day, Day, 0, 0),
				use("s", "u", memory.TypeSemantic, memory.StatusActive, 1, 400*Day, Day, 0, 0),
			}, []memory.Change{{Tenant: "acme", MemoryID: "e", UserID: "u", Type: memory.TypeEpisodic, From: memory.StatusActive, To: memory.StatusExpired, Reason: memory.ReasonTTL}}},
		{"unused for 90 days is archived; a recent recall or update keeps it",
			cfg, []Usage{
				use("old", "u", memory.TypeProfile, memory.StatusCandidate, 1, 200*Day, 90*Day, 0, 0),
				use("recalled", "u", memory.TypeProfile, memory.StatusActive, 1, 200*Day, 120*Day, 5*Day, 3),
				use("updated", "u", memory.TypeProfile, memory.StatusActive, 1, 200*Day, 89*Day, 0, 0),
			}, []memory.Change{{Tenant: "acme", MemoryID: "old", UserID: "u", Type: memory.TypeProfile, From: memory.StatusCandidate, To: memory.StatusArchived, Reason: memory.ReasonUnused}}},
		{"history written in lately is not unused, however old its facts",
			cfg, func() []Usage {
				imported := use("imported", "u", memory.TypeProfile, memory.StatusActive, 1, 200*Day, 200*Day, 0, 0)
				imported.WrittenAt = now.Add(-Day)
				long := use("imported long ago", "u", memory.TypeProfile, memory.StatusActive, 1, 200*Day, 200*Day, 0, 0)
				long.WrittenAt = now.Add(-100 * Day)
				return []Usage{imported, long}
			}(), []memory.Change{{Tenant: "acme", MemoryID: "imported long ago", UserID: "u", Type: memory.TypeProfile, From: memory.StatusActive, To: memory.StatusArchived, Reason: memory.ReasonUnused}}},
		{"over the cap the lowest value goes; candidates do not count",
			cfg, []Usage{
				use("high", "u", memory.TypeSemantic, memory.StatusActive, 0.9, Day, Day, 0, 0),
				use("low", "u", memory.TypeSemantic, memory.StatusActive, 0.1, Day, Day, 0, 0),
				use("mid", "u", memory.TypeSemantic, memory.StatusActive, 0.5, Day, Day, 0, 0),
				use("cand", "u", memory.TypeSemantic, memory.StatusCandidate, 0, Day, Day, 0, 0),
				use("other user", "v", memory.TypeSemantic, memory.StatusActive, 0, Day, Day, 0, 0),
			}, []memory.Change{{Tenant: "acme", MemoryID: "low", UserID: "u", Type: memory.TypeSemantic, From: memory.StatusActive, To: memory.StatusArchived, Reason: memory.ReasonCap,
				Value: 0.5*0.1 + 0.3*math.Exp2(-1.0/30)}}},
		{"what the user wrote is capped apart: their own notes, however valued, push out only their own",
			cfg, func() []Usage {
				said := func(u Usage) Usage { u.SaidByUser = true; return u }
				return []Usage{
					use("agent low", "u", memory.TypeSemantic, memory.StatusActive, 0.1, Day, Day, 0, 0),
					use("agent mid", "u", memory.TypeSemantic, memory.StatusActive, 0.5, Day, Day, 0, 0),
					said(use("own a", "u", memory.TypeProfile, memory.StatusActive, 1, Day, Day, 0, 0)),
					said(use("own b", "u", memory.TypeProfile, memory.StatusActive, 1, Day, Day, 0, 0)),
					said(use("own c", "u", memory.TypeProfile, memory.StatusActive, 0.9, Day, Day, 0, 0)),
				}
			}(), []memory.Change{{Tenant: "acme", MemoryID: "own c", UserID: "u", Type: memory.TypeProfile, From: memory.StatusActive, To: memory.StatusArchived, Reason: memory.ReasonCap,
				Value: 0.5*0.9 + 0.3*math.Exp2(-1.0/30)}}},
		{"shared knowledge ends at its valid_to, never by age, disuse or a cap",
			cfg, func() []Usage {
				shared := func(u Usage) Usage { u.Shared = true; return u }
				ended := shared(use("ended", "", memory.TypeSemantic, memory.StatusActive, 1, 30*Day, 30*Day, 0, 0))
				ended.ValidTo = now.Add(-Day)
				holds := shared(use("holds", "", memory.TypeSemantic, memory.StatusActive, 1, 30*Day, 30*Day, 0, 0))
				holds.ValidTo = now.Add(Day)
				return []Usage{ended, holds,
					shared(use("old episode", "", memory.TypeEpisodic, memory.StatusActive, 1, 400*Day, 400*Day, 0, 0)),
					shared(use("a", "", memory.TypeSemantic, memory.StatusActive, 0.1, Day, Day, 0, 0)),
					shared(use("b", "", memory.TypeSemantic, memory.StatusActive, 0.1, Day, Day, 0, 0)),
				}
			}(), []memory.Change{{Tenant: "acme", MemoryID: "ended", Type: memory.TypeSemantic, From: memory.StatusActive, To: memory.StatusExpired, Reason: memory.ReasonEnded}}},
		{"zero config does nothing",
			Config{HalfLife: Day}, []Usage{use("e", "u", memory.TypeEpisodic, memory.StatusActive, 0, 1000*Day, 1000*Day, 0, 0)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Plan(tt.cfg, "acme", now, tt.live)
			if diff := cmp.Diff(tt.want, got, cmpApprox); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpApprox = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })

func TestValue(t *testing.T) {
	now := testNow
	base := Usage{Importance: 0.5, UpdatedAt: now}
	tests := []struct {
		name string
		u    Usage
		want float64
	}{
		{"fresh, never recalled", base, 0.25 + 0.3},
		{"one half-life old", Usage{Importance: 0.5, UpdatedAt: now.Add(-30 * Day)}, 0.25 + 0.15},
		{"recalled 100 times", Usage{Importance: 0.5, UpdatedAt: now, AccessCount: 100}, 0.25 + 0.3 + 0.2},
		{"recalled more still counts 1", Usage{Importance: 0.5, UpdatedAt: now, AccessCount: 10000}, 0.25 + 0.3 + 0.2},
		{"a recent recall is a use", Usage{Importance: 0, UpdatedAt: now.Add(-300 * Day), LastAccessedAt: now}, 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Value(tt.u, now, 30*Day); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Value = %v, want %v", got, tt.want)
			}
		})
	}
}

// fakeLifecycle is an in-memory Store.
type fakeLifecycle struct {
	live        map[string][]Usage // per tenant
	transitions int
	err         error
}

func (f *fakeLifecycle) Tenants(context.Context) ([]string, error) {
	return []string{"acme", "globex"}, nil
}

func (f *fakeLifecycle) LiveMemories(_ context.Context, tenant string) ([]Usage, error) {
	if tenant == "globex" && f.err != nil {
		return nil, f.err
	}
	return f.live[tenant], nil
}

func (f *fakeLifecycle) Transition(_ context.Context, tenant string, ids []string, to, _ string, _ time.Time) (int64, error) {
	f.transitions++
	var n int64
	kept := f.live[tenant][:0]
	for _, u := range f.live[tenant] {
		moved := false
		for _, id := range ids {
			moved = moved || u.ID == id
		}
		if moved {
			n++
			continue
		}
		kept = append(kept, u)
	}
	f.live[tenant] = kept
	return n, nil
}

func TestJanitorDryRunAndSweepAll(t *testing.T) {
	old := Usage{ID: "e", UserID: "u", Type: memory.TypeEpisodic, Status: memory.StatusActive, CreatedAt: testNow.Add(-400 * Day), UpdatedAt: testNow}
	store := &fakeLifecycle{live: map[string][]Usage{"acme": {old}}, err: errTest("globex is down")}
	j, err := New(Options{Store: store, Config: Defaults(), Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	dry, err := j.Sweep(context.Background(), "acme", true)
	if err != nil || dry.Expired != 1 || store.transitions != 0 || len(store.live["acme"]) != 1 {
		t.Fatalf("dry run: %+v, %v; %d transitions", dry, err, store.transitions)
	}
	// One failing tenant does not stop the others.
	all, err := j.SweepAll(context.Background(), false)
	if !errors.Is(err, errTest("globex is down")) {
		t.Errorf("SweepAll err = %v, want globex's", err)
	}
	if all.Expired != 1 || all.Tenants != 1 || len(store.live["acme"]) != 0 {
		t.Errorf("SweepAll = %+v, live %v", all, store.live)
	}
}

// A memory whose valid_to has passed is expired by the sweep it is
// reported in, and counted there.
func TestSweepExpiresWhatEnded(t *testing.T) {
	ended := Usage{ID: "rule", Type: memory.TypeSemantic, Status: memory.StatusActive, Shared: true, CreatedAt: testNow.Add(-Day), UpdatedAt: testNow, ValidTo: testNow.Add(-time.Hour)}
	store := &fakeLifecycle{live: map[string][]Usage{"acme": {ended}}}
	j, err := New(Options{Store: store, Config: Defaults(), Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	r, err := j.Sweep(context.Background(), "acme", false)
	if err != nil || r.Expired != 1 || len(r.Changes) != 1 || len(store.live["acme"]) != 0 {
		t.Fatalf("sweep: %+v, %v; live %v; want the ended memory expired and counted", r, err, store.live["acme"])
	}
	if r, _ := j.Sweep(context.Background(), "acme", false); r.Expired != 0 || len(r.Changes) != 0 {
		t.Errorf("the next sweep: %+v, want nothing left to do", r)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{TTL: map[string]time.Duration{"gossip": Day}, HalfLife: Day},
		{TTL: map[string]time.Duration{memory.TypeEpisodic: -Day}, HalfLife: Day},
		{ArchiveAfter: -1, HalfLife: Day},
		{Cap: -1, HalfLife: Day},
		{},
	}
	for i, c := range bad {
		if c.Validate() == nil {
			t.Errorf("config %d %+v validated", i, c)
		}
	}
	if err := Defaults().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
