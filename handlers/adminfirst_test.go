package handlers_test

import (
	"net/http"
	"testing"

	"mneme/internal/apptest"
)

// TestAdminRoutesRefuseNonAdminsWhateverTheyHold: a caller who may not
// administer the tenant gets 403 from a route of its admins whatever the
// request holds, malformed or not, and so learns nothing of the bodies and
// parameters it takes; the admin gets the 400 that tells what was wrong.
func TestAdminRoutesRefuseNonAdminsWhateverTheyHold(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	f := apptest.Start(t)
	for _, tc := range []struct {
		name, method, path string
		body               string
	}{
		{"push a policy", "PUT", "/v1/policy", `{"modules": {}}`},
		{"push a policy that is no JSON", "PUT", "/v1/policy", `{`},
		{"push a policy with an unknown field", "PUT", "/v1/policy", `{"module": []}`},
		{"test a policy", "POST", "/v1/policy/test", `{"modules": "x"}`},
		{"simulate", "POST", "/v1/policy/simulate", `{"revision": "one"}`},
		{"replay", "POST", "/v1/policy/replay", `{"limit": -1.5}`},
		{"roll back to a negative revision", "POST", "/v1/policy/rollback", `{"revision": -1}`},
		{"roll back with a malformed body", "POST", "/v1/policy/rollback", `[]`},
		{"activate with a body", "POST", "/v1/policy/revisions/0/activate", `{"force": true}`},
		{"activate a revision that is no number", "POST", "/v1/policy/revisions/x/activate", ``},
		{"read a revision that is no number", "GET", "/v1/policy/revisions/x", ``},
		{"diff revisions that are no numbers", "GET", "/v1/policy/diff?from=a&to=b", ``},
		{"decisions with a bad limit", "GET", "/v1/decisions?limit=zero", ``},
		{"audit with a bad limit", "GET", "/v1/audit?limit=zero", ``},
		{"create a grant", "POST", "/v1/grants", `{"grantee": 7}`},
		{"change a grant", "PATCH", "/v1/grants/g1", `{"types": "all"}`},
		{"delete a grant with a body", "DELETE", "/v1/grants/g1", `{"why": "x"}`},
		{"put settings", "PUT", "/v1/policy/settings", `{"users_read_shared": "yes"}`},
		{"patch settings", "PATCH", "/v1/policy/settings", `null`},
		{"create a principal", "POST", "/v1/principals", `{"kind": ["agent"]}`},
		{"change a principal", "PATCH", "/v1/principals/agent/support-bot", `{"roles": "admin"}`},
		{"delete a principal with a body", "DELETE", "/v1/principals/agent/order-bot", `{"cascade": true}`},
		{"create a key", "POST", "/v1/keys", `{"owner": 1}`},
		{"change a key", "PATCH", "/v1/keys/k1", `{`},
		{"rotate a key", "POST", "/v1/keys/k1/rotate", `{"grace": true}`},
		{"revoke a key with a body", "DELETE", "/v1/keys/k1", `{"now": 1}`},
		{"import a document", "POST", "/v1/knowledge/import", `{"content": 1}`},
		{"remove a document with a body", "DELETE", "/v1/knowledge/documents/guides", `{"all": true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = []byte(tc.body)
			}
			r := f.Do(t, "support-bot", tc.method, tc.path, body)
			expectResponse(t, "as an agent", r, http.StatusForbidden, "forbidden")
			r = f.Do(t, apptest.Admin, tc.method, tc.path, body)
			expectResponse(t, "as the admin", r, http.StatusBadRequest)
		})
	}
}
