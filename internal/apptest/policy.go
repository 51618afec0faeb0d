package apptest

import (
	"testing"
	"time"

	"mneme/graph/policystore"
	"mneme/policyadmin"
)

// ForcePolicy puts modules in force in f's tenant behind the API, as no
// push would take them (a revision that locks the tenant's admins out),
// and tells every replica, as an activation does. It returns the
// revision's number.
func (f *Fixture) ForcePolicy(t testing.TB, modules []policyadmin.PolicyModule) int64 {
	t.Helper()
	ctx := t.Context()
	store := policystore.New(f.App.Store.Runner())
	rev, err := store.CreatePolicyRevision(ctx, policyadmin.PolicyRevision{
		Tenant: f.Tenant, Author: "admin:admin", Message: "in force behind the API", CreatedAt: time.Now().UTC(), Modules: modules,
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.ActivatePolicy(ctx, f.Tenant, rev.Number, "admin:admin", time.Now().UTC())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.App.Bus.Announce(ctx, f.Tenant, policyadmin.Revisions{Policy: st.Active, PolicyEpoch: st.Epoch, Grants: st.GrantRevision}); err != nil {
		t.Fatal(err)
	}
	return rev.Number
}
