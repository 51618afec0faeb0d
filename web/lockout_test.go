package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// TestPanelRollsBackAPolicyThatLocksTheAdminOut: with a revision in force
// that denies the tenant's admin everything (written to the store behind
// the API, as no push would take it), the Policy page still opens, says
// what the policy refuses, and its rollback button puts the bundled policy
// back.
func TestPanelRollsBackAPolicyThatLocksTheAdminOut(t *testing.T) {
	f := apptest.Start(t)
	ctx := t.Context()
	var base policyadmin.PolicyRevision
	f.Do(t, "admin", http.MethodGet, "/v1/policy/revisions/0", nil).Decode(t, &base)
	for i, m := range base.Modules {
		if m.Name == "authz.rego" {
			base.Modules[i].Source = strings.Replace(m.Source, "guards if {\n\tsame_tenant", "guards if {\n\tnot locked_out\n\tsame_tenant", 1) +
				"\nlocked_out if input.principal.id == \"admin\"\n"
		}
	}
	f.ForcePolicy(t, base.Modules)
	if s := f.Do(t, "admin", http.MethodGet, "/v1/grants", nil).Status; s != http.StatusForbidden {
		t.Fatalf("the locking revision is not in force: grants answer %d", s)
	}

	b := newBrowser(t, f.URL)
	b.signIn(f.Keys["admin"])
	page := b.do(http.MethodGet, "/panel/policy", nil)
	if page.status != http.StatusOK || !strings.Contains(page.body, `id="policy-refused"`) {
		t.Fatalf("policy page under a policy refusing the admin = %d: %s", page.status, page.body)
	}
	if p := b.do(http.MethodPost, "/panel/policy/rollback", url.Values{"csrf": {csrfOf(t, page)}}); p.status != http.StatusSeeOther {
		t.Fatalf("rollback = %d: %s", p.status, p.body)
	}
	now, err := f.App.Admin.PolicyStatus(ctx, memory.Principal{Tenant: f.Tenant, Kind: memory.KindAdmin, ID: "admin"})
	if err != nil || now.Active != 0 {
		t.Errorf("after the rollback: %+v, %v; want revision 0", now, err)
	}
}
