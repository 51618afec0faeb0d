package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"mneme/app"
	"mneme/identity"
	"mneme/internal/apptest"
	"mneme/policyadmin"
)

// lockingOut returns the bundled policy with every guard failing for the
// tenant's admin "admin" when cond holds of it: a denial, or a slow rule.
func lockingOut(base []policyadmin.PolicyModule, tenant, cond string) []policyadmin.PolicyModule {
	return edited(base, "authz.rego", func(s string) string {
		s = strings.Replace(s, "guards if {\n\tsame_tenant", "guards if {\n\tnot locked_out\n\tsame_tenant", 1)
		return s + "\nlocked_out if {\n\tinput.principal.id == \"admin\"\n\tinput.principal.tenant == \"" + tenant + "\"\n" + cond + "}\n"
	})
}

// slowRule spends far more than a decision's budget.
const slowRule = "\tcount({1 | some i in numbers.range(1, 3000); some k in numbers.range(1, 3000); i == k + 100000}) >= 0\n"

// TestPolicyCannotLockOutTheTenantsAdmins: a revision under which the
// tenant's real admin may not manage the tenant (denied, or too slow to
// decide) is refused at push with policy_locks_out_admins, although the
// decision table's admin passes it; and one that is in force all the same
// (written to the store behind the API) leaves the admin able to read the
// policy state and roll it back, after which everything works again.
func TestPolicyCannotLockOutTheTenantsAdmins(t *testing.T) {
	f := apptest.StartWith(t, func(c *app.Config) { c.Policy.Timeout = 200 * time.Millisecond })
	base := bundled(t, f)
	rules := map[string]string{"denies": "", "is too slow for": slowRule}

	for what, cond := range rules {
		r := f.Do(t, apptest.Admin, "PUT", "/v1/policy", policyadmin.NewPolicy{Message: "lock out", Modules: lockingOut(base, f.Tenant, cond)})
		expectResponse(t, "push a policy that "+what+" the admin", r, http.StatusUnprocessableEntity, policyadmin.RejectLocksOutAdmins)
		if !strings.Contains(string(r.Body), "admin admin may not manage the tenant") {
			t.Errorf("refusal %s does not name the admin", r.Body)
		}
	}

	for what, cond := range rules {
		forced := f.ForcePolicy(t, lockingOut(base, f.Tenant, cond))
		r := f.Do(t, apptest.Admin, "POST", "/v1/principals", identity.NewPrincipal{Kind: "admin", ID: "rescue"})
		if r.Status != http.StatusForbidden && r.Status != http.StatusServiceUnavailable {
			t.Fatalf("a policy that %s the admin is not in force: creating a principal answers %d %s", what, r.Status, r.Body)
		}

		r = f.Do(t, apptest.Admin, "GET", "/v1/policy", nil)
		expectResponse(t, "policy state under a policy that "+what+" the admin", r, http.StatusOK)
		r = f.Do(t, apptest.Admin, "GET", "/v1/policy/revisions/0", nil)
		expectResponse(t, "read revision 0 under a policy that "+what+" the admin", r, http.StatusOK)
		r = f.Do(t, apptest.Admin, "POST", "/v1/policy/rollback", map[string]any{})
		expectResponse(t, "roll back a policy that "+what+" the admin", r, http.StatusOK)
		var back policyadmin.PolicyState
		r.Decode(t, &back)
		if back.Active == forced {
			t.Errorf("rollback left revision %d in force", back.Active)
		}
		r = f.Do(t, apptest.Admin, "GET", "/v1/keys", nil)
		expectResponse(t, "list keys after the rollback", r, http.StatusOK)
	}
}
