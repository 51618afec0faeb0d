package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"mneme/client"
	"mneme/graph/analysis"
	"mneme/graphquery"
	"mneme/internal/apptest"
	"mneme/memory"
)

// graphWorld writes what the graph tests query: order-bot's internal notes
// about alice that mention Lianhua Trading and an order, and finance-bot's
// confidential note about the same company, which the fixture's analyst
// (role analyst: semantic and procedural up to internal) may not read.
func graphWorld(t *testing.T, f *apptest.Fixture) (readable, secret client.Memory) {
	t.Helper()
	lianhua := client.Entity{ID: "lianhua-trading", Kind: "company", Name: "Hangzhou Lianhua Trading"}
	order := client.Entity{ID: "SO-1001", Kind: "order", Name: "SO-1001"}
	readable = write(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "budget", Key: "budget", Sensitivity: client.SensitivityInternal,
		Content: "Alice's Q4 procurement budget at Lianhua Trading is 100k CNY.", Entities: []client.Entity{lianhua, order},
	})
	write(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "budget", Key: "budget", Sensitivity: client.SensitivityInternal,
		Content: "Alice raised her Q4 procurement budget at Lianhua Trading to 150k CNY.", Entities: []client.Entity{lianhua},
	})
	secret = write(t, f, "finance-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "internal_cost", Sensitivity: client.SensitivityConfidential,
		Content: "Our landed cost on the Lianhua Trading contract is 82% of list price.", Entities: []client.Entity{lianhua, order},
	})
	return readable, secret
}

// exerciseGraph calls every graph route, and the errors they add, for the
// OpenAPI test.
func exerciseGraph(t *testing.T, f *apptest.Fixture) {
	t.Helper()
	graphWorld(t, f)
	a := apptest.Analyst
	for _, step := range []struct{ name, path string }{
		{"graph entities", "/v1/graph/entities?q=lianhua"},
		{"graph neighbourhood", "/v1/graph/neighbourhood?from=entity:lianhua-trading&hops=2&type=semantic"},
		{"graph paths", "/v1/graph/paths?from=lianhua-trading&to=SO-1001&max_length=4"},
		{"graph co-mentions", "/v1/graph/co-mentions?entity=lianhua-trading"},
		{"graph timeline", "/v1/graph/timeline?user=alice&since=2020-01-01"},
		{"graph aggregates", "/v1/graph/aggregates?by=kind&status=active,superseded"},
	} {
		expectResponse(t, step.name, f.Do(t, a, "GET", step.path, nil), http.StatusOK)
	}
	expectResponse(t, "graph hops past the limit", f.Do(t, a, "GET", "/v1/graph/neighbourhood?from=entity:lianhua-trading&hops=4", nil), http.StatusUnprocessableEntity, "limit_exceeded")
	expectResponse(t, "graph limit of 0, which would read as the default", f.Do(t, a, "GET", "/v1/graph/neighbourhood?from=entity:lianhua-trading&limit=0", nil), http.StatusBadRequest, "invalid_argument")
	for _, bound := range []string{"until=0001-01-01T00:00:00Z", "since=0001-01-01", "until=1969-12-31"} {
		expectResponse(t, "graph "+bound+", which would read as no bound", f.Do(t, a, "GET", "/v1/graph/aggregates?by=type&"+bound, nil), http.StatusBadRequest, "invalid_argument")
	}
	expectResponse(t, "graph from without a label", f.Do(t, a, "GET", "/v1/graph/neighbourhood?from=lianhua-trading", nil), http.StatusBadRequest, "invalid_argument")
	expectResponse(t, "graph unknown entity", f.Do(t, a, "GET", "/v1/graph/co-mentions?entity=nobody", nil), http.StatusNotFound, "not_found")
	expectResponse(t, "graph as an agent", f.Do(t, "order-bot", "GET", "/v1/graph/aggregates?by=type", nil), http.StatusForbidden, "forbidden")
	expectResponse(t, "graph raw cypher", f.Do(t, a, "POST", "/v1/graph/cypher", map[string]string{"query": "MATCH (n) RETURN n"}), http.StatusUnprocessableEntity, "cypher_refused")
}

// graphGet queries as who and decodes the answer.
func graphGet[T any](t *testing.T, f *apptest.Fixture, who, path string) T {
	t.Helper()
	r := f.Do(t, who, "GET", path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s as %s = %d: %s", path, who, r.Status, r.Body)
	}
	var out T
	r.Decode(t, &out)
	return out
}

// TestGraphAnswersOnlyWhatPolicyAllows queries the neighbourhood, paths,
// timeline and counts around an entity that a readable and an unreadable
// memory mention: the analyst sees the one and not the other, not even in
// a count; the admin sees both.
func TestGraphAnswersOnlyWhatPolicyAllows(t *testing.T) {
	f := apptest.Start(t)
	readable, secret := graphWorld(t, f)

	g := graphGet[graphquery.Graph](t, f, apptest.Analyst, "/v1/graph/neighbourhood?from=entity:lianhua-trading&hops=2")
	ids := map[string]bool{}
	for _, n := range g.Nodes {
		ids[n.Key] = true
	}
	if !ids["memory:"+readable.ID] && !strings.Contains(string(mustJSON(t, g)), "150k") {
		t.Errorf("the analyst's neighbourhood lacks the readable budget: %v", ids)
	}
	if ids["memory:"+secret.ID] || strings.Contains(string(mustJSON(t, g)), "82%") {
		t.Errorf("the analyst's neighbourhood shows finance-bot's confidential note")
	}
	if !ids["entity:SO-1001"] || !ids["user:alice"] || !ids["agent:order-bot"] {
		t.Errorf("the neighbourhood misses what the readable memories point to: %v", ids)
	}
	if ids["agent:finance-bot"] {
		t.Error("finance-bot is reached only through its confidential note, yet shown")
	}
	admin := graphGet[graphquery.Graph](t, f, apptest.Admin, "/v1/graph/neighbourhood?from=entity:lianhua-trading")
	if !strings.Contains(string(mustJSON(t, admin)), secret.ID) {
		t.Error("the admin does not see the confidential note")
	}

	co := graphGet[graphquery.CoMentions](t, f, apptest.Analyst, "/v1/graph/co-mentions?entity=lianhua-trading")
	if len(co.Pairs) != 1 || co.Pairs[0].B.ID != "SO-1001" || co.Pairs[0].Count != 1 {
		t.Errorf("co-mentions = %+v, want SO-1001 once (the confidential note does not count)", co.Pairs)
	}
	agg := graphGet[graphquery.Aggregate](t, f, apptest.Analyst, "/v1/graph/aggregates?by=kind&entity=lianhua-trading")
	if agg.Total != 2 || len(agg.Buckets) != 1 || agg.Buckets[0].Key != "budget" {
		t.Errorf("aggregate = %+v, want 2 budget memories and no internal_cost", agg)
	}
	tl := graphGet[graphquery.Timeline](t, f, apptest.Analyst, "/v1/graph/timeline?entity=lianhua-trading")
	if len(tl.Memories) != 2 || tl.Memories[1].Supersedes != tl.Memories[0].ID || tl.Memories[1].Version != 2 {
		t.Errorf("timeline = %+v, want the budget's two versions, the second superseding the first", tl.Memories)
	}
	// A path's ends are named as a neighbourhood's start is, entity:ID, or
	// by the entity's id alone; another label is refused, not looked up.
	for _, q := range []string{"from=lianhua-trading&to=SO-1001", "from=entity:lianhua-trading&to=entity:SO-1001", "from=entity:lianhua-trading&to=SO-1001"} {
		paths := graphGet[graphquery.Paths](t, f, apptest.Analyst, "/v1/graph/paths?"+q)
		if len(paths.Paths) != 1 || len(paths.Paths[0].Nodes) != 3 || paths.Paths[0].Nodes[1].ID != readable.ID {
			t.Errorf("paths %s = %+v, want one through the readable budget", q, paths.Paths)
		}
	}
	for _, q := range []string{"from=user:alice&to=entity:SO-1001", "from=entiti:lianhua-trading&to=SO-1001", "from=lianhua-trading&to=entity:"} {
		expectResponse(t, "paths "+q, f.Do(t, apptest.Analyst, "GET", "/v1/graph/paths?"+q, nil), http.StatusBadRequest, "invalid_argument")
	}

	// Another tenant's analyst finds none of it.
	other := apptest.Start(t)
	for _, path := range []string{
		"/v1/graph/neighbourhood?from=entity:lianhua-trading", "/v1/graph/neighbourhood?from=memory:" + readable.ID,
		"/v1/graph/timeline?user=alice", "/v1/graph/co-mentions?entity=lianhua-trading", "/v1/graph/paths?from=lianhua-trading&to=SO-1001",
	} {
		expectResponse(t, "other tenant "+path, other.Do(t, apptest.Analyst, "GET", path, nil), http.StatusNotFound, "not_found")
	}
	if e := graphGet[graphquery.Entities](t, other, apptest.Analyst, "/v1/graph/entities?q=lianhua"); len(e.Entities) != 0 {
		t.Errorf("another tenant's analyst finds %v", e.Entities)
	}
}

// TestGraphQueriesAreAudited: every analyst query is in the audit trail
// with its shape, parameters and rows, never content; admins read it.
func TestGraphQueriesAreAudited(t *testing.T) {
	f := apptest.Start(t)
	graphWorld(t, f)
	graphGet[graphquery.Graph](t, f, apptest.Analyst, "/v1/graph/neighbourhood?from=entity:lianhua-trading&hops=2&type=semantic")
	f.Do(t, apptest.Analyst, "GET", "/v1/graph/neighbourhood?from=entity:lianhua-trading&hops=9", nil)
	f.Do(t, apptest.Analyst, "POST", "/v1/graph/cypher", []byte(`MATCH (m:Memory) RETURN m.content`))

	expectResponse(t, "audit as the analyst", f.Do(t, apptest.Analyst, "GET", "/v1/audit?action=graph.", nil), http.StatusForbidden, "forbidden")
	var trail struct{ Events []memory.AuditEvent }
	graphGetInto(t, f, apptest.Admin, "/v1/audit?action=graph.", &trail)
	byOutcome := map[string]memory.AuditEvent{}
	for _, e := range trail.Events {
		if e.Actor != "analyst:"+apptest.Analyst {
			t.Errorf("event by %s", e.Actor)
		}
		byOutcome[e.Action+" "+e.Error] = e
		if s := string(mustJSON(t, e)); strings.Contains(s, "budget is") || strings.Contains(s, "RETURN") {
			t.Errorf("audit event holds content: %s", s)
		}
	}
	ok := byOutcome["graph.neighbourhood "]
	if ok.Target != "entity:lianhua-trading" || ok.Details["hops"] != "2" || ok.Details["types"] != "semantic" || ok.Details["rows"] == "0" || ok.Details["duration_ms"] == "" {
		t.Errorf("the neighbourhood's event: %+v", ok)
	}
	if _, seen := byOutcome["graph.neighbourhood limit_exceeded"]; !seen {
		t.Errorf("the refused query is not recorded: %v", trail.Events)
	}
	if e, seen := byOutcome["graph.cypher cypher_refused"]; !seen || e.Details["bytes"] == "" {
		t.Errorf("the raw Cypher attempt is not recorded: %v", trail.Events)
	}
}

func graphGetInto(t *testing.T, f *apptest.Fixture, who, path string, v any) {
	t.Helper()
	r := f.Do(t, who, "GET", path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", path, r.Status, r.Body)
	}
	r.Decode(t, v)
}

// injections are Cypher an attacker might pass as a value: statements that
// write, call procedures, load files or switch databases.
var injections = []string{
	`x' }) CREATE (:Pwned) //`,
	`x") DETACH DELETE n //`,
	`lianhua-trading' OR 1=1 MATCH (n) DETACH DELETE n //`,
	"x` RETURN 1 UNION MATCH (n) SET n:Pwned RETURN 1 //",
	`CREATE (:Pwned {by: 'graph'})`,
	`MERGE (p:Pwned) SET p.x = 1 REMOVE p.y DELETE p`,
	`CALL dbms.components() YIELD name RETURN name`,
	`CALL apoc.cypher.runWrite('CREATE (:Pwned)', {})`,
	`apoc.create.node(['Pwned'], {})`,
	`LOAD CSV FROM 'file:///etc/passwd' AS l CREATE (:Pwned {l: l})`,
	`CALL { CREATE (:Pwned) } IN TRANSACTIONS`,
	`USE system SHOW USERS`,
	`$tenant`,
	"entity:x\u0000CREATE (:Pwned)",
}

// TestGraphMutationAttempts passes Cypher through every parameter of every
// graph route: each is refused or read as a plain value, and the tenant's
// nodes and relationships, and the graph's labels, are as before.
func TestGraphMutationAttempts(t *testing.T) {
	f := apptest.Start(t)
	graphWorld(t, f)
	census := analysis.New(f.App.Store.Runner(), analysis.Options{})
	labels := []string{"Pwned"}
	ctx := context.Background()
	before, err := census.Census(ctx, f.Tenant, labels)
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string][]string{
		"/v1/graph/entities":      {"q", "limit"},
		"/v1/graph/neighbourhood": {"from", "hops", "limit", "type", "kind", "status", "agent", "sensitivity", "user", "entity", "since", "until"},
		"/v1/graph/paths":         {"from", "to", "max_length", "via", "limit"},
		"/v1/graph/co-mentions":   {"entity", "limit", "type", "kind", "status", "agent", "sensitivity", "since"},
		"/v1/graph/timeline":      {"user", "entity", "kind", "limit", "type", "status", "until"},
		"/v1/graph/aggregates":    {"by", "type", "kind", "status", "agent", "sensitivity", "user", "entity", "since"},
	}
	// Values that make each route valid, so that the injected parameter
	// is the one under test.
	valid := map[string]url.Values{
		"/v1/graph/neighbourhood": {"from": {"entity:lianhua-trading"}},
		"/v1/graph/paths":         {"from": {"lianhua-trading"}, "to": {"SO-1001"}},
		"/v1/graph/co-mentions":   {"entity": {"lianhua-trading"}},
		"/v1/graph/timeline":      {"kind": {"budget"}},
		"/v1/graph/aggregates":    {"by": {"type"}},
	}
	calls, plain := 0, 0
	for route, params := range routes {
		for _, param := range params {
			for _, inj := range injections {
				v := url.Values{}
				for k, vs := range valid[route] {
					v[k] = vs
				}
				if route == "/v1/graph/timeline" && (param == "user" || param == "entity") {
					v.Del("kind")
				}
				v.Set(param, inj)
				if param == "from" && route == "/v1/graph/neighbourhood" {
					v.Set(param, "entity:"+inj)
				}
				r := f.Do(t, apptest.Analyst, "GET", route+"?"+v.Encode(), nil)
				calls++
				switch r.Status {
				case http.StatusOK:
					plain++
				case http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity:
				default:
					t.Errorf("%s %s=%q: %d %s", route, param, inj, r.Status, r.Body)
				}
			}
		}
	}
	for _, inj := range injections {
		r := f.Do(t, apptest.Analyst, "POST", "/v1/graph/cypher", []byte(inj))
		expectResponse(t, "cypher "+inj, r, http.StatusUnprocessableEntity, "cypher_refused")
	}
	after, err := census.Census(ctx, f.Tenant, labels)
	if err != nil {
		t.Fatal(err)
	}
	if after != before || after.Strangers != 0 {
		t.Errorf("the graph changed: before %+v, after %+v", before, after)
	}
	if plain == 0 || before.Nodes == 0 {
		t.Errorf("%d calls, %d answered; census %+v: the test exercised nothing", calls, plain, before)
	}
	t.Logf("%d injected calls, %d answered as plain values, the rest refused; census %+v", calls, plain, after)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
