package census

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"mneme/memory"
)

type fakeScoper struct {
	scope memory.Scope
	err   error
	asked []string
}

func (f *fakeScoper) ReadScope(_ context.Context, p memory.Principal, userID string, _ time.Time) (memory.Scope, error) {
	f.asked = append(f.asked, p.ID+"/"+userID)
	return f.scope, f.err
}

type fakeStore struct {
	mu     sync.Mutex
	scopes []memory.Scope
	n      int64 // what the next count finds
	err    error
}

func (f *fakeStore) CountMemories(_ context.Context, scope memory.Scope) ([]Count, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scopes = append(f.scopes, scope)
	if f.err != nil {
		return nil, f.err
	}
	n := f.n
	if n == 0 {
		n = 3
	}
	return []Count{{UserID: "u1", Type: "profile", Status: "active", N: n}}, nil
}

func (f *fakeStore) set(n int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n, f.err = n, err
}

func (f *fakeStore) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.scopes)
}

func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := New(Options{})
	if err == nil || err.Error() != "census: Store is required\ncensus: Authz is required" {
		t.Errorf("New(Options{}) = %v", err)
	}
}

func TestCount(t *testing.T) {
	admin := memory.Principal{Tenant: "t1", Kind: memory.KindAdmin, ID: "root"}
	all := memory.Filter{Op: memory.FilterTrue}
	none := memory.Filter{Op: memory.FilterFalse}
	boom := errors.New("boom")
	tests := []struct {
		name      string
		scoper    fakeScoper
		wantQuery bool
		wantErr   error
	}{
		{"the tenant's scope is counted", fakeScoper{scope: memory.Scope{Tenant: "t1", Filter: &all}}, true, nil},
		{"an empty scope counts nothing", fakeScoper{scope: memory.Scope{Tenant: "t1", Filter: &none}}, false, nil},
		{"another tenant's scope counts nothing", fakeScoper{scope: memory.Scope{Tenant: "t2", Filter: &all}}, false, nil},
		{"a policy error fails", fakeScoper{err: boom}, false, boom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &fakeStore{}
			s, err := New(Options{Store: store, Authz: &tc.scoper})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Count(context.Background(), admin)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Count error = %v, want %v", err, tc.wantErr)
			}
			if len(tc.scoper.asked) != 1 || tc.scoper.asked[0] != "root/" {
				t.Errorf("scopes asked for %v, want every user of root's", tc.scoper.asked)
			}
			if queried := len(store.scopes) == 1; queried != tc.wantQuery {
				t.Fatalf("queried = %v, want %v", queried, tc.wantQuery)
			}
			if tc.wantQuery && (len(got.Counts) != 1 || got.Counts[0].N != 3) {
				t.Errorf("Count = %v", got)
			}
			if !tc.wantQuery && len(got.Counts) != 0 {
				t.Errorf("Count = %v, want nothing", got)
			}
		})
	}
}

// TestCountIsReused: within Reuse a view gets the kept count without a
// query; after it, the kept count once more while a new one runs, then the
// new one; a failed refresh keeps the old; another scope (a policy change)
// and Forget count afresh.
func TestCountIsReused(t *testing.T) {
	admin := memory.Principal{Tenant: "t1", Kind: memory.KindAdmin, ID: "root"}
	all := memory.Filter{Op: memory.FilterTrue}
	scoper := &fakeScoper{scope: memory.Scope{Tenant: "t1", Filter: &all}}
	store := &fakeStore{}
	clock := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	s, err := New(Options{Store: store, Authz: scoper, Reuse: 10 * time.Second, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	count := func() Tally {
		t.Helper()
		got, err := s.Count(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		s.Wait()
		return got
	}
	steps := []struct {
		name    string
		advance time.Duration
		act     func()
		want    int64
		at      time.Time // when what is shown was counted
		calls   int
	}{
		{"first view counts", 0, nil, 3, clock, 1},
		{"within Reuse: kept", 5 * time.Second, func() { store.set(4, nil) }, 3, clock, 1},
		{"past Reuse: kept, refreshed behind", 6 * time.Second, nil, 3, clock, 2},
		{"next view: the refreshed count", time.Second, nil, 4, clock.Add(11 * time.Second), 2},
		{"a failed refresh keeps the old", 20 * time.Second, func() { store.set(5, errors.New("neo4j away")) }, 4, clock.Add(11 * time.Second), 3},
		{"and is tried again", 0, func() { store.set(5, nil) }, 4, clock.Add(11 * time.Second), 4},
		{"the retried count", 0, nil, 5, clock.Add(32 * time.Second), 4},
		{"Forget counts afresh", 0, func() { store.set(6, nil); s.Forget("t1") }, 6, clock.Add(32 * time.Second), 5},
		{"Forget of another tenant keeps it", time.Second, func() { store.set(7, nil); s.Forget("t2") }, 6, clock.Add(32 * time.Second), 5},
		{"another scope counts afresh", 0, func() { scoper.scope.Clauses = []memory.Clause{{UserID: "u1"}} }, 7, clock.Add(33 * time.Second), 6},
	}
	for _, st := range steps {
		clock = clock.Add(st.advance)
		if st.act != nil {
			st.act()
		}
		got := count()
		if len(got.Counts) != 1 || got.Counts[0].N != st.want || !got.At.Equal(st.at) {
			t.Errorf("%s: %+v, want %d counted at %s", st.name, got, st.want, st.at.Format(time.TimeOnly))
		}
		if n := store.calls(); n != st.calls {
			t.Errorf("%s: %d counts in all, want %d", st.name, n, st.calls)
		}
	}
}
