package graph

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// TestBackfillEntityNames: an entity named before names moved to the
// mentions gives its kind and name to the mention of the memory that
// named it first, drops the aliases no one memory gave, and keeps none
// itself; a later memory's mention, and every reader of it, never sees them.
func TestBackfillEntityNames(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant := testenv.Tenant(t)
	first, later := newMemory(tenant, "u1", "order 7 is sold below cost"), newMemory(tenant, "u2", "u2 asked about order 7")
	later.CreatedAt = first.CreatedAt.Add(time.Hour)
	first.Entities = []memory.Entity{{ID: "order-7", Kind: "order"}}
	later.Entities = first.Entities
	if _, err := s.CreateMemories(ctx, []memory.Memory{first, later}); err != nil {
		t.Fatal(err)
	}
	// As the store wrote it before: the name on the entity, none on the mentions.
	err := s.run(ctx, neo4j.AccessModeWrite, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, `MATCH (e:Entity {tenant: $tenant, id: 'order-7'})<-[r:MENTIONS]-()
SET e.kind = 'order', e.name = 'order 7: CFO exception', e.aliases = ['loss leader'] REMOVE r.kind, r.name, r.aliases`, map[string]any{"tenant": tenant})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.backfill(ctx, "entity names", cypherNamedEntities, cypherMoveEntityNames, maps.Clone); err != nil {
		t.Fatal(err)
	}
	rows := query(t, `MATCH (e:Entity {tenant: $tenant, id: 'order-7'})<-[r:MENTIONS]-(m:Memory {tenant: $tenant})
RETURN m.id AS id, r.kind AS kind, r.name AS name, r.aliases AS aliases, [e.kind, e.name, e.aliases] AS entity ORDER BY m.created_at`, map[string]any{"tenant": tenant})
	want := []map[string]any{
		{"id": first.ID, "kind": "order", "name": "order 7: CFO exception", "aliases": nil, "entity": []any{nil, nil, nil}},
		{"id": later.ID, "kind": nil, "name": nil, "aliases": nil, "entity": []any{nil, nil, nil}},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("after the backfill (-want +got):\n%s", d)
	}
	got, err := s.GetMemory(ctx, tenant, later.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Entities) != 1 || got.Entities[0].Kind != "" || got.Entities[0].Name != "" || len(got.Entities[0].Aliases) != 0 {
		t.Errorf("the later memory reads its entity as %+v, want it unnamed", got.Entities)
	}
}
