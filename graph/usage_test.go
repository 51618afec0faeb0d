package graph

import (
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/internal/testenv"
	"mneme/memory"
)

// TestTenantUsage counts one tenant's memories and characters, in every
// status, and nothing of another tenant; the count seeks an index.
func TestTenantUsage(t *testing.T) {
	s := testStore(t)
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)
	ctx := testCtx(t)
	if n, c, err := s.TenantUsage(ctx, tenant); err != nil || n != 0 || c != 0 {
		t.Fatalf("empty tenant: %d memories, %d chars, %v", n, c, err)
	}
	a, b := newMemory(tenant, "u1", "likes jazz"), newMemory(tenant, "u2", "预算十五万")
	b.Status = "superseded"
	if _, err := s.CreateMemories(ctx, []memory.Memory{a, b}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateMemories(ctx, []memory.Memory{newMemory(other, "u1", "not counted here")}); err != nil {
		t.Fatal(err)
	}
	n, c, err := s.TenantUsage(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	// Characters, not bytes: "预算十五万" is five.
	if n != 2 || c != int64(len("likes jazz")+5) {
		t.Errorf("TenantUsage = %d memories, %d chars; want 2, %d", n, c, len("likes jazz")+5)
	}

	res, err := neo4j.ExecuteQuery(ctx, s.driver, "EXPLAIN "+cypherTenantUsage, map[string]any{"tenant": tenant},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.db))
	if err != nil {
		t.Fatal(err)
	}
	if plan := res.Summary.Plan(); plan == nil || !seeks(plan) {
		t.Errorf("the usage count scans instead of seeking an index:\n%v", plan)
	}
}

func seeks(p neo4j.Plan) bool {
	if p == nil {
		return false
	}
	op := p.Operator()
	if strings.Contains(op, "IndexSeek") || strings.Contains(op, "IndexScan") {
		return true
	}
	for _, c := range p.Children() {
		if seeks(c) {
			return true
		}
	}
	return false
}
