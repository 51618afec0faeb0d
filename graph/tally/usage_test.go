package tally

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
	f, ctx := newFixture(t)
	if n, c, err := f.s.TenantUsage(ctx, f.tenant); err != nil || n != 0 || c != 0 {
		t.Fatalf("empty tenant: %d memories, %d chars, %v", n, c, err)
	}
	a, b := f.mem("u1", memory.TypeProfile, memory.StatusActive, ""), f.mem("u2", memory.TypeProfile, memory.StatusSuperseded, "")
	a.Content, b.Content = "likes jazz", "预算十五万"
	other := f.mem("u1", memory.TypeProfile, memory.StatusActive, "")
	other.Tenant = testenv.Tenant(t)
	for _, ms := range [][]memory.Memory{{a, b}, {other}} {
		if _, err := f.g.CreateMemories(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	n, c, err := f.s.TenantUsage(ctx, f.tenant)
	if err != nil {
		t.Fatal(err)
	}
	// Characters, not bytes: "预算十五万" is five.
	if n != 2 || c != int64(len("likes jazz")+5) {
		t.Errorf("TenantUsage = %d memories, %d chars; want 2, %d", n, c, len("likes jazz")+5)
	}

	res, err := neo4j.ExecuteQuery(ctx, testenv.Neo4j(t), "EXPLAIN "+cypherTenantUsage, map[string]any{"tenant": f.tenant},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
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
	if op := p.Operator(); strings.Contains(op, "IndexSeek") || strings.Contains(op, "IndexScan") {
		return true
	}
	for _, c := range p.Children() {
		if seeks(c) {
			return true
		}
	}
	return false
}
