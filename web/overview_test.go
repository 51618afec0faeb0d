package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"mneme/internal/apptest"
	"mneme/memory"
)

var (
	aliceTotal = regexp.MustCompile(`data-user="alice"><td><a[^>]*>alice</a></td><td class="total">(\d+)</td>`)
	countedAt  = regexp.MustCompile(`id="counted-at" datetime="([^"]+)"`)
)

// overviewCount reads alice's total and the time it was counted.
func overviewCount(t *testing.T, b *browser) (int, time.Time, response) {
	t.Helper()
	p := b.do(http.MethodGet, "/panel/overview", nil)
	if p.status != http.StatusOK {
		t.Fatalf("overview = %d: %s", p.status, p.body)
	}
	n, at := aliceTotal.FindStringSubmatch(p.body), countedAt.FindStringSubmatch(p.body)
	if n == nil || at == nil {
		t.Fatalf("no count for alice or no time on the overview: %s", p.body)
	}
	total, _ := strconv.Atoi(n[1])
	when, err := time.Parse(time.RFC3339, at[1])
	if err != nil {
		t.Fatal(err)
	}
	return total, when, p
}

// TestOverviewCountsAreReusedAndSayWhen: the overview shows a count again
// for a while, saying when it was taken, so a write through the API shows
// later; a change made in the panel shows at once.
func TestOverviewCountsAreReusedAndSayWhen(t *testing.T) {
	f := apptest.Start(t)
	b := newBrowser(t, f.URL)
	b.signIn(f.Keys["admin"])
	first := write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: "Alice's warehouse is in Ningbo."})
	before := time.Now().UTC().Truncate(time.Second)
	n0, at0, _ := overviewCount(t, b)
	if n0 != 1 || at0.Before(before) || at0.After(time.Now().UTC()) {
		t.Fatalf("alice has %d memories counted at %s; want 1, counted now", n0, at0)
	}
	for _, c := range []string{"Alice pays by bank transfer.", "Alice's orders ship from Shanghai."} {
		write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: c})
	}
	n1, at1, ov := overviewCount(t, b)
	if n1 != 1 || !at1.Equal(at0) {
		t.Errorf("right after two writes through the API: %d counted at %s, want the kept 1 counted at %s", n1, at1, at0)
	}
	// A delete in the panel is counted at once, with what came before it.
	if p := b.do(http.MethodPost, "/panel/memories/"+first+"/delete", url.Values{"csrf": {csrfOf(t, ov)}, "back": {"/panel/users/alice"}}); p.status != http.StatusSeeOther {
		t.Fatalf("delete in the panel = %d: %s", p.status, p.body)
	}
	if n2, at2, _ := overviewCount(t, b); n2 != 2 || at2.Before(at1) {
		t.Errorf("after the panel's delete: %d counted at %s, want 2 counted anew", n2, at2)
	}
}

// TestOverviewSharedKnowledge: the tenant's shared knowledge, about no
// user, is counted on a row of its own, last, linking to its page rather
// than to a user's page without an id.
func TestOverviewSharedKnowledge(t *testing.T) {
	f := apptest.Start(t)
	write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: "Alice's warehouse is in Ningbo."})
	write(t, f, apptest.Admin, memory.NewMemory{Scope: &memory.ScopeRef{Kind: memory.ScopeTenant}, Type: memory.TypeProcedural, Kind: "rule", Content: "Refunds above 500 euros need a manager's approval."})
	b := newBrowser(t, f.URL)
	b.signIn(f.Keys["admin"])
	p := b.do(http.MethodGet, "/panel/overview", nil)
	if p.status != http.StatusOK {
		t.Fatalf("overview = %d: %s", p.status, p.body)
	}
	rows := regexp.MustCompile(`<tr data-user="([^"]*)"><td><a href="([^"]+)">`).FindAllStringSubmatch(p.body, -1)
	if len(rows) != 2 || rows[0][1] != "alice" || rows[1][1] != "" || rows[1][2] != "/panel/knowledge" {
		t.Errorf("overview rows = %q, want alice, then the shared knowledge linking to /panel/knowledge", rows)
	}
	if k := b.do(http.MethodGet, rows[len(rows)-1][2], nil); k.status != http.StatusOK {
		t.Errorf("the shared knowledge row's link = %d", k.status)
	}
}
