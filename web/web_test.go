package web_test

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// browser is a cookie-keeping client of the panel that does not follow
// redirects, so that tests see where the panel sends it.
type browser struct {
	t    testing.TB
	base string
	c    *http.Client
}

func newBrowser(t testing.TB, base string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type response struct {
	status   int
	location string
	body     string
	header   http.Header
}

func (b *browser) do(method, path string, form url.Values) response {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(raw), header: resp.Header}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t testing.TB, p response) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf token on the page: %s", p.body)
	}
	return m[1]
}

// signIn signs in with key and returns where the panel sent the browser.
func (b *browser) signIn(key string) response {
	b.t.Helper()
	form := b.do(http.MethodGet, "/panel/signin", nil)
	return b.do(http.MethodPost, "/panel/signin", url.Values{"csrf": {csrfOf(b.t, form)}, "key": {key}})
}

func write(t *testing.T, f *apptest.Fixture, who string, m memory.NewMemory) string {
	t.Helper()
	r := f.Do(t, who, http.MethodPost, "/v1/memories", m)
	if r.Status != http.StatusCreated {
		t.Fatalf("write %q = %d: %s", m.Content, r.Status, r.Body)
	}
	var out struct {
		ID string `json:"id"`
	}
	if r.Decode(t, &out); out.ID == "" {
		t.Fatalf("write: %s", r.Body)
	}
	return out.ID
}

func TestPanelSignInSessionsAndCSRF(t *testing.T) {
	f := apptest.Start(t)
	b := newBrowser(t, f.URL)

	if p := b.do(http.MethodGet, "/panel/overview", nil); p.status != http.StatusSeeOther || p.location != "/panel/signin" {
		t.Fatalf("overview without a session = %d → %q, want 303 → /panel/signin", p.status, p.location)
	}
	// The static files are served, never a listing of them.
	if p := b.do(http.MethodGet, "/panel/static/graphview.js", nil); p.status != http.StatusOK {
		t.Errorf("a static file = %d", p.status)
	}
	if p := b.do(http.MethodGet, "/panel/static/", nil); p.status != http.StatusNotFound {
		t.Errorf("the static folder = %d %.100s, want 404", p.status, p.body)
	}
	// Agents and bad keys cannot sign in.
	for _, key := range []string{f.Keys["support-bot"], "mn_nobody_0000"} {
		if p := b.signIn(key); p.status != http.StatusOK || !strings.Contains(p.body, `id="signin"`) {
			t.Errorf("sign-in with %q = %d → %q, want the form again", key[:6], p.status, p.location)
		}
		if p := b.do(http.MethodGet, "/panel/overview", nil); p.status != http.StatusSeeOther {
			t.Errorf("after a refused sign-in the overview answers %d", p.status)
		}
	}
	// A sign-in form without its token is refused.
	if p := b.do(http.MethodPost, "/panel/signin", url.Values{"key": {f.Keys["admin"]}}); p.status != http.StatusForbidden {
		t.Errorf("sign-in without csrf = %d, want 403", p.status)
	}

	p := b.signIn(f.Keys["admin"])
	if p.status != http.StatusSeeOther || p.location != "/panel/overview" {
		t.Fatalf("admin sign-in = %d → %q", p.status, p.location)
	}
	var session *http.Cookie
	for _, c := range b.c.Jar.Cookies(mustURL(t, f.URL+"/panel/")) {
		if c.Name == "mneme_panel" {
			session = c
		}
	}
	if session == nil {
		t.Fatal("no session cookie")
	}
	if strings.Contains(session.Value, f.Keys["admin"]) {
		t.Error("the session cookie holds the API key in the clear")
	}
	ov := b.do(http.MethodGet, "/panel/overview", nil)
	if ov.status != http.StatusOK {
		t.Fatalf("overview = %d: %s", ov.status, ov.body)
	}
	csp := ov.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q is not strict", csp)
	}
	// The page names the time of each source it read.
	st := ov.header.Get("Server-Timing")
	for _, source := range []string{"key", "sync", "census", "policy", "render"} {
		if !strings.Contains(st, source+";dur=") {
			t.Errorf("Server-Timing %q names no %s", st, source)
		}
	}
	// A form without the session's token changes nothing.
	id := write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: "Alice's office is in Shenzhen."})
	if p := b.do(http.MethodPost, "/panel/memories/"+id+"/delete", url.Values{"csrf": {"forged"}}); p.status != http.StatusForbidden {
		t.Errorf("delete with a forged token = %d, want 403", p.status)
	}
	if r := f.Do(t, "admin", http.MethodGet, "/v1/memories/"+id, nil); r.Status != http.StatusOK {
		t.Errorf("the memory is gone after a forged delete: %d", r.Status)
	}
	// With it, the delete goes through.
	if p := b.do(http.MethodPost, "/panel/memories/"+id+"/delete", url.Values{"csrf": {csrfOf(t, ov)}, "back": {"/panel/users/alice"}}); p.status != http.StatusSeeOther || p.location != "/panel/users/alice" {
		t.Errorf("delete = %d → %q: %s", p.status, p.location, p.body)
	}
	if r := f.Do(t, "admin", http.MethodGet, "/v1/memories/"+id, nil); r.Status != http.StatusNotFound {
		t.Errorf("the memory is still there after the panel deleted it: %d", r.Status)
	}
	// Sign-out ends the session, on this browser and for a copy of its
	// cookie kept from before.
	kept := b.c.Jar.Cookies(mustURL(t, f.URL+"/panel/"))
	if p := b.do(http.MethodPost, "/panel/signout", url.Values{"csrf": {csrfOf(t, ov)}}); p.status != http.StatusSeeOther {
		t.Errorf("sign-out = %d", p.status)
	}
	if p := b.do(http.MethodGet, "/panel/overview", nil); p.status != http.StatusSeeOther {
		t.Errorf("overview after sign-out = %d, want 303", p.status)
	}
	copied := newBrowser(t, f.URL)
	copied.c.Jar.SetCookies(mustURL(t, f.URL+"/panel/"), kept)
	if len(kept) == 0 {
		t.Fatal("no session cookie before sign-out")
	}
	if p := copied.do(http.MethodGet, "/panel/overview", nil); p.status != http.StatusSeeOther || p.location != "/panel/signin" {
		t.Errorf("the session's cookie kept from before sign-out = %d → %q, want 303 → /panel/signin", p.status, p.location)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestPanelEscapesMemoryContent stores markup as memory content and proves
// every page shows it as text.
func TestPanelEscapesMemoryContent(t *testing.T) {
	f := apptest.Start(t)
	hostile := []string{
		`<script>alert("xss")</script> Alice likes tea.`,
		`<img src=x onerror="alert(1)"> Alice's budget note.`,
	}
	for _, c := range hostile {
		write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: c})
	}
	b := newBrowser(t, f.URL)
	b.signIn(f.Keys["admin"])
	p := b.do(http.MethodGet, "/panel/users/alice", nil)
	if p.status != http.StatusOK {
		t.Fatalf("user page = %d", p.status)
	}
	for _, raw := range []string{`<script>alert`, `<img src=x`, `onerror="alert`} {
		if strings.Contains(p.body, raw) {
			t.Errorf("the page carries %q unescaped", raw)
		}
	}
	for _, esc := range []string{`&lt;script&gt;alert(&#34;xss&#34;)&lt;/script&gt;`, `&lt;img src=x onerror=&#34;alert(1)&#34;&gt;`} {
		if !strings.Contains(p.body, esc) {
			t.Errorf("the page lacks the escaped text %q", esc)
		}
	}
}

// TestPanelEndUserSeesOnlyTheirOwn signs in as bob, who sees his memories
// and none of alice's, and may not open admins' pages.
func TestPanelEndUserSeesOnlyTheirOwn(t *testing.T) {
	f := apptest.Start(t)
	write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: "Alice's secret project is Falcon."})
	write(t, f, "support-bot", memory.NewMemory{UserID: "bob", Type: memory.TypeSemantic, Content: "Bob prefers calls in the morning."})
	b := newBrowser(t, f.URL)
	if p := b.signIn(f.Keys["bob"]); p.location != "/panel/me" {
		t.Fatalf("bob's sign-in → %q", p.location)
	}
	me := b.do(http.MethodGet, "/panel/me", nil)
	if !strings.Contains(me.body, "Bob prefers calls") || strings.Contains(me.body, "Falcon") {
		t.Errorf("bob's page: %s", me.body)
	}
	for _, path := range []string{"/panel/users/alice", "/panel/overview", "/panel/recalls?user=alice", "/panel/deletions", "/panel/policy"} {
		p := b.do(http.MethodGet, path, nil)
		if p.status == http.StatusOK || strings.Contains(p.body, "Falcon") {
			t.Errorf("bob opening %s = %d", path, p.status)
		}
	}
}

// TestPanelMeIsAUsersOwn: an analyst whose id is also a user's gets no
// user page and no "Forget me" form, neither at /panel/me nor at its id's.
func TestPanelMeIsAUsersOwn(t *testing.T) {
	f := apptest.Start(t)
	key := f.Keys[apptest.Analyst]
	f.AddUser(t, apptest.Analyst)
	write(t, f, "support-bot", memory.NewMemory{UserID: apptest.Analyst, Type: memory.TypeSemantic, Content: "The user named analyst orders blue folders."})
	b := newBrowser(t, f.URL)
	b.signIn(key)
	for _, path := range []string{"/panel/me", "/panel/users/" + apptest.Analyst} {
		if p := b.do(http.MethodGet, path, nil); p.status != http.StatusNotFound || strings.Contains(p.body, "Forget me") {
			t.Errorf("the analyst opening %s = %d %.200s", path, p.status, p.body)
		}
	}
}

// A page's address with a NUL, bytes that are not UTF-8 or a bad escape is
// refused on a page, as the panel's other refusals are, not in the API's
// JSON.
func TestPanelRefusesABadAddressOnAPage(t *testing.T) {
	f := apptest.Start(t)
	b := newBrowser(t, f.URL)
	b.signIn(f.Keys["bob"])
	for _, path := range []string{"/panel/me?kind=%00", "/panel/me?kind=%ff", "/panel/me?kind=%zz", "/panel?x=%00", "/panel/users/bob?a;b"} {
		p := b.do(http.MethodGet, path, nil)
		if p.status != http.StatusBadRequest || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") || !strings.Contains(p.body, "Bad request") {
			t.Errorf("GET %s = %d %s %.200s, want 400 and the panel's error page", path, p.status, p.header.Get("Content-Type"), p.body)
		}
	}
	if p := b.do(http.MethodGet, "/panel/me?kind=preference", nil); p.status != http.StatusOK {
		t.Errorf("GET /panel/me?kind=preference = %d %.200s", p.status, p.body)
	}
}

// TestPanelDeletionsShowEndUsersOwn has bob delete one of his memories in
// the panel; the admin's Deletions page lists it, by "user:self", without
// its content.
func TestPanelDeletionsShowEndUsersOwn(t *testing.T) {
	f := apptest.Start(t)
	id := write(t, f, "support-bot", memory.NewMemory{UserID: "bob", Type: memory.TypeSemantic, Content: "Bob's locker code is 4471."})
	bob := newBrowser(t, f.URL)
	bob.signIn(f.Keys["bob"])
	me := bob.do(http.MethodGet, "/panel/me", nil)
	if p := bob.do(http.MethodPost, "/panel/memories/"+id+"/delete", url.Values{"csrf": {csrfOf(t, me)}, "back": {"/panel/me"}}); p.status != http.StatusSeeOther {
		t.Fatalf("bob's delete = %d: %s", p.status, p.body)
	}
	admin := newBrowser(t, f.URL)
	admin.signIn(f.Keys["admin"])
	p := admin.do(http.MethodGet, "/panel/deletions", nil)
	if p.status != http.StatusOK {
		t.Fatalf("deletions = %d", p.status)
	}
	row := regexp.MustCompile(`<tr><td>[^<]*</td><td>user:self</td><td>memory\.delete</td><td class="target">memory:` + id + `</td><td class="reason">deleted in the panel</td><td>ok`)
	if !row.MatchString(p.body) {
		t.Errorf("deletions lack bob's delete of %s: %s", id, p.body)
	}
	if strings.Contains(p.body, "4471") || strings.Contains(p.body, "locker") {
		t.Error("deletions show the deleted content")
	}
}

// TestPanelDeletionsShowTheReason: a delete's reason given through the API
// and a user's erase are listed with who did them and why; the reason is
// text on the page, so a script in it is shown escaped and never runs.
func TestPanelDeletionsShowTheReason(t *testing.T) {
	f := apptest.Start(t)
	id := write(t, f, "support-bot", memory.NewMemory{UserID: "carol", Type: memory.TypeSemantic, Content: "Carol's spare key is under the mat."})
	write(t, f, "support-bot", memory.NewMemory{UserID: "dave", Type: memory.TypeSemantic, Content: "Dave works nights."})
	const reason = `ticket 8812: <script>alert("gone")</script> & done`
	if r := f.Do(t, "admin", http.MethodDelete, "/v1/memories/"+id+"?reason="+url.QueryEscape(reason), nil); r.Status != http.StatusOK {
		t.Fatalf("delete with a reason = %d: %s", r.Status, r.Body)
	}
	if r := f.Do(t, "admin", http.MethodDelete, "/v1/users/dave", nil); r.Status != http.StatusOK {
		t.Fatalf("erase dave = %d: %s", r.Status, r.Body)
	}
	admin := newBrowser(t, f.URL)
	admin.signIn(f.Keys["admin"])
	p := admin.do(http.MethodGet, "/panel/deletions", nil)
	if p.status != http.StatusOK {
		t.Fatalf("deletions = %d", p.status)
	}
	escaped := `ticket 8812: &lt;script&gt;alert(&#34;gone&#34;)&lt;/script&gt; &amp; done`
	row := regexp.MustCompile(`<tr><td>[^<]*</td><td>admin:admin</td><td>memory\.delete</td><td class="target">memory:` + id + `</td><td class="reason">` + regexp.QuoteMeta(escaped) + `</td><td>ok`)
	if !row.MatchString(p.body) {
		t.Errorf("deletions lack the admin's delete of %s with its reason: %s", id, p.body)
	}
	erased := regexp.MustCompile(`<tr><td>[^<]*</td><td>admin:admin</td><td>user\.erase</td><td class="target">user:[0-9a-f]+</td><td class="reason">user erased</td><td>ok`)
	if !erased.MatchString(p.body) {
		t.Errorf("deletions lack dave's erase with its reason: %s", p.body)
	}
	if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "spare key") || strings.Contains(p.body, ">dave<") {
		t.Error("deletions run the reason's script, or show deleted content or the erased user's id")
	}
}

// TestPanelGrantsAndReplay adds a grant in the panel, which lets order-bot
// read support-bot's profile memory; edits it to episodic only, which takes
// that away; and replays the recent decisions against a draft that denies
// notes, which reports order-bot's allowed read as one that would be denied.
func TestPanelGrantsAndReplay(t *testing.T) {
	f := apptest.Start(t)
	ctx := t.Context()
	id := write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeProfile, Kind: "note", Sensitivity: memory.SensitivityInternal, Content: "Alice prefers email."})
	reads := func() int { return f.Do(t, "order-bot", http.MethodGet, "/v1/memories/"+id, nil).Status }
	if s := reads(); s != http.StatusNotFound {
		t.Fatalf("order-bot reads without a grant: %d", s)
	}
	b := newBrowser(t, f.URL)
	b.signIn(f.Keys["admin"])
	page := b.do(http.MethodGet, "/panel/policy", nil)
	add := url.Values{"csrf": {csrfOf(t, page)}, "grantee": {"ordr-bot"}, "source": {"support-bot"}, "types": {"profile"}, "max_sensitivity": {"internal"}}
	if p := b.do(http.MethodPost, "/panel/grants", add); p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "no agent of this tenant") {
		t.Errorf("a grant to a mistyped agent = %d: %s", p.status, p.body)
	}
	add.Set("grantee", "order-bot")
	if p := b.do(http.MethodPost, "/panel/grants", add); p.status != http.StatusSeeOther {
		t.Fatalf("add grant = %d: %s", p.status, p.body)
	}
	if s := reads(); s != http.StatusOK {
		t.Fatalf("order-bot reads with the grant: %d, want 200", s)
	}
	set, err := f.App.Admin.Grants(ctx, memory.Principal{Tenant: f.Tenant, Kind: memory.KindAdmin, ID: "admin"})
	if err != nil || len(set.Grants) != 1 {
		t.Fatalf("grants %+v, %v", set, err)
	}
	g := set.Grants[0]
	edit := b.do(http.MethodGet, "/panel/policy?edit="+g.ID, nil)
	if !strings.Contains(edit.body, `action="/panel/grants/`+g.ID+`/edit"`) || !strings.Contains(edit.body, `value="profile" checked`) {
		t.Errorf("the edit form is not the grant's: %s", edit.body)
	}
	change := url.Values{"csrf": {csrfOf(t, edit)}, "grantee": {"order-bot"}, "source": {"support-bot"}, "types": {"episodic"}, "max_sensitivity": {"internal"}}
	if p := b.do(http.MethodPost, "/panel/grants/"+g.ID+"/edit", change); p.status != http.StatusSeeOther {
		t.Fatalf("edit grant = %d: %s", p.status, p.body)
	}
	if s := reads(); s != http.StatusNotFound {
		t.Errorf("order-bot reads after the grant lost profile: %d, want 404", s)
	}
	// Put the profile back, read once more, then replay against a draft.
	change.Set("types", "profile")
	if p := b.do(http.MethodPost, "/panel/grants/"+g.ID+"/edit", change); p.status != http.StatusSeeOther {
		t.Fatalf("edit grant back = %d", p.status)
	}
	if s := reads(); s != http.StatusOK {
		t.Fatalf("order-bot reads with profile back: %d", s)
	}
	if err := f.App.Decisions.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r := f.Do(t, "admin", http.MethodGet, "/v1/policy/revisions/0", nil)
	var base policyadmin.PolicyRevision
	r.Decode(t, &base)
	for i, m := range base.Modules {
		if m.Name == "authz.rego" {
			s := strings.Replace(m.Source, "\tknown_sensitivity\n}", "\tknown_sensitivity\n\tnot a_note\n}", 1)
			base.Modules[i].Source = s + "\na_note if input.resource.kind == \"note\"\n\ndenials contains \"notes are never read\" if a_note\n"
		}
	}
	r = f.Do(t, "admin", http.MethodPut, "/v1/policy", policyadmin.NewPolicy{Message: "no notes", Modules: base.Modules})
	var pushed struct {
		Revision policyadmin.PolicyRevision `json:"revision"`
	}
	if r.Decode(t, &pushed); r.Status != http.StatusCreated {
		t.Fatalf("push draft = %d: %s", r.Status, r.Body)
	}
	page = b.do(http.MethodGet, "/panel/policy", nil)
	rep := b.do(http.MethodPost, "/panel/policy/replay", url.Values{"csrf": {csrfOf(t, page)}, "revision": {strconv.FormatInt(pushed.Revision.Number, 10)}})
	if rep.status != http.StatusOK {
		t.Fatalf("replay = %d: %s", rep.status, rep.body)
	}
	m := regexp.MustCompile(`class="allow-to-deny">(\d+)<`).FindStringSubmatch(rep.body)
	if m == nil || m[1] == "0" {
		t.Errorf("the replay reports no allowed read that the draft would deny: %s", rep.body)
	}
	if !strings.Contains(rep.body, "notes are never read") {
		t.Error("the replay does not show the draft's reason")
	}
	// A negative revision is a bad request, as in the API, not a revision
	// that was not found.
	neg := b.do(http.MethodPost, "/panel/policy/replay", url.Values{"csrf": {csrfOf(t, page)}, "revision": {"-1"}})
	if neg.status != http.StatusBadRequest || !strings.Contains(neg.body, "0 or more") {
		t.Errorf("replay of revision -1 = %d: %.300s, want 400 saying 0 or more", neg.status, neg.body)
	}
}

// TestPanelKnowledgeListsSharedByScope: the admin's Knowledge page lists
// the tenant's shared knowledge under its scope, a rule with both its
// versions, and no user's memory; an end user cannot open it.
func TestPanelKnowledgeListsSharedByScope(t *testing.T) {
	f := apptest.Start(t)
	rule := memory.NewMemory{
		Scope: &memory.ScopeRef{Kind: memory.ScopeTenant}, Type: memory.TypeSemantic, Kind: "rule", Key: "order_approval_threshold",
		Content: "Orders above 30k CNY need approval from the finance manager.",
	}
	v1 := write(t, f, apptest.Admin, rule)
	rule.Content = "Orders above 50k CNY need approval from the finance manager."
	v2 := write(t, f, apptest.Admin, rule)
	howto := write(t, f, apptest.Admin, memory.NewMemory{
		Scope: &memory.ScopeRef{Kind: memory.ScopeTeam, ID: "support"}, Type: memory.TypeProcedural, Kind: "how_to",
		Content: "To handle damaged items: ask for photos, then open an after-sales ticket.",
	})
	write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: "Alice's secret project is Falcon."})

	b := newBrowser(t, f.URL)
	b.signIn(f.Keys["admin"])
	p := b.do(http.MethodGet, "/panel/knowledge", nil)
	if p.status != http.StatusOK {
		t.Fatalf("knowledge page = %d: %s", p.status, p.body)
	}
	section := func(scope string) string {
		_, after, ok := strings.Cut(p.body, `data-scope="`+scope+`"`)
		if !ok {
			t.Fatalf("no section for scope %s: %s", scope, p.body)
		}
		s, _, _ := strings.Cut(after, "</section>")
		return s
	}
	tenant := section("tenant")
	for _, want := range []string{`data-id="` + v1 + `"`, `data-id="` + v2 + `"`, "order_approval_threshold", "30k CNY", "50k CNY", memory.StatusSuperseded, `data-version="1"`, `data-version="2"`} {
		if !strings.Contains(tenant, want) {
			t.Errorf("tenant section misses %q: %s", want, tenant)
		}
	}
	// The current rule's row carries both versions in its history.
	_, row, _ := strings.Cut(tenant, `<tr data-id="`+v2+`">`)
	row, _, _ = strings.Cut(row, "</table>")
	if !strings.Contains(row, `data-version="1" data-id="`+v1+`"`) || !strings.Contains(row, `data-version="2" data-id="`+v2+`"`) {
		t.Errorf("the rule's versions are not both shown: %s", row)
	}
	if team := section("team:support"); !strings.Contains(team, `data-id="`+howto+`"`) || !strings.Contains(team, "damaged items") || strings.Contains(team, "30k CNY") {
		t.Errorf("team:support section: %s", team)
	}
	if strings.Contains(p.body, "Falcon") {
		t.Errorf("a user's memory is listed as shared knowledge: %s", p.body)
	}
	if !strings.Contains(p.body, `href="/panel/knowledge"`) {
		t.Errorf("no link to the knowledge page in the nav")
	}

	bob := newBrowser(t, f.URL)
	bob.signIn(f.Keys["bob"])
	if q := bob.do(http.MethodGet, "/panel/knowledge", nil); q.status == http.StatusOK || strings.Contains(q.body, "approval") {
		t.Errorf("bob opening /panel/knowledge = %d: %s", q.status, q.body)
	}
}

// pasted returns the text of the draft's textarea, unescaped; false when
// the page has none, or markup inside it.
func pasted(p response) (string, bool) {
	m := regexp.MustCompile(`<textarea name="source"[^>]*>([^<]*)</textarea>`).FindStringSubmatch(p.body)
	if m == nil {
		return "", false
	}
	return html.UnescapeString(m[1]), true
}

// noNotes is authz.rego edited to deny every memory of kind note.
func noNotes(authz string) string {
	s := strings.Replace(authz, "\tknown_sensitivity\n}", "\tknown_sensitivity\n\tnot a_note\n}", 1)
	return s + "\na_note if input.resource.kind == \"note\"\n\ndenials contains \"notes are never read\" if a_note\n"
}

// TestPanelReplayPastedDraft: the admin pastes an edited authz.rego on the
// Policy page (which offers the active one to edit) and sees that
// order-bot's allowed read of a note would be denied; drafts that fail the
// checks of a push are refused on the page with their code and problems,
// the pasted text kept and escaped; a post without the form's token is
// refused; and through all of it nothing is stored and the active policy
// still decides as before.
func TestPanelReplayPastedDraft(t *testing.T) {
	f := apptest.Start(t)
	ctx := t.Context()
	id := write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeProfile, Kind: "note", Sensitivity: memory.SensitivityInternal, Content: "Alice prefers email."})
	if r := f.Do(t, "admin", http.MethodPost, "/v1/grants", policyadmin.NewGrant{
		Grantee: "order-bot", Source: "support-bot", Types: []string{memory.TypeProfile}, MaxSensitivity: memory.SensitivityInternal,
	}); r.Status != http.StatusCreated {
		t.Fatalf("grant = %d: %s", r.Status, r.Body)
	}
	reads := func() int { return f.Do(t, "order-bot", http.MethodGet, "/v1/memories/"+id, nil).Status }
	if s := reads(); s != http.StatusOK {
		t.Fatalf("order-bot reads with the grant: %d", s)
	}
	if err := f.App.Decisions.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		st := f.Do(t, "admin", http.MethodGet, "/v1/policy", nil)
		revs := f.Do(t, "admin", http.MethodGet, "/v1/policy/revisions", nil)
		if st.Status != http.StatusOK || revs.Status != http.StatusOK {
			t.Fatalf("policy state %d, revisions %d", st.Status, revs.Status)
		}
		return string(st.Body) + string(revs.Body)
	}
	before := state()
	var base policyadmin.PolicyRevision
	f.Do(t, "admin", http.MethodGet, "/v1/policy/revisions/0", nil).Decode(t, &base)
	authz := ""
	for _, m := range base.Modules {
		if m.Name == "authz.rego" {
			authz = m.Source
		}
	}

	b := newBrowser(t, f.URL)
	b.signIn(f.Keys["admin"])
	page := b.do(http.MethodGet, "/panel/policy", nil)
	if offered, ok := pasted(page); !ok || offered != authz || !strings.Contains(page.body, `name="module" value="authz.rego"`) {
		t.Errorf("the draft form does not offer the active authz.rego: %s", page.body)
	}
	token := csrfOf(t, page)
	paste := func(module, source, csrf string) response {
		return b.do(http.MethodPost, "/panel/policy/replay", url.Values{"csrf": {csrf}, "module": {module}, "source": {source}})
	}

	rep := paste("authz.rego", noNotes(authz), token)
	if rep.status != http.StatusOK {
		t.Fatalf("replay the pasted draft = %d: %s", rep.status, rep.body)
	}
	if m := regexp.MustCompile(`class="allow-to-deny">(\d+)<`).FindStringSubmatch(rep.body); m == nil || m[1] == "0" {
		t.Errorf("the replay reports no allowed read that the draft would deny: %s", rep.body)
	}
	if !strings.Contains(rep.body, "notes are never read") || !strings.Contains(rep.body, "order-bot") {
		t.Error("the replay does not show order-bot's read with the draft's reason")
	}
	if !regexp.MustCompile(`id="draft-check">The draft <code>sha256:[0-9a-f]{12}</code> passed \d+ of its own tests, [1-9]\d* bundled tests and [1-9]\d* decision cases`).MatchString(rep.body) {
		t.Errorf("the replay does not say which checks the draft passed: %s", rep.body)
	}

	const script = "</textarea><script>alert(1)</script>"
	refused := []struct {
		name, module, source, code, problem string
	}{
		{"a built-in outside the sandbox", "authz.rego", noNotes(authz) + "\nx if http.send({})\n# " + script + "\n", policyadmin.RejectForbiddenBuiltin, "http.send is not allowed"},
		{"not Rego", "authz.rego", "package mneme.authz\nallow if {" + script, policyadmin.RejectParse, "authz.rego:"},
		{"a failing test", "mine_test.rego", "package mneme.authz_test\n\nimport data.mneme.authz\n\ntest_notes_readable if authz.allow with input as {}\n", policyadmin.RejectTestFailed, "test_notes_readable"},
		{"a bad module name", "../authz.rego", noNotes(authz), policyadmin.RejectInvalid, "must be a relative file name ending in .rego"},
		{"a module too large", "big.rego", "package big\n" + strings.Repeat("# padding\n", policyadmin.MaxPolicyModuleBytes/10+1), policyadmin.RejectInvalid, "larger than"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			p := paste(tt.module, tt.source, token)
			if p.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", p.status, p.body)
			}
			m := regexp.MustCompile(`<p class="message" id="draft-error">([^<]*)</p>`).FindStringSubmatch(p.body)
			if m == nil || !strings.Contains(html.UnescapeString(m[1]), "("+tt.code+")") || !strings.Contains(html.UnescapeString(m[1]), tt.problem) {
				t.Errorf("the page does not say the draft is refused with %s and %q: %s", tt.code, tt.problem, p.body)
			}
			if strings.Contains(p.body, `id="replay"`) {
				t.Error("a refused draft was replayed")
			}
			if kept, ok := pasted(p); !ok || kept != tt.source {
				t.Error("the pasted text is not kept, escaped, for editing")
			}
			if strings.Contains(p.body, "<script>alert(1)") {
				t.Error("a script in the pasted text is on the page unescaped")
			}
		})
	}
	if p := paste("authz.rego", noNotes(authz), "not-the-token"); p.status != http.StatusForbidden || strings.Contains(p.body, "notes are never read") {
		t.Errorf("a post without the form's token = %d", p.status)
	}

	if after := state(); after != before {
		t.Errorf("replaying drafts changed the policy state or stored a revision:\nbefore %s\nafter  %s", before, after)
	}
	if s := reads(); s != http.StatusOK {
		t.Errorf("order-bot reads the note after the replays: %d, want 200 (the active policy is unchanged)", s)
	}
}

// TestPanelSimulate: the Policy page's Simulate form decides its own
// pre-filled input; with no revision named it decides against the active
// revision, whether that is the bundled policy or a pushed one, and a
// revision named in the form decides instead; a revision that is not a
// number is refused.
func TestPanelSimulate(t *testing.T) {
	f := apptest.Start(t)
	b := newBrowser(t, f.URL)
	b.signIn(f.Keys["admin"])
	page := b.do(http.MethodGet, "/panel/policy", nil)
	form := regexp.MustCompile(`(?s)<form method="post" action="/panel/policy/simulate">(.*?)</form>`).FindStringSubmatch(page.body)
	if form == nil {
		t.Fatalf("no simulate form on the policy page: %s", page.body)
	}
	prefilled := regexp.MustCompile(`(?s)<textarea name="input"[^>]*>(.*?)</textarea>`).FindStringSubmatch(form[1])
	if prefilled == nil {
		t.Fatalf("the simulate form has no input: %s", form[1])
	}
	simulation := regexp.MustCompile(`<p id="simulation">([^<]*)</p>`)
	simulate := func(input, revision string) response {
		t.Helper()
		v := url.Values{"csrf": {csrfOf(t, page)}, "input": {input}}
		if revision != "" {
			v.Set("revision", revision)
		}
		return b.do(http.MethodPost, "/panel/policy/simulate", v)
	}
	if p := simulate(html.UnescapeString(prefilled[1]), ""); p.status != http.StatusOK || !simulation.MatchString(p.body) {
		t.Fatalf("simulate the pre-filled input = %d: %.500s, want 200 with a decision", p.status, p.body)
	}

	note := `{"principal": {"kind": "agent", "id": "order-bot"}, "action": "read", "resource": {"user_id": "alice", "type": "profile", "kind": "note", "agent_id": "order-bot", "sensitivity": "internal"}}`
	decides := func(revision, want string) {
		t.Helper()
		p := simulate(note, revision)
		m := simulation.FindStringSubmatch(p.body)
		if p.status != http.StatusOK || m == nil {
			t.Fatalf("simulate against revision %q = %d: %.500s", revision, p.status, p.body)
		}
		if !strings.Contains(m[1], want) {
			t.Errorf("simulate against revision %q: %q, want %q", revision, m[1], want)
		}
	}
	decides("", "allow")

	var base policyadmin.PolicyRevision
	f.Do(t, "admin", http.MethodGet, "/v1/policy/revisions/0", nil).Decode(t, &base)
	for i, m := range base.Modules {
		if m.Name == "authz.rego" {
			base.Modules[i].Source = noNotes(m.Source)
		}
	}
	r := f.Do(t, "admin", http.MethodPut, "/v1/policy", policyadmin.NewPolicy{Message: "no notes", Modules: base.Modules})
	var pushed struct {
		Revision policyadmin.PolicyRevision `json:"revision"`
	}
	if r.Decode(t, &pushed); r.Status != http.StatusCreated {
		t.Fatalf("push = %d: %s", r.Status, r.Body)
	}
	n := strconv.FormatInt(pushed.Revision.Number, 10)
	if r := f.Do(t, "admin", http.MethodPost, "/v1/policy/revisions/"+n+"/activate", nil); r.Status != http.StatusOK {
		t.Fatalf("activate = %d: %s", r.Status, r.Body)
	}
	decides("", "deny notes are never read")
	decides(n, "deny notes are never read")
	decides("0", "allow")

	for _, bad := range []string{"one", "-1"} {
		if p := simulate(note, bad); p.status != http.StatusBadRequest || !strings.Contains(p.body, "revision") {
			t.Errorf("simulate against revision %q = %d: %.300s, want 400 about the revision", bad, p.status, p.body)
		}
	}
}
