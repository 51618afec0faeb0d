package graph

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/internal/testenv"
	"mneme/memory"
)

func TestGrantChangesBumpRevision(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant := testenv.Tenant(t)
	rev := func() int64 {
		t.Helper()
		rows := query(t, `MATCH (st:PolicyState {tenant: $tenant}) RETURN st.grant_revision AS r`, map[string]any{"tenant": tenant})
		if len(rows) == 0 {
			return 0
		}
		return rows[0]["r"].(int64)
	}
	g := memory.Grant{ID: "g1", Tenant: tenant, Grantee: "b", Source: "a", Types: []string{"episodic"}, MaxSensitivity: "internal", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	// A grant is made only between agents that exist.
	if _, err := s.CreateGrant(ctx, g); !errors.Is(err, memory.ErrNotFound) || rev() != 0 {
		t.Errorf("grant between agents that do not exist: err = %v, revision %d; want not found, revision 0", err, rev())
	}
	addAgents(t, tenant, "a", "b")
	steps := []struct {
		name    string
		do      func() error
		wantErr error
		want    int64
	}{
		{"create", func() error { _, err := s.CreateGrant(ctx, g); return err }, nil, 1},
		{"create twice", func() error { _, err := s.CreateGrant(ctx, g); return err }, memory.ErrConflict, 1},
		{"update", func() error { u := g; u.Kinds = []string{"order"}; _, err := s.UpdateGrant(ctx, u); return err }, nil, 2},
		{"update missing", func() error { u := g; u.ID = "nope"; _, err := s.UpdateGrant(ctx, u); return err }, memory.ErrNotFound, 2},
		{"put replaces", func() error { p := g; p.Source = "*"; _, err := s.PutGrant(ctx, p); return err }, nil, 3},
		{"put creates", func() error { p := g; p.ID = "g2"; _, err := s.PutGrant(ctx, p); return err }, nil, 4},
		{"delete", func() error { return s.DeleteGrant(ctx, tenant, "g2") }, nil, 5},
		{"delete missing", func() error { return s.DeleteGrant(ctx, tenant, "g2") }, memory.ErrNotFound, 5},
	}
	for _, step := range steps {
		err := step.do()
		if (step.wantErr == nil) != (err == nil) || (step.wantErr != nil && !errors.Is(err, step.wantErr)) {
			t.Errorf("%s: err = %v, want %v", step.name, err, step.wantErr)
		}
		if got := rev(); got != step.want {
			t.Errorf("%s: grant revision %d, want %d", step.name, got, step.want)
		}
	}
	gs, err := s.ListGrants(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	want := g
	want.Source, want.Kinds = "*", nil
	if diff := cmp.Diff([]memory.Grant{want}, gs); diff != "" {
		t.Errorf("grants (-want +got):\n%s", diff)
	}

	// Of concurrent deletes of one grant, one deletes it and the others
	// find nothing: each used to answer done, and bump the revision.
	before := rev()
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = s.DeleteGrant(ctx, tenant, g.ID) })
	}
	wg.Wait()
	done := 0
	for _, err := range errs {
		switch {
		case err == nil:
			done++
		case !errors.Is(err, memory.ErrNotFound):
			t.Errorf("concurrent delete: %v", err)
		}
	}
	if done != 1 || rev() != before+1 {
		t.Errorf("concurrent deletes: %d done, revision %d after %d; want one, one revision more", done, rev(), before)
	}
}

// addAgents makes agent principals of tenant, as the key store does.
func addAgents(t *testing.T, tenant string, ids ...string) {
	t.Helper()
	_, err := neo4j.ExecuteQuery(testCtx(t), testenv.Neo4j(t), `UNWIND $ids AS id CREATE (:Principal {tenant: $tenant, kind: 'agent', id: id})`,
		map[string]any{"tenant": tenant, "ids": ids}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
	if err != nil {
		t.Fatal(err)
	}
}

// TestListGrantsSkipsAVanishedGrant: a grant deleted while the listing read
// it comes back without properties; it is no grant, and the policy engine
// refused the whole list for it (a grant change then answered 503). A
// Grant node without an id stands in for it.
func TestListGrantsSkipsAVanishedGrant(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	query(t, `CREATE (:Grant {tenant: $tenant})`, map[string]any{"tenant": tenant})
	defer query(t, `MATCH (g:Grant {tenant: $tenant}) DELETE g`, map[string]any{"tenant": tenant})
	gs, err := s.ListGrants(testCtx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if g.ID == "" || g.Tenant == "" {
			t.Errorf("listed a grant without id or tenant: %+v", g)
		}
	}
}
