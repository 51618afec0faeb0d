package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/writefence"
)

var _ memory.Forgetter = (*Store)(nil)

// TestEraseUser erases a user with versions, shared and own entities and
// sessions, next to a user who stays, and checks every node left.
func TestEraseUser(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	v1 := newMemory(tenant, "u1", "secret budget 100k for Zorblax")
	v1.Key, v1.SessionID = "budget", "sess-u1"
	v1.Entities = []memory.Entity{{ID: "co:zorblax", Kind: "company", Name: "Zorblax"}, {ID: "city:lyon", Kind: "city", Name: "Lyon"}}
	v2 := newMemory(tenant, "u1", "secret budget 150k for Zorblax")
	v2.Key, v2.SessionID, v2.Entities = "budget", "sess-u1", v1.Entities
	v2.Embedding = make([]float32, testenv.EmbeddingDimension)
	v2.Embedding[0] = 1
	cand := newMemory(tenant, "u1", "maybe likes quince jam")
	cand.Status, cand.SessionID = memory.StatusCandidate, "sess-shared"
	other := newMemory(tenant, "u2", "u2 travels to Lyon")
	other.SessionID = "sess-shared"
	other.Entities = []memory.Entity{{ID: "city:lyon", Kind: "city", Name: "Lyon"}}
	for _, m := range []memory.Memory{v1, v2, cand, other} {
		if _, err := s.CreateMemories(testCtx(t), []memory.Memory{m}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ts := memory.Tombstone{At: at, By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1")}

	got, err := s.EraseUser(testCtx(t), tenant, "u1", ts)
	if err != nil {
		t.Fatal(err)
	}
	// Three memories; Zorblax (Lyon is still u2's); sess-u1 (sess-shared
	// still holds u2's memory); the User node.
	if want := (memory.GraphErased{Memories: 3, Entities: 1, Sessions: 1, Users: 1}); got != want {
		t.Errorf("erased %+v, want %+v", got, want)
	}
	again, err := s.EraseUser(testCtx(t), tenant, "u1", ts)
	if err != nil || again != (memory.GraphErased{}) {
		t.Errorf("second erase = %+v, %v; want zeros", again, err)
	}

	nodes, err := s.TenantNodes(testCtx(t), tenant)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, n := range nodes {
		desc := fmt.Sprintf("%s %v", strings.Join(n.Labels, ":"), n.Props["id"])
		if n.Labels[0] == "MemoryTally" || n.Labels[0] == "TallyAnchor" {
			// Counts keep the user's id: only the other user's may stay.
			desc = fmt.Sprintf("%s %v", n.Labels[0], n.Props["user_id"])
		}
		for _, v := range n.Props {
			if s, ok := v.(string); ok && (strings.Contains(s, "Zorblax") || strings.Contains(s, "secret") || strings.Contains(s, "quince")) {
				t.Errorf("%s still holds %q", desc, s)
			}
		}
		if n.Labels[0] == "Tombstone" {
			// A memory's may carry the hashed ref of its user (for an
			// export); a user's has kind, fence and fence_at instead.
			// Never the id.
			if n.Props["by"] != "admin:root" || len(n.Props) < 5 || len(n.Props) > 8 || n.Props["user_ref"] == "u1" {
				t.Errorf("tombstone %v", n.Props)
			}
			continue
		}
		left = append(left, desc)
	}
	want := []string{"Agent agent-a", "Entity city:lyon", fmt.Sprintf("Memory %s", other.ID), "MemoryTally u2", "Session sess-shared", "TallyAnchor u2", "User u2"}
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(left))); diff != "" {
		t.Errorf("nodes left (-want +got):\n%s", diff)
	}
	tombs := query(t, `MATCH (t:Tombstone {tenant: $tenant}) RETURN t.id AS id, t.kind AS kind ORDER BY id`, map[string]any{"tenant": tenant})
	if len(tombs) != 4 || tombs[3]["id"] != ts.UserRef || tombs[3]["kind"] != "user" {
		t.Errorf("tombstones = %v, want one per memory and the user's", tombs)
	}
}

func TestEraseMemories(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	a := newMemory(tenant, "u1", "order 42 shipped")
	a.SessionID = "sess-a"
	a.Entities = []memory.Entity{{ID: "order:42", Kind: "order", Name: "42"}}
	b := newMemory(tenant, "u1", "likes tea")
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{a, b}); err != nil {
		t.Fatal(err)
	}
	ts := memory.Tombstone{At: time.Now(), By: "user:u1", Reason: "deleted through the API"}
	got, err := s.EraseMemories(testCtx(t), tenant, []string{a.ID, "mem_missing"}, nil, ts)
	if err != nil {
		t.Fatal(err)
	}
	if want := (memory.GraphErased{Memories: 1, Entities: 1, Sessions: 1}); got != want {
		t.Errorf("erased %+v, want %+v", got, want)
	}
	if _, err := s.GetMemory(testCtx(t), tenant, b.ID); err != nil {
		t.Errorf("the other memory: %v", err)
	}
	if again, err := s.EraseMemories(testCtx(t), tenant, []string{a.ID}, nil, ts); err != nil || again != (memory.GraphErased{}) {
		t.Errorf("second erase = %+v, %v; want zeros", again, err)
	}
}

// TestEraseMemoriesAfterANewVersion: an erase asked for the versions the
// caller read is refused when a version was written since (an update racing
// the delete), and leaves everything; the new version would otherwise stay,
// active, with the content the caller meant to erase.
func TestEraseMemoriesAfterANewVersion(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant := testenv.Tenant(t)
	v1 := newMemory(tenant, "u1", "a private note")
	if _, err := s.CreateMemories(ctx, []memory.Memory{v1}); err != nil {
		t.Fatal(err)
	}
	v2 := newMemory(tenant, "u1", "a private note")
	if _, err := s.ReplaceMemory(ctx, tenant, v1.ID, 0, v2); err != nil {
		t.Fatal(err)
	}
	ts := memory.Tombstone{At: time.Now(), By: "agent:bot", Reason: "deleted through the API"}
	if got, err := s.EraseMemories(ctx, tenant, []string{v1.ID}, nil, ts); !errors.Is(err, memory.ErrConflict) || got != (memory.GraphErased{}) {
		t.Errorf("erasing the old version alone = %+v, %v; want a conflict", got, err)
	}
	for _, id := range []string{v1.ID, v2.ID} {
		if _, err := s.GetMemory(ctx, tenant, id); err != nil {
			t.Errorf("after the refused erase, %s: %v", id, err)
		}
	}
	if got, err := s.EraseMemories(ctx, tenant, []string{v2.ID, v1.ID}, nil, ts); err != nil || got.Memories != 2 {
		t.Errorf("erasing the chain = %+v, %v; want both versions", got, err)
	}
}

// TestEraseRacingANewVersion: an erase and an update of one memory at
// once: either the update comes first and the erase is refused, or the
// erase does and the update finds nothing; never both done, which left the
// new version behind.
func TestEraseRacingANewVersion(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant := testenv.Tenant(t)
	ts := memory.Tombstone{At: time.Now(), By: "agent:bot", Reason: "deleted through the API"}
	for round := range 20 {
		v1 := newMemory(tenant, "u1", fmt.Sprintf("a private note %d", round))
		if _, err := s.CreateMemories(ctx, []memory.Memory{v1}); err != nil {
			t.Fatal(err)
		}
		var replaceErr, eraseErr error
		var wg sync.WaitGroup
		wg.Go(func() { _, replaceErr = s.ReplaceMemory(ctx, tenant, v1.ID, 0, newMemory(tenant, "u1", v1.Content)) })
		wg.Go(func() { _, eraseErr = s.EraseMemories(ctx, tenant, []string{v1.ID}, nil, ts) })
		wg.Wait()
		switch {
		case replaceErr == nil && eraseErr == nil:
			t.Fatalf("round %d: the update and the erase both succeeded", round)
		case replaceErr == nil && !errors.Is(eraseErr, memory.ErrConflict), eraseErr == nil && !errors.Is(replaceErr, memory.ErrNotFound):
			t.Fatalf("round %d: update %v, erase %v", round, replaceErr, eraseErr)
		}
	}
}

// TestQueuedWritesOfAnErasedUser: after an erase with a fence, a queued
// memory numbered at or below it is refused and leaves no trace, while one
// numbered above it (accepted after the erase), a write that was not queued,
// and other users' queued memories are written.
func TestQueuedWritesOfAnErasedUser(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	first := newMemory(tenant, "u1", "u1 likes quince jam")
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{first}); err != nil {
		t.Fatal(err)
	}
	ts := memory.Tombstone{At: time.Now(), By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1"), Fence: 100}
	if _, err := s.EraseUser(testCtx(t), tenant, "u1", ts); err != nil {
		t.Fatal(err)
	}
	// A later erase with a lower fence (another shard count, say) keeps
	// the higher one.
	low := ts
	low.Fence = 40
	if _, err := s.EraseUser(testCtx(t), tenant, "u1", low); err != nil {
		t.Fatal(err)
	}

	queued := func(user, content string, seq int64) memory.Memory {
		m := newMemory(tenant, user, content)
		m.QueueSeq = seq
		m.SessionID = "sess-" + user
		m.Entities = []memory.Entity{{ID: "co:zorblax-" + user, Kind: "company", Name: "Zorblax " + user}}
		return m
	}
	batch := []memory.Memory{
		queued("u1", "u1 secret from before the erase", 50),
		queued("u2", "u2 note accepted meanwhile", 50),
		queued("u1", "u1 secret at the fence", 100),
		queued("u1", "u1 starts again", 101),
		newMemory(tenant, "u1", "u1 writes directly"),
	}
	ws, err := s.WriteEvents(testCtx(t), batch)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{memory.OutcomeErased, memory.OutcomeCreated, memory.OutcomeErased, memory.OutcomeCreated, memory.OutcomeCreated}
	var got []string
	for i, w := range ws {
		got = append(got, w.Outcome)
		if w.Memory.ID != batch[i].ID {
			t.Errorf("written[%d] is %s, want %s", i, w.Memory.ID, batch[i].ID)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	// Only what the erase fenced out is gone: not even its entity or
	// session node was created.
	for i, m := range batch {
		_, err := s.GetMemory(testCtx(t), tenant, m.ID)
		if refused := want[i] == memory.OutcomeErased; refused != errors.Is(err, memory.ErrNotFound) {
			t.Errorf("memory %d (%s): GetMemory err %v", i, want[i], err)
		}
	}
	if n, err := s.CountText(testCtx(t), tenant, "secret"); err != nil || n != 0 {
		t.Errorf("refused content stored %d times (%v)", n, err)
	}
	tomb := query(t, `MATCH (t:Tombstone {tenant: $tenant, id: $id}) RETURN t.fence AS fence`, map[string]any{"tenant": tenant, "id": ts.UserRef})
	if len(tomb) != 1 || tomb[0]["fence"] != int64(100) {
		t.Errorf("user tombstone = %v, want fence 100", tomb)
	}
}

// TestEraseWhileAQueuedWriteWaits: the write of a job accepted before an
// erase reads no fence yet, then waits for the user's lock while the erase's
// first transaction holds it. When that commits, the write must not land: it
// rolls back (and, retried, is refused), so once the erase is done the graph
// holds nothing of the user.
func TestEraseWhileAQueuedWriteWaits(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	seed := newMemory(tenant, "u1", "u1 has a memory")
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{seed}); err != nil {
		t.Fatal(err)
	}
	// The erase begins and holds the user's lock until the test lets it
	// commit.
	ctx := testCtx(t)
	sess := testenv.Neo4j(t).NewSession(ctx, neo4j.SessionConfig{DatabaseName: testenv.Neo4jDatabase()})
	defer sess.Close(ctx)
	locked, commit, erased := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	ts := memory.Tombstone{At: time.Now(), By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1"), Fence: 100}
	go func() {
		_, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
			err := beginUserErase(ctx, tx, tenant, "u1", ts, time.Now())
			if err == nil {
				close(locked)
				<-commit
			}
			return nil, err
		})
		erased <- err
	}()
	select {
	case <-locked:
	case err := <-erased:
		t.Fatalf("erase: %v", err)
	}
	late := newMemory(tenant, "u1", "u1 secret written late")
	late.QueueSeq = 99
	late.Entities = []memory.Entity{{ID: "co:late", Kind: "company", Name: "Latecomer Ltd"}}
	wrote := make(chan error, 1)
	go func() {
		_, err := s.WriteEvents(ctx, []memory.Memory{late})
		wrote <- err
	}()
	waitBlocked(t, tenant) // the write has read no fence and waits for the lock
	close(commit)
	if err := <-erased; err != nil {
		t.Fatalf("erase: %v", err)
	}
	if err := <-wrote; !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("write that waited through the erase: %v, want ErrUnavailable (rolled back)", err)
	}
	// Retried, as the queue does with an unavailable store: refused.
	ws, err := s.WriteEvents(ctx, []memory.Memory{late})
	if err != nil || len(ws) != 1 || ws[0].Outcome != memory.OutcomeErased {
		t.Fatalf("retried write = %+v, %v; want outcome erased", ws, err)
	}
	if got, err := s.EraseUser(ctx, tenant, "u1", ts); err != nil || got != (memory.GraphErased{Memories: 1, Users: 1}) {
		t.Fatalf("the rest of the erase = %+v, %v; want the seed memory and the user", got, err)
	}
	nodes, err := s.TenantNodes(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Labels[0] != "Tombstone" && n.Labels[0] != "Agent" {
			t.Errorf("left behind: %v %v", n.Labels, n.Props)
		}
	}
}

// waitBlocked waits until a transaction of tenant waits for a lock.
func waitBlocked(t *testing.T, tenant string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rows := query(t, `SHOW TRANSACTIONS YIELD status, parameters
WHERE status STARTS WITH 'Blocked' AND parameters.tenant = $tenant
RETURN count(*) AS n`, map[string]any{"tenant": tenant})
		if rows[0]["n"].(int64) > 0 {
			return
		}
	}
	t.Fatal("no transaction of the tenant waits for a lock")
}

// TestConcurrentErasesOfOneMemory: erases of one memory at once (a client
// retrying, two admins) erase it once: one counts it, the others find it
// gone, and the user's tallies still hold what is stored.
func TestConcurrentErasesOfOneMemory(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	a, b := newMemory(tenant, "u1", "order 42 shipped"), newMemory(tenant, "u1", "likes tea")
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{a, b}); err != nil {
		t.Fatal(err)
	}
	ts := memory.Tombstone{At: time.Now(), By: "user:u1", Reason: "deleted through the API"}
	const erases = 6
	got := make([]memory.GraphErased, erases)
	errs := make([]error, erases)
	var wg sync.WaitGroup
	for i := range erases {
		wg.Go(func() { got[i], errs[i] = s.EraseMemories(testCtx(t), tenant, []string{a.ID}, nil, ts) })
	}
	wg.Wait()
	var counted int64
	for i := range erases {
		if errs[i] != nil {
			t.Errorf("erase %d: %v", i, errs[i])
		}
		counted += got[i].Memories
	}
	if counted != 1 {
		t.Errorf("%d erases counted %d memories erased, want 1", erases, counted)
	}
	res, err := neo4j.ExecuteQuery(testCtx(t), testenv.Neo4j(t),
		`MATCH (tb:MemoryTally {tenant: $tenant, user_id: 'u1'}) RETURN sum(tb.n) AS n`, map[string]any{"tenant": tenant},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.Records[0].Get("n"); n != int64(1) {
		t.Errorf("the user's tallies hold %v memories, want 1 (the other one)", n)
	}
}

// TestEraseUserRefusesWritesBegunBeforeIt: writes about a user that began
// before the user's erase did, and reach their transaction only after it
// (held between their start and their commit, as a slow embedder holds
// one), are refused as the user's erased and leave nothing: direct,
// deduplicated and batched with another user's, a new version, whether the
// user had memories and a User node or had never been written about. The
// erase keeps when it began in the user's tombstone (fence_at). A write
// begun after the erase began is a new start once it is over; one that
// says nothing of its start (a loader's) and a queued one above the fence
// are not refused by time.
func TestEraseUserRefusesWritesBegunBeforeIt(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	ctx := eraseCtx(t)
	// "known" has a memory, so a User node; "fresh" has neither: the
	// writes below would have been the first about them.
	if _, err := s.CreateMemories(ctx, []memory.Memory{newMemory(tenant, "known", "known likes plum wine")}); err != nil {
		t.Fatal(err)
	}
	began := time.Now() // the held writes began here
	for _, user := range []string{"known", "fresh"} {
		ts := memory.Tombstone{At: time.Now(), By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, user), Fence: 10}
		if _, err := s.EraseUser(ctx, tenant, user, ts); err != nil {
			t.Fatalf("erase %s: %v", user, err)
		}
		tomb := query(t, `MATCH (t:Tombstone {tenant: $tenant, id: $id}) RETURN t.fence_at AS at`, map[string]any{"tenant": tenant, "id": ts.UserRef})
		if at, ok := tomb[0]["at"].(time.Time); !ok || !at.After(began) || at.After(time.Now()) {
			t.Errorf("%s's tombstone fence_at = %v, want when the erase began", user, tomb[0]["at"])
		}
	}
	ended := time.Now()

	// The held writes' context says when they began (writefence.BeginWrite).
	heldCtx := writefence.BeginWrite(ctx, began)
	held := func(user, content string) memory.Memory { return newMemory(tenant, user, content) }
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, writefence.ErrUserErased) {
			t.Errorf("%s: %v, want the user's erased", what, err)
		}
	}
	for _, user := range []string{"known", "fresh"} {
		_, err := s.CreateMemories(heldCtx, []memory.Memory{held(user, user+" held secret, direct")})
		refused(user+": a direct write", err)
		_, err = s.WriteDeduped(heldCtx, dedupWrite(tenant, embedded(t, held(user, user+" held secret, deduplicated"))))
		refused(user+": a deduplicated write", err)
		bystander := newMemory(tenant, "bystander-"+user, "a held secret about someone else")
		_, err = s.CreateMemories(heldCtx, []memory.Memory{bystander, held(user, user+" held secret, batched")})
		refused(user+": a batch with another user", err)
	}
	// A memory written since is a new start; a new version of it that
	// began before the erase is refused all the same.
	head := newMemory(tenant, "known", "known starts over")
	if _, err := s.CreateMemories(writefence.BeginWrite(ctx, time.Now()), []memory.Memory{head}); err != nil {
		t.Fatalf("a write begun after the erase: %v", err)
	}
	_, err := s.ReplaceMemory(heldCtx, tenant, head.ID, 0, held("known", "known held secret, a new version"))
	refused("known: a new version", err)
	if n, err := s.CountText(ctx, tenant, "held secret"); err != nil || n != 0 {
		t.Errorf("refused content stored %d times (%v)", n, err)
	}
	if rows := query(t, `MATCH (u:User {tenant: $tenant}) WHERE u.id STARTS WITH 'bystander' RETURN u.id AS id`, map[string]any{"tenant": tenant}); len(rows) != 0 {
		t.Errorf("a refused batch left users %v", rows)
	}

	// Writes that began after the erase, that do not say when they began,
	// or are queued above the fence (whatever their context says: the
	// fence orders those), are written.
	queued := newMemory(tenant, "fresh", "fresh queued after the erase")
	queued.QueueSeq = 11
	for _, w := range []struct {
		name string
		ctx  context.Context
		m    memory.Memory
	}{
		{"begun after the erase", writefence.BeginWrite(ctx, ended), newMemory(tenant, "fresh", "fresh starts over")},
		{"untimed", ctx, newMemory(tenant, "fresh", "fresh loaded by a loader")},
		{"queued", heldCtx, queued},
	} {
		ws, err := s.WriteEvents(w.ctx, []memory.Memory{w.m})
		if err != nil || len(ws) != 1 || ws[0].Outcome != memory.OutcomeCreated {
			t.Errorf("a write %s: %v, %v; want created", w.name, ws, err)
		}
	}
}

// TestEraseUnderWayRefusesWritesBegunBeforeIt: while a user's erase is under
// way (here: cut short after its first batch, so the user stays marked), a
// write about the user that began before the erase is refused as the
// user's erased, for good; one that began after it is refused as
// unavailable, to be tried again once the erase is over.
func TestEraseUnderWayRefusesWritesBegunBeforeIt(t *testing.T) {
	s := New(testenv.Neo4j(t), Options{Database: testenv.Neo4jDatabase(), EraseBatch: 2})
	testStore(t)
	tenant := testenv.Tenant(t)
	ctx := eraseCtx(t)
	ms := []memory.Memory{newMemory(tenant, "u1", "u1 one"), newMemory(tenant, "u1", "u1 two"), newMemory(tenant, "u1", "u1 three")}
	if _, err := s.CreateMemories(ctx, ms); err != nil {
		t.Fatal(err)
	}
	before := newMemory(tenant, "u1", "u1 held secret, begun before the erase")
	beforeCtx := writefence.BeginWrite(ctx, time.Now())
	ts := memory.Tombstone{At: time.Now(), By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1")}
	crashAfterFirstBatch(t, s, tenant, "u1", ts, 2)
	if _, err := s.CreateMemories(beforeCtx, []memory.Memory{before}); !errors.Is(err, writefence.ErrUserErased) {
		t.Errorf("a write begun before the erase: %v, want the user's erased", err)
	}
	since := newMemory(tenant, "u1", "u1 held secret, begun during the erase")
	sinceCtx := writefence.BeginWrite(ctx, time.Now())
	if _, err := s.CreateMemories(sinceCtx, []memory.Memory{since}); !errors.Is(err, memory.ErrUnavailable) || errors.Is(err, writefence.ErrUserErased) {
		t.Errorf("a write begun during the erase: %v, want unavailable", err)
	}
	if n, err := s.CountText(ctx, tenant, "held secret"); err != nil || n != 0 {
		t.Errorf("refused content stored %d times (%v)", n, err)
	}
	if _, err := s.EraseUser(ctx, tenant, "u1", ts); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateMemories(beforeCtx, []memory.Memory{before}); !errors.Is(err, writefence.ErrUserErased) {
		t.Errorf("a write begun before the erase, once it is over: %v, want the user's erased", err)
	}
	if _, err := s.CreateMemories(sinceCtx, []memory.Memory{since}); err != nil {
		t.Errorf("a write begun during the erase, once it is over: %v, want it written", err)
	}
}

// TestEraseStartOnlyRises: the start a user's tombstone keeps is the
// latest erase's, by the store's clock; an erase on a replica whose clock
// is behind does not lower it.
func TestEraseStartOnlyRises(t *testing.T) {
	testStore(t)
	tenant := testenv.Tenant(t)
	ctx := eraseCtx(t)
	start := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	at := func(now time.Time) *Store {
		return New(testenv.Neo4j(t), Options{Database: testenv.Neo4jDatabase(), Now: func() time.Time { return now }})
	}
	ts := memory.Tombstone{At: time.Now(), By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1")}
	for _, now := range []time.Time{start, start.Add(-time.Hour)} {
		if _, err := at(now).EraseUser(ctx, tenant, "u1", ts); err != nil {
			t.Fatal(err)
		}
		tomb := query(t, `MATCH (t:Tombstone {tenant: $tenant, id: $id}) RETURN t.fence_at AS at`, map[string]any{"tenant": tenant, "id": ts.UserRef})
		if got, _ := tomb[0]["at"].(time.Time); !got.Equal(start) {
			t.Errorf("erased at %v: fence_at = %v, want %v", now, tomb[0]["at"], start)
		}
	}
	m := newMemory(tenant, "u1", "u1 began an hour before")
	if _, err := at(start).CreateMemories(writefence.BeginWrite(ctx, start.Add(-time.Hour)), []memory.Memory{m}); !errors.Is(err, writefence.ErrUserErased) {
		t.Errorf("a write begun before the erase: %v, want the user's erased", err)
	}
}
