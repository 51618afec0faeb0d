package tally

import (
	"context"
	"maps"
	"testing"
	"time"

	"mneme/census"
	"mneme/graph"
	"mneme/internal/testenv"
	"mneme/memory"
)

// key is a Count without its number.
type key struct{ user, typ, status string }

func counted(cs []census.Count) map[key]int64 {
	out := map[key]int64{}
	for _, c := range cs {
		out[key{c.UserID, c.Type, c.Status}] += c.N
	}
	return out
}

// TestCountMemories counts two tenants' memories under scopes: the tenant's
// own, by user, type and status, only those the scope admits, none of the
// other tenant's, and nothing for an empty scope.
func TestCountMemories(t *testing.T) {
	g := graph.New(testenv.Neo4j(t), graph.Options{Database: testenv.Neo4jDatabase()})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := g.EnsureSchema(ctx, testenv.EmbeddingDimension); err != nil {
		t.Fatalf("EnsureSchema: %v", err)
	}
	s := New(g.Runner())
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	mem := func(tenant, user, typ, status, sens string) memory.Memory {
		at = at.Add(time.Second)
		return memory.Memory{
			ID: memory.NewID("mem"), Tenant: tenant, UserID: user, AgentID: "agent-a", Type: typ,
			Content: "counted", Status: status, Sensitivity: sens, Importance: 0.5, Confidence: 1,
			ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1,
		}
	}
	ms := []memory.Memory{
		mem(tenant, "u1", memory.TypeProfile, memory.StatusActive, memory.SensitivityInternal),
		mem(tenant, "u1", memory.TypeProfile, memory.StatusActive, memory.SensitivityInternal),
		mem(tenant, "u1", memory.TypeEpisodic, memory.StatusCandidate, memory.SensitivityPublic),
		mem(tenant, "u1", memory.TypeEpisodic, memory.StatusActive, memory.SensitivityRestricted),
		mem(tenant, "u2", memory.TypeSemantic, memory.StatusArchived, memory.SensitivityConfidential),
		mem(tenant, "u2", memory.TypeSemantic, memory.StatusActive, "unknown"),
	}
	if _, err := g.CreateMemories(ctx, ms); err != nil {
		t.Fatal(err)
	}
	if _, err := g.CreateMemories(ctx, []memory.Memory{mem(other, "u1", memory.TypeProfile, memory.StatusActive, memory.SensitivityInternal)}); err != nil {
		t.Fatal(err)
	}
	upToInternal := memory.Filter{Op: memory.FilterIn, Field: "sensitivity", Values: []string{memory.SensitivityPublic, memory.SensitivityInternal}}
	ofU2 := memory.Filter{Op: memory.FilterEq, Field: "user_id", Values: []string{"u2"}}
	tests := []struct {
		name  string
		scope memory.Scope
		want  map[key]int64
	}{
		{"everything", memory.Scope{Tenant: tenant, Filter: &memory.Filter{Op: memory.FilterTrue}}, map[key]int64{
			{"u1", memory.TypeProfile, memory.StatusActive}:     2,
			{"u1", memory.TypeEpisodic, memory.StatusCandidate}: 1,
			{"u1", memory.TypeEpisodic, memory.StatusActive}:    1,
			{"u2", memory.TypeSemantic, memory.StatusArchived}:  1,
			{"u2", memory.TypeSemantic, memory.StatusActive}:    1,
		}},
		{"a filter on sensitivity", memory.Scope{Tenant: tenant, Filter: &upToInternal}, map[key]int64{
			{"u1", memory.TypeProfile, memory.StatusActive}:     2,
			{"u1", memory.TypeEpisodic, memory.StatusCandidate}: 1,
		}},
		{"a filter on a property outside the index", memory.Scope{Tenant: tenant, Filter: &memory.Filter{Op: memory.FilterAnd, Args: []memory.Filter{
			ofU2, {Op: memory.FilterEq, Field: "agent_id", Values: []string{"agent-a"}},
		}}}, map[key]int64{
			{"u2", memory.TypeSemantic, memory.StatusArchived}: 1,
			{"u2", memory.TypeSemantic, memory.StatusActive}:   1,
		}},
		{"clauses", memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{UserID: "u1", MaxSensitivity: memory.SensitivityPublic}}}, map[key]int64{
			{"u1", memory.TypeEpisodic, memory.StatusCandidate}: 1,
		}},
		{"the other tenant", memory.Scope{Tenant: other, Filter: &memory.Filter{Op: memory.FilterTrue}}, map[key]int64{
			{"u1", memory.TypeProfile, memory.StatusActive}: 1,
		}},
		{"an empty scope", memory.Scope{Tenant: tenant, Filter: &memory.Filter{Op: memory.FilterFalse}}, map[key]int64{}},
		{"no tenant", memory.Scope{Filter: &memory.Filter{Op: memory.FilterTrue}}, map[key]int64{}},
	}
	// The same answers from the memories, then from the tallies.
	for _, tn := range []string{tenant, other} {
		cypherIn(t, ctx, tn, markPending)
	}
	for _, from := range []string{"memories", "tallies"} {
		if from == "tallies" {
			for _, tn := range []string{tenant, other} {
				if _, err := s.Reconcile(ctx, tn); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, tc := range tests {
			t.Run(from+"/"+tc.name, func(t *testing.T) {
				got, err := s.CountMemories(ctx, tc.scope)
				if err != nil {
					t.Fatalf("CountMemories: %v", err)
				}
				if c := counted(got); !maps.Equal(c, tc.want) {
					t.Errorf("counts %v, want %v", c, tc.want)
				}
			})
		}
	}
}
