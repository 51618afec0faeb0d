package graph

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"mneme/graph/neo"
	"mneme/memory"
)

// Recall's statements are a fixed set: whatever the question, the user, the
// filters, the parts of an expansion or the sizes of the values, each search
// sends Neo4j one text with one map parameter, so that a fresh replica plans
// each once (in its warm-up) and no request pays for planning.
func TestRecallStatementsAreFixed(t *testing.T) {
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	agent := func(id string, sens ...string) memory.Scope {
		f := memory.Filter{Op: memory.FilterAnd, Args: []memory.Filter{
			{Op: memory.FilterEq, Field: "agent_id", Values: []string{id}},
			{Op: memory.FilterIn, Field: "sensitivity", Values: sens},
		}}
		return memory.Scope{Tenant: "t", Filter: &f}
	}
	scopes := []memory.Scope{
		agent("a", "public"),
		agent("support-bot-with-a-much-longer-name", "public", "internal", "confidential"),
	}
	scopes[1].Tenant = "a-tenant-of-many-more-characters"
	searches := []memory.SearchQuery{
		{UserID: "u"},
		{UserID: "a-user-id-of-forty-characters-0123456789", Shared: true, Limit: 50, Embeddings: true},
		{UserID: "u1", Types: []string{"episodic"}, Kinds: []string{"budget", "order_status", "preference"}},
		{UserID: "u1", Types: []string{"", "semantic"}, From: at, To: at.Add(time.Hour), SessionID: "s"},
		{UserID: "u1", AsOf: at, Slots: &memory.Slots{Keys: []string{"budget"}}},
		{UserID: "u1", Shared: true, Slots: &memory.Slots{Kinds: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}}},
		{UserID: "u1", Slots: &memory.Slots{}},
	}
	questions := []string{
		"What is the budget of u0?", "订单SO-5012发到哪里了？", "u3的采购预算是多少？",
		"Which warehouse in Lyon got the label printers for order SO-5003 and SO-5004, and when?",
		"预算", strings.Repeat("a long question about many things ", 60),
	}
	seeds := [][]string{nil, {"m1"}, {"m1", "m2", "m3"}}

	texts := map[string]map[string]bool{}
	// send records what the store sends for a builder's statement.
	send := func(kind string) func(string, map[string]any) {
		return func(cypher string, params map[string]any) {
			t.Helper()
			if cypher == "" {
				t.Fatalf("%s: no statement", kind)
			}
			text, args := unsized(cypher, params)
			checkUnsized(t, kind, text, args, params)
			if texts[kind] == nil {
				texts[kind] = map[string]bool{}
			}
			texts[kind][text] = true
		}
	}
	for si, scope := range scopes {
		for _, q := range searches {
			q.Now = at
			q.Embedding = make([]float32, 256)
			send(kindOf(si, "vector"))(recallVectorQuery(scope, q))
			send(kindOf(si, "vector index"))(recallVectorIndexQuery(scope, q, 300, true))
			send(kindOf(si, "whole vector index"))(recallVectorIndexQuery(scope, q, 300, false))
			for _, text := range questions {
				send(kindOf(si, "full text"))(recallFullTextQuery(scope, q, fullTextQuery(text)))
				for _, hops := range []int{1, 2} {
					for _, sd := range seeds {
						for _, session := range []string{"", "s-1"} {
							for _, txt := range []string{text, ""} {
								if txt == "" && len(sd) == 0 && session == "" {
									continue // asks for nothing; see below
								}
								send(kindOf(si, "expand"))(expandQuery(scope, memory.ExpandQuery{
									UserID: q.UserID, Text: txt, Hops: hops, Seeds: sd, SessionID: session, Filters: q, Limit: 30,
								}))
							}
						}
					}
				}
			}
		}
		send(kindOf(si, "partition size"))(cypherPartitionSize, map[string]any{"tenant": scope.Tenant, "user_id": "u"})
		send(kindOf(si, "partition size"))(cypherPartitionSize, map[string]any{"tenant": scope.Tenant, "user_id": "a-much-longer-user-id"})
		send(kindOf(si, "touch"))(cypherTouchMemories, touchParams(scope.Tenant, []string{"m1"}, at))
		send(kindOf(si, "touch"))(cypherTouchMemories, touchParams(scope.Tenant, strings.Fields(strings.Repeat("m ", 50)), at))
	}
	if len(texts) != 2*7 {
		t.Fatalf("%d kinds of statement, want 14: %v", len(texts), texts)
	}
	for kind, set := range texts {
		if len(set) != 1 {
			for text := range set {
				t.Logf("%s:\n%s", kind, text)
			}
			t.Errorf("%s: %d statement texts, want 1", kind, len(set))
		}
	}
	// The two scopes differ in values only, and so do their statements.
	for _, kind := range []string{"vector", "vector index", "whole vector index", "full text", "expand", "partition size", "touch"} {
		if !sameSet(texts[kindOf(0, kind)], texts[kindOf(1, kind)]) {
			t.Errorf("%s: the scopes' statements differ", kind)
		}
	}
	// An expansion that asks for nothing is no statement.
	if cypher, _ := expandQuery(scopes[0], memory.ExpandQuery{UserID: "u"}); cypher != "" {
		t.Errorf("an empty expansion built %q", cypher)
	}
}

func kindOf(scope int, kind string) string { return string(rune('0'+scope)) + " " + kind }

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

var anyParam = regexp.MustCompile(`\$[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?`)

// checkUnsized asserts that an unsized statement reads every value from
// $args, and that $args holds the builder's parameters, each used.
func checkUnsized(t *testing.T, kind, text string, args, params map[string]any) {
	t.Helper()
	if len(args) != 1 || args[neo.UnsizedArgs] == nil {
		t.Fatalf("%s: parameters %v, want only %s", kind, keys(args), neo.UnsizedArgs)
	}
	used := map[string]bool{}
	for _, p := range anyParam.FindAllString(text, -1) {
		name, ok := strings.CutPrefix(p, "$"+neo.UnsizedArgs+".")
		if !ok {
			t.Fatalf("%s: parameter %s outside $%s:\n%s", kind, p, neo.UnsizedArgs, text)
		}
		if _, ok := params[name]; !ok {
			t.Fatalf("%s: %s has no value", kind, p)
		}
		used[name] = true
	}
	for name := range params {
		if !used[name] {
			t.Errorf("%s: parameter %s is not used", kind, name)
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// unsized rewrites parameter names only: a longer name that starts with a
// shorter one, and names the statement has no value for, stay as they are.
func TestUnsized(t *testing.T) {
	text, args := unsized(`MATCH (m:Memory {tenant: $tenant, user_id: $user_id}) WHERE m.user_id IN $user_ids AND m.x = $other RETURN m LIMIT $limit`,
		map[string]any{"tenant": "t", "user_id": "u", "user_ids": []string{"u", ""}, "limit": 5})
	want := `MATCH (m:Memory {tenant: $args.tenant, user_id: $args.user_id}) WHERE m.user_id IN $args.user_ids AND m.x = $other RETURN m LIMIT $args.limit`
	if text != want {
		t.Errorf("unsized text\n got %s\nwant %s", text, want)
	}
	inner, ok := args["args"].(map[string]any)
	if len(args) != 1 || !ok || inner["tenant"] != "t" || inner["limit"] != 5 {
		t.Errorf("unsized params %v", args)
	}
}
