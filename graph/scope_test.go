package graph

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

func TestPolicyPredicate(t *testing.T) {
	tests := []struct {
		name   string
		scope  memory.Scope
		want   string
		params map[string]any
	}{
		{
			name:   "empty scope matches nothing",
			scope:  memory.Scope{Tenant: "t"},
			want:   "false",
			params: map[string]any{},
		},
		{
			name:   "a clause without fields matches the whole tenant",
			scope:  memory.Scope{Tenant: "t", Clauses: []memory.Clause{{}}},
			want:   "(true)",
			params: map[string]any{},
		},
		{
			name:   "user",
			scope:  memory.Scope{Tenant: "t", Clauses: []memory.Clause{{UserID: "u1"}}},
			want:   "((m.user_id = $c0_user))",
			params: map[string]any{"c0_user": "u1"},
		},
		{
			name: "every field of one clause is AND-ed",
			scope: memory.Scope{Tenant: "t", Clauses: []memory.Clause{{
				UserID: "u1", AgentIDs: []string{"a", "b"}, Types: []string{"semantic"}, Kinds: []string{"budget"},
				MaxSensitivity: memory.SensitivityConfidential,
			}}},
			want: "((m.user_id = $c0_user AND m.agent_id IN $c0_agents AND m.type IN $c0_types AND m.kind IN $c0_kinds AND m.sens_rank <= $c0_rank))",
			params: map[string]any{
				"c0_user": "u1", "c0_agents": []string{"a", "b"}, "c0_types": []string{"semantic"},
				"c0_kinds": []string{"budget"}, "c0_rank": 2,
			},
		},
		{
			name: "clauses are OR-ed with their own parameters",
			scope: memory.Scope{Tenant: "t", Clauses: []memory.Clause{
				{AgentIDs: []string{"a"}},
				{AgentIDs: []string{"b"}, MaxSensitivity: memory.SensitivityPublic},
				{},
			}},
			want:   "((m.agent_id IN $c0_agents) OR (m.agent_id IN $c1_agents AND m.sens_rank <= $c1_rank) OR true)",
			params: map[string]any{"c0_agents": []string{"a"}, "c1_agents": []string{"b"}, "c1_rank": 0},
		},
		{
			name:   "unknown ceiling admits nothing",
			scope:  memory.Scope{Tenant: "t", Clauses: []memory.Clause{{MaxSensitivity: "secret"}}},
			want:   "((m.sens_rank <= $c0_rank))",
			params: map[string]any{"c0_rank": -1},
		},
		{
			name: "hostile values stay parameters",
			scope: memory.Scope{Tenant: "t", Clauses: []memory.Clause{{
				UserID: "u' OR 1=1 //", AgentIDs: []string{"x) DETACH DELETE (m"}, Kinds: []string{"$tenant"},
			}}},
			want: "((m.user_id = $c0_user AND m.agent_id IN $c0_agents AND m.kind IN $c0_kinds))",
			params: map[string]any{
				"c0_user": "u' OR 1=1 //", "c0_agents": []string{"x) DETACH DELETE (m"}, "c0_kinds": []string{"$tenant"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, params := policyPredicate(tc.scope)
			if got != tc.want {
				t.Errorf("predicate\n got %s\nwant %s", got, tc.want)
			}
			if d := cmp.Diff(tc.params, params); d != "" {
				t.Errorf("params (-want +got):\n%s", d)
			}
		})
	}
}

// TestScopePredicate: every read's predicate is the policy's and leaves out
// the users being erased; an empty scope still matches nothing.
func TestScopePredicate(t *testing.T) {
	if got, _ := scopePredicate(memory.Scope{Tenant: "t"}); got != "false" {
		t.Errorf("empty scope: %s, want false", got)
	}
	scope := memory.Scope{Tenant: "t", Clauses: []memory.Clause{{UserID: "u1"}}}
	pol, _ := policyPredicate(scope)
	got, params := scopePredicate(scope)
	if want := "(" + pol + " AND " + cypherNotErasing + ")"; got != want {
		t.Errorf("predicate\n got %s\nwant %s", got, want)
	}
	if d := cmp.Diff(map[string]any{"c0_user": "u1"}, params); d != "" {
		t.Errorf("params (-want +got):\n%s", d)
	}
}

func TestSensRank(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{memory.SensitivityPublic, 0},
		{memory.SensitivityRestricted, 3},
		{"", len(memory.Sensitivities)},
		{"top-secret", len(memory.Sensitivities)},
	}
	for _, tc := range tests {
		if got := sensRank(tc.in); got != tc.want {
			t.Errorf("sensRank(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// The builders join constants and the scope predicate; every value must be a
// parameter and every result must pass the tenant checker.
func TestQueryBuilders(t *testing.T) {
	scope := memory.Scope{Tenant: "t1", Clauses: []memory.Clause{{UserID: "u1"}, {AgentIDs: []string{"a"}}}}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	list := listQuery(scope, memory.ListQuery{
		UserID: "u1", Type: "semantic", Kind: "k", Status: "active", From: at, To: at.Add(time.Hour),
		After: &memory.Cursor{CreatedAt: at, ID: "m1"}, Limit: 10000,
	})
	search := listQuery(scope, memory.ListQuery{UserID: "u1", Text: "Hello there, order 42 (urgent", After: &memory.Cursor{CreatedAt: at, ID: "m1"}})
	filtered := memory.SearchQuery{
		UserID: "u1", Embedding: []float32{1}, Types: []string{"", "episodic"}, Kinds: []string{"k"},
		From: at, To: at.Add(time.Hour), SessionID: "s1", AsOf: at,
	}
	vector, vectorParams := recallVectorQuery(scope, filtered)
	index, indexParams := recallVectorIndexQuery(scope, memory.SearchQuery{UserID: "u1", Embedding: []float32{1}, Shared: true}, 100, true)
	whole, wholeParams := recallVectorIndexQuery(scope, memory.SearchQuery{UserID: "u1", Embedding: []float32{1}}, 100, false)
	text, textParams := recallFullTextQuery(scope, memory.SearchQuery{UserID: "u1"}, "hello")
	expand, expandParams := expandQuery(scope, memory.ExpandQuery{
		UserID: "u1", Text: "Order SO-1 for hello", Hops: 2, Seeds: []string{"m1"}, SessionID: "s1", Filters: filtered, Limit: 20,
	})
	tests := []struct {
		name   string
		cypher string
		params map[string]any
		check  map[string]any
	}{
		{"list", list.joined(), list.params, map[string]any{
			"tenant": "t1", "limit": maxListLimit, "user_id": "u1", "type": "semantic", "kind": "k",
			"status": "active", "after_id": "m1",
		}},
		{"text search", search.joined(), search.params, map[string]any{
			"tenant": "t1", "limit": defaultListLimit, "user_id": "u1", "window": listWindow, "text": "hello there, order 42 (urgent",
			"query": `+partition:"` + partitionOf("t1", "u1") + `" +content:order +content:42 +content:urgent*`, "after_id": "m1",
		}},
		{"vector", vector, vectorParams, map[string]any{
			"tenant": "t1", "user_ids": []string{"u1"}, "limit": defaultSearchLimit, "kinds": []string{"k"}, "in_session": "s1", "as_of": at,
		}},
		{"vector index", index, indexParams, map[string]any{
			"tenant": "t1", "user_ids": []string{"u1", ""}, "partitions": []string{partitionOf("t1", "u1"), partitionOf("t1", "")}, "fetch": 100,
		}},
		{"whole vector index", whole, wholeParams, map[string]any{"tenant": "t1", "user_ids": []string{"u1"}, "fetch": 100}},
		{"full text", text, textParams, map[string]any{"tenant": "t1", "user_ids": []string{"u1"}, "query": `+partition:"` + partitionOf("t1", "u1") + `"^0 +content:(hello)`}},
		{"expand", expand, expandParams, map[string]any{
			"tenant": "t1", "user_id": "u1", "limit": 20, "seeds": []string{"m1"}, "sessions": []string{"s1"},
			"padded": " order so-1 for hello ", "resolve": false,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if problems := tenantProblems(tc.cypher); len(problems) > 0 {
				t.Errorf("built query is not tenant-scoped: %v\n%s", problems, tc.cypher)
			}
			for k, want := range tc.check {
				if got := tc.params[k]; !cmp.Equal(want, got) {
					t.Errorf("param %s = %v, want %v", k, got, want)
				}
			}
			for name := range tc.params {
				if !strings.Contains(tc.cypher, "$"+name) {
					t.Errorf("param %s is not used by the query", name)
				}
			}
			for _, v := range []string{"u1", "t1", "hello", "semantic", "SO-1", "s1", "m1", "42", "urgent"} {
				if strings.Contains(tc.cypher, v) {
					t.Errorf("value %q was spliced into the query text:\n%s", v, tc.cypher)
				}
			}
		})
	}
	if got := vectorParams["types"]; !cmp.Equal(got, []string{"episodic"}) {
		t.Errorf("types = %v, want [episodic]", got)
	}
}

// joined is a listing's queries as one text, for the checks that read them.
func (l listing) joined() string { return strings.Join(l.queries, "\n") }
