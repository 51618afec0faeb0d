package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"mneme/graph/keystore"
	"mneme/identity"
	"mneme/internal/apptest"
	"mneme/memory"
)

// newKey registers a principal (unless it exists) and returns a key of it.
func newKey(t *testing.T, f *apptest.Fixture, kind, id string) identity.IssuedKey {
	t.Helper()
	r := f.Do(t, apptest.Admin, http.MethodPost, "/v1/principals", identity.NewPrincipal{Kind: kind, ID: id})
	if r.Status != http.StatusCreated && r.Status != http.StatusConflict {
		t.Fatalf("create principal %s: %d %s", id, r.Status, r.Body)
	}
	r = f.Do(t, apptest.Admin, http.MethodPost, "/v1/keys", identity.NewKey{OwnerKind: kind, OwnerID: id})
	want(t, "create key", r, http.StatusCreated)
	var k identity.IssuedKey
	r.Decode(t, &k)
	return k
}

// works asks whoami with a raw key on each replica and fails the test when
// the answer is not status.
func works(t *testing.T, step, key string, status int, replicas ...*apptest.Fixture) {
	t.Helper()
	for i, f := range replicas {
		if r := f.Do(t, key, http.MethodGet, "/v1/whoami", nil); r.Status != status {
			t.Errorf("%s: replica %d answers %d, want %d (%s)", step, i+1, r.Status, status, r.Body)
		}
	}
}

// TestKeyChangesReachEveryReplica: with both replicas' caches warm, a
// revoke is refused on the very next request on each; a rotated key's old
// secret works until its grace ends and not after; erasing a user stops
// their keys.
func TestKeyChangesReachEveryReplica(t *testing.T) {
	one := apptest.Start(t)
	two := replica(t, one.Tenant, one.Keys)

	t.Run("revoke", func(t *testing.T) {
		k := newKey(t, one, memory.KindAgent, "temp-bot")
		works(t, "before the revoke", k.Secret, http.StatusOK, one, two, one, two)
		r := one.Do(t, apptest.Admin, http.MethodDelete, "/v1/keys/"+k.Key.ID, nil)
		want(t, "revoke", r, http.StatusOK)
		works(t, "right after the revoke", k.Secret, http.StatusUnauthorized, two, one)
	})

	t.Run("rotate", func(t *testing.T) {
		old := newKey(t, one, memory.KindAgent, "rotating-bot")
		works(t, "before the rotation", old.Secret, http.StatusOK, one, two)
		const grace = 2
		r := two.Do(t, apptest.Admin, http.MethodPost, "/v1/keys/"+old.Key.ID+"/rotate", map[string]int{"grace_seconds": grace})
		want(t, "rotate", r, http.StatusCreated)
		var next identity.IssuedKey
		r.Decode(t, &next)
		r = one.Do(t, apptest.Admin, http.MethodGet, "/v1/keys/"+old.Key.ID, nil)
		var rotated identity.Key
		r.Decode(t, &rotated)
		if rotated.GraceUntil == nil || rotated.RotatedTo != next.Key.ID || rotated.Status != identity.StatusRotating {
			t.Fatalf("rotated key = %+v", rotated)
		}
		works(t, "the new secret", next.Secret, http.StatusOK, one, two)
		works(t, "the old secret in its grace", old.Secret, http.StatusOK, one, two)
		if time.Now().After(*rotated.GraceUntil) {
			t.Fatal("the machine was too slow to check the grace period; the test proves nothing")
		}
		time.Sleep(time.Until(*rotated.GraceUntil) + 50*time.Millisecond)
		works(t, "the old secret after its grace", old.Secret, http.StatusUnauthorized, one, two)
		works(t, "the new secret after the grace", next.Secret, http.StatusOK, one, two)
	})

	t.Run("erase", func(t *testing.T) {
		k := newKey(t, one, memory.KindUser, "erin")
		works(t, "before the erase", k.Secret, http.StatusOK, one, two)
		r := one.Do(t, apptest.Admin, http.MethodDelete, "/v1/users/erin", nil)
		want(t, "erase", r, http.StatusOK)
		var receipt memory.Receipt
		r.Decode(t, &receipt)
		if n := receipt.Counts["api_keys"]; n != 1 {
			t.Errorf("receipt %v: api_keys = %d, want 1", receipt.Counts, n)
		}
		works(t, "after the erase", k.Secret, http.StatusUnauthorized, two, one)
		r = one.Do(t, apptest.Admin, http.MethodGet, "/v1/principals/user/erin", nil)
		want(t, "erased user's registration", r, http.StatusNotFound)
	})

	t.Run("expiry", func(t *testing.T) {
		k := newKey(t, one, memory.KindAgent, "expiring-bot")
		works(t, "before the expiry", k.Secret, http.StatusOK, one, two)
		past := time.Now().Add(-time.Second).UTC()
		r := one.Do(t, apptest.Admin, http.MethodPatch, "/v1/keys/"+k.Key.ID, identity.KeyChange{ExpiresAt: &past})
		want(t, "an expiry in the past", r, http.StatusBadRequest)
		at := time.Now().Add(3 * time.Second).UTC()
		r = one.Do(t, apptest.Admin, http.MethodPatch, "/v1/keys/"+k.Key.ID, identity.KeyChange{ExpiresAt: &at})
		want(t, "expire soon", r, http.StatusOK)
		works(t, "before the new expiry", k.Secret, http.StatusOK, two, one)
		time.Sleep(time.Until(at) + 100*time.Millisecond)
		works(t, "after the expiry", k.Secret, http.StatusUnauthorized, two, one)
		// A key that stopped stays stopped: an expiry cleared afterwards
		// would bring it back.
		r = one.Do(t, apptest.Admin, http.MethodPatch, "/v1/keys/"+k.Key.ID, identity.KeyChange{NoExpiry: true})
		want(t, "clear the expiry of an expired key", r, http.StatusConflict)
		works(t, "after trying to clear the expiry", k.Secret, http.StatusUnauthorized, two, one)
	})

	t.Run("audit", func(t *testing.T) {
		events, err := one.App.Audit.Events(t.Context(), one.Tenant, memory.AuditQuery{Action: "key."})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range events {
			seen[e.Action] = true
			// The refused changes of an expiry are there too, saying why.
			if e.Actor != "admin:"+apptest.Admin || (e.Outcome != memory.AuditOK && (e.Outcome != memory.AuditFailed || e.Error == "")) {
				t.Errorf("audit event %+v", e)
			}
			if e.Target == "" || strings.Contains(fmt.Sprint(e), "mn_"+one.Tenant+"_") {
				t.Errorf("audit event without a target, or with a secret: %+v", e)
			}
		}
		for _, a := range []string{"key.create", "key.revoke", "key.rotate", "key.expiry"} {
			if !seen[a] {
				t.Errorf("no %s in the audit trail", a)
			}
		}
	})
}

// TestUserName: a user registered with a name keeps it, spaces tidied, in
// the registration and where recall reads it; only users have one, of a
// bounded length; erasing the user forgets it.
func TestUserName(t *testing.T) {
	f := apptest.Start(t)
	r := f.Do(t, apptest.Admin, http.MethodPost, "/v1/principals", identity.NewPrincipal{Kind: memory.KindUser, ID: "u-9f2", Name: "  Ethan   Zhou "})
	want(t, "create", r, http.StatusCreated)
	var p identity.Principal
	r.Decode(t, &p)
	if p.Name != "Ethan Zhou" {
		t.Errorf("created %+v, want the name Ethan Zhou", p)
	}
	r = f.Do(t, apptest.Admin, http.MethodGet, "/v1/principals/user/u-9f2", nil)
	want(t, "get", r, http.StatusOK)
	r.Decode(t, &p)
	if p.Name != "Ethan Zhou" {
		t.Errorf("registration %+v, want the name Ethan Zhou", p)
	}
	ctx := t.Context()
	names := keystore.New(f.App.Store.Runner())
	if name, err := names.UserName(ctx, f.Tenant, "u-9f2"); err != nil || name != "Ethan Zhou" {
		t.Errorf("recall reads %q, %v; want Ethan Zhou", name, err)
	}
	if users, err := names.UserNames(ctx, f.Tenant, 100); err != nil || users["u-9f2"] != "Ethan Zhou" {
		t.Errorf("the tenant's named users %v, %v; want u-9f2 as Ethan Zhou", users, err)
	}
	for _, bad := range []identity.NewPrincipal{
		{Kind: memory.KindAgent, ID: "named-bot", Name: "Bot"},
		{Kind: memory.KindUser, ID: "u-long", Name: strings.Repeat("x", identity.MaxUserName+1)},
		{Kind: memory.KindUser, ID: "u-ctl", Name: "Ethan\x00Zhou"},
	} {
		r = f.Do(t, apptest.Admin, http.MethodPost, "/v1/principals", bad)
		want(t, "create "+bad.ID, r, http.StatusBadRequest)
	}
	// A rename reaches recall on this replica at once, though recall has
	// just read and kept the old name.
	if name, err := f.App.Names.UserName(ctx, f.Tenant, "u-9f2"); err != nil || name != "Ethan Zhou" {
		t.Errorf("recall's cache reads %q, %v; want Ethan Zhou", name, err)
	}
	r = f.Do(t, apptest.Admin, http.MethodPatch, "/v1/principals/user/u-9f2", map[string]string{"name": "Ethan Chow"})
	want(t, "rename", r, http.StatusOK)
	r.Decode(t, &p)
	if p.Name != "Ethan Chow" || p.Kind != memory.KindUser || p.ID != "u-9f2" {
		t.Errorf("renamed %+v, want user u-9f2 called Ethan Chow", p)
	}
	if name, err := f.App.Names.UserName(ctx, f.Tenant, "u-9f2"); err != nil || name != "Ethan Chow" {
		t.Errorf("after the rename recall reads %q, %v; want Ethan Chow", name, err)
	}
	// Questions about another user know the new name at once too.
	if who, err := f.App.Names.Person(ctx, f.Tenant, "someone-else"); err != nil || !who.NamesOther("What does Ethan Chow prefer?") {
		t.Errorf("another user's recall reads %+v, %v; want Ethan Chow among the others", who, err)
	}
	r = f.Do(t, apptest.Admin, http.MethodDelete, "/v1/users/u-9f2", nil)
	want(t, "erase", r, http.StatusOK)
	if name, err := names.UserName(ctx, f.Tenant, "u-9f2"); err != nil || name != "" {
		t.Errorf("after the erase recall reads %q, %v; want nothing", name, err)
	}
	if users, err := names.UserNames(ctx, f.Tenant, 100); err != nil || users["u-9f2"] != "" {
		t.Errorf("after the erase the tenant's named users %v, %v; want u-9f2 gone", users, err)
	}
}

// TestPrincipalChangeReachesKeys: an agent's new team counts from its next
// request, though its key was authenticated, and cached, before the change.
func TestPrincipalChangeReachesKeys(t *testing.T) {
	f := apptest.Start(t)
	r := f.Do(t, apptest.Admin, http.MethodPost, "/v1/principals", identity.NewPrincipal{Kind: memory.KindAgent, ID: "mover-bot", Team: "support"})
	want(t, "create", r, http.StatusCreated)
	r = f.Do(t, apptest.Admin, http.MethodPost, "/v1/keys", identity.NewKey{OwnerKind: memory.KindAgent, OwnerID: "mover-bot"})
	want(t, "key", r, http.StatusCreated)
	var issued identity.IssuedKey
	r.Decode(t, &issued)
	f.Keys["mover-bot"] = issued.Secret
	team := func() string {
		r := f.Do(t, "mover-bot", http.MethodGet, "/v1/whoami", nil)
		want(t, "whoami", r, http.StatusOK)
		var p memory.Principal
		r.Decode(t, &p)
		return p.Team
	}
	if got := team(); got != "support" {
		t.Fatalf("team before the change = %q, want support", got)
	}
	r = f.Do(t, apptest.Admin, http.MethodPatch, "/v1/principals/agent/mover-bot", map[string]string{"team": "billing"})
	want(t, "change", r, http.StatusOK)
	if got := team(); got != "billing" {
		t.Errorf("team after the change = %q, want billing", got)
	}
	r = f.Do(t, "mover-bot", http.MethodPatch, "/v1/principals/agent/mover-bot", map[string]string{"team": "admins"})
	want(t, "an agent changing itself", r, http.StatusForbidden)
}
