package handlers_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// bundled returns revision 0's modules as the API serves them.
func bundled(t *testing.T, f *apptest.Fixture) []policyadmin.PolicyModule {
	t.Helper()
	r := f.Do(t, apptest.Admin, "GET", "/v1/policy/revisions/0", nil)
	expectResponse(t, "get revision 0", r, http.StatusOK)
	var rev policyadmin.PolicyRevision
	r.Decode(t, &rev)
	if len(rev.Modules) < 4 {
		t.Fatalf("revision 0 has %d modules", len(rev.Modules))
	}
	return rev.Modules
}

// edited returns modules with one module's source changed.
func edited(modules []policyadmin.PolicyModule, name string, edit func(string) string) []policyadmin.PolicyModule {
	out := make([]policyadmin.PolicyModule, len(modules))
	copy(out, modules)
	for i := range out {
		if out[i].Name == name {
			out[i].Source = edit(out[i].Source)
		}
	}
	return out
}

// noSecretPlans adds a guard to the bundled policy: nobody reads a memory of
// kind "secret-plan".
func noSecretPlans(modules []policyadmin.PolicyModule) []policyadmin.PolicyModule {
	return edited(modules, "authz.rego", func(s string) string {
		s = strings.Replace(s, "\tknown_sensitivity\n}", "\tknown_sensitivity\n\tnot secret_plan\n}", 1)
		return s + "\nsecret_plan if input.resource.kind == \"secret-plan\"\n\ndenials contains \"secret plans are never read\" if secret_plan\n"
	})
}

// exercisePolicyRoutes drives every policy route once for the OpenAPI test.
func exercisePolicyRoutes(t *testing.T, f *apptest.Fixture) {
	t.Helper()
	base := bundled(t, f)
	r := f.Do(t, apptest.Admin, "GET", "/v1/policy", nil)
	expectResponse(t, "policy state", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/test", map[string]any{"modules": noSecretPlans(base)})
	expectResponse(t, "test policy", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "PUT", "/v1/policy", policyadmin.NewPolicy{Message: "no secret plans", Modules: noSecretPlans(base)})
	expectResponse(t, "push policy", r, http.StatusCreated)
	var pushed struct {
		Revision policyadmin.PolicyRevision `json:"revision"`
	}
	r.Decode(t, &pushed)
	n := pushed.Revision.Number
	num := func(n int64) string { return strconv.FormatInt(n, 10) }
	r = f.Do(t, apptest.Admin, "PUT", "/v1/policy", policyadmin.NewPolicy{Modules: edited(base, "authz.rego", func(s string) string { return s + "\nx if http.send({})\n" })})
	expectResponse(t, "push a policy with http.send", r, http.StatusUnprocessableEntity, policyadmin.RejectForbiddenBuiltin)
	r = f.Do(t, apptest.Admin, "GET", "/v1/policy/revisions", nil)
	expectResponse(t, "list revisions", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "GET", "/v1/policy/diff?from=0&to="+num(n), nil)
	expectResponse(t, "diff", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/simulate", policyadmin.SimulateRequest{Revision: &n, Explain: true, Input: policyadmin.DecisionInput{
		Principal: memory.Principal{Tenant: f.Tenant, Kind: memory.KindAdmin, ID: "admin"}, Action: memory.ActionRead,
		Resource: memory.Resource{Tenant: f.Tenant, UserID: "alice", Type: memory.TypeSemantic, Kind: "secret-plan", Sensitivity: memory.SensitivityInternal},
	}})
	expectResponse(t, "simulate", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/replay", policyadmin.ReplayRequest{Revision: &n, Limit: 50})
	expectResponse(t, "replay", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/replay", policyadmin.ReplayRequest{Modules: noSecretPlans(base), Limit: 50})
	expectResponse(t, "replay an inline draft", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/replay", policyadmin.ReplayRequest{Modules: edited(base, "authz.rego", func(s string) string { return s + "\nallow if {" })})
	expectResponse(t, "replay a draft that does not parse", r, http.StatusUnprocessableEntity, policyadmin.RejectParse)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/revisions/"+num(n)+"/activate", nil)
	expectResponse(t, "activate", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/rollback", map[string]any{"revision": -1})
	expectResponse(t, "rollback to a negative revision", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/rollback", map[string]any{})
	expectResponse(t, "rollback", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "GET", "/v1/decisions?result=allow&action=read&limit=5&since="+time.Now().UTC().Add(-time.Hour).Format(time.RFC3339), nil)
	expectResponse(t, "decisions", r, http.StatusOK)
}

// TestReplayInlineDraft replays drafts sent inline through the API: one
// that denies secret plans turns order-bot's allowed read into a deny and
// reports the checks it passed; drafts that fail a check of a push are
// refused with its code before anything is replayed; and none of it stores
// a revision or changes what the active policy decides.
func TestReplayInlineDraft(t *testing.T) {
	f := apptest.Start(t)
	ctx := t.Context()
	plan := create(t, f, "order-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "secret-plan", Content: "Alice plans a surprise order for Friday."})
	reads := func() int { return f.Do(t, "order-bot", "GET", "/v1/memories/"+plan.ID, nil).Status }
	if s := reads(); s != http.StatusOK {
		t.Fatalf("order-bot reads its own memory: %d", s)
	}
	if err := f.App.Decisions.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		st := f.Do(t, apptest.Admin, "GET", "/v1/policy", nil)
		expectResponse(t, "policy state", st, http.StatusOK)
		revs := f.Do(t, apptest.Admin, "GET", "/v1/policy/revisions", nil)
		expectResponse(t, "revisions", revs, http.StatusOK)
		return string(st.Body) + string(revs.Body)
	}
	before := state()
	base := bundled(t, f)

	draft := noSecretPlans(base)
	r := f.Do(t, apptest.Admin, "POST", "/v1/policy/replay", policyadmin.ReplayRequest{Modules: draft})
	expectResponse(t, "replay the draft", r, http.StatusOK)
	var rep policyadmin.ReplayReport
	r.Decode(t, &rep)
	if rep.AllowToDeny < 1 || rep.Check == nil || rep.Check.Digest != policyadmin.PolicyDigest(draft) || rep.Check.BundledTests == 0 || rep.Check.DecisionCases == 0 {
		t.Fatalf("report %+v (check %+v); want a read that would be denied and the checks the draft passed", rep, rep.Check)
	}
	flipped := false
	for _, c := range rep.Changes {
		if c.Decision.Resource.Kind == "secret-plan" && c.Decision.Principal.ID == "order-bot" && c.Result == policyadmin.ResultDeny && slices.Contains(c.Reasons, "secret plans are never read") {
			flipped = true
		}
	}
	if !flipped {
		t.Errorf("order-bot's read of the secret plan is not among the changes: %+v", rep.Changes)
	}

	padding := func(name string) policyadmin.PolicyModule {
		return policyadmin.PolicyModule{Name: name, Source: "package " + strings.TrimSuffix(name, ".rego") + "\n" + strings.Repeat("# padding\n", 24<<10)}
	}
	refused := []struct {
		name    string
		modules []policyadmin.PolicyModule
		code    string
		problem string
	}{
		{"a built-in outside the sandbox", edited(draft, "authz.rego", func(s string) string { return s + "\nx if http.send({})\n" }), policyadmin.RejectForbiddenBuiltin, "http.send is not allowed"},
		{"not Rego", edited(draft, "authz.rego", func(s string) string { return s + "\nallow if {" }), policyadmin.RejectParse, "authz.rego:"},
		{"not strict", edited(draft, "authz.rego", func(s string) string { return s + "\nidle if {\n\ty := 1\n\ttrue\n}\n" }), policyadmin.RejectCompile, "unused"},
		{"a failing test", append(slices.Clone(draft), policyadmin.PolicyModule{Name: "mine_test.rego", Source: "package mine_test\n\nimport data.mneme.authz\n\ntest_everyone_reads if authz.allow with input as {}\n"}), policyadmin.RejectTestFailed, "test_everyone_reads"},
		{"a bad module name", append(slices.Clone(draft), policyadmin.PolicyModule{Name: "x/../../y.rego", Source: "package y"}), policyadmin.RejectInvalid, "relative file name"},
		{"too much Rego in all", append(slices.Clone(draft), padding("pad1.rego"), padding("pad2.rego")), policyadmin.RejectInvalid, "at most 524288 bytes"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := f.Do(t, apptest.Admin, "POST", "/v1/policy/replay", policyadmin.ReplayRequest{Modules: tt.modules})
			expectResponse(t, "replay", r, http.StatusUnprocessableEntity, tt.code)
			var e struct{ Code, Message string }
			r.Decode(t, &e)
			if !strings.Contains(e.Message, tt.problem) {
				t.Errorf("message %q does not say %q", e.Message, tt.problem)
			}
		})
	}
	// A push is held to the same total: stored, it would be activated and
	// replayed by number.
	r = f.Do(t, apptest.Admin, "PUT", "/v1/policy", policyadmin.NewPolicy{Message: "big", Modules: append(slices.Clone(draft), padding("pad1.rego"), padding("pad2.rego"))})
	expectResponse(t, "a push of too much Rego in all", r, http.StatusUnprocessableEntity, policyadmin.RejectInvalid)
	r = f.Do(t, "order-bot", "POST", "/v1/policy/replay", policyadmin.ReplayRequest{Modules: draft})
	expectResponse(t, "an agent replays a draft", r, http.StatusForbidden, "forbidden")

	if after := state(); after != before {
		t.Errorf("replaying drafts changed the policy state or stored a revision:\nbefore %s\nafter  %s", before, after)
	}
	if s := reads(); s != http.StatusOK {
		t.Errorf("order-bot reads the secret plan after the replays: %d, want 200 (the active policy is unchanged)", s)
	}
}
