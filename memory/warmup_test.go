package memory

import (
	"context"
	"testing"
)

// WarmUp runs every query a recall can reach, in a tenant no request can
// name.
func TestWarmUp(t *testing.T) {
	for _, tenant := range warmTenants {
		if ValidTenant(tenant) {
			t.Fatalf("warm-up tenant %q is a valid tenant name: a request could read it", tenant)
		}
	}
	fs := &fakeSearch{}
	f := searchFixture(t, RecallConfig{}, fs)
	if err := f.svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	var text, session bool
	seeded := 0
	for _, q := range fs.expandReqs {
		text = text || (q.Text != "" && q.Hops == 2)
		if len(q.Seeds) > 0 {
			seeded++
		}
		session = session || q.SessionID != ""
	}
	ran := map[string]bool{
		"exact vector search":    len(f.store.vectorCalls) > 0,
		"full-text search":       len(f.store.fullTextCalls) > 0,
		"partition size":         fs.sizeCalls > 0,
		"named-entity expansion": text,
		// Ten runs each, after which Neo4j has compiled a statement's expressions.
		"first-hit expansion ten times for every caller": seeded >= 10*len(warmCallers),
		"the vector index ten times for every caller":    len(fs.fetches) >= 10*len(warmCallers),
		"a query vector for the first-hit expansion":     len(fs.expandReqs) > 0 && len(fs.expandReqs[len(fs.expandReqs)-1].Filters.Embedding) > 0,
		"session expansion":                              session,
		"a scope for every caller":                       len(f.authz.scopeCalls) >= len(warmTenants)*len(warmUsers)*(len(warmCallers)+1),
		"no policy decision logged":                      len(f.authz.decisions) == 0,
	}
	for what, ok := range ran {
		if !ok {
			t.Errorf("warm-up: %s: no", what)
		}
	}
}

// WarmUp warms the write path with batches of every warm size, shaped like
// queued batches, and writes nothing.
func TestWarmUpWrites(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	f.authz.scope = aliceScope
	if err := f.svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.store.writes) > 0 || len(f.store.created) > 0 {
		t.Fatalf("a warm-up wrote: %d deduplicated writes, %d creations", len(f.store.writes), len(f.store.created))
	}
	ws := f.store
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
			if m.QueueSeq == 0 || len(m.Embedding) == 0 || m.Tenant == "" || ValidTenant(m.Tenant) {
				t.Errorf("warm write %d: memory %+v is not a queued, embedded memory of a warm tenant", k, m)
			}
		}
		switch {
		case len(w.Memories) != n:
			t.Errorf("warm write %d has %d memories, want %d", k, len(w.Memories), n)
		case !w.Rules.CheckStale || !w.Rules.Dedup || w.Rules.DuplicateThreshold == 0 || len(w.ScopeOf) != n || len(w.Scopes) == 0:
			t.Errorf("warm write %d is not a queued deduplicated write: %+v", k, w)
		case n > 1 && (len(users) < n/2 || slots < n/2):
			t.Errorf("warm write %d of %d memories has %d users and %d slots", k, n, len(users), slots)
		}
	}
}
