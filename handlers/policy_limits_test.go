package handlers_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"mneme/app"
	"mneme/client"
	"mneme/identity"
	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// bigTest is a test module that builds ten million numbers: about 1.5 GB
// of heap if nothing stops it.
var bigTest = policyadmin.PolicyModule{Name: "big_test.rego",
	Source: "package mneme.authz_test\n\ntest_big if {\n\tcount([x | some x in numbers.range(1, 10000000)]) > 0\n}\n"}

// TestPolicyCheckMemoryBudget shows through the router that a policy check
// that builds more than its heap budget is stopped and refused, not run to
// the end.
func TestPolicyCheckMemoryBudget(t *testing.T) {
	f := apptest.Start(t)
	modules := append(bundled(t, f), bigTest)
	r := f.Do(t, apptest.Admin, "POST", "/v1/policy/test", map[string]any{"modules": modules})
	expectResponse(t, "test a policy whose test builds 1e7 numbers", r, http.StatusUnprocessableEntity, policyadmin.RejectTooMuchMemory)
}

// manyReasons is the bundled policy plus 2,000 reasons of 100 characters for
// finance-bot reading its own memories.
func manyReasons(base []policyadmin.PolicyModule) []policyadmin.PolicyModule {
	return append(base, policyadmin.PolicyModule{Name: "pad.rego", Source: "package mneme.authz\n\n" +
		"permits contains sprintf(\"padding reason %d %s\", [x, \"" + strings.Repeat("x", 300) + "\"]) if {\n" +
		"\tinput.principal.id == \"finance-bot\"\n\tinput.action == \"read\"\n\tinput.resource.agent_id == \"finance-bot\"\n" +
		"\tsome x in numbers.range(1, 2000)\n}\n"})
}

// TestReasonsAreBounded shows through the router that a policy emitting
// 2,000 long reasons per decision leaves at most policyadmin.MaxReasons reasons
// of at most policyadmin.MaxReasonChars characters in a simulation, a recall's
// explain and the decision log.
func TestReasonsAreBounded(t *testing.T) {
	f := apptest.Start(t)
	ctx := t.Context()
	draft := manyReasons(bundled(t, f))
	bounded := func(what string, reasons []string) {
		t.Helper()
		if len(reasons) == 0 || len(reasons) > policyadmin.MaxReasons {
			t.Errorf("%s: %d reasons, want 1 to %d", what, len(reasons), policyadmin.MaxReasons)
		}
		for _, r := range reasons {
			if n := utf8.RuneCountInString(r); n > policyadmin.MaxReasonChars {
				t.Errorf("%s: a reason of %d characters", what, n)
				return
			}
		}
	}

	in := policyadmin.DecisionInput{Principal: memory.Principal{Kind: memory.KindAgent, ID: "finance-bot"}, Action: memory.ActionRead,
		Resource: memory.Resource{UserID: "bob", AgentID: "finance-bot", Type: memory.TypeSemantic, Kind: "fact", Sensitivity: memory.SensitivityInternal, Status: memory.StatusActive}}
	for _, explain := range []bool{false, true} {
		r := f.Do(t, apptest.Admin, "POST", "/v1/policy/simulate", policyadmin.SimulateRequest{Modules: draft, Input: in, Explain: explain})
		expectResponse(t, "simulate", r, http.StatusOK)
		var sim policyadmin.Simulation
		r.Decode(t, &sim)
		bounded("simulate", sim.Reasons)
	}

	r := f.Do(t, apptest.Admin, "PUT", "/v1/policy", policyadmin.NewPolicy{Message: "many reasons", Modules: draft})
	expectResponse(t, "push", r, http.StatusCreated)
	var pushed struct{ Revision policyadmin.PolicyRevision }
	r.Decode(t, &pushed)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/revisions/"+strconv.FormatInt(pushed.Revision.Number, 10)+"/activate", nil)
	expectResponse(t, "activate", r, http.StatusOK)
	t.Cleanup(func() { f.Do(t, apptest.Admin, "POST", "/v1/policy/revisions/0/activate", nil) })

	create(t, f, "finance-bot", client.NewMemory{UserID: "bob", Type: client.TypeSemantic, Kind: "fact", Content: "Bob's invoices are on hold for review."})
	rec, err := f.Client(t, "finance-bot").Recall(ctx, client.RecallRequest{UserID: "bob", Query: "Bob invoices on hold"})
	if err != nil || len(rec.Memories) == 0 {
		t.Fatalf("recall: %v, %d memories", err, len(rec.Memories))
	}
	if n := len(rec.Memories[0].Explain.Policy); n > policyadmin.MaxReasons*(policyadmin.MaxReasonChars*3+2)+10 {
		t.Errorf("recall explain holds %d bytes of reasons", n)
	}

	if err := f.App.Decisions.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r = f.Do(t, apptest.Admin, "GET", "/v1/decisions?principal=agent:finance-bot&action=read&limit=20", nil)
	expectResponse(t, "decisions", r, http.StatusOK)
	var log struct{ Decisions []policyadmin.DecisionRecord }
	r.Decode(t, &log)
	if len(log.Decisions) == 0 {
		t.Fatal("no decision logged")
	}
	for _, d := range log.Decisions {
		bounded("decision log", d.Reasons)
	}
}

// TestPolicyRequestEdges shows through the router the refusals and answers
// of policy routes at their edges: odd module names, the confirm action in
// the decision log, unknown fields in an activation, a replay given both a
// revision and an empty list of modules, a negative revision.
func TestPolicyRequestEdges(t *testing.T) {
	f := apptest.Start(t)
	base := bundled(t, f)
	named := func(name string) map[string]any {
		return map[string]any{"modules": append(base[:len(base):len(base)], policyadmin.PolicyModule{Name: name, Source: "package mneme.extra\n\nx := 1\n"})}
	}
	tests := []struct {
		name, method, path string
		body               any
		status             int
		code, says         string
	}{
		{"module name with NUL", "POST", "/v1/policy/test", named("a\x00b.rego"), http.StatusBadRequest, "invalid_argument", "NUL"},
		{"module name with a newline", "POST", "/v1/policy/test", named("a\nb.rego"), http.StatusUnprocessableEntity, policyadmin.RejectInvalid, "relative file name"},
		{"module name with a bidi override", "PUT", "/v1/policy", named("a\u202eb.rego"), http.StatusUnprocessableEntity, policyadmin.RejectInvalid, "relative file name"},
		{"module name in a subdirectory", "POST", "/v1/policy/test", named("extra/x.rego"), http.StatusOK, "", ""},
		{"decisions of confirm", "GET", "/v1/decisions?action=confirm", nil, http.StatusOK, "", ""},
		{"decisions of an unknown action", "GET", "/v1/decisions?action=erase", nil, http.StatusBadRequest, "invalid_argument", "confirm"},
		{"activation with an unknown field", "POST", "/v1/policy/revisions/0/activate", map[string]any{"x": 1}, http.StatusBadRequest, "bad_json", "unknown field"},
		{"activation with {}", "POST", "/v1/policy/revisions/0/activate", map[string]any{}, http.StatusOK, "", ""},
		{"activation without a body", "POST", "/v1/policy/revisions/0/activate", nil, http.StatusOK, "", ""},
		{"replay of a revision and no modules", "POST", "/v1/policy/replay", map[string]any{"revision": 0, "modules": []any{}}, http.StatusBadRequest, "invalid_argument", "not both"},
		{"replay of nothing", "POST", "/v1/policy/replay", map[string]any{}, http.StatusUnprocessableEntity, policyadmin.RejectInvalid, "at least one"},
		// A negative revision is the same mistake wherever it is named.
		{"simulate a negative revision", "POST", "/v1/policy/simulate", map[string]any{"revision": -1, "input": map[string]any{}}, http.StatusBadRequest, "invalid_argument", "0 or more"},
		{"replay a negative revision", "POST", "/v1/policy/replay", map[string]any{"revision": -1}, http.StatusBadRequest, "invalid_argument", "0 or more"},
		{"roll back to a negative revision", "POST", "/v1/policy/rollback", map[string]any{"revision": -3}, http.StatusBadRequest, "invalid_argument", "0 or more"},
		{"activate a negative revision", "POST", "/v1/policy/revisions/-1/activate", nil, http.StatusBadRequest, "invalid_argument", "0 or more"},
		{"read a negative revision", "GET", "/v1/policy/revisions/-1", nil, http.StatusBadRequest, "invalid_argument", "0 or more"},
		{"diff from a negative revision", "GET", "/v1/policy/diff?from=-1&to=0", nil, http.StatusBadRequest, "invalid_argument", "0 or more"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, apptest.Admin, tc.method, tc.path, tc.body)
			expectResponse(t, tc.name, r, tc.status, tc.code)
			if !strings.Contains(string(r.Body), tc.says) {
				t.Errorf("%s: body %.300s does not say %q", tc.name, r.Body, tc.says)
			}
		})
	}
}

// TestSimulateTooSlowDraft shows through the router that a draft whose
// decision outlasts the evaluation budget is refused as too slow (422), not
// answered "unavailable, retry later".
func TestSimulateTooSlowDraft(t *testing.T) {
	f := apptest.StartWith(t, func(c *app.Config) { c.Policy.Timeout = 200 * time.Millisecond })
	draft := edited(bundled(t, f), "authz.rego", func(s string) string {
		return s + "\npermits contains \"slow\" if {\n\tinput.principal.id == \"slowpoke\"\n\tcount([x | some x in numbers.range(1, 100000000)]) < 0\n}\n"
	})
	in := policyadmin.DecisionInput{Principal: memory.Principal{Kind: memory.KindAgent, ID: "slowpoke"}, Action: memory.ActionRead,
		Resource: memory.Resource{UserID: "bob", AgentID: "slowpoke", Type: memory.TypeSemantic, Kind: "fact", Sensitivity: memory.SensitivityInternal, Status: memory.StatusActive}}
	for _, explain := range []bool{false, true} {
		r := f.Do(t, apptest.Admin, "POST", "/v1/policy/simulate", policyadmin.SimulateRequest{Modules: draft, Input: in, Explain: explain})
		expectResponse(t, "simulate a slow draft", r, http.StatusUnprocessableEntity, policyadmin.RejectTooSlow)
	}
}

// TestSimulateFailingDraft: a draft whose decision raises an error is
// refused as the draft's fault (422, naming the error), not answered as the
// service's (500).
func TestSimulateFailingDraft(t *testing.T) {
	f := apptest.Start(t)
	in := policyadmin.DecisionInput{Principal: memory.Principal{Kind: memory.KindAgent, ID: "breaker"}, Action: memory.ActionRead,
		Resource: memory.Resource{UserID: "bob", AgentID: "breaker", Type: memory.TypeSemantic, Kind: "fact", Sensitivity: memory.SensitivityInternal, Status: memory.StatusActive}}
	for _, tc := range []struct{ name, rule, says string }{
		{"a built-in given what it cannot take", "permits contains sprintf(\"%v\", [to_number(\"abc\")]) if input.principal.id == \"breaker\"", "to_number"},
		{"a division by zero", "permits contains sprintf(\"%v\", [1 / 0]) if input.principal.id == \"breaker\"", "divide by zero"},
		{"a rule given two values", "boom := 1 if input.principal.id == \"breaker\"\nboom := 2 if input.principal.id == \"breaker\"\npermits contains \"boom\" if boom", "conflict"},
	} {
		draft := edited(bundled(t, f), "authz.rego", func(s string) string { return s + "\n" + tc.rule + "\n" })
		for _, explain := range []bool{false, true} {
			r := f.Do(t, apptest.Admin, "POST", "/v1/policy/simulate", policyadmin.SimulateRequest{Modules: draft, Input: in, Explain: explain})
			expectResponse(t, tc.name, r, http.StatusUnprocessableEntity, policyadmin.RejectEval)
			if !strings.Contains(string(r.Body), tc.says) {
				t.Errorf("%s: body %.300s does not say %q", tc.name, r.Body, tc.says)
			}
		}
	}
}

// TestSlowPolicyIsRefusedAndBounded shows through the router that a revision
// whose decisions outlast the evaluation budget is refused on push and on
// activation (422 policy_too_slow, the revision in force unchanged), and
// that a rule slow on an input no check tries answers 503 policy_timeout,
// not a backing store's 503.
func TestSlowPolicyIsRefusedAndBounded(t *testing.T) {
	f := apptest.StartWith(t, func(c *app.Config) { c.Policy.Timeout = 200 * time.Millisecond })
	base := bundled(t, f)
	slow := func(cond string) []policyadmin.PolicyModule {
		return edited(base, "authz.rego", func(s string) string {
			return s + "\npermits contains \"slow\" if {\n" + cond +
				"\tcount({1 | some i in numbers.range(1, 3000); some k in numbers.range(1, 3000); i == k + 100000}) >= 0\n}\n"
		})
	}
	push := func(step string, modules []policyadmin.PolicyModule) int64 {
		t.Helper()
		r := f.Do(t, apptest.Admin, "PUT", "/v1/policy", policyadmin.NewPolicy{Message: step, Modules: modules})
		expectResponse(t, step, r, http.StatusCreated)
		var pushed struct {
			Revision policyadmin.PolicyRevision `json:"revision"`
		}
		r.Decode(t, &pushed)
		return pushed.Revision.Number
	}
	active := func() int64 {
		t.Helper()
		r := f.Do(t, apptest.Admin, "GET", "/v1/policy", nil)
		expectResponse(t, "policy state", r, http.StatusOK)
		var st policyadmin.PolicyState
		r.Decode(t, &st)
		return st.Active
	}

	// Slow on deletes by admins of restricted procedures: the check's
	// representative decisions meet it.
	r := f.Do(t, apptest.Admin, "PUT", "/v1/policy", policyadmin.NewPolicy{Message: "slow deletes", Modules: slow(
		"\tinput.action == \"delete\"\n\tinput.principal.kind == \"admin\"\n\tinput.resource.type == \"procedural\"\n\tinput.resource.sensitivity == \"restricted\"\n")})
	expectResponse(t, "push a policy slow on admins' deletes", r, http.StatusUnprocessableEntity, policyadmin.RejectTooSlow)
	if !strings.Contains(string(r.Body), "takes longer than the 200ms a decision may take") {
		t.Errorf("refusal %s does not say what was slow", r.Body)
	}

	// Slow on writes of kind slowpoke only: no check meets it, so it is
	// stored and activated; such a write then answers policy_timeout.
	slowpoke := push("slow on slowpokes", slow("\tinput.action == \"write\"\n\tinput.resource.kind == \"slowpoke\"\n"))
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/revisions/"+strconv.FormatInt(slowpoke, 10)+"/activate", nil)
	expectResponse(t, "activate the slowpoke revision", r, http.StatusOK)
	r = f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Kind: "slowpoke", Content: "Alice walks slowly."})
	expectResponse(t, "write a slowpoke", r, http.StatusServiceUnavailable, "policy_timeout")
	if !strings.Contains(string(r.Body), "the access policy took too long to decide; retry later, or an admin of the tenant rolls the policy back") {
		t.Errorf("policy timeout says %s", r.Body)
	}
	r = f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Kind: "fact", Content: "Alice walks to work."})
	expectResponse(t, "write a fact", r, http.StatusCreated)

	// Slow on deletes once the tenant grants to slow-grantee: pushed while
	// it has no such grant, refused on activation once it has.
	grantSlow := push("slow with a grant", slow("\tinput.action == \"delete\"\n\tdata.grants[input.principal.tenant][\"slow-grantee\"]\n"))
	r = f.Do(t, apptest.Admin, "POST", "/v1/principals", identity.NewPrincipal{Kind: memory.KindAgent, ID: "slow-grantee"})
	expectResponse(t, "create slow-grantee", r, http.StatusCreated)
	r = f.Do(t, apptest.Admin, "POST", "/v1/grants", policyadmin.NewGrant{Grantee: "slow-grantee", Source: "*", Types: []string{memory.TypeSemantic}, MaxSensitivity: memory.SensitivityInternal})
	expectResponse(t, "grant to slow-grantee", r, http.StatusCreated)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/revisions/"+strconv.FormatInt(grantSlow, 10)+"/activate", nil)
	expectResponse(t, "activate the revision slow with the grant", r, http.StatusUnprocessableEntity, policyadmin.RejectTooSlow)
	if got := active(); got != slowpoke {
		t.Errorf("active revision %d after a refused activation, want %d", got, slowpoke)
	}
}
