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
	"mneme/policyadmin"
)

func TestPolicyRevisions(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	st, err := s.PolicyState(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(policyadmin.PolicyState{Tenant: tenant, History: []int64{}}, st); diff != "" {
		t.Errorf("state of a fresh tenant (-want +got):\n%s", diff)
	}
	mods := []policyadmin.PolicyModule{{Name: "a.rego", Source: "package a\n"}, {Name: "a_test.rego", Source: "package a_test\n"}}
	// Concurrent pushes get distinct numbers.
	var wg sync.WaitGroup
	numbers := make([]int64, 4)
	for i := range numbers {
		wg.Go(func() {
			r, err := s.CreatePolicyRevision(ctx, policyadmin.PolicyRevision{Tenant: tenant, Author: "admin:root", Message: "m", CreatedAt: at, Digest: "sha256:x", Modules: mods})
			if err != nil {
				t.Error(err)
			}
			numbers[i] = r.Number
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, n := range numbers {
		if n < 1 || n > 4 || seen[n] {
			t.Errorf("revision numbers %v, want 1..4 each once", numbers)
		}
		seen[n] = true
	}
	got, err := s.PolicyRevision(ctx, tenant, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := policyadmin.PolicyRevision{Tenant: tenant, Number: 2, Author: "admin:root", Message: "m", CreatedAt: at, Digest: "sha256:x", Modules: mods}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("revision (-want +got):\n%s", diff)
	}
	if _, err := s.PolicyRevision(ctx, other, 2); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("another tenant's revision: %v, want ErrNotFound", err)
	}
	list, err := s.ListPolicyRevisions(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 4 || list[0].Number != 1 || list[3].Number != 4 || list[0].Modules != nil {
		t.Errorf("list %+v", list)
	}

	if _, err := s.ActivatePolicy(ctx, tenant, 9, "admin:root", at); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("activate a missing revision: %v", err)
	}
	if _, err := s.ActivatePolicy(ctx, other, 2, "admin:root", at); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("activate another tenant's revision: %v", err)
	}
	st, err = s.ActivatePolicy(ctx, tenant, 3, "admin:root", at)
	if err != nil {
		t.Fatal(err)
	}
	st, err = s.ActivatePolicy(ctx, tenant, 0, "admin:two", at)
	if err != nil {
		t.Fatal(err)
	}
	wantSt := policyadmin.PolicyState{Tenant: tenant, Active: 0, Epoch: 2, History: []int64{3, 0}, ActivatedAt: &at, ActivatedBy: "admin:two"}
	if diff := cmp.Diff(wantSt, st); diff != "" {
		t.Errorf("state after two activations (-want +got):\n%s", diff)
	}
	again, err := s.PolicyState(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, again); diff != "" {
		t.Errorf("PolicyState (-activate +read):\n%s", diff)
	}
}

func TestGrantChangesBumpRevision(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant := testenv.Tenant(t)
	rev := func() int64 {
		t.Helper()
		st, err := s.PolicyState(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		return st.GrantRevision
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
