package handlers_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// TestSettingsChangeOnlyWhatIsGiven: turning on users_read_shared with a
// one-field PATCH leaves the lowered ceiling as it was, so alice still
// reads no internal memory about herself; a PUT that leaves a setting out
// is refused naming it and changes nothing; a full PUT replaces both; and
// the audit names each setting changed, before and after.
func TestSettingsChangeOnlyWhatIsGiven(t *testing.T) {
	f := apptest.Start(t)
	write(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "preference", Content: "Alice prefers morning deliveries."})
	aliceReads := func() int {
		t.Helper()
		r := f.Do(t, "alice", "GET", "/v1/memories?user_id=alice", nil)
		expectResponse(t, "alice lists", r, http.StatusOK)
		var page struct{ Memories []memory.Memory }
		r.Decode(t, &page)
		return len(page.Memories)
	}
	settings := func() policyadmin.Settings {
		t.Helper()
		r := f.Do(t, apptest.Admin, "GET", "/v1/policy/settings", nil)
		expectResponse(t, "settings", r, http.StatusOK)
		var s policyadmin.Settings
		r.Decode(t, &s)
		return s
	}
	lastAudit := func() map[string]string {
		t.Helper()
		r := f.Do(t, apptest.Admin, "GET", "/v1/audit?action="+policyadmin.AuditSettingsPut+"&limit=1", nil)
		expectResponse(t, "audit", r, http.StatusOK)
		var trail struct{ Events []memory.AuditEvent }
		r.Decode(t, &trail)
		if len(trail.Events) != 1 {
			t.Fatalf("audit of settings: %+v", trail.Events)
		}
		return trail.Events[0].Details
	}
	if n := aliceReads(); n != 1 {
		t.Fatalf("alice lists %d memories under the default ceiling, want 1", n)
	}

	r := f.Do(t, apptest.Admin, "PATCH", "/v1/policy/settings", map[string]any{"user_max_sensitivity": "public"})
	expectResponse(t, "patch the ceiling to public", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "PATCH", "/v1/policy/settings", map[string]any{"users_read_shared": true})
	expectResponse(t, "patch users_read_shared", r, http.StatusOK)
	want := policyadmin.Settings{UserMaxSensitivity: "public", UsersReadShared: true}
	var answered policyadmin.Settings
	r.Decode(t, &answered)
	if d := cmp.Diff(want, answered); d != "" {
		t.Errorf("PATCH answered (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, settings()); d != "" {
		t.Errorf("settings after two one-field PATCHes (-want +got):\n%s", d)
	}
	if n := aliceReads(); n != 0 {
		t.Errorf("alice lists %d internal memories under a public ceiling", n)
	}
	if d := cmp.Diff(map[string]string{"users_read_shared": "false -> true"}, lastAudit()); d != "" {
		t.Errorf("audit of the PATCH (-want +got):\n%s", d)
	}

	for _, body := range []map[string]any{{"users_read_shared": false}, {"user_max_sensitivity": "internal"}, {}} {
		r = f.Do(t, apptest.Admin, "PUT", "/v1/policy/settings", body)
		expectResponse(t, "put without every setting", r, http.StatusBadRequest, "invalid_argument")
	}
	if d := cmp.Diff(want, settings()); d != "" {
		t.Errorf("settings after refused PUTs (-want +got):\n%s", d)
	}

	r = f.Do(t, apptest.Admin, "PUT", "/v1/policy/settings", map[string]any{"user_max_sensitivity": "internal", "users_read_shared": false})
	expectResponse(t, "put every setting", r, http.StatusOK)
	if d := cmp.Diff(policyadmin.Settings{UserMaxSensitivity: "internal"}, settings()); d != "" {
		t.Errorf("settings after a full PUT (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"user_max_sensitivity": "public -> internal", "users_read_shared": "true -> false"}, lastAudit()); d != "" {
		t.Errorf("audit of the PUT (-want +got):\n%s", d)
	}
	if n := aliceReads(); n != 1 {
		t.Errorf("alice lists %d memories back under the internal ceiling, want 1", n)
	}
}

// TestSettingsShowEverySetting: GET /v1/policy/settings and the answers of
// PATCH and PUT name every setting in force, users_read_shared when it is
// false too: PUT requires each, so what GET shows can be sent back as it is.
func TestSettingsShowEverySetting(t *testing.T) {
	f := apptest.Start(t)
	keys := func(step string, r apptest.Response) {
		t.Helper()
		expectResponse(t, step, r, http.StatusOK)
		var got map[string]any
		r.Decode(t, &got)
		for _, k := range []string{"user_max_sensitivity", "users_read_shared"} {
			if _, ok := got[k]; !ok {
				t.Errorf("%s: %s missing from %s", step, k, r.Body)
			}
		}
	}
	keys("GET by default", f.Do(t, apptest.Admin, "GET", "/v1/policy/settings", nil))
	keys("PATCH users_read_shared false", f.Do(t, apptest.Admin, "PATCH", "/v1/policy/settings", map[string]any{"users_read_shared": false}))
	r := f.Do(t, apptest.Admin, "GET", "/v1/policy/settings", nil)
	keys("GET after the PATCH", r)
	keys("PUT what GET showed", f.Do(t, apptest.Admin, "PUT", "/v1/policy/settings", r.Body))
}
