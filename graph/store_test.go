package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"mneme/graph/storetest"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/policyadmin"
)

// The store must satisfy the interfaces memory and policyadmin
// consume.
var (
	_ memory.Store           = (*Store)(nil)
	_ policyadmin.GrantStore = (*Store)(nil)
)

var schemaOnce struct {
	sync.Once
	err error
}

// testStore returns a store on the test Neo4j with the schema in place.
func testStore(t testing.TB) *Store {
	t.Helper()
	s := New(testenv.Neo4j(t), Options{Database: testenv.Neo4jDatabase()})
	schemaOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		schemaOnce.err = s.EnsureSchema(ctx, testenv.EmbeddingDimension)
	})
	if schemaOnce.err != nil {
		t.Fatalf("EnsureSchema: %v", schemaOnce.err)
	}
	return s
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestStoreContract(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Store:     func(t *testing.T) storetest.Store { return testStore(t) },
		Dim:       testenv.EmbeddingDimension,
		AddAgents: addAgents,
	})
}

// wantVectorIndex is the vector index EnsureSchema keeps on the test
// server: the partitioned one where Cypher 25 exists, else the whole one
// (Neo4j 5.26).
func wantVectorIndex(t *testing.T) string {
	t.Helper()
	_, err := neo4j.ExecuteQuery(testCtx(t), testenv.Neo4j(t), `EXPLAIN CYPHER 25 RETURN 1`, nil,
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
	if err != nil {
		return indexVectorWhole
	}
	return indexVector
}

func TestEnsureSchema(t *testing.T) {
	s := testStore(t)
	vector := wantVectorIndex(t)
	t.Run("twice", func(t *testing.T) {
		for range 2 {
			if err := s.EnsureSchema(testCtx(t), testenv.EmbeddingDimension); err != nil {
				t.Fatalf("EnsureSchema: %v", err)
			}
		}
	})
	t.Run("concurrently", func(t *testing.T) {
		errs := make(chan error, 4)
		for range cap(errs) {
			go func() { errs <- s.EnsureSchema(testCtx(t), testenv.EmbeddingDimension) }()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Errorf("EnsureSchema: %v", err)
			}
		}
	})
	// A database made before the partitioned index keeps its whole one
	// until a store starts on it, and no longer after (unless the server
	// has no partitioned index).
	t.Run("replaces the whole vector index", func(t *testing.T) {
		query(t, ddlMemoryVectorWhole, map[string]any{"dim": testenv.EmbeddingDimension})
		fresh := New(testenv.Neo4j(t), Options{Database: testenv.Neo4jDatabase()})
		if err := fresh.EnsureSchema(testCtx(t), testenv.EmbeddingDimension); err != nil {
			t.Fatalf("EnsureSchema: %v", err)
		}
		rows := query(t, `SHOW INDEXES YIELD name WHERE name IN $names RETURN name`,
			map[string]any{"names": []string{indexVector, indexVectorWhole}})
		if d := cmp.Diff([]map[string]any{{"name": vector}}, rows); d != "" {
			t.Errorf("vector indexes (-want +got):\n%s", d)
		}
	})
	t.Run("other dimension", func(t *testing.T) {
		err := s.EnsureSchema(testCtx(t), testenv.EmbeddingDimension+1)
		if !errors.Is(err, ErrSchemaMismatch) {
			t.Errorf("EnsureSchema(other dimension) = %v, want ErrSchemaMismatch", err)
		}
	})
	t.Run("bad dimension", func(t *testing.T) {
		var inv *memory.InvalidError
		if err := s.EnsureSchema(testCtx(t), 0); !errors.As(err, &inv) {
			t.Errorf("EnsureSchema(0) = %v, want an InvalidError", err)
		}
	})
	t.Run("indexes", func(t *testing.T) {
		recs, err := neo4j.ExecuteQuery(testCtx(t), testenv.Neo4j(t),
			`SHOW INDEXES YIELD name, type, state, options RETURN name, type, state, options`, nil,
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			vector: "VECTOR", indexFullTextPartition: "FULLTEXT", "memory_tenant_user": "RANGE",
			"memory_tenant_key": "RANGE", "memory_tenant_id": "RANGE", "memory_tenant_idem": "RANGE",
			"memory_tenant_user_fact_text": "RANGE", "memory_tenant_user_fact_numbers": "RANGE",
			"memory_tenant_user_created": "RANGE", "memory_tenant_user_type_created": "RANGE", "memory_tenant_census": "RANGE",
		}
		got := map[string]string{}
		for _, r := range recs.Records {
			m := r.AsMap()
			name := str(m["name"])
			if (name == indexVector || name == indexVectorWhole) && name != vector {
				t.Errorf("index %s is left beside %s", name, vector)
			}
			if _, ok := want[name]; !ok {
				continue
			}
			got[name] = str(m["type"])
			if state := str(m["state"]); state != "ONLINE" {
				t.Errorf("index %s is %s", name, state)
			}
			if name == indexFullTextPartition {
				cfg, _ := m["options"].(map[string]any)["indexConfig"].(map[string]any)
				if a := str(cfg["fulltext.analyzer"]); a != "cjk" {
					t.Errorf("full-text analyzer = %q, want cjk", a)
				}
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("indexes (-want +got):\n%s", d)
		}
	})
}

// query runs a read query for graph-shape assertions; tests may use Cypher
// the store does not expose.
func query(t *testing.T, cypher string, params map[string]any) []map[string]any {
	t.Helper()
	res, err := neo4j.ExecuteQuery(testCtx(t), testenv.Neo4j(t), cypher, params,
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

func newMemory(tenant, user, content string) memory.Memory {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	return memory.Memory{
		ID: memory.NewID("mem"), Tenant: tenant, UserID: user, AgentID: "agent-a", Type: memory.TypeSemantic,
		Content: content, Status: memory.StatusActive, Sensitivity: memory.SensitivityConfidential,
		Importance: 0.5, Confidence: 1, ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1,
	}
}

func TestGraphShape(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	old := newMemory(tenant, "u1", "budget 100k")
	old.Key, old.SessionID = "budget", "sess-1"
	old.Entities = []memory.Entity{{ID: "amount:100k", Kind: "amount", Name: "100k"}}
	cur := newMemory(tenant, "u1", "budget 150k")
	cur.Key = "budget"
	cur.CreatedAt = cur.CreatedAt.Add(time.Minute)
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{old, cur}); err != nil {
		t.Fatal(err)
	}
	p := map[string]any{"tenant": tenant, "id": old.ID}
	rows := query(t, `MATCH (m:Memory {tenant: $tenant, id: $id})
RETURN m.sens_rank AS rank, m.user_id AS user, m.agent_id AS agent, m.session_id AS session,
  m.access_count AS access_count, m.idem_key AS idem,
  [(m)-[:ABOUT]->(u:User {tenant: $tenant}) | u.id] AS about,
  [(m)-[:WRITTEN_BY]->(a:Agent {tenant: $tenant}) | a.id] AS by,
  [(m)-[:IN_SESSION]->(s:Session {tenant: $tenant}) | s.id] AS sessions,
  [(m)-[r:MENTIONS]->(e:Entity {tenant: $tenant}) | {id: e.id, kind: e.kind, name: e.name, said_kind: r.kind, said: r.name}] AS mentions,
  [(n)-[r:SUPERSEDES]->(m) | {by: n.id, reason: r.reason, at: r.at}] AS superseded_by`, p)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	want := map[string]any{
		"rank": int64(2), "user": "u1", "agent": "agent-a", "session": "sess-1", "access_count": int64(0), "idem": nil,
		"about": []any{"u1"}, "by": []any{"agent-a"}, "sessions": []any{"sess-1"},
		// The entity is the tenant's id; its kind and name are the writer's, on the mention.
		"mentions":      []any{map[string]any{"id": "amount:100k", "kind": nil, "name": nil, "said_kind": "amount", "said": "100k"}},
		"superseded_by": []any{map[string]any{"by": cur.ID, "reason": reasonSameKey, "at": cur.CreatedAt}},
	}
	if d := cmp.Diff(want, rows[0], cmpopts.EquateApproxTime(0)); d != "" {
		t.Errorf("graph (-want +got):\n%s", d)
	}
}

func TestDeleteLeavesTombstone(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	a := newMemory(tenant, "u1", "order 42 shipped to Lyon")
	a.Entities = []memory.Entity{{ID: "order:42", Kind: "order", Name: "42"}, {ID: "city:lyon", Kind: "city", Name: "Lyon"}}
	b := newMemory(tenant, "u1", "Lyon office is closed on Mondays")
	b.Entities = []memory.Entity{{ID: "city:lyon", Kind: "city", Name: "Lyon"}}
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{a, b}); err != nil {
		t.Fatal(err)
	}
	before := time.Now().UTC()
	if err := s.DeleteMemory(testCtx(t), tenant, a.ID, "user:u1", "forget me"); err != nil {
		t.Fatal(err)
	}
	rows := query(t, `MATCH (t:Tombstone {tenant: $tenant, id: $id}) RETURN properties(t) AS t`,
		map[string]any{"tenant": tenant, "id": a.ID})
	if len(rows) != 1 {
		t.Fatalf("%d tombstones, want 1", len(rows))
	}
	props := rows[0]["t"].(map[string]any)
	deletedAt, _ := props["deleted_at"].(time.Time)
	if deletedAt.Before(before.Add(-time.Second)) || deletedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("deleted_at = %v, want about now", deletedAt)
	}
	delete(props, "deleted_at")
	want := map[string]any{"tenant": tenant, "id": a.ID, "by": "user:u1", "reason": "forget me"}
	if d := cmp.Diff(want, props); d != "" {
		t.Errorf("tombstone holds more or less than metadata (-want +got):\n%s", d)
	}
	rows = query(t, `MATCH (e:Entity {tenant: $tenant}) RETURN e.id AS id ORDER BY id`, map[string]any{"tenant": tenant})
	if d := cmp.Diff([]map[string]any{{"id": "city:lyon"}}, rows); d != "" {
		t.Errorf("entities after delete (-want +got):\n%s", d)
	}
}

func TestCreateMemoriesRejectsMixedTenants(t *testing.T) {
	s := testStore(t)
	a := newMemory(testenv.Tenant(t), "u1", "a")
	b := newMemory(testenv.Tenant(t), "u1", "b")
	_, err := s.CreateMemories(testCtx(t), []memory.Memory{a, b})
	var inv *memory.InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("mixed tenants: %v, want an InvalidError", err)
	}
}

func TestConcurrentSlotWrites(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		m := newMemory(tenant, "u1", "racing budget")
		m.Key = "budget"
		m.CreatedAt = m.CreatedAt.Add(time.Duration(i) * time.Second)
		go func() {
			_, err := s.CreateMemories(testCtx(t), []memory.Memory{m})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("CreateMemories: %v", err)
		}
	}
	all := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	active, err := s.ListMemories(testCtx(t), all, memory.ListQuery{Status: memory.StatusActive})
	if err != nil {
		t.Fatal(err)
	}
	if len(active) != 1 {
		t.Fatalf("%d active memories in one slot, want 1", len(active))
	}
	h, err := s.History(testCtx(t), tenant, active[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range h {
		if want := n - i; m.Version != want {
			t.Errorf("history[%d] is version %d, want %d", i, m.Version, want)
		}
	}
	if len(h) != n {
		t.Errorf("history has %d versions, want %d", len(h), n)
	}
}

func TestSearchVectorIndex(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	// Dense random vectors: the shared database holds many sparse, repeated
	// test vectors, among which the approximate index can miss a sparse
	// query's true neighbour at small k.
	seed := rand.Uint64()
	vec := func(i uint64) []float32 {
		r := rand.New(rand.NewPCG(seed, i))
		v := make([]float32, testenv.EmbeddingDimension)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		return v
	}
	a, b, c := newMemory(tenant, "u1", "a"), newMemory(tenant, "u1", "b"), newMemory(tenant, "u2", "c")
	a.Embedding, b.Embedding, c.Embedding = vec(1), vec(2), vec(1)
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{a, b, c}); err != nil {
		t.Fatal(err)
	}
	index, err := s.vectorIndex(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	hits, err := s.SearchVectorIndex(testCtx(t), tenant, "u1", vec(1), 10)
	if err != nil {
		t.Fatalf("SearchVectorIndex: %v", err)
	}
	// Without the partition in the index, u2's copy of the vector ties.
	if len(hits) == 0 || hits[0].Memory.ID != a.ID && (index.partitioned || hits[0].Memory.ID != c.ID) {
		t.Fatalf("hits = %v, want %s first", hitIDs(hits), a.ID)
	}
	// Neo4j 5.26 quantizes indexed vectors by default: an identical vector
	// scores about 0.9992 there, exactly 1 on 2026.x.
	if math.Abs(hits[0].Score-1) > 0.01 {
		t.Errorf("identical vector scores %v, want about 1", hits[0].Score)
	}
	for _, h := range hits {
		if h.Memory.Tenant != tenant {
			t.Errorf("hit of tenant %s", h.Memory.Tenant)
		}
		// Where the index holds the partition, the search keeps to it.
		if index.partitioned && h.Memory.UserID != "u1" {
			t.Errorf("hit of user %s", h.Memory.UserID)
		}
	}
	if hits, err := s.SearchVectorIndex(testCtx(t), testenv.Tenant(t), "u1", vec(1), 10); err != nil || len(hits) != 0 {
		t.Errorf("another tenant: %v, %v", hits, err)
	}
}

func hitIDs(hs []memory.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Memory.ID
	}
	return out
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestAnswer(t *testing.T) {
	s := testStore(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	// Twice: the second borrows the first's pooled connection, and must
	// still ask the database.
	for range 2 {
		if err := s.Answer(ctx); err != nil {
			t.Fatalf("Answer = %v", err)
		}
	}
}

// TestUnavailable needs no server: it points a driver at a closed port.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	uri := "bolt://" + closedPort(t)
	t.Run("Open", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		_, err := Open(ctx, Config{URI: uri})
		if !errors.Is(err, memory.ErrUnavailable) {
			t.Errorf("Open = %v, want ErrUnavailable", err)
		}
	})
	// Each call gets its own driver: the driver initialises its connector
	// lazily without a lock, which the race detector flags when several
	// first connections start at once.
	newStore := func(t *testing.T) *Store {
		driver, err := neo4j.NewDriverWithContext(uri, neo4j.NoAuth(), func(c *config.Config) {
			c.MaxTransactionRetryTime = 500 * time.Millisecond
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { driver.Close(context.Background()) })
		return New(driver, Options{})
	}
	all := memory.Scope{Tenant: "t", Clauses: []memory.Clause{{}}}
	calls := []struct {
		name string
		call func(ctx context.Context, s *Store) error
	}{
		{"Ping", func(ctx context.Context, s *Store) error { return s.Ping(ctx) }},
		{"Answer", func(ctx context.Context, s *Store) error { return s.Answer(ctx) }},
		{"GetMemory", func(ctx context.Context, s *Store) error { _, err := s.GetMemory(ctx, "t", "m"); return err }},
		{"CreateMemories", func(ctx context.Context, s *Store) error {
			_, err := s.CreateMemories(ctx, []memory.Memory{newMemory("t", "u", "x")})
			return err
		}},
		{"ListMemories", func(ctx context.Context, s *Store) error {
			_, err := s.ListMemories(ctx, all, memory.ListQuery{})
			return err
		}},
		{"ListGrants", func(ctx context.Context, s *Store) error { _, err := s.ListGrants(ctx, ""); return err }},
		{"EnsureSchema", func(ctx context.Context, s *Store) error { return s.EnsureSchema(ctx, 8) }},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if err := tc.call(ctx, newStore(t)); !errors.Is(err, memory.ErrUnavailable) {
				t.Errorf("%s = %v, want ErrUnavailable", tc.name, err)
			}
		})
	}
	t.Run("deadline", func(t *testing.T) {
		t.Parallel()
		// With retries longer than the caller's deadline, the deadline ends
		// the call and still reads as unavailable.
		d, err := neo4j.NewDriverWithContext(uri, neo4j.NoAuth())
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close(context.Background())
		ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel()
		if _, err := New(d, Options{}).GetMemory(ctx, "t", "m"); !errors.Is(err, memory.ErrUnavailable) {
			t.Errorf("GetMemory = %v, want ErrUnavailable", err)
		}
	})
}

// TestConcurrentBatchesDoNotDeadlock writes batches that touch the same
// users, agents, sessions and entities in opposite orders. Without a global
// lock order these transactions wait on each other in cycles and Neo4j
// aborts them as deadlocks.
func TestConcurrentBatchesDoNotDeadlock(t *testing.T) {
	testStore(t) // schema
	// No retries: a deadlock must surface as an error, not be retried away.
	driver, err := neo4j.NewDriverWithContext(os.Getenv(testenv.EnvNeo4jURI), neo4j.NoAuth(), func(c *config.Config) {
		c.MaxTransactionRetryTime = time.Nanosecond
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { driver.Close(context.Background()) })
	s := New(driver, Options{Database: testenv.Neo4jDatabase()})
	tenant := testenv.Tenant(t)
	users := []string{"u1", "u2", "u3", "u4"}
	agents := []string{"agent-a", "agent-b"}
	const writers, rounds = 6, 8
	errs := make(chan error, writers*rounds)
	for w := range writers {
		go func() {
			for r := range rounds {
				batch := make([]memory.Memory, 0, len(users))
				for i := range users {
					// Odd writers walk users, agents and entities backwards.
					j := i
					if w%2 == 1 {
						j = len(users) - 1 - i
					}
					m := newMemory(tenant, users[j], fmt.Sprintf("writer %d round %d item %d", w, r, i))
					m.AgentID = agents[(j+w)%len(agents)]
					m.SessionID = fmt.Sprintf("s-%d", j%2)
					m.Key = fmt.Sprintf("slot-%d", j%2)
					m.Entities = []memory.Entity{
						{ID: fmt.Sprintf("order-%d", j), Kind: "order", Name: "order"},
						{ID: fmt.Sprintf("order-%d", len(users)-1-j), Kind: "order", Name: "order"},
					}
					batch = append(batch, m)
				}
				_, err := s.CreateMemories(testCtx(t), batch)
				errs <- err
			}
		}()
	}
	for range writers * rounds {
		if err := <-errs; err != nil {
			t.Errorf("CreateMemories: %v", err)
		}
	}
	all := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	active, err := s.ListMemories(testCtx(t), all, memory.ListQuery{Status: memory.StatusActive, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	// Each user fills one slot, and each slot ends with exactly one head.
	if want := len(users); len(active) != want {
		t.Errorf("%d active memories, want %d (one per slot)", len(active), want)
	}
}

// TestAVersionNeverEndsBeforeItBegins: a write whose request came before
// the head's, or in the same instant, but commits after it supersedes that
// head and begins just after the head did, so every version holds for an
// instant at least (as_of finds it) and none is inverted.
func TestAVersionNeverEndsBeforeItBegins(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	for _, gap := range []time.Duration{time.Second, 0} {
		head := newMemory(tenant, "u1", "credit limit 50k")
		head.Key = "credit_limit"
		head.ValidFrom = head.ValidFrom.Add(gap)
		late := newMemory(tenant, "u1", "credit limit 40k") // its request came first, or with the head's
		late.Key, late.ValidFrom = "credit_limit", head.ValidFrom.Add(-gap)
		for _, m := range []memory.Memory{head, late} {
			if _, err := s.CreateMemories(testCtx(t), []memory.Memory{m}); err != nil {
				t.Fatal(err)
			}
		}
		h, err := s.GetMemory(testCtx(t), tenant, head.ID)
		if err != nil {
			t.Fatal(err)
		}
		n, err := s.GetMemory(testCtx(t), tenant, late.ID)
		if err != nil {
			t.Fatal(err)
		}
		if h.Status != memory.StatusSuperseded || h.ValidTo == nil || !h.ValidTo.After(h.ValidFrom) {
			t.Errorf("gap %v: the head: %s, valid %v to %v; want superseded, ending after it begins", gap, h.Status, h.ValidFrom, h.ValidTo)
		}
		if n.Status != memory.StatusActive || h.ValidTo == nil || !n.ValidFrom.Equal(*h.ValidTo) {
			t.Errorf("gap %v: the new head: %s, valid from %v; want active from the old head's end %v", gap, n.Status, n.ValidFrom, h.ValidTo)
		}
	}
}

// TestActivationSupersedesAsDisplaceable: the slot statement a confirmed
// candidate runs holds memory.Displaceable's rule in Cypher; for each pair
// of head and candidate it supersedes the head exactly when the rule says.
func TestActivationSupersedesAsDisplaceable(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	all := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	mem := func(agent, typ, sensitivity string) memory.Memory {
		m := newMemory(tenant, "u1", "note by "+agent)
		m.AgentID, m.Type, m.Sensitivity = agent, typ, sensitivity
		return m
	}
	tests := []struct{ head, cand memory.Memory }{
		{mem("agent-a", memory.TypeSemantic, memory.SensitivityInternal), mem("agent-a", memory.TypeSemantic, memory.SensitivityConfidential)},
		{mem("agent-a", memory.TypeSemantic, memory.SensitivityInternal), mem("agent-b", memory.TypeSemantic, memory.SensitivityInternal)},
		{mem("agent-a", memory.TypeProfile, memory.SensitivityInternal), mem("agent-b", memory.TypeProfile, memory.SensitivityInternal)},
		{mem("agent-a", memory.TypeProfile, memory.SensitivityInternal), mem("agent-b", memory.TypeProfile, memory.SensitivityConfidential)},
		{mem("user:u1", memory.TypeEpisodic, memory.SensitivityInternal), mem("agent-b", memory.TypeSemantic, memory.SensitivityPublic)},
		{mem("user:u1", memory.TypeEpisodic, memory.SensitivityInternal), mem("agent-b", memory.TypeSemantic, memory.SensitivityConfidential)},
	}
	for i, tc := range tests {
		key := fmt.Sprintf("slot-%d", i)
		tc.head.Key, tc.cand.Key, tc.cand.Status = key, key, memory.StatusCandidate
		if _, err := s.CreateMemories(testCtx(t), []memory.Memory{tc.head, tc.cand}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ConfirmMemory(testCtx(t), tenant, tc.cand.ID, "u1", all, time.Now()); err != nil {
			t.Fatal(err)
		}
		h, err := s.GetMemory(testCtx(t), tenant, tc.head.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := memory.Displaceable(tc.cand, tc.head); (h.Status == memory.StatusSuperseded) != want {
			t.Errorf("%s's %s %s head after %s's %s %s candidate is %s; Displaceable says %v", tc.head.AgentID, tc.head.Sensitivity, tc.head.Type,
				tc.cand.AgentID, tc.cand.Sensitivity, tc.cand.Type, h.Status, want)
		}
	}
}
