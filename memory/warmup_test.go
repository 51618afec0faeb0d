package memory

import (
	"context"
	"testing"
)

// WarmUp runs every query a recall can reach, in a tenant no request can
// name.
func TestWarmUp(t *testing.T) {
	for _, tenant := range WarmTenants {
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
		"a scope for every caller":                       len(f.authz.scopeCalls) >= len(WarmTenants)*len(warmUsers)*(len(warmCallers)+1),
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
	if want := len(WarmTenants) * len(warmUsers) * len(warmBatchSizes); len(ws.warms) != want {
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

// WarmRecallAs recalls as each caller given, in its own tenant, about the
// user given, and runs the graph queries a recall reaches only when it
// finds something; it stores nothing and decides nothing.
func TestWarmRecallAs(t *testing.T) {
	fs := &fakeSearch{}
	f := searchFixture(t, RecallConfig{}, fs)
	grantee := Principal{Tenant: "acme", Kind: KindAgent, ID: "support-bot", Roles: []string{"agent"}}
	if err := f.svc.WarmRecallAs(context.Background(), []Principal{grantee}, "w_3fa9c2"); err != nil {
		t.Fatal(err)
	}
	for _, u := range f.authz.scopeCalls {
		if u != "w_3fa9c2" && u != "" {
			t.Errorf("a scope asked for user %q, want only the warm user", u)
		}
	}
	seeded := 0
	for _, q := range fs.expandReqs {
		if len(q.Seeds) > 0 {
			seeded++
		}
		if q.UserID != "w_3fa9c2" {
			t.Errorf("an expansion about %q, want the warm user", q.UserID)
		}
	}
	switch {
	case len(f.authz.scopeCalls) == 0:
		t.Error("no read scope was computed for the caller")
	case len(f.store.vectorCalls) == 0 || len(f.store.fullTextCalls) == 0:
		t.Errorf("searches: %d vector, %d full text; want both", len(f.store.vectorCalls), len(f.store.fullTextCalls))
	case seeded < 3 || len(fs.fetches) < 3:
		t.Errorf("first-hit expansions %d, vector index fetches %d; want the graph's queries too", seeded, len(fs.fetches))
	case len(f.authz.decisions) != 0 || len(f.store.writes) != 0 || len(f.store.created) != 0:
		t.Errorf("the warm-up decided %d times and wrote %d+%d times", len(f.authz.decisions), len(f.store.writes), len(f.store.created))
	}
}
