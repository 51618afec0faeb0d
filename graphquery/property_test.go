package graphquery_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"mneme/graph"
	"mneme/graph/analysis"
	"mneme/graph/graphtest"
	"mneme/graph/keystore"
	"mneme/graphquery"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/policy"
)

// stores returns the graph store on the test Neo4j with the schema in place.
func stores(t testing.TB) *graph.Store {
	t.Helper()
	return graphtest.Store(t)
}

// audits keeps the audit events a service records.
type audits struct {
	mu     sync.Mutex
	events []memory.AuditEvent
}

func (a *audits) Audit(_ context.Context, e memory.AuditEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, e)
}

// world is one randomized tenant: its memories as stored, its entities and
// users, and the policy engine that decides for it.
type world struct {
	tenant   string
	g        *graph.Store
	engine   *policy.Engine
	memories []memory.Memory
	entities []string
	users    []string
	agents   []string
	kinds    []string
	now      time.Time
}

var (
	testKinds = []string{"budget", "order_status", "rule", "preference", "note"}
	testKeys  = []string{"budget", "company", "", "", ""}
)

// newWorld writes a randomized tenant: users, agents, entities, memories of
// every type, kind, sensitivity and status, versions of keyed slots, and
// sharing grants between its agents.
func newWorld(t *testing.T, rng *rand.Rand, g *graph.Store, engine *policy.Engine) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{tenant: testenv.Tenant(t), g: g, engine: engine, now: time.Now().UTC()}
	nUsers, nAgents, nEntities := 2+rng.IntN(4), 2+rng.IntN(3), 3+rng.IntN(6)
	for i := range nUsers {
		w.users = append(w.users, fmt.Sprintf("u%d", i))
	}
	for i := range nAgents {
		w.agents = append(w.agents, fmt.Sprintf("agent-%d", i))
		if err := keystore.New(g.Runner()).EnsureAgent(ctx, w.tenant, w.agents[i], "team"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range nEntities {
		w.entities = append(w.entities, fmt.Sprintf("ent-%d", i))
	}
	w.kinds = testKinds
	base := w.now.Add(-60 * 24 * time.Hour)
	n := 30 + rng.IntN(50)
	for i := range n {
		at := base.Add(time.Duration(rng.IntN(60*24)) * time.Hour).Truncate(time.Second)
		m := memory.Memory{
			ID: memory.NewID("mem"), Tenant: w.tenant, UserID: w.users[rng.IntN(nUsers)], AgentID: w.agents[rng.IntN(nAgents)],
			Type: memory.Types[rng.IntN(len(memory.Types))], Kind: testKinds[rng.IntN(len(testKinds))],
			Key:         testKeys[rng.IntN(len(testKeys))],
			Content:     fmt.Sprintf("memory %d", i),
			Status:      []string{memory.StatusActive, memory.StatusActive, memory.StatusCandidate, memory.StatusArchived}[rng.IntN(4)],
			Sensitivity: memory.Sensitivities[rng.IntN(len(memory.Sensitivities))],
			Importance:  0.5, Confidence: 1, ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1, EvidenceCount: 1,
		}
		if rng.IntN(3) == 0 {
			m.SessionID = fmt.Sprintf("s%d", rng.IntN(4))
		}
		for _, e := range rng.Perm(nEntities)[:rng.IntN(4)] {
			m.Entities = append(m.Entities, memory.Entity{ID: w.entities[e], Kind: "company", Name: "Entity " + w.entities[e]})
		}
		// Each in its own batch, in time order, so that keyed slots build
		// versions as they would from separate writes.
		if _, err := g.CreateMemories(ctx, []memory.Memory{m}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	var grants []memory.Grant
	for i := range rng.IntN(3) {
		grants = append(grants, memory.Grant{
			ID: fmt.Sprintf("g%d", i), Tenant: w.tenant, Grantee: w.agents[rng.IntN(nAgents)], Source: w.agents[rng.IntN(nAgents)],
			Types: []string{memory.Types[rng.IntN(4)]}, MaxSensitivity: memory.Sensitivities[rng.IntN(4)], CreatedAt: w.now,
		})
	}
	if err := engine.UseGrants(ctx, w.tenant, 1, grants); err != nil {
		t.Fatal(err)
	}
	all, err := g.ListMemories(ctx, memory.Scope{Tenant: w.tenant, Filter: &memory.Filter{Op: memory.FilterTrue}}, memory.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	w.memories = all
	return w
}

// readable is what per-memory decisions let p read, by id.
func (w *world) readable(t *testing.T, p memory.Principal) map[string]memory.Memory {
	t.Helper()
	out := map[string]memory.Memory{}
	for _, m := range w.memories {
		d, err := w.engine.Decide(context.Background(), p, memory.ActionRead, memory.ResourceOf(m), w.now)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allow {
			out[m.ID] = m
		}
	}
	return out
}

func mentions(m memory.Memory, e string) bool {
	return slices.ContainsFunc(m.Entities, func(x memory.Entity) bool { return x.ID == e })
}

// check runs every query shape for p and returns each way an answer
// differs from per-memory decisions: a memory p may not read, a missing
// memory p may read, a count other than the count of readable memories.
func check(ctx context.Context, w *world, svc *graphquery.Service, p memory.Principal, ok map[string]memory.Memory) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	readableNodes := func(shape string, nodes []graphquery.Node) {
		for _, n := range nodes {
			if n.Memory != nil {
				if _, yes := ok[n.ID]; !yes {
					fail("%s: memory %s returned, policy refuses it", shape, n.ID)
				}
			}
		}
	}
	notFound := func(err error) bool { return errors.Is(err, memory.ErrNotFound) }

	// Entities: every entity readable memories mention, with their count.
	want := map[string]int64{}
	for _, m := range ok {
		for _, e := range m.Entities {
			want[e.ID]++
		}
	}
	ents, err := svc.Entities(ctx, p, graphquery.EntityQuery{Limit: graphquery.MaxRows})
	if err != nil {
		return append(bad, "entities: "+err.Error())
	}
	got := map[string]int64{}
	for _, e := range ents.Entities {
		got[e.ID] = e.Count
	}
	if !equalCounts(got, want) {
		fail("entities: got %v, want %v", got, want)
	}

	for _, e := range w.entities {
		// Neighbourhood, one hop: exactly the readable memories that
		// mention e; two and three hops: only readable ones.
		for hops := 1; hops <= graphquery.MaxHops; hops++ {
			g, err := svc.Neighbourhood(ctx, p, graphquery.NeighbourhoodQuery{From: graphquery.NodeRef{Label: graphquery.LabelEntity, ID: e}, Hops: hops, Limit: graphquery.MaxNodes})
			if want[e] == 0 {
				if !notFound(err) {
					fail("neighbourhood of %s: no readable memory mentions it, got %v", e, err)
				}
				break
			}
			if err != nil {
				fail("neighbourhood of %s: %v", e, err)
				break
			}
			readableNodes("neighbourhood", g.Nodes)
			if hops == 1 {
				var ids, wantIDs []string
				for _, n := range g.Nodes {
					if n.Memory != nil {
						ids = append(ids, n.ID)
					}
				}
				for id, m := range ok {
					if mentions(m, e) {
						wantIDs = append(wantIDs, id)
					}
				}
				if !sameSet(ids, wantIDs) {
					fail("neighbourhood of %s: memories %v, want %v", e, ids, wantIDs)
				}
			}
		}
		// Co-mentions of e.
		cm, err := svc.CoMentions(ctx, p, graphquery.CoMentionQuery{Entity: e, Limit: graphquery.MaxRows})
		if want[e] == 0 {
			if !notFound(err) {
				fail("co-mentions of %s: want not found, got %v", e, err)
			}
		} else if err != nil {
			fail("co-mentions of %s: %v", e, err)
		} else {
			gotPairs, wantPairs := map[string]int64{}, map[string]int64{}
			for _, pr := range cm.Pairs {
				gotPairs[pr.B.ID] = pr.Count
			}
			for _, m := range ok {
				if !mentions(m, e) {
					continue
				}
				for _, o := range m.Entities {
					if o.ID != e {
						wantPairs[o.ID]++
					}
				}
			}
			if !equalCounts(gotPairs, wantPairs) {
				fail("co-mentions of %s: got %v, want %v", e, gotPairs, wantPairs)
			}
		}
		// Timeline of e.
		tl, err := svc.Timeline(ctx, p, graphquery.TimelineQuery{Entity: e, Limit: graphquery.MaxRows})
		if want[e] > 0 && err == nil {
			var ids, wantIDs []string
			for _, m := range tl.Memories {
				ids = append(ids, m.ID)
			}
			for id, m := range ok {
				if mentions(m, e) {
					wantIDs = append(wantIDs, id)
				}
			}
			if !sameSet(ids, wantIDs) {
				fail("timeline of %s: %v, want %v", e, ids, wantIDs)
			}
		} else if want[e] > 0 || !notFound(err) {
			fail("timeline of %s: %v", e, err)
		}
	}

	// Paths between every pair of entities: readable memories only.
	for i, a := range w.entities {
		for _, b := range w.entities[i+1:] {
			ps, err := svc.Paths(ctx, p, graphquery.PathQuery{From: a, To: b, Limit: graphquery.MaxPaths})
			if want[a] == 0 || want[b] == 0 {
				if !notFound(err) {
					fail("paths %s-%s: want not found, got %v", a, b, err)
				}
				continue
			}
			if err != nil {
				fail("paths %s-%s: %v", a, b, err)
				continue
			}
			for _, path := range ps.Paths {
				readableNodes("paths", path.Nodes)
			}
		}
	}

	// Timelines of each user and each kind.
	for _, u := range w.users {
		var wantIDs []string
		for id, m := range ok {
			if m.UserID == u {
				wantIDs = append(wantIDs, id)
			}
		}
		tl, err := svc.Timeline(ctx, p, graphquery.TimelineQuery{User: u, Limit: graphquery.MaxRows})
		switch {
		case len(wantIDs) == 0 && !notFound(err):
			fail("timeline of user %s: want not found, got %v", u, err)
		case len(wantIDs) > 0 && err != nil:
			fail("timeline of user %s: %v", u, err)
		case err == nil:
			var ids []string
			for _, m := range tl.Memories {
				ids = append(ids, m.ID)
			}
			if !sameSet(ids, wantIDs) {
				fail("timeline of user %s: %v, want %v", u, ids, wantIDs)
			}
		}
	}
	for _, k := range w.kinds {
		tl, err := svc.Timeline(ctx, p, graphquery.TimelineQuery{Kind: k, Limit: graphquery.MaxRows})
		if err != nil {
			fail("timeline of kind %s: %v", k, err)
			continue
		}
		var ids, wantIDs []string
		for _, m := range tl.Memories {
			ids = append(ids, m.ID)
		}
		for id, m := range ok {
			if m.Kind == k {
				wantIDs = append(wantIDs, id)
			}
		}
		if !sameSet(ids, wantIDs) {
			fail("timeline of kind %s: %v, want %v", k, ids, wantIDs)
		}
	}

	// Aggregates by every dimension, plain and filtered.
	filters := []graphquery.MemoryFilter{{}, {Types: []string{memory.TypeSemantic, memory.TypeProcedural}}, {Statuses: []string{memory.StatusActive}}}
	for _, by := range graphquery.Dimensions {
		for fi, f := range filters {
			agg, err := svc.Aggregate(ctx, p, graphquery.AggregateQuery{By: by, Filter: f})
			if err != nil {
				fail("aggregate by %s: %v", by, err)
				continue
			}
			want, total := map[string]int64{}, int64(0)
			for _, m := range ok {
				if len(f.Types) > 0 && !slices.Contains(f.Types, m.Type) || len(f.Statuses) > 0 && !slices.Contains(f.Statuses, m.Status) {
					continue
				}
				total++
				for _, k := range dimension(by, m) {
					want[k]++
				}
			}
			got := map[string]int64{}
			for _, b := range agg.Buckets {
				got[b.Key] = b.Count
			}
			if !equalCounts(got, want) || agg.Total != total {
				fail("aggregate by %s (filter %d): got %v total %d, want %v total %d", by, fi, got, agg.Total, want, total)
			}
		}
	}
	return bad
}

// dimension is the group keys of m by one dimension, computed in Go.
func dimension(by string, m memory.Memory) []string {
	day := m.CreatedAt.UTC()
	switch by {
	case graphquery.ByType:
		return []string{m.Type}
	case graphquery.ByKind:
		return []string{m.Kind}
	case graphquery.ByAgent:
		return []string{m.AgentID}
	case graphquery.ByUser:
		return []string{m.UserID}
	case graphquery.ByStatus:
		return []string{m.Status}
	case graphquery.BySensitivity:
		return []string{m.Sensitivity}
	case graphquery.ByDay:
		return []string{day.Format("2006-01-02")}
	case graphquery.ByWeek:
		monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		return []string{monday.Format("2006-01-02")}
	case graphquery.ByMonth:
		return []string{day.Format("2006-01") + "-01"}
	case graphquery.ByEntity:
		var out []string
		for _, e := range m.Entities {
			out = append(out, e.ID)
		}
		return out
	}
	return nil
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}

// principals are the callers a world is queried as: analysts with random
// roles (none, unknown ones included) and an admin.
func principals(rng *rand.Rand, tenant string) []memory.Principal {
	roles := []string{"analyst", "analyst_full", "auditor"}
	out := []memory.Principal{{Tenant: tenant, Kind: memory.KindAdmin, ID: "admin"}}
	for i := range 3 {
		var rs []string
		for _, r := range roles {
			if rng.IntN(2) == 0 {
				rs = append(rs, r)
			}
		}
		out = append(out, memory.Principal{Tenant: tenant, Kind: memory.KindAnalyst, ID: fmt.Sprintf("analyst-%d", i), Roles: rs})
	}
	return out
}

func newService(t testing.TB, g *graph.Store, engine *policy.Engine, store graphquery.Store, opts graphquery.Options) *graphquery.Service {
	t.Helper()
	opts.Store, opts.Authz = store, engine
	if opts.Audit == nil {
		opts.Audit = &audits{}
	}
	opts.Timeout = 20 * time.Second
	opts.Logger = slog.New(slog.DiscardHandler)
	svc, err := graphquery.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestQueriesAgreeWithDecisions is the property: on randomized tenants,
// every shape returns only memories per-memory decisions allow (one-hop
// neighbourhoods and timelines exactly those), and every count is the
// count of readable memories.
func TestQueriesAgreeWithDecisions(t *testing.T) {
	g := stores(t)
	engine, err := policy.New(context.Background(), policy.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 15))
	for round := range 3 {
		w := newWorld(t, rng, g, engine)
		var disagreed int
		svc := newService(t, g, engine, analysis.New(g.Runner(), analysis.Options{}), graphquery.Options{Disagreed: func(string, int) { disagreed++ }})
		for _, p := range principals(rng, w.tenant) {
			ok := w.readable(t, p)
			for _, b := range check(ctx, w, svc, p, ok) {
				t.Errorf("round %d, %s %v: %s", round, p.ID, p.Roles, b)
			}
		}
		if disagreed != 0 {
			t.Errorf("round %d: the filter let through %d memories or classes that decisions refuse", round, disagreed)
		}
		// Agents and end users are refused.
		for _, kind := range []string{memory.KindAgent, memory.KindUser} {
			p := memory.Principal{Tenant: w.tenant, Kind: kind, ID: w.agents[0]}
			if _, err := svc.Aggregate(ctx, p, graphquery.AggregateQuery{By: graphquery.ByType}); !errors.Is(err, memory.ErrForbidden) {
				t.Errorf("%s: aggregate = %v, want forbidden", kind, err)
			}
		}
	}
}

// TestBrokenFilterIsCaught swaps the store's predicate for one that lets
// every memory of the tenant through. With the per-memory check on, the
// answers stay right and the disagreement is reported; with it off, the
// property's checker finds the leaks.
func TestBrokenFilterIsCaught(t *testing.T) {
	g := stores(t)
	engine, err := policy.New(context.Background(), policy.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 16))
	w := newWorld(t, rng, g, engine)
	open := analysis.New(g.Runner(), analysis.Options{Predicate: func(memory.Scope) (string, map[string]any) {
		return "true", map[string]any{}
	}})
	// An analyst who may read semantic and procedural memories up to
	// internal: the tenant surely holds memories beyond that.
	p := memory.Principal{Tenant: w.tenant, Kind: memory.KindAnalyst, ID: "analyst", Roles: []string{"analyst"}}
	ok := w.readable(t, p)
	if len(ok) == len(w.memories) {
		t.Fatal("the analyst may read every memory: nothing to leak")
	}

	var disagreed int
	checked := newService(t, g, engine, open, graphquery.Options{Disagreed: func(_ string, n int) { disagreed += n }})
	// A start node is shown through at most StartWitnesses memories the
	// store picked; when the broken filter picked only unreadable ones the
	// node is not found. That errs on the safe side and is allowed here.
	var wrong []string
	for _, b := range check(ctx, w, checked, p, ok) {
		if !strings.HasSuffix(b, memory.ErrNotFound.Error()) {
			wrong = append(wrong, b)
		}
	}
	if len(wrong) > 0 {
		t.Errorf("with the per-memory check on, answers must stay right: %s", strings.Join(wrong, "\n"))
	}
	if disagreed == 0 {
		t.Error("the broken filter let unreadable memories through and nothing reported it")
	}

	unchecked := newService(t, g, engine, open, graphquery.Options{Unchecked: true})
	bad := check(ctx, w, unchecked, p, ok)
	if len(bad) == 0 {
		t.Fatal("with a broken filter and no per-memory check the checker found nothing")
	}
	t.Logf("the checker caught %d wrong answers, e.g. %s", len(bad), bad[0])
}
