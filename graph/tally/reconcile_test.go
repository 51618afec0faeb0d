package tally

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph"
	"mneme/graph/upkeep"
	"mneme/internal/testenv"
	"mneme/memory"
)

// fixture is a graph store, this package's store and a tenant of their own.
type fixture struct {
	g      *graph.Store
	s      *Store
	tenant string
	at     time.Time
}

func newFixture(t testing.TB) (*fixture, context.Context) {
	t.Helper()
	g := graph.New(testenv.Neo4j(t), graph.Options{Database: testenv.Neo4jDatabase()})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	if err := g.EnsureSchema(ctx, testenv.EmbeddingDimension); err != nil {
		t.Fatalf("EnsureSchema: %v", err)
	}
	return &fixture{g: g, s: New(g.Runner()), tenant: testenv.Tenant(t), at: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}, ctx
}

func (f *fixture) mem(user, typ, status, key string) memory.Memory {
	f.at = f.at.Add(time.Second)
	m := memory.Memory{
		ID: memory.NewID("mem"), Tenant: f.tenant, UserID: user, AgentID: "agent-a", Type: typ, Key: key,
		Content: "tallied " + key, Status: status, Sensitivity: memory.SensitivityInternal, Importance: 0.5, Confidence: 1,
		ValidFrom: f.at, CreatedAt: f.at, UpdatedAt: f.at, Version: 1,
	}
	if user == "" {
		m.Scope, m.ScopeID = memory.ScopeTeam, "support"
	}
	return m
}

// exact reconciles the tenant and fails if any tally had to be mended:
// the writes before it kept every tally exact.
func (f *fixture) exact(t *testing.T, ctx context.Context, after string) {
	t.Helper()
	r, err := f.s.Reconcile(ctx, f.tenant)
	if err != nil {
		t.Fatalf("after %s: Reconcile: %v", after, err)
	}
	if r.Mended != 0 {
		t.Errorf("after %s: %d tallies were off", after, r.Mended)
	}
}

// counts counts the whole tenant, through the tallies once reconciled.
func (f *fixture) counts(t *testing.T, ctx context.Context) map[key]int64 {
	t.Helper()
	got, err := f.s.CountMemories(ctx, memory.Scope{Tenant: f.tenant, Filter: &memory.Filter{Op: memory.FilterTrue}})
	if err != nil {
		t.Fatalf("CountMemories: %v", err)
	}
	return counted(got)
}

// TestTalliesFollowEveryWrite takes memories through every statement that
// creates one, changes its status or removes it, and after each proves that
// a reconciliation finds nothing to mend; at the end the tallies give the
// counts the memories do.
func TestTalliesFollowEveryWrite(t *testing.T) {
	f, ctx := newFixture(t)
	must := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	style := f.mem("u1", memory.TypeProfile, memory.StatusActive, "style")
	city := f.mem("u1", memory.TypeProfile, memory.StatusActive, "city")
	diet := f.mem("u1", memory.TypeSemantic, memory.StatusActive, "diet")
	dietNext := f.mem("u1", memory.TypeSemantic, memory.StatusCandidate, "diet")
	plan := f.mem("u1", memory.TypeEpisodic, memory.StatusCandidate, "")
	job := f.mem("u2", memory.TypeSemantic, memory.StatusActive, "job")
	rule := f.mem("", memory.TypeProcedural, memory.StatusActive, "")
	_, err := f.g.CreateMemories(ctx, []memory.Memory{style, city, diet, dietNext, plan, job, rule})
	must("create", err)
	f.exact(t, ctx, "a batch")

	_, err = f.g.CreateMemories(ctx, []memory.Memory{f.mem("u1", memory.TypeProfile, memory.StatusActive, "style")})
	must("supersede in a batch", err)
	f.exact(t, ctx, "a batch superseding a slot")

	next := f.mem("u1", memory.TypeProfile, memory.StatusActive, "city")
	next.Version = 0
	_, err = f.g.ReplaceMemory(ctx, f.tenant, city.ID, city.Version, next)
	must("replace", err)
	f.exact(t, ctx, "a replacement")

	// Raising the sensitivity raises the older versions of the same text,
	// which move to other buckets.
	reclassified := f.mem("u1", memory.TypeProfile, memory.StatusActive, "city")
	reclassified.Version, reclassified.Sensitivity = 0, memory.SensitivityConfidential
	_, err = f.g.ReplaceMemory(ctx, f.tenant, next.ID, 0, reclassified)
	must("reclassify", err)
	f.exact(t, ctx, "a reclassification")
	for _, id := range []string{city.ID, next.ID} {
		if m, err := f.g.GetMemory(ctx, f.tenant, id); err != nil || m.Sensitivity != memory.SensitivityConfidential {
			t.Errorf("older version %s after the reclassification: %s, %v; want confidential", id, m.Sensitivity, err)
		}
	}

	_, err = f.g.ConfirmMemory(ctx, f.tenant, dietNext.ID, "u1", memory.Scope{Tenant: f.tenant, Clauses: []memory.Clause{{}}}, f.at)
	must("confirm", err)
	f.exact(t, ctx, "a confirmation superseding the slot's head")

	_, err = f.g.ReinforceMemory(ctx, f.tenant, plan.ID, memory.Reinforcement{UserID: "u1", SessionID: "s2", At: f.at, ImportanceStep: 0.1, ActivateAt: 2})
	must("reinforce", err)
	f.exact(t, ctx, "a reinforcement that activates")

	_, err = upkeep.New(f.g.Runner()).Transition(ctx, f.tenant, []string{job.ID, rule.ID}, memory.StatusArchived, "unused", f.at)
	must("transition", err)
	f.exact(t, ctx, "the janitor's transition")

	must("delete", f.g.DeleteMemory(ctx, f.tenant, style.ID, "admin:root", "test"))
	f.exact(t, ctx, "a delete")

	want := map[key]int64{
		{"u1", memory.TypeProfile, memory.StatusActive}:      2,
		{"u1", memory.TypeProfile, memory.StatusSuperseded}:  2,
		{"u1", memory.TypeSemantic, memory.StatusActive}:     1,
		{"u1", memory.TypeSemantic, memory.StatusSuperseded}: 1,
		{"u1", memory.TypeEpisodic, memory.StatusActive}:     1,
		{"u2", memory.TypeSemantic, memory.StatusArchived}:   1,
		{"", memory.TypeProcedural, memory.StatusArchived}:   1,
	}
	if got := f.counts(t, ctx); !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}

	_, err = f.g.EraseUser(ctx, f.tenant, "u2", memory.Tombstone{At: f.at, By: "admin:root", Reason: "test"})
	must("erase", err)
	f.exact(t, ctx, "an erase")
	delete(want, key{"u2", memory.TypeSemantic, memory.StatusArchived})
	if got := f.counts(t, ctx); !maps.Equal(got, want) {
		t.Errorf("after the erase, counts %v, want %v", got, want)
	}
}

// TestReconcileBuildsAndMends: a tenant whose memories predate its tallies
// is counted from the memories until a reconciliation, which mends every
// bucket that is missing or wrong; from then on the tallies answer.
func TestReconcileBuildsAndMends(t *testing.T) {
	f, ctx := newFixture(t)
	ms := []memory.Memory{
		f.mem("u1", memory.TypeProfile, memory.StatusActive, ""),
		f.mem("u1", memory.TypeProfile, memory.StatusActive, ""),
		f.mem("u2", memory.TypeEpisodic, memory.StatusActive, ""),
	}
	if _, err := f.g.CreateMemories(ctx, ms); err != nil {
		t.Fatal(err)
	}
	// Tallies lost and one made up, and the tenant marked as EnsureSchema
	// marks one whose memories predate tallies.
	f.cypher(t, ctx, markPending)
	f.cypher(t, ctx, `MATCH (t:MemoryTally {tenant: $tenant, user_id: 'u1'}) DELETE t`)
	f.cypher(t, ctx, `CREATE (:MemoryTally {tenant: $tenant, user_id: 'u3', type: 'semantic', status: 'active', sensitivity: 'internal', sens_rank: 1, n: 4})`)
	want := map[key]int64{{"u1", memory.TypeProfile, memory.StatusActive}: 2, {"u2", memory.TypeEpisodic, memory.StatusActive}: 1}
	if got := f.counts(t, ctx); !maps.Equal(got, want) {
		t.Errorf("before a reconciliation, counts %v, want the memories' %v", got, want)
	}
	r, err := f.s.Reconcile(ctx, f.tenant)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mended != 2 || r.Users != 3 {
		t.Errorf("Reconcile = %+v, want 3 users and 2 buckets mended", r)
	}
	// From here the tallies answer: one changed behind the store's back
	// shows, which proves they are read.
	f.cypher(t, ctx, `MATCH (t:MemoryTally {tenant: $tenant, user_id: 'u2'}) SET t.n = 7`)
	want[key{"u2", memory.TypeEpisodic, memory.StatusActive}] = 7
	if got := f.counts(t, ctx); !maps.Equal(got, want) {
		t.Errorf("after a reconciliation, counts %v, want the tallies' %v", got, want)
	}
	// A scope on a property a tally lacks is counted from the memories.
	byAgent := memory.Scope{Tenant: f.tenant, Filter: &memory.Filter{Op: memory.FilterEq, Field: "agent_id", Values: []string{"agent-a"}}}
	got, err := f.s.CountMemories(ctx, byAgent)
	if err != nil {
		t.Fatal(err)
	}
	want[key{"u2", memory.TypeEpisodic, memory.StatusActive}] = 1
	if c := counted(got); !maps.Equal(c, want) {
		t.Errorf("by agent, counts %v, want the memories' %v", c, want)
	}
	// Marked again, the tenant is among those ReconcilePending mends.
	f.cypher(t, ctx, markPending)
	if r, err := f.s.ReconcilePending(ctx); err != nil || r.Tenants < 1 || r.Mended < 1 {
		t.Errorf("ReconcilePending = %+v, %v; want this tenant's bucket mended", r, err)
	}
	f.cypher(t, ctx, `MATCH (t:MemoryTally {tenant: $tenant, user_id: 'u2'}) SET t.n = 7`)
	want[key{"u2", memory.TypeEpisodic, memory.StatusActive}] = 7
	if got := f.counts(t, ctx); !maps.Equal(got, want) {
		t.Errorf("after ReconcilePending, counts %v, want the tallies' %v", got, want)
	}
}

// TestTalliesUnderConcurrentWriters: writers create, supersede and delete
// memories of overlapping users, in batches that name the users in
// different orders, while reconciliations run beside them. No write fails
// for good, and afterwards a reconciliation finds every tally exact.
func TestTalliesUnderConcurrentWriters(t *testing.T) {
	f, ctx := newFixture(t)
	users := []string{"a", "b", "c", "d", ""}
	var mu sync.Mutex // f.mem's clock
	mem := func(user, key string) memory.Memory {
		mu.Lock()
		defer mu.Unlock()
		return f.mem(user, memory.TypeProfile, memory.StatusActive, key)
	}
	var writers, reconciler sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range 12 {
				var batch []memory.Memory
				for _, j := range rng.Perm(len(users)) {
					batch = append(batch, mem(users[j], fmt.Sprintf("k%d", rng.IntN(3))), mem(users[j], ""))
				}
				written, err := f.g.CreateMemories(ctx, batch)
				if err != nil {
					errs <- fmt.Errorf("writer %d batch %d: %w", w, i, err)
					return
				}
				err = f.g.DeleteMemory(ctx, f.tenant, written[rng.IntN(len(written))].ID, "admin:root", "test")
				if err != nil && !errors.Is(err, memory.ErrNotFound) {
					errs <- fmt.Errorf("writer %d delete: %w", w, err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	runs := 0
	reconciler.Add(1)
	go func() {
		defer reconciler.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := f.s.Reconcile(ctx, f.tenant); err != nil {
				errs <- fmt.Errorf("reconcile: %w", err)
				return
			}
			runs++
		}
	}()
	writers.Wait()
	close(done)
	reconciler.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if runs < 2 {
		t.Errorf("only %d reconciliations ran beside the writers", runs)
	}
	f.exact(t, ctx, "concurrent writers and reconciliations")
}

// cypher runs a statement in the fixture's tenant behind the store's back.
func (f *fixture) cypher(t testing.TB, ctx context.Context, stmt string) {
	t.Helper()
	cypherIn(t, ctx, f.tenant, stmt)
}

// cypherIn runs a statement with $tenant bound, behind the store's back.
func cypherIn(t testing.TB, ctx context.Context, tenant, stmt string) {
	t.Helper()
	if _, err := neo4j.ExecuteQuery(ctx, testenv.Neo4j(t), stmt, map[string]any{"tenant": tenant}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase())); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// markPending marks a tenant's memories as older than its tallies, as
// EnsureSchema does on a database that held memories before tallies.
const markPending = `MERGE (:TallyPending {tenant: $tenant})`
