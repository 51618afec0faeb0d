package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"mneme/app"
	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

var regexpMessage = regexp.MustCompile(`id="message">([^<]*)<`)

// TestPanelTellsAPolicyTimeoutFromAStoreOutage: when the tenant's policy
// takes too long to decide, the panel says so (the stores are fine) and
// offers an admin the rollback, which works from that very page; an end
// user is told to ask an admin. The API answers the same 503
// policy_timeout.
func TestPanelTellsAPolicyTimeoutFromAStoreOutage(t *testing.T) {
	f := apptest.StartWith(t, func(c *app.Config) { c.Policy.Timeout = 200 * time.Millisecond })
	r := f.Do(t, apptest.Admin, http.MethodGet, "/v1/policy/revisions/0", nil)
	var rev policyadmin.PolicyRevision
	if r.Decode(t, &rev); r.Status != http.StatusOK || len(rev.Modules) == 0 {
		t.Fatalf("revision 0: %d %s", r.Status, r.Body)
	}
	// Slow on confirming a memory of kind slowpoke only: no check meets it.
	for i, m := range rev.Modules {
		if m.Name == "authz.rego" {
			rev.Modules[i].Source += "\npermits contains \"slow\" if {\n\tinput.action == \"confirm\"\n\tinput.resource.kind == \"slowpoke\"\n" +
				"\tcount({1 | some i in numbers.range(1, 3000); some k in numbers.range(1, 3000); i == k + 100000}) >= 0\n}\n"
		}
	}
	slow := memory.NewMemory{UserID: "alice", Type: memory.TypeProfile, Kind: "slowpoke", Key: "pace",
		Content: "Alice may prefer to walk slowly."}
	id := write(t, f, "support-bot", slow)
	r = f.Do(t, apptest.Admin, http.MethodPut, "/v1/policy", policyadmin.NewPolicy{Message: "slow on slowpokes", Modules: rev.Modules})
	var pushed struct {
		Revision policyadmin.PolicyRevision `json:"revision"`
	}
	if r.Decode(t, &pushed); r.Status != http.StatusCreated {
		t.Fatalf("push: %d %s", r.Status, r.Body)
	}
	r = f.Do(t, apptest.Admin, http.MethodPost, "/v1/policy/revisions/"+strconv.FormatInt(pushed.Revision.Number, 10)+"/activate", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("activate: %d %s", r.Status, r.Body)
	}
	if r = f.Do(t, apptest.Admin, http.MethodPost, "/v1/memories/"+id+"/confirm", nil); r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), "policy_timeout") {
		t.Fatalf("API confirm = %d %s, want 503 policy_timeout", r.Status, r.Body)
	}

	message := func(p response) string {
		t.Helper()
		m := regexpMessage.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("no message on the page (%d): %.400s", p.status, p.body)
		}
		return html.UnescapeString(m[1])
	}
	const rollback = `action="/panel/policy/rollback"`

	admin := newBrowser(t, f.URL)
	admin.signIn(f.Keys[apptest.Admin])
	page := admin.do(http.MethodGet, "/panel/users/alice", nil)
	failed := admin.do(http.MethodPost, "/panel/memories/"+id+"/confirm", url.Values{"csrf": {csrfOf(t, page)}, "back": {"/panel/users/alice"}})
	p := failed
	msg := message(p)
	if p.status != http.StatusServiceUnavailable || !strings.Contains(msg, "access policy took too long") ||
		!strings.Contains(msg, "stores are fine") || !strings.Contains(msg, "roll it back") || strings.Contains(msg, "A store does not answer") {
		t.Errorf("admin's confirm = %d %q, want 503 naming the policy and its rollback", p.status, msg)
	}
	if !strings.Contains(p.body, rollback) {
		t.Errorf("the admin's error page offers no rollback: %.600s", p.body)
	}

	user := newBrowser(t, f.URL)
	user.signIn(f.Keys["alice"])
	me := user.do(http.MethodGet, "/panel/me", nil)
	p = user.do(http.MethodPost, "/panel/memories/"+id+"/confirm", url.Values{"csrf": {csrfOf(t, me)}, "back": {"/panel/me"}})
	if msg := message(p); p.status != http.StatusServiceUnavailable || !strings.Contains(msg, "ask an admin") || strings.Contains(p.body, rollback) {
		t.Errorf("the user's confirm = %d %q, want 503 sending them to an admin, with no rollback button", p.status, msg)
	}

	// The rollback the page offers is reachable: the policy decides
	// managing the tenant in time, and the button works.
	if pol := admin.do(http.MethodGet, "/panel/policy", nil); pol.status != http.StatusOK {
		t.Fatalf("policy page = %d: %.300s", pol.status, pol.body)
	}
	back := admin.do(http.MethodPost, "/panel/policy/rollback", url.Values{"csrf": {csrfOf(t, failed)}})
	if back.status != http.StatusSeeOther {
		t.Fatalf("rollback from the error page = %d: %.300s", back.status, back.body)
	}
	page = admin.do(http.MethodGet, "/panel/users/alice", nil)
	if p := admin.do(http.MethodPost, "/panel/memories/"+id+"/confirm", url.Values{"csrf": {csrfOf(t, page)}, "back": {"/panel/users/alice"}}); p.status != http.StatusSeeOther {
		t.Errorf("confirm after the rollback = %d: %.300s", p.status, p.body)
	}
}
