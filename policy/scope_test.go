package policy

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

var scopeSeed = flag.Uint64("policy.seed", 1, "seed of TestScopeMatchesAllow")

// TestScopeMatchesAllow checks the invariant between the halves of the
// policy: for generated principals and grants, and every memory of a small
// but complete universe of metadata, a memory is in ReadScope(p, u) (the
// filter compiled by partial evaluation) and in ClauseScope(p, u) (the
// clauses of scope.rego) exactly when it is about u (or u is "") and Decide
// allows p to read it. A scope may be neither wider than allow (a leak) nor
// narrower (a memory allow grants but no query can find).
func TestScopeMatchesAllow(t *testing.T) {
	rounds := 16
	if testing.Short() || raceEnabled {
		rounds = 6
	}
	ctx := context.Background()
	e := newEngine(t, Options{})
	rng := rand.New(rand.NewPCG(*scopeSeed, 0))
	t.Logf("seed %d, %d rounds", *scopeSeed, rounds)

	// allowedBy counts allowed reads by the rule that allowed them, so that
	// the test cannot pass by allowing and scoping nothing.
	allowedBy := map[string]int{}
	for round := range rounds {
		grants := genGrants(rng)
		setGrants(t, e, grants...)
		for i := range 4 {
			p := genPrincipal(rng)
			if i == 0 && len(grants) > 0 {
				// Someone the grants are about.
				p = memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: grants[0].Grantee}
			}
			name := fmt.Sprintf("round %d %+v", round, p)
			allow := map[memory.Resource]bool{}
			for _, r := range universe(p.Tenant, rng) {
				d, err := e.Decide(ctx, p, memory.ActionRead, r, testNow)
				if err != nil {
					t.Fatalf("%s: Decide(%+v): %v", name, r, err)
				}
				allow[r] = d.Allow
				if d.Allow {
					if r.Tenant != p.Tenant {
						t.Errorf("%s: allowed a read across tenants: %+v", name, r)
					}
					for _, reason := range d.Reasons {
						allowedBy[strings.Fields(reason)[0]]++
					}
				}
			}
			for _, userID := range []string{"", "u1", "u2", "u3"} {
				filtered, err := e.ReadScope(ctx, p, userID, testNow)
				if err != nil {
					t.Fatalf("%s: ReadScope(%q): %v", name, userID, err)
				}
				if filtered.Filter == nil {
					t.Fatalf("%s: ReadScope(%q) has no filter", name, userID)
				}
				clauses, err := e.ClauseScope(ctx, p, userID, testNow)
				if err != nil {
					t.Fatalf("%s: ClauseScope(%q): %v", name, userID, err)
				}
				for _, s := range []memory.Scope{filtered, clauses} {
					if s.Tenant != p.Tenant {
						t.Errorf("%s: scope tenant %q", name, s.Tenant)
					}
					for r, allowed := range allow {
						want := allowed && (userID == "" || r.UserID == userID)
						if got := Matches(s, r); got != want {
							t.Errorf("%s: user %q: %+v: in scope %v, allowed %v\nclauses %+v\nfilter %s\ngrants %+v",
								name, userID, r, got, want, s.Clauses, filterText(s.Filter), grants)
						}
					}
				}
			}
			if t.Failed() {
				t.FailNow()
			}
		}
	}
	t.Logf("allowed reads by rule: %v", allowedBy)
	for _, rule := range []string{"agent", "grant", "user", "admin", "role"} {
		if allowedBy[rule] == 0 {
			t.Errorf("no read was allowed by a %q rule; the generators miss a case", rule)
		}
	}
}

func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

func subset(rng *rand.Rand, p float64, xs ...string) []string {
	var out []string
	for _, x := range xs {
		if rng.Float64() < p {
			out = append(out, x)
		}
	}
	return out
}

var agentIDs = []string{"a1", "a2", "a3"}

func genPrincipal(rng *rand.Rand) memory.Principal {
	p := memory.Principal{Tenant: "acme"}
	if rng.IntN(10) == 0 {
		p.Tenant = pick(rng, "globex", "")
	}
	switch n := rng.IntN(20); {
	case n < 8:
		p.Kind, p.ID = memory.KindAgent, pick(rng, agentIDs...)
	case n < 11:
		p.Kind, p.ID = memory.KindUser, pick(rng, "u1", "u2")
	case n < 13:
		p.Kind, p.ID = memory.KindAdmin, "root"
	case n < 18:
		p.Kind, p.ID = memory.KindAnalyst, "ana"
	case n < 19:
		p.Kind, p.ID = "robot", "a1"
	default:
		p.Kind, p.ID = pick(rng, memory.KindAgent, memory.KindAdmin, memory.KindUser), ""
	}
	p.Roles = subset(rng, 0.4, "analyst", "analyst_full", "auditor")
	return p
}

func genGrants(rng *rand.Rand) []memory.Grant {
	var grants []memory.Grant
	for i := range rng.IntN(8) {
		g := memory.Grant{
			ID:             fmt.Sprintf("g%d", i),
			Tenant:         "acme",
			Grantee:        pick(rng, agentIDs...),
			Source:         pick(rng, "a1", "a2", "a3", "*", "*", ""),
			Types:          subset(rng, 0.5, append(memory.Types, "weird")...),
			MaxSensitivity: pick(rng, "public", "internal", "internal", "confidential", "restricted", "secret", ""),
		}
		if rng.IntN(8) == 0 {
			g.Tenant = "globex"
		}
		if rng.IntN(2) == 0 {
			g.Kinds = subset(rng, 0.5, "order", "pref", "other")
		}
		switch rng.IntN(8) {
		case 0:
			at := testNow.Add(-time.Hour)
			g.ExpiresAt = &at
		case 1:
			at := testNow
			g.ExpiresAt = &at
		case 2:
			at := testNow.Add(time.Nanosecond)
			g.ExpiresAt = &at
		}
		grants = append(grants, g)
	}
	return grants
}

// universe returns every combination of the metadata that policy looks at,
// including unknown types and sensitivities, in tenant, and a sample of
// another tenant's memories.
func universe(tenant string, rng *rand.Rand) []memory.Resource {
	var out []memory.Resource
	for _, user := range []string{"u1", "u2"} {
		// "user:u1" wrote its memories about u1 themselves; about u2 it is
		// an author id an admin chose.
		for _, agent := range []string{"a1", "a2", "", "user:u1"} {
			for _, typ := range append(memory.Types, "weird") {
				for _, kind := range []string{"", "order", "pref"} {
					for _, sens := range append(memory.Sensitivities, "secret") {
						r := memory.Resource{
							Tenant: tenant, UserID: user, AgentID: agent,
							Type: typ, Kind: kind, Sensitivity: sens, Status: memory.StatusActive,
						}
						out = append(out, r)
						if rng.IntN(20) == 0 {
							r.Tenant = "other"
							out = append(out, r)
						}
					}
				}
			}
		}
	}
	return out
}

// TestMatches pins the reference meaning of a clause.
func TestMatches(t *testing.T) {
	r := memory.Resource{Tenant: "acme", UserID: "u1", AgentID: "a1", Type: "episodic", Kind: "order", Sensitivity: "internal"}
	tests := []struct {
		name string
		c    memory.Clause
		want bool
	}{
		{"empty clause", memory.Clause{}, true},
		{"user", memory.Clause{UserID: "u1"}, true},
		{"other user", memory.Clause{UserID: "u2"}, false},
		{"agent", memory.Clause{AgentIDs: []string{"a2", "a1"}}, true},
		{"other agent", memory.Clause{AgentIDs: []string{"a2"}}, false},
		{"type", memory.Clause{Types: []string{"episodic"}}, true},
		{"other type", memory.Clause{Types: []string{"semantic"}}, false},
		{"kind", memory.Clause{Kinds: []string{"order"}}, true},
		{"other kind", memory.Clause{Kinds: []string{"pref"}}, false},
		{"ceiling equal", memory.Clause{MaxSensitivity: "internal"}, true},
		{"ceiling below", memory.Clause{MaxSensitivity: "public"}, false},
		{"unknown ceiling", memory.Clause{MaxSensitivity: "secret"}, false},
		{"author, from the ids", memory.Clause{Authors: []string{memory.AuthorAgent}}, true},
		{"other author", memory.Clause{Authors: []string{memory.AuthorUser}}, false},
		{"all fields", memory.Clause{UserID: "u1", AgentIDs: []string{"a1"}, Types: []string{"episodic"}, Kinds: []string{"order"}, MaxSensitivity: "restricted"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClauseMatches(tc.c, r); got != tc.want {
				t.Errorf("ClauseMatches = %v, want %v", got, tc.want)
			}
			s := memory.Scope{Tenant: "acme", Clauses: []memory.Clause{tc.c}}
			if got := Matches(s, r); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
			s.Tenant = "globex"
			if Matches(s, r) {
				t.Error("Matches across tenants")
			}
		})
	}
	unknown := r
	unknown.Sensitivity = "secret"
	if ClauseMatches(memory.Clause{MaxSensitivity: "restricted"}, unknown) {
		t.Error("a memory of unknown sensitivity matches a clause with a ceiling")
	}
	if Matches(memory.Scope{Tenant: "acme"}, r) {
		t.Error("an empty scope matches")
	}
}

// TestClauseScope pins a few clause scopes as the graph store will see them.
func TestClauseScope(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{})
	wild := grantG1
	wild.ID, wild.Source, wild.Kinds = "g2", "*", []string{"order"}
	setGrants(t, e, grantG1, wild)
	tests := []struct {
		name   string
		p      memory.Principal
		userID string
		want   memory.Scope
	}{
		{"admin", admin, "", memory.Scope{Tenant: "acme", Clauses: []memory.Clause{{MaxSensitivity: "restricted"}}}},
		{"agent with grants", support, "u1", memory.Scope{Tenant: "acme", Clauses: []memory.Clause{
			{UserID: "u1", AgentIDs: []string{"order-bot"}, Types: []string{"episodic"}, MaxSensitivity: "internal", Scopes: []string{"agent", "user"}},
			{UserID: "u1", AgentIDs: []string{"support-bot"}, MaxSensitivity: "restricted"},
			{UserID: "u1", MaxSensitivity: "restricted", Scopes: []string{"user"}, Authors: []string{"user"}},
			{UserID: "u1", Types: []string{"episodic"}, Kinds: []string{"order"}, MaxSensitivity: "internal", Scopes: []string{"agent", "user"}},
			{UserID: "u1", MaxSensitivity: "restricted", Scopes: []string{"agent"}, ScopeIDs: []string{"support-bot"}},
			{UserID: "u1", MaxSensitivity: "restricted", Scopes: []string{"tenant"}},
		}}},
		{"user about another user", memory.Principal{Tenant: "acme", Kind: "user", ID: "u1"}, "u2", memory.Scope{Tenant: "acme"}},
		{"unknown kind", memory.Principal{Tenant: "acme", Kind: "robot", ID: "r"}, "", memory.Scope{Tenant: "acme"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.ClauseScope(ctx, tc.p, tc.userID, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scope (-want +got):\n%s", diff)
			}
		})
	}
}
