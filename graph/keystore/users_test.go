package keystore

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/graphtest"
	"mneme/identity"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/userids"
)

// run runs a query the store does not expose, for setting up and reading
// the graph's shape.
func run(t *testing.T, cypher string, params map[string]any) []map[string]any {
	t.Helper()
	res, err := neo4j.ExecuteQuery(graphtest.Ctx(t), testenv.Neo4j(t), cypher, params,
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
	if err != nil {
		t.Fatalf("query %q: %v", cypher, err)
	}
	out := make([]map[string]any, len(res.Records))
	for i, r := range res.Records {
		out[i] = r.AsMap()
	}
	return out
}

// TestCheckUserID checks an id against the users the tenant knows, by a
// write or as registered principals.
func TestCheckUserID(t *testing.T) {
	s := testStore(t)
	g := graphtest.Store(t)
	ctx := graphtest.Ctx(t)
	tenant := testenv.Tenant(t)
	m := memory.Memory{ID: memory.NewID("mem"), Tenant: tenant, UserID: "carol", AgentID: "agent-a", Type: memory.TypeSemantic,
		Content: "carol likes tea", Status: memory.StatusActive, Sensitivity: memory.SensitivityInternal, Version: 1}
	if _, err := g.CreateMemories(ctx, []memory.Memory{m}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePrincipal(ctx, tenant, identity.Principal{Kind: memory.KindUser, ID: "Erin", Name: "Erin Li"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id, existing string
	}{
		{"carol", ""}, {"Carol", "carol"}, {"CAROL", "carol"},
		{"Erin", ""}, {"erin", "Erin"},
		{"nobody", ""},
	} {
		t.Run(tt.id, func(t *testing.T) {
			err := s.CheckUserID(ctx, tenant, tt.id)
			var conflict *userids.CaseConflictError
			switch {
			case tt.existing == "" && err != nil:
				t.Errorf("CheckUserID(%s) = %v, want nil", tt.id, err)
			case tt.existing != "" && (!errors.As(err, &conflict) || *conflict != userids.CaseConflictError{ID: tt.id, Existing: tt.existing}):
				t.Errorf("CheckUserID(%s) = %v, want a conflict with %s", tt.id, err, tt.existing)
			}
		})
	}
	// Another tenant's users are none of this one's business.
	if err := s.CheckUserID(ctx, testenv.Tenant(t), "Carol"); err != nil {
		t.Errorf("CheckUserID in another tenant = %v, want nil", err)
	}
}

// TestEnsureUserFolds gives users stored before folded ids theirs; a pair
// stored then that differ only by case stays writable, each by its exact
// id, and a third spelling is refused.
func TestEnsureUserFolds(t *testing.T) {
	s := testStore(t)
	g := graphtest.Store(t)
	ctx := graphtest.Ctx(t)
	tenant := testenv.Tenant(t)
	run(t, `CREATE (:User {tenant: $tenant, id: 'dave'}), (:User {tenant: $tenant, id: 'Dave'})`, map[string]any{"tenant": tenant})
	for range 2 {
		if err := s.EnsureUserFolds(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rows := run(t, `MATCH (u:User {tenant: $tenant}) RETURN u.id AS id, u.id_fold AS fold ORDER BY id`, map[string]any{"tenant": tenant})
	want := []map[string]any{{"id": "Dave", "fold": "DAVE"}, {"id": "dave", "fold": "DAVE"}}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("users after the backfill (-want +got):\n%s", d)
	}
	write := func(user string) error {
		_, err := g.CreateMemories(ctx, []memory.Memory{{ID: memory.NewID("mem"), Tenant: tenant, UserID: user, AgentID: "agent-a",
			Type: memory.TypeSemantic, Content: user + " likes tea", Status: memory.StatusActive, Sensitivity: memory.SensitivityInternal, Version: 1}})
		return err
	}
	for _, user := range []string{"dave", "Dave"} {
		if err := write(user); err != nil {
			t.Errorf("write about %s: %v", user, err)
		}
	}
	var conflict *userids.CaseConflictError
	if err := write("DAVE"); !errors.As(err, &conflict) {
		t.Errorf("write about DAVE = %v, want a CaseConflictError", err)
	}
}
