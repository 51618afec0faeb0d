package memory

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// WarmUp runs every query a recall can reach, in a tenant no request can
// name.
func TestWarmUp(t *testing.T) {
	for _, tenant := range warmTenants {
		if validTenant(tenant) {
			t.Fatalf("warm-up tenant %q is a valid tenant name: a request could read it", tenant)
		}
	}
	fs := &fakeSearch{}
	f := searchFixture(t, RecallConfig{}, fs)
	if err := f.svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	var text, seeds, session bool
	for _, q := range fs.expandReqs {
		text = text || (q.Text != "" && q.Hops == 2)
		seeds = seeds || len(q.Seeds) > 0
		session = session || q.SessionID != ""
	}
	ran := map[string]bool{
		"exact vector search":       len(f.store.vectorCalls) > 0,
		"full-text search":          len(f.store.fullTextCalls) > 0,
		"partition size":            fs.sizeCalls > 0,
		"vector index":              len(fs.fetches) > 0,
		"named-entity expansion":    text,
		"first-hit expansion":       seeds,
		"session expansion":         session,
		"a scope for every caller":  len(f.authz.scopeCalls) >= len(warmTenants)*len(warmUsers)*(len(warmCallers)+1),
		"no policy decision logged": len(f.authz.decisions) == 0,
	}
	for what, ok := range ran {
		if !ok {
			t.Errorf("warm-up: %s: no", what)
		}
	}
}

// warmingStore is a store whose writes may only be warmed.
type warmingStore struct {
	*fakeStore
	warms []DedupWrite
}

func (w *warmingStore) WriteDeduped(context.Context, DedupWrite) ([]Written, error) {
	return nil, errTest("a warm-up must not write")
}

func (w *warmingStore) WarmWrite(_ context.Context, d DedupWrite) error {
	w.warms = append(w.warms, d)
	return nil
}

// WarmUp warms the write path with batches of every warm size, shaped like
// queued batches, and writes nothing.
func TestWarmUpWrites(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	ws := &warmingStore{fakeStore: f.store}
	svc, err := NewService(Options{
		Store: ws, Authz: f.authz, Embed: f.embed,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return testNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.authz.scope = aliceScope
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := len(warmTenants) * len(warmUsers) * len(warmBatchSizes); len(ws.warms) != want {
		t.Fatalf("%d warm writes, want %d", len(ws.warms), want)
	}
	for k, w := range ws.warms {
		n := warmBatchSizes[k%len(warmBatchSizes)]
		users, slots := map[string]bool{}, 0
		for _, m := range w.Memories {
			users[m.UserID] = true
			if m.Key != "" {
				slots++
			}
			if m.QueueSeq == 0 || len(m.Embedding) == 0 || m.Tenant == "" || validTenant(m.Tenant) {
				t.Errorf("warm write %d: memory %+v is not a queued, embedded memory of a warm tenant", k, m)
			}
		}
		switch {
		case len(w.Memories) != n:
			t.Errorf("warm write %d has %d memories, want %d", k, len(w.Memories), n)
		case !w.CheckStale || w.Repeat == nil || w.ActivateAt == nil || len(w.ScopeOf) != n || len(w.Scopes) == 0:
			t.Errorf("warm write %d is not a queued deduplicated write: %+v", k, w)
		case n > 1 && (len(users) < n/2 || slots < n/2):
			t.Errorf("warm write %d of %d memories has %d users and %d slots", k, n, len(users), slots)
		}
	}
}
