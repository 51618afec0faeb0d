package memory

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeEraser is a place outside the graph holding n items of one user.
type fakeEraser struct {
	place  string
	held   map[string]int64 // "tenant/user" → items
	memIDs [][]string       // EraseMemories calls
	err    error
	calls  int
}

func (f *fakeEraser) Place() string { return f.place }

func (f *fakeEraser) EraseUser(_ context.Context, tenant, userID string) (int64, error) {
	f.calls++
	if f.err != nil {
		return 0, f.err
	}
	n := f.held[tenant+"/"+userID]
	delete(f.held, tenant+"/"+userID)
	return n, nil
}

func (f *fakeEraser) EraseMemories(_ context.Context, _, _ string, ids []string) (int64, error) {
	f.memIDs = append(f.memIDs, ids)
	return int64(len(ids)), f.err
}

func TestEraseUser(t *testing.T) {
	denyAgents := func(p Principal, action string, r Resource) (Decision, error) {
		allow := p.Kind == KindAdmin || (p.Kind == KindUser && p.ID == r.UserID)
		return Decision{Allow: allow}, nil
	}
	tests := []struct {
		name       string
		p          Principal
		user       string
		wantErr    error
		wantCounts map[string]int64
	}{
		{"admin", adminAcme, "alice", nil, map[string]int64{
			"sessions": 3, "recall_log": 2, PlaceGraphMemories: 2, PlaceGraphEntities: 0, PlaceGraphSessions: 0, PlaceGraphUsers: 1}},
		{"the user themself", userAlice, "alice", nil, map[string]int64{
			"sessions": 3, "recall_log": 2, PlaceGraphMemories: 2, PlaceGraphEntities: 0, PlaceGraphSessions: 0, PlaceGraphUsers: 1}},
		{"unknown user: zeros", adminAcme, "nobody", nil, map[string]int64{
			"sessions": 0, "recall_log": 0, PlaceGraphMemories: 0, PlaceGraphEntities: 0, PlaceGraphSessions: 0, PlaceGraphUsers: 0}},
		{"another user", Principal{Tenant: "acme", Kind: KindUser, ID: "bob"}, "alice", ErrForbidden, nil},
		{"an agent", agentSupport, "alice", ErrForbidden, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.authz.decide = denyAgents
			f.store.memories["mem_1"] = stored("mem_1", "Alice prefers tea.")
			f.store.memories["mem_2"] = stored("mem_2", "Alice lives in Lyon.")
			sessions := &fakeEraser{place: "sessions", held: map[string]int64{"acme/alice": 3}}
			log := &fakeEraser{place: "recall_log", held: map[string]int64{"acme/alice": 2}}
			f.svc.erasers, f.svc.memoryErasers = []Eraser{sessions, log}, []MemoryEraser{log}

			r, err := f.svc.EraseUser(context.Background(), tt.p, tt.user)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantCounts, r.Counts); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			if err != nil {
				if sessions.calls+log.calls+len(f.store.erasedUsers) > 0 {
					t.Errorf("a refused erase touched a place")
				}
				return
			}
			wantBy := tt.p.Kind + ":" + tt.p.ID
			if tt.p.Kind == KindUser {
				wantBy = "user:self" // a tombstone never names whom it erased
			}
			if len(f.store.erasedUsers) != 1 || f.store.erasedUsers[0].By != wantBy {
				t.Errorf("graph erases = %+v", f.store.erasedUsers)
			}
			// Idempotent: everything is gone, a second erase counts zeros.
			again, err := f.svc.EraseUser(context.Background(), tt.p, tt.user)
			if err != nil {
				t.Fatal(err)
			}
			for place, n := range again.Counts {
				if n != 0 {
					t.Errorf("second erase: %s = %d, want 0", place, n)
				}
			}
		})
	}
	t.Run("a failing place stops the erase before the graph", func(t *testing.T) {
		f := newFixture(t, RecallConfig{})
		f.svc.erasers = []Eraser{&fakeEraser{place: "sessions", err: ErrUnavailable}}
		if _, err := f.svc.EraseUser(context.Background(), adminAcme, "alice"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if len(f.store.erasedUsers) != 0 {
			t.Errorf("graph erased although a place failed")
		}
	})
	t.Run("bad user id", func(t *testing.T) {
		f := newFixture(t, RecallConfig{})
		var inv *InvalidError
		if _, err := f.svc.EraseUser(context.Background(), adminAcme, "a b"); !errors.As(err, &inv) {
			t.Fatalf("err = %v, want invalid", err)
		}
	})
}

// TestDeleteKeepsTheReason: the reason a caller gives reaches the tombstone
// and the audit entry, trimmed; none gives the default; one too long or not
// UTF-8 is refused before anything is erased or audited.
func TestDeleteKeepsTheReason(t *testing.T) {
	tests := []struct {
		name, reason, want string
		invalid            bool
	}{
		{name: "given", reason: "  asked by the customer on the phone ", want: "asked by the customer on the phone"},
		{name: "none", reason: "", want: "deleted through the API"},
		{name: "blank", reason: " \t", want: "deleted through the API"},
		{name: "longest", reason: strings.Repeat("理", MaxDeleteReason), want: strings.Repeat("理", MaxDeleteReason)},
		{name: "too long", reason: strings.Repeat("理", MaxDeleteReason+1), invalid: true},
		{name: "not UTF-8", reason: "bad \xff", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.store.memories["mem_1"] = stored("mem_1", "Alice prefers green tea in the morning.")
			f.store.history = []Memory{f.store.memories["mem_1"]}
			_, err := f.svc.Delete(context.Background(), adminAcme, "mem_1", tt.reason)
			if tt.invalid {
				var inv *InvalidError
				if !errors.As(err, &inv) || inv.Field != "reason" {
					t.Fatalf("err = %v, want invalid reason", err)
				}
				if len(f.store.deleted) != 0 || len(f.audit.recorded()) != 0 {
					t.Errorf("a refused reason erased %v, audited %v", f.store.deleted, f.audit.recorded())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(f.store.deleted) != 1 || f.store.deleted[0].Reason != tt.want {
				t.Errorf("tombstones %+v, want reason %q", f.store.deleted, tt.want)
			}
			if got := f.audit.recorded(); len(got) != 1 || got[0].Details["reason"] != tt.want {
				t.Errorf("audit %+v, want reason %q", got, tt.want)
			}
		})
	}
}

func TestDeleteErasesTheChainItMayDelete(t *testing.T) {
	head := stored("mem_3", "Budget is 150k.")
	mid := stored("mem_2", "Budget is 120k.")
	old := stored("mem_1", "Budget is 100k.")
	old.AgentID = "billing-bot" // written by another agent: support-bot may not delete it
	f := newFixture(t, RecallConfig{})
	f.store.memories[head.ID] = head
	f.store.history = []Memory{head, mid, old}
	f.authz.decide = func(p Principal, action string, r Resource) (Decision, error) {
		return Decision{Allow: action == ActionRead || r.AgentID == p.ID}, nil
	}
	cache := &fakeEraser{place: "cache"}
	perUser := &fakeEraser{place: "sessions"}
	// perUser holds data per user only: it is no MemoryEraser.
	f.svc.erasers, f.svc.memoryErasers = []Eraser{cache, perUser}, []MemoryEraser{cache}

	r, err := f.svc.Delete(context.Background(), agentSupport, head.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []deleteCall{{Tenant: "acme", IDs: []string{"mem_3", "mem_2"}, By: "agent:support-bot", Reason: "deleted through the API"}}
	if diff := cmp.Diff(want, f.store.deleted); diff != "" {
		t.Errorf("graph erase (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"mem_3", "mem_2"}}, cache.memIDs); diff != "" {
		t.Errorf("cache erase (-want +got):\n%s", diff)
	}
	if perUser.calls != 0 {
		t.Errorf("deleting one memory erased a whole user from %s", perUser.place)
	}
	wantCounts := map[string]int64{"cache": 2, PlaceGraphMemories: 2, PlaceGraphEntities: 0, PlaceGraphSessions: 0}
	if diff := cmp.Diff(wantCounts, r.Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if r.MemoryID != head.ID || r.UserID != "alice" {
		t.Errorf("receipt = %+v", r)
	}
}

// fencingQueue fences erased users, and records the order of the calls it
// and the places get.
type fencingQueue struct {
	fence int64
	err   error
	calls *[]string
}

func (q fencingQueue) FenceUser(_ context.Context, tenant, userID string) (int64, error) {
	*q.calls = append(*q.calls, "fence "+tenant+"/"+userID)
	return q.fence, q.err
}

type orderedEraser struct {
	Eraser
	calls *[]string
}

func (e orderedEraser) EraseUser(ctx context.Context, tenant, userID string) (int64, error) {
	*e.calls = append(*e.calls, "erase "+e.Place())
	return e.Eraser.EraseUser(ctx, tenant, userID)
}

// TestEraseUserFencesQueuedWrites: the queue fences the user before any
// place is erased, and the graph's tombstone gets the fence; a failed
// fence stops the erase before it touched anything.
func TestEraseUserFencesQueuedWrites(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantCalls []string
		wantFence []int64
	}{
		{"fenced", nil, []string{"fence acme/alice", "erase sessions"}, []int64{777}},
		{"fence fails", ErrUnavailable, []string{"fence acme/alice"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			var calls []string
			f.svc.fence = fencingQueue{fence: 777, err: tt.err, calls: &calls}
			sessions := &fakeEraser{place: "sessions", held: map[string]int64{"acme/alice": 1}}
			f.svc.erasers = []Eraser{orderedEraser{Eraser: sessions, calls: &calls}}
			_, err := f.svc.EraseUser(context.Background(), adminAcme, "alice")
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.wantCalls, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			var fences []int64
			for _, c := range f.store.erasedUsers {
				fences = append(fences, c.Fence)
			}
			if diff := cmp.Diff(tt.wantFence, fences); diff != "" {
				t.Errorf("tombstone fences (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEraseUserForgetsTheName(t *testing.T) {
	f := newFixture(t, recallConfig)
	names := &fakeNames{names: map[string]string{"alice": "Alice Wang"}}
	opts := f.options(t, recallConfig)
	opts.Names = names
	f.svc = f.service(t, opts)
	if _, err := f.svc.EraseUser(context.Background(), adminAcme, "alice"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alice"}, names.forgot); diff != "" {
		t.Errorf("forgotten (-want +got):\n%s", diff)
	}
}

// TestDeleteErasedMeanwhile: of concurrent deletes of one memory, those
// that find nothing left to erase answer not found, as a delete afterwards
// does, rather than a receipt of zeros.
func TestDeleteErasedMeanwhile(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	m := stored("mem_1", "Alice prefers tea.")
	f.store.memories[m.ID] = m
	f.store.erasedMeanwhile = true
	if _, err := f.svc.Delete(context.Background(), agentSupport, m.ID, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete of a memory erased meanwhile: %v, want ErrNotFound", err)
	}
}
