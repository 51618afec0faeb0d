package keystore

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/graph/graphtest"
	"mneme/internal/testenv"
)

func TestEnsurePrincipals(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	for range 2 {
		if err := s.EnsureAgent(graphtest.Ctx(t), tenant, "order-bot", "orders"); err != nil {
			t.Fatal(err)
		}
		if err := s.EnsureUser(graphtest.Ctx(t), tenant, "u1", "Ethan Zhou"); err != nil {
			t.Fatal(err)
		}
	}
	// An empty name keeps the one set before.
	if err := s.EnsureUser(graphtest.Ctx(t), tenant, "u1", ""); err != nil {
		t.Fatal(err)
	}
	rows := run(t, `MATCH (u:User {tenant: $tenant}) RETURN u.name AS name`, map[string]any{"tenant": tenant})
	if d := cmp.Diff([]map[string]any{{"name": "Ethan Zhou"}}, rows); d != "" {
		t.Errorf("user names (-want +got):\n%s", d)
	}
	// An empty team keeps the one set before.
	if err := s.EnsureAgent(graphtest.Ctx(t), tenant, "order-bot", ""); err != nil {
		t.Fatal(err)
	}
	rows = run(t, `MATCH (a:Agent {tenant: $tenant}) RETURN a.id AS id, a.team AS team`, map[string]any{"tenant": tenant})
	if d := cmp.Diff([]map[string]any{{"id": "order-bot", "team": "orders"}}, rows); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	rows = run(t, `MATCH (u:User {tenant: $tenant}) RETURN u.id AS id`, map[string]any{"tenant": tenant})
	if d := cmp.Diff([]map[string]any{{"id": "u1"}}, rows); d != "" {
		t.Errorf("users (-want +got):\n%s", d)
	}
}
