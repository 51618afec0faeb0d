package memory

import (
	"context"
	"testing"
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
