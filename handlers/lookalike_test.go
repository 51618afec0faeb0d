package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// TestGrantKindsAndAnalystRolesAreChecked: a grant naming a kind no memory
// may have ("ｅmail" with a full-width ｅ) is refused as that memory kind
// is, with the same status and code; an analyst is given only the roles
// the policy knows, and an unknown one is refused with a code and a
// message that lists the known ones.
func TestGrantKindsAndAnalystRolesAreChecked(t *testing.T) {
	f := apptest.Start(t)
	const kind = "\uff45mail"
	memoryKind := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{UserID: "bob", Type: memory.TypeProfile, Kind: kind, Content: "Bob's address is on file."})
	expectResponse(t, "memory of kind "+kind, memoryKind, http.StatusBadRequest, "invalid_argument")
	grant := f.Do(t, apptest.Admin, http.MethodPost, "/v1/grants", policyadmin.NewGrant{
		Grantee: "order-bot", Source: "*", Types: []string{memory.TypeProfile}, Kinds: []string{kind}, MaxSensitivity: memory.SensitivityInternal,
	})
	expectResponse(t, "grant of kind "+kind, grant, http.StatusBadRequest, "invalid_argument")
	if !strings.Contains(string(grant.Body), "kinds:") {
		t.Errorf("grant of kind %s: %s, want the message to name kinds", kind, grant.Body)
	}

	for _, roles := range [][]string{{"superuser"}, {"analyst", "admin"}} {
		r := f.Do(t, apptest.Admin, http.MethodPost, "/v1/principals", map[string]any{"kind": memory.KindAnalyst, "id": "ana-new", "roles": roles})
		expectResponse(t, "analyst with roles "+strings.Join(roles, ","), r, http.StatusUnprocessableEntity, "unknown_role")
		if !strings.Contains(string(r.Body), "analyst, analyst_full") {
			t.Errorf("analyst with roles %v: %s, want the known roles listed", roles, r.Body)
		}
	}
	if r := f.Do(t, apptest.Admin, http.MethodGet, "/v1/principals/analyst/ana-new", nil); r.Status != http.StatusNotFound {
		t.Errorf("the refused analyst exists: %d %s", r.Status, r.Body)
	}
	r := f.Do(t, apptest.Admin, http.MethodPost, "/v1/principals", map[string]any{"kind": memory.KindAnalyst, "id": "ana-new", "roles": []string{"analyst_full"}})
	expectResponse(t, "analyst with a known role", r, http.StatusCreated)
	r = f.Do(t, apptest.Admin, http.MethodPatch, "/v1/principals/analyst/ana-new", map[string]any{"roles": []string{"superuser"}})
	expectResponse(t, "analyst changed to an unknown role", r, http.StatusUnprocessableEntity, "unknown_role")
}

// TestRolesAreThoseOfTheKind: an agent, a user or an admin holds only the
// role of its kind; another, such as admin on an agent, is refused as an
// analyst's unknown role is, at creation and in a change, and the
// principal keeps the roles it had.
func TestRolesAreThoseOfTheKind(t *testing.T) {
	f := apptest.Start(t)
	for _, tc := range []struct{ kind, id, own string }{
		{memory.KindAgent, "support-bot", "agent"},
		{memory.KindUser, "alice", "user"},
		{memory.KindAdmin, apptest.Admin, "admin"},
	} {
		for _, roles := range [][]string{{"admin", "superuser"}, {"analyst_full"}, {tc.own, "support"}} {
			r := f.Do(t, apptest.Admin, http.MethodPatch, "/v1/principals/"+tc.kind+"/"+tc.id, map[string]any{"roles": roles})
			expectResponse(t, tc.kind+" changed to roles "+strings.Join(roles, ","), r, http.StatusUnprocessableEntity, "unknown_role")
			r = f.Do(t, apptest.Admin, http.MethodPost, "/v1/principals", map[string]any{"kind": tc.kind, "id": "new-" + tc.kind, "roles": roles})
			expectResponse(t, "new "+tc.kind+" with roles "+strings.Join(roles, ","), r, http.StatusUnprocessableEntity, "unknown_role")
		}
		r := f.Do(t, apptest.Admin, http.MethodPatch, "/v1/principals/"+tc.kind+"/"+tc.id, map[string]any{"roles": []string{tc.own}})
		expectResponse(t, tc.kind+" given its own role", r, http.StatusOK)
	}
	r := f.Do(t, "support-bot", http.MethodGet, "/v1/whoami", nil)
	expectResponse(t, "whoami", r, http.StatusOK)
	if strings.Contains(string(r.Body), "admin") || strings.Contains(string(r.Body), "superuser") {
		t.Errorf("support-bot after refused changes: %s", r.Body)
	}
}
