package pushdown_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"mneme/graph"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/policy"
	"mneme/policyadmin"
)

var (
	seed   = flag.Uint64("pushdown.seed", 1, "seed of TestPushedDownQueriesMatchDecisions")
	rounds = flag.Int("pushdown.rounds", 2, "rounds of TestPushedDownQueriesMatchDecisions")
)

func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

func subset(rng *rand.Rand, p float64, xs ...string) []string {
	out := []string{}
	for _, x := range xs {
		if rng.Float64() < p {
			out = append(out, x)
		}
	}
	return out
}

var (
	agents = []string{"a0", "a1", "a2", "a3"}
	users  = []string{"u0", "u1", "u2"}
	kinds  = []string{"", "order", "pref"}
	// Types and sensitivities the store may hold besides the known ones:
	// policy must never let an unknown sensitivity through.
	types         = append(slices.Clone(memory.Types), "weird")
	sensitivities = append(slices.Clone(memory.Sensitivities), "secret")
	statuses      = []string{memory.StatusActive, memory.StatusActive, memory.StatusCandidate, memory.StatusArchived}
	// Scopes a memory may have: about a user (most), shared in the tenant, a
	// team or an agent, and one policy does not know. teams are the agents'
	// teams and the ids of team knowledge.
	scopes = []string{memory.ScopeUser, memory.ScopeUser, memory.ScopeUser, memory.ScopeTenant, memory.ScopeTeam, memory.ScopeAgent, "weird"}
	teams  = []string{"t0", "t1"}
)

// world is one round: two tenants with their memories, grants and
// settings.
type world struct {
	tenants []string
	// team is each agent's team ("" for none), the same in both tenants.
	team     map[string]string
	memories []memory.Memory
	grants   []memory.Grant
	settings map[string]policyadmin.Settings
}

// ceilings are the end users' ceilings a tenant may set: none (the
// default), every level, and one policy does not know, which must fail
// closed.
var ceilings = append([]string{"", ""}, append(slices.Clone(memory.Sensitivities), "secret")...)

func genWorld(t *testing.T, rng *rand.Rand, now time.Time) world {
	w := world{tenants: []string{testenv.Tenant(t), testenv.Tenant(t)}, settings: map[string]policyadmin.Settings{}, team: map[string]string{}}
	for _, a := range agents {
		w.team[a] = pick(rng, append(slices.Clone(teams), "")...)
	}
	vec := make([]float32, testenv.EmbeddingDimension)
	for i := range vec {
		vec[i] = 1
	}
	for _, tenant := range w.tenants {
		w.settings[tenant] = policyadmin.Settings{UserMaxSensitivity: pick(rng, ceilings...), UsersReadShared: rng.IntN(2) == 0}
		for i := range 40 + rng.IntN(40) {
			at := now.Add(-time.Duration(i+1) * time.Minute).Truncate(time.Millisecond)
			m := memory.Memory{
				ID: memory.NewID("mem"), Tenant: tenant, UserID: pick(rng, users...),
				// "" is a memory no agent wrote: the store keeps no agent_id.
				AgentID: pick(rng, append(slices.Clone(agents), "")...),
				Type:    pick(rng, types...), Kind: pick(rng, kinds...), Sensitivity: pick(rng, sensitivities...),
				Status:  pick(rng, statuses...),
				Content: fmt.Sprintf("marker note %d", i), Importance: 0.5, Confidence: 1, Embedding: vec,
				ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1,
			}
			if sc := pick(rng, scopes...); sc != memory.ScopeUser {
				m.Scope, m.UserID = sc, ""
				if sc != memory.ScopeTenant {
					m.ScopeID = pick(rng, append(slices.Clone(teams), agents...)...)
				}
			} else if rng.IntN(2) == 0 {
				m.Scope = memory.ScopeUser // stored explicitly, or left unset
			}
			if rng.IntN(8) == 0 { // a temporary memory whose validity ended
				end := now.Add(-time.Second)
				m.ValidTo = &end
			}
			w.memories = append(w.memories, m)
		}
		for i := range rng.IntN(7) {
			g := memory.Grant{
				ID: fmt.Sprintf("g%d", i), Tenant: tenant, Grantee: pick(rng, agents...),
				Source:         pick(rng, "a0", "a1", "a2", "a3", "*", "*"),
				Types:          subset(rng, 0.5, types...),
				MaxSensitivity: pick(rng, "public", "internal", "internal", "confidential", "restricted", "secret"),
				CreatedAt:      now,
			}
			if rng.IntN(2) == 0 {
				g.Kinds = subset(rng, 0.5, "order", "pref", "other")
			}
			switch rng.IntN(6) {
			case 0:
				at := now.Add(-time.Hour)
				g.ExpiresAt = &at
			case 1:
				at := now.Add(time.Hour)
				g.ExpiresAt = &at
			}
			w.grants = append(w.grants, g)
		}
	}
	return w
}

// principals returns who reads in a round: every agent and user of both
// tenants (users under their tenant's ceiling), an admin, analysts by role,
// and principals policy knows nothing about.
func principals(w world) []memory.Principal {
	var out []memory.Principal
	for _, tenant := range w.tenants {
		for _, a := range agents {
			out = append(out, memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: a, Team: w.team[a]})
		}
		for _, u := range users[:2] {
			out = append(out, memory.Principal{Tenant: tenant, Kind: memory.KindUser, ID: u})
		}
		out = append(out,
			memory.Principal{Tenant: tenant, Kind: memory.KindAdmin, ID: "root"},
			memory.Principal{Tenant: tenant, Kind: memory.KindAnalyst, ID: "ana", Roles: []string{"analyst"}},
			memory.Principal{Tenant: tenant, Kind: memory.KindAnalyst, ID: "ana", Roles: []string{"analyst_full", "auditor"}},
			memory.Principal{Tenant: tenant, Kind: memory.KindAnalyst, ID: "ana"},
			memory.Principal{Tenant: tenant, Kind: "robot", ID: "a0"},
		)
	}
	return out
}

// TestPushedDownQueriesMatchDecisions writes randomized tenants to the real
// Neo4j and checks, for every principal and requested user, that listing,
// vector search and full-text search under the policy's read scope return
// exactly the memories Decide lets the principal read (active ones for the
// searches), neither more nor fewer, under randomized grants and tenant
// settings; and that listing under scope.rego's clauses agrees.
func TestPushedDownQueriesMatchDecisions(t *testing.T) {
	driver := testenv.Neo4j(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	store := graph.New(driver, graph.Options{Database: testenv.Neo4jDatabase()})
	if err := store.EnsureSchema(ctx, testenv.EmbeddingDimension); err != nil {
		t.Fatalf("EnsureSchema: %v", err)
	}
	engine, err := policy.New(ctx, policy.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d, %d rounds (-pushdown.seed, -pushdown.rounds)", *seed, *rounds)
	rng := rand.New(rand.NewPCG(*seed, 0))
	now := time.Now().UTC()

	var allowed, denied, sharedRead int
	for round := range *rounds {
		w := genWorld(t, rng, now)
		for _, tenant := range w.tenants {
			var ms []memory.Memory
			for _, m := range w.memories {
				if m.Tenant == tenant {
					ms = append(ms, m)
				}
			}
			if _, err := store.CreateMemories(ctx, ms); err != nil {
				t.Fatalf("CreateMemories: %v", err)
			}
		}
		if err := engine.SetGrants(ctx, w.grants); err != nil {
			t.Fatal(err)
		}
		for _, tenant := range w.tenants {
			if err := engine.UseSettings(ctx, tenant, int64(round+1), w.settings[tenant]); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range principals(w) {
			readable := map[string]memory.Memory{}
			for _, m := range w.memories {
				d, err := engine.Decide(ctx, p, memory.ActionRead, memory.ResourceOf(m), now)
				if err != nil {
					t.Fatalf("Decide: %v", err)
				}
				if d.Allow {
					readable[m.ID] = m
					allowed++
				} else {
					denied++
				}
			}
			for _, userID := range append([]string{""}, users...) {
				name := fmt.Sprintf("round %d: %+v reading user %q", round, p, userID)
				scope, err := engine.ReadScope(ctx, p, userID, now)
				if err != nil {
					t.Fatalf("%s: ReadScope: %v", name, err)
				}
				if scope.Filter == nil {
					t.Fatalf("%s: scope without a filter", name)
				}
				var want, wantActive, wantJoint []string
				for id, m := range readable {
					current := m.Status == memory.StatusActive && (m.ValidTo == nil || m.ValidTo.After(now))
					if userID == "" || m.UserID == userID {
						want = append(want, id)
						if current {
							wantActive = append(wantActive, id)
						}
					}
					if current && (m.UserID == userID || m.UserID == "" && memory.ScopeOf(m) != memory.ScopeUser) {
						wantJoint = append(wantJoint, id)
						if m.UserID == "" && userID != "" {
							sharedRead++
						}
					}
				}
				listed, err := store.ListMemories(ctx, scope, memory.ListQuery{UserID: userID, Limit: 500})
				if err != nil {
					t.Fatalf("%s: ListMemories: %v", name, err)
				}
				check(t, name+": list", ids(listed), want, w, p)
				// The hand-written scope of scope.rego is the other
				// enforcement point: it must agree too.
				clauses, err := engine.ClauseScope(ctx, p, userID, now)
				if err != nil {
					t.Fatalf("%s: ClauseScope: %v", name, err)
				}
				byClauses, err := store.ListMemories(ctx, clauses, memory.ListQuery{UserID: userID, Limit: 500})
				if err != nil {
					t.Fatalf("%s: ListMemories by clauses: %v", name, err)
				}
				check(t, name+": list by scope.rego clauses", ids(byClauses), want, w, p)
				if userID == "" {
					continue
				}
				q := memory.SearchQuery{UserID: userID, Text: "marker", Embedding: w.memories[0].Embedding, Limit: 500}
				byVector, err := store.SearchVector(ctx, scope, q)
				if err != nil {
					t.Fatalf("%s: SearchVector: %v", name, err)
				}
				check(t, name+": vector search", hitIDs(byVector), wantActive, w, p)
				byText, err := store.SearchFullText(ctx, scope, q)
				if err != nil {
					t.Fatalf("%s: SearchFullText: %v", name, err)
				}
				check(t, name+": full-text search", hitIDs(byText), wantActive, w, p)
				// Recall reads the user's memories and the shared knowledge
				// at once, under the joint scope.
				all, err := engine.ReadScope(ctx, p, "", now)
				if err != nil {
					t.Fatalf("%s: ReadScope: %v", name, err)
				}
				joint, ok := memory.JointScope(scope, all)
				if !ok {
					t.Fatalf("%s: no joint scope", name)
				}
				jq := q
				jq.Shared, jq.Now = true, now
				jointVector, err := store.SearchVector(ctx, joint, jq)
				if err != nil {
					t.Fatalf("%s: joint SearchVector: %v", name, err)
				}
				check(t, name+": joint vector search", hitIDs(jointVector), wantJoint, w, p)
				jointText, err := store.SearchFullText(ctx, joint, jq)
				if err != nil {
					t.Fatalf("%s: joint SearchFullText: %v", name, err)
				}
				check(t, name+": joint full-text search", hitIDs(jointText), wantJoint, w, p)
				if t.Failed() {
					t.Fatalf("filter %+v", *scope.Filter)
				}
			}
		}
	}
	t.Logf("%d reads allowed, %d denied, %d joint reads of shared knowledge", allowed, denied, sharedRead)
	// The generators must exercise both outcomes, or the test proves little.
	if allowed < 100 || denied < 100 {
		t.Errorf("%d allowed and %d denied reads: the generators miss cases", allowed, denied)
	}
	if sharedRead < 20 {
		t.Errorf("%d reads of shared knowledge in joint searches: the generators miss cases", sharedRead)
	}
}

func check(t *testing.T, name string, got, want []string, w world, p memory.Principal) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	if slices.Equal(got, want) {
		return
	}
	byID := map[string]memory.Memory{}
	for _, m := range w.memories {
		byID[m.ID] = m
	}
	for _, id := range got {
		if !slices.Contains(want, id) {
			t.Errorf("%s: returned %+v, which policy denies", name, memory.ResourceOf(byID[id]))
		}
	}
	for _, id := range want {
		if !slices.Contains(got, id) {
			t.Errorf("%s: misses %+v, which policy allows", name, memory.ResourceOf(byID[id]))
		}
	}
	t.Logf("grants: %+v; settings: %+v; teams: %v", w.grants, w.settings, w.team)
}

func ids(ms []memory.Memory) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func hitIDs(hs []memory.Hit) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, h.Memory.ID)
	}
	return out
}
