package handlers_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

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
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/revisions/"+num(n)+"/activate", nil)
	expectResponse(t, "activate", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/rollback", map[string]any{})
	expectResponse(t, "rollback", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "GET", "/v1/decisions?result=allow&action=read&limit=5&since="+time.Now().UTC().Add(-time.Hour).Format(time.RFC3339), nil)
	expectResponse(t, "decisions", r, http.StatusOK)
}
