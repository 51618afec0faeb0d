package graph

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/internal/testenv"
	"mneme/memory"
)

// EnsureSchema skips a statement whose index or constraint exists by name,
// so every statement must name one, and no two the same.
func TestSchemaNames(t *testing.T) {
	seen := map[string]bool{}
	for _, ddl := range append(schema[:len(schema):len(schema)], vectorPartitioned.create, vectorWhole.create) {
		name := ddlName(ddl)
		if name == "" || strings.ContainsAny(name, "():") || seen[name] {
			t.Errorf("ddlName(%q) = %q: missing, not a name or seen before", ddl, name)
		}
		seen[name] = true
	}
}

// Memories stored with the partition's former value (tenant/user) or none
// get their token at start-up, and the partitioned searches find them.
func TestBackfillPartitions(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant := testenv.Tenant(t)
	old, none := newMemory(tenant, "u1", "a kiwi note"), newMemory(tenant, "u1", "another kiwi note")
	if _, err := s.CreateMemories(ctx, []memory.Memory{old, none}); err != nil {
		t.Fatal(err)
	}
	err := s.run(ctx, neo4j.AccessModeWrite, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, `MATCH (m:Memory {tenant: $tenant, user_id: 'u1'})
SET m.partition = CASE m.id WHEN $old THEN m.tenant + '/' + m.user_id END`, map[string]any{"tenant": tenant, "old": old.ID})
	})
	if err != nil {
		t.Fatal(err)
	}
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	search := func() []string {
		hits, err := s.SearchFullText(ctx, whole, memory.SearchQuery{UserID: "u1", Text: "kiwi", Now: time.Now(), Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return hitIDs(hits)
	}
	if got := search(); len(got) != 0 {
		t.Fatalf("before the backfill the search found %v, want nothing (the test changed no partition)", got)
	}
	if err := s.backfill(ctx, "partitions", cypherOldPartitions, cypherSetPartitions, partitionRow); err != nil {
		t.Fatal(err)
	}
	got := search()
	slices.Sort(got)
	if want := slices.Sorted(slices.Values([]string{old.ID, none.ID})); !slices.Equal(got, want) {
		t.Errorf("after the backfill the search found %v, want %v", got, want)
	}
}
