package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// TestAuditTrail drives every administrative act through the real router
// and reads them back from GET /v1/audit.
func TestAuditTrail(t *testing.T) {
	f := apptest.Start(t)
	const gone = "erin-audit" // a user of this test only, erased below
	f.AddUser(t, gone)
	const secretContent = "Erin keeps the spare key under the blue flowerpot"
	const otherContent = "Alice's quarterly budget for audit tooling is 4,200 euros"

	r := f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: gone, Type: memory.TypeSemantic, Content: secretContent})
	expectResponse(t, "write erin's memory", r, http.StatusCreated)
	r = f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: otherContent})
	expectResponse(t, "write alice's memory", r, http.StatusCreated)
	var mem memory.Memory
	r.Decode(t, &mem)

	// The acts, each with the request id it is sent with.
	r = f.Do(t, apptest.Admin, "POST", "/v1/grants", policyadmin.NewGrant{
		Grantee: "order-bot", Source: "support-bot", Types: []string{memory.TypeSemantic}, MaxSensitivity: memory.SensitivityInternal,
	}, "X-Request-ID", "audit-grant")
	expectResponse(t, "create grant", r, http.StatusCreated)
	var grant memory.Grant
	r.Decode(t, &grant)

	r = f.Do(t, apptest.Admin, "PUT", "/v1/policy", policyadmin.NewPolicy{Message: "as bundled", Modules: bundled(t, f)})
	expectResponse(t, "push policy", r, http.StatusCreated)
	var pushed struct {
		Revision policyadmin.PolicyRevision `json:"revision"`
	}
	r.Decode(t, &pushed)
	n := strconv.FormatInt(pushed.Revision.Number, 10)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/revisions/"+n+"/activate", nil)
	expectResponse(t, "activate", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/rollback", map[string]any{})
	expectResponse(t, "rollback", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/policy/revisions/9999/activate", nil, "X-Request-ID", "audit-missing")
	expectResponse(t, "activate a revision that does not exist", r, http.StatusNotFound, "not_found")
	r = f.Do(t, apptest.Admin, "DELETE", "/v1/memories/"+mem.ID, nil)
	expectResponse(t, "admin deletes a memory", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "DELETE", "/v1/users/"+gone, nil)
	expectResponse(t, "erase a user", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "PATCH", "/v1/policy/settings", policyadmin.Settings{UserMaxSensitivity: memory.SensitivityInternal})
	expectResponse(t, "put the settings", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/janitor/sweep", nil)
	expectResponse(t, "sweep", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "GET", "/v1/users/a%20b/export", nil)
	expectResponse(t, "export a malformed id", r, http.StatusBadRequest, "invalid_argument")
	// Refusals of non-admins are the decision log's, not the trail's, even
	// for ids too malformed to act on: any key could flood the trail.
	r = f.Do(t, "support-bot", "POST", "/v1/grants", policyadmin.NewGrant{Grantee: "order-bot", Source: "*", Types: []string{memory.TypeSemantic}, MaxSensitivity: memory.SensitivityPublic})
	expectResponse(t, "an agent creates a grant", r, http.StatusForbidden, "forbidden")
	long := strings.Repeat("x", 6000)
	for _, refused := range []struct{ who, method, path string }{
		{"support-bot", "GET", "/v1/users/" + long + "%0Aoutcome%3Dok/export"},
		{"alice", "GET", "/v1/users/alice/export"},
		{"support-bot", "DELETE", "/v1/users/" + long},
		{"support-bot", "POST", "/v1/principals"},
		{"alice", "POST", "/v1/keys"},
		{"alice", "PATCH", "/v1/principals/user/bob"},
		{"alice", "PUT", "/v1/policy/settings"},
	} {
		var body any
		switch refused.path {
		case "/v1/principals":
			body = map[string]any{"kind": memory.KindAgent, "id": long}
		case "/v1/keys":
			body = map[string]any{"owner_kind": memory.KindUser, "owner_id": "alice"}
		case "/v1/principals/user/bob":
			body = map[string]any{"roles": []string{"admin"}}
		case "/v1/policy/settings":
			body = map[string]any{"user_max_sensitivity": "restricted"}
		}
		r = f.Do(t, refused.who, refused.method, refused.path, body)
		expectResponse(t, refused.who+" "+refused.method+" "+refused.path[:min(len(refused.path), 40)], r, http.StatusForbidden, "forbidden")
	}
	// A user's delete of a memory out of her sight is a refusal too, whatever
	// the id and reason she makes up.
	r = f.Do(t, "alice", "DELETE", "/v1/memories/mem_a%0Aoutcome=ok?reason=approved+by+admin", nil)
	expectResponse(t, "alice deletes what she cannot see", r, http.StatusNotFound, "not_found")

	events := auditEvents(t, f, apptest.Admin, "")
	type brief struct{ Actor, Action, Target, Outcome, Error string }
	got := map[brief]memory.AuditEvent{}
	for _, e := range events {
		got[brief{e.Actor, e.Action, e.Target, e.Outcome, e.Error}] = e
		if e.Tenant != f.Tenant || e.Time.IsZero() {
			t.Errorf("event %+v: tenant or time wrong", e)
		}
		if e.Actor != "admin:admin" {
			t.Errorf("event %+v by someone other than the admin", e)
		}
	}
	const admin, ok, failed = "admin:admin", memory.AuditOK, memory.AuditFailed
	for _, want := range []brief{
		{admin, policyadmin.AuditGrantCreate, "grant:" + grant.ID, ok, ""},
		{admin, policyadmin.AuditPolicyPush, "policy:" + n, ok, ""},
		{admin, policyadmin.AuditPolicyActivate, "policy:" + n, ok, ""},
		{admin, policyadmin.AuditPolicyRollback, "policy:0", ok, ""},
		{admin, policyadmin.AuditPolicyActivate, "policy:9999", failed, "not_found"},
		{admin, memory.AuditMemoryDelete, "memory:" + mem.ID, ok, ""},
		{admin, memory.AuditUserErase, memory.UserTombstoneID(f.Tenant, gone), ok, ""},
		{admin, memory.AuditJanitorSweep, "tenant:" + f.Tenant, ok, ""},
		{admin, "user.export", "user:a b", failed, "invalid_argument"},
		{admin, policyadmin.AuditSettingsPut, "tenant:" + f.Tenant, ok, ""},
	} {
		if _, found := got[want]; !found {
			t.Errorf("no event %+v in\n%+v", want, events)
		}
	}
	if e := got[brief{admin, policyadmin.AuditGrantCreate, "grant:" + grant.ID, ok, ""}]; e.RequestID != "audit-grant" {
		t.Errorf("grant event's request id = %q, want audit-grant", e.RequestID)
	}
	if e := got[brief{admin, policyadmin.AuditPolicyActivate, "policy:9999", failed, "not_found"}]; e.RequestID != "audit-missing" {
		t.Errorf("failed activation's request id = %q, want audit-missing", e.RequestID)
	}
	if len(events) != 10 {
		t.Errorf("%d events, want the 10 acts above", len(events))
	}

	t.Run("filters", func(t *testing.T) {
		for _, e := range auditEvents(t, f, apptest.Admin, "?action=policy.&actor=admin:admin") {
			if !strings.HasPrefix(e.Action, "policy.") {
				t.Errorf("action=policy. gave %s", e.Action)
			}
		}
		if es := auditEvents(t, f, apptest.Admin, "?limit=2"); len(es) != 2 || es[1].Action != memory.AuditJanitorSweep {
			t.Errorf("limit=2 gave %+v, want the export, then the sweep", es)
		}
		if es := auditEvents(t, f, apptest.Admin, "?actor=system"); len(es) != 0 {
			t.Errorf("actor=system gave %+v", es)
		}
	})

	t.Run("never content, keys or the erased user's id", func(t *testing.T) {
		raw, err := f.App.Redis.XRange(context.Background(), "mneme:audit:"+f.Tenant, "-", "+").Result()
		if err != nil || len(raw) != len(events) {
			t.Fatalf("stream: %d entries, %v; want %d", len(raw), err, len(events))
		}
		// "4,200", not "4200": a random id's hex may hold four digits.
		forbidden := []string{secretContent, otherContent, "flowerpot", "4,200", gone}
		for _, key := range f.Keys {
			forbidden = append(forbidden, key)
		}
		for _, m := range raw {
			for _, v := range m.Values {
				s := withoutStamps(t, v)
				for _, bad := range forbidden {
					if strings.Contains(s, bad) {
						t.Errorf("audit event %s holds %q", s, bad)
					}
				}
			}
		}
	})

	t.Run("admins only", func(t *testing.T) {
		for _, who := range []string{"support-bot", "alice", apptest.Analyst} {
			r := f.Do(t, who, "GET", "/v1/audit", nil)
			expectResponse(t, who+" reads the audit trail", r, http.StatusForbidden, "forbidden")
		}
	})

	t.Run("another tenant sees none of it", func(t *testing.T) {
		other := apptest.Start(t)
		if es := auditEvents(t, other, apptest.Admin, ""); len(es) != 0 {
			t.Errorf("another tenant's admin sees %+v", es)
		}
	})
}

func auditEvents(t *testing.T, f *apptest.Fixture, who, query string) []memory.AuditEvent {
	t.Helper()
	r := f.Do(t, who, "GET", "/v1/audit"+query, nil)
	expectResponse(t, "audit"+query, r, http.StatusOK)
	var body struct{ Events []memory.AuditEvent }
	r.Decode(t, &body)
	return body.Events
}

// withoutStamps is a stored audit event without its time and request id,
// whose digits may hold any short number by chance.
func withoutStamps(t *testing.T, v any) string {
	t.Helper()
	s, _ := v.(string)
	var e map[string]any
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		return s
	}
	delete(e, "time")
	delete(e, "request_id")
	out, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestAuditNamesAnErasedUserByTheHashAfterwards: once a user is erased,
// every later act about them (an export, a change to their registration, a
// key for them, an analyst's query) names them in the trail as the erase
// did, by their tombstone's hash, never by the id it hashed; the acts done
// before keep naming them, and a user never erased is named as before.
func TestAuditNamesAnErasedUserByTheHashAfterwards(t *testing.T) {
	f := apptest.Start(t)
	const gone = "erin-after-erase"
	f.AddUser(t, gone)
	r := f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: gone, Type: memory.TypeEpisodic, Content: "Asked about desk lamps on Monday."})
	expectResponse(t, "write erin's memory", r, http.StatusCreated)
	expectResponse(t, "export before the erase", f.Do(t, apptest.Admin, "GET", "/v1/users/"+gone+"/export", nil), http.StatusOK)
	expectResponse(t, "erase", f.Do(t, apptest.Admin, "DELETE", "/v1/users/"+gone, nil), http.StatusOK)
	before := len(auditEvents(t, f, apptest.Admin, "?limit=1000"))

	expectResponse(t, "export after the erase", f.Do(t, apptest.Admin, "GET", "/v1/users/"+gone+"/export", nil), http.StatusOK)
	f.Do(t, apptest.Admin, "PATCH", "/v1/principals/user/"+gone, map[string]any{"roles": []string{"user"}})
	f.Do(t, apptest.Admin, "DELETE", "/v1/principals/user/"+gone, nil)
	f.Do(t, apptest.Admin, "POST", "/v1/keys", map[string]any{"owner_kind": memory.KindUser, "owner_id": gone})
	f.Do(t, apptest.Analyst, "GET", "/v1/graph/timeline?user="+gone, nil)
	f.Do(t, apptest.Analyst, "GET", "/v1/graph/aggregates?by=type&user="+gone, nil)
	r = f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "Asked about chairs on Tuesday."})
	expectResponse(t, "write alice's memory", r, http.StatusCreated)
	expectResponse(t, "alice's export", f.Do(t, apptest.Admin, "GET", "/v1/users/alice/export", nil), http.StatusOK)

	events := auditEvents(t, f, apptest.Admin, "?limit=1000")
	after := events[:len(events)-before] // newest first
	hash := memory.UserTombstoneID(f.Tenant, gone)
	targets := map[string]string{}
	for _, e := range after {
		targets[e.Action+" "+e.Target] = e.Outcome
		if strings.Contains(e.Target, gone) || e.Details["user"] == gone {
			t.Errorf("%s after the erase names the erased user: target %q, details %v", e.Action, e.Target, e.Details)
		}
	}
	for _, want := range []string{
		"user.export " + hash, "principal.change " + hash, "principal.delete " + hash, "key.create " + hash,
		"graph.timeline " + hash, "user.export user:alice",
	} {
		if _, ok := targets[want]; !ok {
			t.Errorf("no event %q after the erase in %v", want, targets)
		}
	}
	var aggregate bool
	for _, e := range after {
		aggregate = aggregate || e.Action == "graph.aggregate" && e.Details["user"] == hash
	}
	if !aggregate {
		t.Errorf("no graph.aggregate naming the hash as its user filter in %+v", after)
	}
	// The export before the erase names the user as it was.
	if es := events[len(events)-before:]; !slices.ContainsFunc(es, func(e memory.AuditEvent) bool {
		return e.Action == "user.export" && e.Target == "user:"+gone
	}) {
		t.Errorf("the export before the erase is not in the trail as it was: %+v", es)
	}
}
