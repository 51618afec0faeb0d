package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/internal/testenv"
	"mneme/memory"
)

// bulkUser is what loadUser wrote about one user.
type bulkUser struct {
	ids      []string
	entities int64 // only this user's memories mention them
	sessions int64 // only this user's memories are in them
}

// loadUser writes n memories about user straight into the graph, shaped as
// the write path shapes them (memoryProps; ABOUT, WRITTEN_BY, IN_SESSION,
// MENTIONS, SUPERSEDES; an embedding), a chunk per transaction: tens of
// thousands load in seconds. Memories come in chains of ten versions of
// one key; every ten mention an entity of their own and the city the other
// users share, every hundred share a session, and every fiftieth was
// written by the user themself (the Agent "user:"+user).
func loadUser(tb testing.TB, ctx context.Context, tenant, user string, n int) bulkUser {
	tb.Helper()
	const chunk = 2000
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	out := bulkUser{entities: int64((n + 9) / 10), sessions: int64((n + 99) / 100)}
	for from := 0; from < n; from += chunk {
		rows := make([]map[string]any, 0, chunk)
		for i := from; i < min(from+chunk, n); i++ {
			m := newMemory(tenant, user, fmt.Sprintf("%s secret number %d", user, i))
			m.ID = fmt.Sprintf("mem-%s-%s-%06d", tenant, user, i)
			m.Key = fmt.Sprintf("k%d", i/10)
			m.SessionID = fmt.Sprintf("sess-%s-%d", user, i/100)
			m.CreatedAt = at.Add(time.Duration(i) * time.Second)
			m.Embedding = make([]float32, testenv.EmbeddingDimension)
			m.Embedding[i%testenv.EmbeddingDimension] = 1
			if i%10 != 9 && i != n-1 {
				m.Status = memory.StatusSuperseded
			}
			if i%50 == 0 {
				m.AgentID = "user:" + user
			}
			prev := any(nil)
			if i%10 != 0 {
				prev = fmt.Sprintf("mem-%s-%s-%06d", tenant, user, i-1)
			}
			rows = append(rows, map[string]any{
				"props": memoryProps(m), "entity": fmt.Sprintf("ent-%s-%d", user, i/10), "prev": prev,
			})
			out.ids = append(out.ids, m.ID)
		}
		res, err := neo4j.ExecuteQuery(ctx, testenv.Neo4j(tb), `UNWIND $rows AS row
MERGE (u:User {tenant: $tenant, id: row.props.user_id})
MERGE (a:Agent {tenant: $tenant, id: row.props.agent_id})
MERGE (s:Session {tenant: $tenant, id: row.props.session_id})
MERGE (e:Entity {tenant: $tenant, id: row.entity}) ON CREATE SET e.kind = 'thing', e.name = row.entity
MERGE (c:Entity {tenant: $tenant, id: 'city:lyon'}) ON CREATE SET c.kind = 'city', c.name = 'Lyon'
CREATE (m:Memory {tenant: $tenant, id: row.props.id})
SET m += row.props
CREATE (m)-[:ABOUT]->(u), (m)-[:WRITTEN_BY]->(a), (m)-[:IN_SESSION]->(s), (m)-[:MENTIONS]->(e), (m)-[:MENTIONS]->(c)
WITH m, row
MATCH (p:Memory {tenant: $tenant, id: row.prev})
CREATE (m)-[:SUPERSEDES {at: m.created_at, reason: 'same key'}]->(p)`,
			map[string]any{"tenant": tenant, "rows": rows},
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
		if err != nil {
			tb.Fatalf("loading memories %d–%d: %v", from, from+len(rows), err)
		}
		_ = res
	}
	return out
}

// eraseCtx bounds a test that loads and erases thousands of memories.
func eraseCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// userTombstone reads the user's tombstone: whether it exists, and whether
// it still says the erase is under way.
func userTombstone(t *testing.T, tenant, user string) (exists, erasing bool, fence int64) {
	t.Helper()
	rows := query(t, `MATCH (t:Tombstone {tenant: $tenant, id: $id}) RETURN t.erasing IS NOT NULL AS erasing, t.fence AS fence`,
		map[string]any{"tenant": tenant, "id": memory.UserTombstoneID(tenant, user)})
	if len(rows) == 0 {
		return false, false, 0
	}
	f, _ := rows[0]["fence"].(int64)
	return true, rows[0]["erasing"] == true, f
}

// tombstoneCount counts the tenant's tombstones of memories.
func tombstoneCount(t *testing.T, tenant string) int64 {
	t.Helper()
	rows := query(t, `MATCH (t:Tombstone {tenant: $tenant}) WHERE t.kind IS NULL RETURN count(t) AS n`, map[string]any{"tenant": tenant})
	return rows[0]["n"].(int64)
}

// TestEraseUserInBatches erases a user of thousands of memories in batches
// of a few hundred: every memory leaves a tombstone, the user's own
// entities and sessions go, shared ones stay, and the counts add up over
// the batches. MNEME_TEST_ERASE_MEMORIES sets how many (default 12,000).
func TestEraseUserInBatches(t *testing.T) {
	n := testenv.Count(t, "MNEME_TEST_ERASE_MEMORIES", 12000)
	const batch = 500
	s := New(testenv.Neo4j(t), Options{Database: testenv.Neo4jDatabase(), EraseBatch: batch})
	testStore(t) // the schema
	tenant := testenv.Tenant(t)
	ctx := eraseCtx(t)
	u1 := loadUser(t, ctx, tenant, "u1", n)
	loadUser(t, ctx, tenant, "u2", 3)

	ts := memory.Tombstone{At: time.Now(), By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1"), Fence: 7}
	start := time.Now()
	got, err := s.EraseUser(ctx, tenant, "u1", ts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("erased %d memories in batches of %d in %s", n, batch, time.Since(start).Round(time.Millisecond))
	// The User node and the Agent the user wrote as.
	want := memory.GraphErased{Memories: int64(n), Entities: u1.entities, Sessions: u1.sessions, Users: 2}
	if got != want {
		t.Errorf("erased %+v, want %+v", got, want)
	}
	if n := tombstoneCount(t, tenant); n != int64(len(u1.ids)) {
		t.Errorf("%d memory tombstones, want %d", n, len(u1.ids))
	}
	if exists, erasing, fence := userTombstone(t, tenant, "u1"); !exists || erasing || fence != 7 {
		t.Errorf("user tombstone: exists %v, erasing %v, fence %d; want a finished erase with fence 7", exists, erasing, fence)
	}
	left := query(t, `CALL {
  MATCH (n:Memory {tenant: $tenant}) RETURN n
  UNION MATCH (n:Entity {tenant: $tenant}) RETURN n
  UNION MATCH (n:Session {tenant: $tenant}) RETURN n
  UNION MATCH (n:User {tenant: $tenant}) RETURN n
  UNION MATCH (n:Agent {tenant: $tenant}) RETURN n
}
RETURN labels(n)[0] + ' ' + n.id AS node ORDER BY node`, map[string]any{"tenant": tenant})
	var nodes []string
	for _, r := range left {
		nodes = append(nodes, r["node"].(string))
	}
	wantLeft := "Agent agent-a,Agent user:u2,Entity city:lyon,Entity ent-u2-0," +
		fmt.Sprintf("Memory mem-%s-u2-000000,Memory mem-%[1]s-u2-000001,Memory mem-%[1]s-u2-000002,", tenant) +
		"Session sess-u2-0,User u2"
	if strings.Join(nodes, ",") != wantLeft {
		t.Errorf("nodes left:\n%s\nwant\n%s", strings.Join(nodes, "\n"), strings.ReplaceAll(wantLeft, ",", "\n"))
	}
	// The memories are gone (left above), so only tombstones could keep
	// what they said, or whom they were about.
	leaky := query(t, `MATCH (t:Tombstone {tenant: $tenant})
WHERE 'u1' IN [t.id, t.user_ref, t.by] OR t.reason CONTAINS 'secret' OR size(keys(t)) > 8
RETURN count(t) AS n`, map[string]any{"tenant": tenant})
	if leaky[0]["n"] != int64(0) {
		t.Errorf("%v tombstones name the user or hold content", leaky[0]["n"])
	}
	if again, err := s.EraseUser(ctx, tenant, "u1", ts); err != nil || again != (memory.GraphErased{}) {
		t.Errorf("second erase = %+v, %v; want zeros", again, err)
	}
}

// TestEraseUserShrinksSlowBatches: a batch too slow for the store's
// timeout is tried again smaller until batches fit, so the erase finishes.
func TestEraseUserShrinksSlowBatches(t *testing.T) {
	const n = 3000
	s := New(testenv.Neo4j(t), Options{Database: testenv.Neo4jDatabase(), Timeout: 2 * time.Second, EraseBatch: n})
	testStore(t)
	tenant := testenv.Tenant(t)
	ctx := eraseCtx(t)
	loadUser(t, ctx, tenant, "u1", n)
	start := time.Now()
	got, err := s.EraseUser(ctx, tenant, "u1", memory.Tombstone{At: time.Now(), By: "admin:root", Reason: "user erased"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("erased %+v in %s", got, time.Since(start).Round(time.Millisecond))
	if got.Memories != n || got.Users != 2 {
		t.Errorf("erased %+v, want %d memories and 2 users", got, n)
	}
}

// crashAfterFirstBatch begins an erase of user and commits its first
// batch, then stops, as a process that died there would.
func crashAfterFirstBatch(t *testing.T, s *Store, tenant, user string, ts memory.Tombstone, batch int) memory.GraphErased {
	t.Helper()
	ctx := eraseCtx(t)
	if err := s.write(ctx, func(tx neo4j.ManagedTransaction) error { return beginUserErase(ctx, tx, tenant, user, ts, time.Now()) }); err != nil {
		t.Fatal(err)
	}
	var first memory.GraphErased
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		first, _, err = eraseUserBatch(ctx, tx, tenant, user, ts, batch)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return first
}

// TestEraseUserResumes: an erase that stopped after its first batch leaves
// the user unreadable and unwritable; the next EraseUser finishes it and
// counts what was left.
func TestEraseUserResumes(t *testing.T) {
	const n, batch = 1200, 500
	s := New(testenv.Neo4j(t), Options{Database: testenv.Neo4jDatabase(), EraseBatch: batch})
	testStore(t)
	tenant := testenv.Tenant(t)
	ctx := eraseCtx(t)
	u1 := loadUser(t, ctx, tenant, "u1", n)
	other := newMemory(tenant, "u2", "u2 stays readable")
	other.Entities = []memory.Entity{{ID: "city:lyon", Kind: "city", Name: "Lyon"}}
	other.Embedding = make([]float32, testenv.EmbeddingDimension)
	other.Embedding[0] = 1
	if _, err := s.CreateMemories(ctx, []memory.Memory{other}); err != nil {
		t.Fatal(err)
	}
	ts := memory.Tombstone{At: time.Now(), By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1"), Fence: 100}

	first := crashAfterFirstBatch(t, s, tenant, "u1", ts, batch)
	if first.Memories != batch || first.Users != 0 {
		t.Fatalf("first batch erased %+v, want %d memories and no user", first, batch)
	}
	left := query(t, `MATCH (m:Memory {tenant: $tenant, user_id: 'u1'})
WITH collect(m) AS ms, max(m.id) AS head
RETURN size(ms) AS memories, head,
  size(COLLECT { UNWIND ms AS m MATCH (m)-[:MENTIONS]->(e) WHERE e.id STARTS WITH 'ent-' RETURN DISTINCT e }) AS entities,
  size(COLLECT { UNWIND ms AS m MATCH (m)-[:IN_SESSION]->(s) RETURN DISTINCT s }) AS sessions`, map[string]any{"tenant": tenant})[0]
	head := left["head"].(string)
	if left["memories"] != int64(n-batch) {
		t.Fatalf("after the first batch %v memories are left, want %d", left["memories"], n-batch)
	}
	if exists, erasing, _ := userTombstone(t, tenant, "u1"); !exists || !erasing {
		t.Errorf("user tombstone of the erase cut short: exists %v, erasing %v; want erasing", exists, erasing)
	}
	t.Run("half erased is unreadable", func(t *testing.T) {
		checkUnreadable(t, s, tenant, "u1", head)
		whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
		listed, err := s.ListMemories(ctx, whole, memory.ListQuery{Limit: 500})
		if err != nil || len(listed) != 1 || listed[0].ID != other.ID {
			t.Errorf("tenant listing = %d memories, %v; want u2's only", len(listed), err)
		}
		hits, err := s.SearchVector(ctx, whole, memory.SearchQuery{UserID: "u2", Embedding: other.Embedding, Now: time.Now()})
		if err != nil || len(hits) != 1 {
			t.Errorf("u2's recall = %d hits, %v; want 1", len(hits), err)
		}
	})
	t.Run("half erased is unwritable", func(t *testing.T) {
		checkWritesRefused(t, s, tenant, "u1", head, ts.Fence)
	})

	rest, err := s.EraseUser(ctx, tenant, "u1", ts)
	if err != nil {
		t.Fatal(err)
	}
	want := memory.GraphErased{
		Memories: n - batch, Entities: left["entities"].(int64), Sessions: left["sessions"].(int64), Users: 2,
	}
	if rest != want {
		t.Errorf("the resumed erase counted %+v, want what was left, %+v", rest, want)
	}
	if m, e, ss := first.Memories+rest.Memories, first.Entities+rest.Entities, first.Sessions+rest.Sessions; m != n || e != u1.entities || ss != u1.sessions {
		t.Errorf("both calls erased %d memories, %d entities, %d sessions; want %d, %d, %d", m, e, ss, n, u1.entities, u1.sessions)
	}
	if exists, erasing, _ := userTombstone(t, tenant, "u1"); !exists || erasing {
		t.Errorf("user tombstone after the resumed erase: exists %v, erasing %v; want finished", exists, erasing)
	}
	if got := tombstoneCount(t, tenant); got != n {
		t.Errorf("%d memory tombstones, want %d", got, n)
	}
	// Once the erase is over, writing about the user is a new start.
	again := newMemory(tenant, "u1", "u1 starts over")
	if _, err := s.CreateMemories(ctx, []memory.Memory{again}); err != nil {
		t.Fatalf("a write after the erase: %v", err)
	}
	if _, err := s.GetMemory(ctx, tenant, again.ID); err != nil {
		t.Errorf("the new memory: %v", err)
	}
}

// TestEraseUserCancelled: an erase whose context ends between batches
// returns the error; the next call finishes and counts the rest.
func TestEraseUserCancelled(t *testing.T) {
	const n, batch = 3000, 200
	s := New(testenv.Neo4j(t), Options{Database: testenv.Neo4jDatabase(), EraseBatch: batch})
	testStore(t)
	tenant := testenv.Tenant(t)
	ctx := eraseCtx(t)
	loadUser(t, ctx, tenant, "u1", n)
	ts := memory.Tombstone{At: time.Now(), By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1")}

	// Cancel as soon as a batch of memories has committed; the user's own
	// tombstone (kind set) is written first and does not count.
	cut, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for cut.Err() == nil {
			res, err := neo4j.ExecuteQuery(cut, testenv.Neo4j(t), `MATCH (t:Tombstone {tenant: $tenant}) WHERE t.kind IS NULL RETURN count(t) AS n`,
				map[string]any{"tenant": tenant}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
			if err == nil && res.Records[0].Values[0].(int64) > 0 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if got, err := s.EraseUser(cut, tenant, "u1", ts); err == nil {
		t.Fatalf("an erase cancelled midway returned %+v, no error", got)
	}
	waitIdle(t, tenant) // a batch cut off may still be rolling back
	done := tombstoneCount(t, tenant)
	if done == 0 || done >= n {
		t.Fatalf("the cancelled erase left %d tombstones: want some, not all", done)
	}
	checkUnreadable(t, s, tenant, "u1", fmt.Sprintf("mem-%s-u1-%06d", tenant, n-1)) // erased or not, unreadable
	rest, err := s.EraseUser(ctx, tenant, "u1", ts)
	if err != nil {
		t.Fatal(err)
	}
	if rest.Memories != n-done || rest.Users != 2 {
		t.Errorf("the resumed erase counted %+v, want %d memories and 2 users", rest, n-done)
	}
	if got := tombstoneCount(t, tenant); got != n {
		t.Errorf("%d memory tombstones, want %d", got, n)
	}
}

// waitIdle waits until no transaction of tenant runs.
func waitIdle(t *testing.T, tenant string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rows := query(t, `SHOW TRANSACTIONS YIELD parameters, currentQuery
WHERE parameters.tenant = $tenant AND NOT currentQuery STARTS WITH 'SHOW'
RETURN count(*) AS n`, map[string]any{"tenant": tenant})
		if rows[0]["n"].(int64) == 0 {
			return
		}
	}
	t.Fatal("transactions of the tenant still run")
}

// checkUnreadable fails unless no read of the store returns a memory of
// user, id one of them.
func checkUnreadable(t *testing.T, s *Store, tenant, user, id string) {
	t.Helper()
	ctx := eraseCtx(t)
	scope := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{UserID: user}}}
	if ms, err := s.ListMemories(ctx, scope, memory.ListQuery{UserID: user, Limit: 500}); err != nil || len(ms) != 0 {
		t.Errorf("listing = %d memories, %v; want none", len(ms), err)
	}
	vec := make([]float32, testenv.EmbeddingDimension)
	vec[0] = 1
	for _, q := range []memory.SearchQuery{
		{UserID: user, Embedding: vec, Now: time.Now()},
		{UserID: user, Embedding: vec, AsOf: time.Now()},
	} {
		if hits, err := s.SearchVector(ctx, scope, q); err != nil || len(hits) != 0 {
			t.Errorf("vector recall = %d hits, %v; want none", len(hits), err)
		}
	}
	if hits, err := s.SearchFullText(ctx, scope, memory.SearchQuery{UserID: user, Text: "secret", Now: time.Now()}); err != nil || len(hits) != 0 {
		t.Errorf("full-text recall = %d hits, %v; want none", len(hits), err)
	}
	if _, err := s.GetMemory(ctx, tenant, id); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("GetMemory = %v, want not found", err)
	}
	if h, err := s.History(ctx, tenant, id); err == nil && len(h) > 0 {
		t.Errorf("History = %d versions, want none", len(h))
	}
	// What a data-subject export lists (graph/exportstore): every memory
	// about the user in every status, but a user's being erased.
	listed, err := inRead(ctx, s, func(tx neo4j.ManagedTransaction) ([]memory.Memory, error) {
		return readAll(ctx, tx, `MATCH (m:Memory {tenant: $tenant, user_id: $user_id}) WHERE `+NotErasing+` RETURN `+MemoryProjectionLean,
			map[string]any{"tenant": tenant, "user_id": user}, MemoryOf)
	})
	if err != nil || len(listed) != 0 {
		t.Errorf("export = %d memories, %v; want none", len(listed), err)
	}
}

// checkWritesRefused fails unless every write about user is refused as
// unavailable (to be retried after the erase), but a queued memory at or
// below fence, which is dropped as erased; head is one of the user's
// memories left.
func checkWritesRefused(t *testing.T, s *Store, tenant, user, head string, fence int64) {
	t.Helper()
	ctx := eraseCtx(t)
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, memory.ErrUnavailable) {
			t.Errorf("%s: %v, want unavailable", what, err)
		}
	}
	_, err := s.CreateMemories(ctx, []memory.Memory{newMemory(tenant, user, "written while erasing")})
	refused("a direct write", err)
	later := newMemory(tenant, user, "queued after the erase began")
	later.QueueSeq = fence + 1
	_, err = s.WriteEvents(ctx, []memory.Memory{later})
	refused("a queued write above the fence", err)
	before := newMemory(tenant, user, "queued before the erase")
	before.QueueSeq = fence
	if ws, err := s.WriteEvents(ctx, []memory.Memory{before}); err != nil || len(ws) != 1 || ws[0].Outcome != memory.OutcomeErased {
		t.Errorf("a queued write at the fence = %+v, %v; want outcome erased", ws, err)
	}
	deduped := newMemory(tenant, user, "deduplicated while erasing")
	deduped.Embedding = make([]float32, testenv.EmbeddingDimension)
	deduped.Embedding[1] = 1
	_, err = s.WriteDeduped(ctx, dedupWrite(tenant, deduped))
	refused("a deduplicated write", err)
	next := newMemory(tenant, user, "a new version while erasing")
	_, err = s.ReplaceMemory(ctx, tenant, head, 0, next)
	refused("a new version", err)
	_, err = s.ReinforceMemory(ctx, tenant, head, memory.Reinforcement{UserID: user, At: time.Now()})
	refused("a reinforcement", err)
	_, err = s.ConfirmMemory(ctx, tenant, head, user, memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}, time.Now())
	refused("a confirmation", err)
	stored := query(t, `MATCH (m:Memory {tenant: $tenant}) WHERE m.content CONTAINS 'erasing' RETURN count(m) AS n`, map[string]any{"tenant": tenant})
	if n := stored[0]["n"].(int64); n != 0 {
		t.Errorf("refused content stored %d times", n)
	}
}

// TestEraseUserWithAConcurrentWriter: a writer keeps writing about a user,
// directly and from the queue, while the user is erased in batches. Every
// write the writer saw succeed before its first refusal was erased; every
// one after it came after the erase and stays: none landed in between.
func TestEraseUserWithAConcurrentWriter(t *testing.T) {
	const n, batch = 3000, 200
	s := New(testenv.Neo4j(t), Options{Database: testenv.Neo4jDatabase(), EraseBatch: batch})
	testStore(t)
	tenant := testenv.Tenant(t)
	ctx := eraseCtx(t)
	loadUser(t, ctx, tenant, "u1", n)
	const fence = 100
	ts := memory.Tombstone{At: time.Now(), By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1"), Fence: fence}

	type write struct {
		id      string
		refused bool
	}
	var (
		mu     sync.Mutex
		writes []write
		erased = make(chan struct{})
		landed = make(chan struct{}) // closed once a few writes landed
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		after := 0 // writes begun after the erase returned
		for i := 0; after < 5; i++ {
			select {
			case <-erased:
				after++
			default:
			}
			m := newMemory(tenant, "u1", fmt.Sprintf("concurrent note %d", i))
			var err error
			if i%2 == 0 {
				_, err = s.CreateMemories(ctx, []memory.Memory{m})
			} else {
				m.QueueSeq = fence + int64(i)
				var ws []memory.Written
				ws, err = s.WriteEvents(ctx, []memory.Memory{m})
				if err == nil && ws[0].Outcome != memory.OutcomeCreated {
					err = fmt.Errorf("outcome %s", ws[0].Outcome)
				}
			}
			if err != nil && !errors.Is(err, memory.ErrUnavailable) {
				t.Errorf("write %d: %v", i, err)
				return
			}
			mu.Lock()
			writes = append(writes, write{m.ID, err != nil})
			if len(writes) == 3 {
				close(landed)
			}
			mu.Unlock()
		}
	}()
	// A few writes land before the erase, however slow the machine.
	select {
	case <-landed:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	got, err := s.EraseUser(ctx, tenant, "u1", ts)
	close(erased)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	firstRefused := -1
	for i, w := range writes {
		if w.refused {
			firstRefused = i
			break
		}
	}
	if firstRefused < 1 {
		t.Fatalf("of %d writes, the first refused is %d: want writes before the erase and refusals during it", len(writes), firstRefused)
	}
	if got.Memories != int64(n+firstRefused) {
		t.Errorf("erased %d memories, want %d loaded and the %d written before the erase", got.Memories, n+firstRefused, firstRefused)
	}
	refusals, kept := 0, 0
	for i, w := range writes {
		_, err := s.GetMemory(ctx, tenant, w.id)
		switch {
		case w.refused:
			refusals++
			if !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("refused write %d is stored (%v)", i, err)
			}
		case i < firstRefused:
			if !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("write %d, before the erase, survived it (%v)", i, err)
			}
		default:
			kept++
			if err != nil {
				t.Errorf("write %d, after the erase, is lost: %v", i, err)
			}
		}
	}
	t.Logf("%d writes: %d before the erase, %d refused during it, %d after", len(writes), firstRefused, refusals, kept)
	if kept < 5 {
		t.Errorf("%d writes kept after the erase, want at least 5", kept)
	}
}

// BenchmarkEraseUser erases one user of MNEME_BENCH_ERASE_MEMORIES memories
// (default 50,000: more than one transaction could erase) at the default
// batch size, or MNEME_BENCH_ERASE_BATCH's (then with a timeout long
// enough for a batch of any size, to measure what one costs). It reports the most heap any one of the erase's transactions
// was estimated to use, sampled by SHOW TRANSACTIONS: it must stay far below
// the server's transaction memory limit. Run it once:
//
//	go test -run '^$' -bench EraseUser -benchtime 1x -timeout 30m ./graph/
func BenchmarkEraseUser(b *testing.B) {
	n := testenv.Count(b, "MNEME_BENCH_ERASE_MEMORIES", 50000)
	s := testStore(b)
	if batch := testenv.Count(b, "MNEME_BENCH_ERASE_BATCH", DefaultEraseBatch); batch != DefaultEraseBatch {
		s = New(testenv.Neo4j(b), Options{Database: testenv.Neo4jDatabase(), EraseBatch: batch, Timeout: 20 * time.Minute})
	}
	ctx, cancel := context.WithTimeout(b.Context(), 30*time.Minute)
	defer cancel()
	for range b.N {
		b.StopTimer()
		tenant := testenv.Tenant(b)
		start := time.Now()
		loadUser(b, ctx, tenant, "u1", n)
		b.Logf("loaded %d memories in %s", n, time.Since(start).Round(time.Millisecond))
		peak := make(chan int64, 1)
		sampling, stop := context.WithCancel(ctx)
		go func() { peak <- peakHeap(sampling, b, tenant) }()
		b.StartTimer()
		got, err := s.EraseUser(ctx, tenant, "u1", memory.Tombstone{
			At: time.Now(), By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1"),
		})
		b.StopTimer()
		stop()
		if err != nil {
			b.Fatal(err)
		}
		if got.Memories != int64(n) {
			b.Fatalf("erased %+v, want %d memories", got, n)
		}
		mib := float64(<-peak) / (1 << 20)
		b.ReportMetric(mib, "peak-tx-MiB")
		b.Logf("erased %+v; peak transaction heap %.1f MiB", got, mib)
	}
}

// peakHeap samples, until ctx ends, the heap Neo4j estimates for the
// transactions of tenant and returns the most it saw for one.
func peakHeap(ctx context.Context, tb testing.TB, tenant string) int64 {
	var peak int64
	for ctx.Err() == nil {
		res, err := neo4j.ExecuteQuery(ctx, testenv.Neo4j(tb), `SHOW TRANSACTIONS YIELD parameters, estimatedUsedHeapMemory AS heap
WHERE parameters.tenant = $tenant
RETURN max(heap) AS heap`, map[string]any{"tenant": tenant},
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
		if err == nil {
			if h, ok := res.Records[0].Values[0].(int64); ok && h > peak {
				peak = h
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return peak
}
