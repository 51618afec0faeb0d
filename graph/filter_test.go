package graph

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

func eq(field, v string) memory.Filter {
	return memory.Filter{Op: memory.FilterEq, Field: field, Values: []string{v}}
}

func TestFilterPredicate(t *testing.T) {
	tests := []struct {
		name   string
		f      memory.Filter
		want   string
		params map[string]any
	}{
		{"true", memory.Filter{Op: memory.FilterTrue}, "true", map[string]any{}},
		{"false", memory.Filter{Op: memory.FilterFalse}, "false", map[string]any{}},
		{"eq on an indexed field", eq("user_id", "u1"), "m.user_id = $p0", map[string]any{"p0": "u1"}},
		{"eq on a field that may be absent", eq("kind", ""), "coalesce(m.kind, '') = $p0", map[string]any{"p0": ""}},
		{
			"ne", memory.Filter{Op: memory.FilterNe, Field: "agent_id", Values: []string{"a1"}},
			"coalesce(m.agent_id, '') <> $p0", map[string]any{"p0": "a1"},
		},
		{
			"in", memory.Filter{Op: memory.FilterIn, Field: "sensitivity", Values: []string{"public", "internal"}},
			"coalesce(m.sensitivity, '') IN $p0", map[string]any{"p0": []string{"public", "internal"}},
		},
		{"empty in matches nothing", memory.Filter{Op: memory.FilterIn, Field: "type"}, "false", map[string]any{}},
		{
			"and, or and not nest with their own parameters",
			memory.Filter{Op: memory.FilterAnd, Args: []memory.Filter{
				eq("tenant", "acme"),
				{Op: memory.FilterOr, Args: []memory.Filter{
					eq("agent_id", "a1"),
					{Op: memory.FilterNot, Args: []memory.Filter{eq("status", "archived")}},
				}},
				eq("id", "m1"),
			}},
			"(m.tenant = $p0 AND (coalesce(m.agent_id, '') = $p1 OR (NOT coalesce(m.status, '') = $p2)) AND m.id = $p3)",
			map[string]any{"p0": "acme", "p1": "a1", "p2": "archived", "p3": "m1"},
		},
		{"empty and is true", memory.Filter{Op: memory.FilterAnd}, "true", map[string]any{}},
		{"empty or is false", memory.Filter{Op: memory.FilterOr}, "false", map[string]any{}},
		{
			"hostile values stay parameters",
			memory.Filter{Op: memory.FilterOr, Args: []memory.Filter{eq("type", "x' OR 1=1 //"), eq("kind", "$tenant) DETACH DELETE (m")}},
			"(coalesce(m.type, '') = $p0 OR coalesce(m.kind, '') = $p1)",
			map[string]any{"p0": "x' OR 1=1 //", "p1": "$tenant) DETACH DELETE (m"},
		},
		// What the store does not understand matches nothing, wherever it is.
		{"property not in the whitelist", eq("content", "x"), "false", map[string]any{}},
		{"a field name is never spliced", eq("kind) OR true OR (m.kind", "x"), "false", map[string]any{}},
		{"unknown operator", memory.Filter{Op: "like", Field: "kind", Values: []string{"%"}}, "false", map[string]any{}},
		{"eq without a value", memory.Filter{Op: memory.FilterEq, Field: "kind"}, "false", map[string]any{}},
		{"eq with two values", memory.Filter{Op: memory.FilterEq, Field: "kind", Values: []string{"a", "b"}}, "false", map[string]any{}},
		{"not of two", memory.Filter{Op: memory.FilterNot, Args: []memory.Filter{eq("kind", "a"), eq("kind", "b")}}, "false", map[string]any{}},
		{"constant with arguments", memory.Filter{Op: memory.FilterTrue, Args: []memory.Filter{eq("kind", "a")}}, "false", map[string]any{}},
		{
			"bad operand deep inside an or",
			memory.Filter{Op: memory.FilterOr, Args: []memory.Filter{{Op: memory.FilterTrue}, {Op: memory.FilterNot, Args: []memory.Filter{eq("embedding", "x")}}}},
			"false", map[string]any{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, params := filterPredicate(tc.f)
			if got != tc.want {
				t.Errorf("predicate\n got %s\nwant %s", got, tc.want)
			}
			if d := cmp.Diff(tc.params, params); d != "" {
				t.Errorf("params (-want +got):\n%s", d)
			}
		})
	}
}

// A scope with a filter uses it in place of its clauses, in every query that
// takes a scope, and the result stays tenant-scoped with values as
// parameters.
func TestFilterScopeQueries(t *testing.T) {
	f := memory.Filter{Op: memory.FilterAnd, Args: []memory.Filter{eq("agent_id", "a1"), eq("sensitivity", "public")}}
	scope := memory.Scope{Tenant: "t1", Clauses: []memory.Clause{{UserID: "ignored"}}, Filter: &f}
	list := listQuery(scope, memory.ListQuery{UserID: "u1", Text: "hello world"})
	vector, vectorParams := recallVectorQuery(scope, memory.SearchQuery{UserID: "u1", Embedding: []float32{1}})
	text, textParams := recallFullTextQuery(scope, memory.SearchQuery{UserID: "u1"}, "hello")
	index, indexParams := recallVectorIndexQuery(scope, memory.SearchQuery{UserID: "u1", Embedding: []float32{1}}, 100, true)
	whole, wholeParams := recallVectorIndexQuery(scope, memory.SearchQuery{UserID: "u1", Embedding: []float32{1}}, 100, false)
	expand, expandParams := expandQuery(scope, memory.ExpandQuery{UserID: "u1", Text: "hello", Hops: 2, Seeds: []string{"m1"}, SessionID: "s1"})
	for _, tc := range []struct {
		name   string
		cypher string
		params map[string]any
	}{{"list", list.joined(), list.params}, {"vector", vector, vectorParams}, {"full text", text, textParams},
		{"vector index", index, indexParams}, {"whole vector index", whole, wholeParams}, {"expand", expand, expandParams}} {
		t.Run(tc.name, func(t *testing.T) {
			if problems := tenantProblems(tc.cypher); len(problems) > 0 {
				t.Errorf("not tenant-scoped: %v\n%s", problems, tc.cypher)
			}
			if !strings.Contains(tc.cypher, "(coalesce(m.agent_id, '') = $p0 AND coalesce(m.sensitivity, '') = $p1)") {
				t.Errorf("filter predicate missing:\n%s", tc.cypher)
			}
			if tc.params["p0"] != "a1" || tc.params["p1"] != "public" || tc.params["tenant"] != "t1" {
				t.Errorf("params %v", tc.params)
			}
			for _, v := range []string{"ignored", "a1", "public", "t1"} {
				if strings.Contains(tc.cypher, v) {
					t.Errorf("%q in the query text:\n%s", v, tc.cypher)
				}
			}
		})
	}
	empty := memory.Scope{Tenant: "t1", Filter: &memory.Filter{Op: memory.FilterFalse}}
	if !empty.Empty() {
		t.Error("a scope with the false filter is not empty")
	}
	if (memory.Scope{Tenant: "t1", Filter: &f}).Empty() {
		t.Error("a scope with a filter is empty")
	}
}
