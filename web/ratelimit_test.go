package web_test

import (
	"net/http"
	"strings"
	"testing"

	"mneme/app"
	"mneme/internal/apptest"
)

// TestPanelSharesTheAPIRateLimit: the panel's pages and graph queries take
// from the same allowance as the API calls of the key signed in with; past
// it they answer 429 with Retry-After and keep the session.
func TestPanelSharesTheAPIRateLimit(t *testing.T) {
	// Six at once, then one every 20 s: the test never sees a refill.
	f := apptest.StartWith(t, func(c *app.Config) { c.Limits.Rate, c.Limits.Burst = 0.05, 6 })
	b := newBrowser(t, f.URL)
	if p := b.signIn(f.Keys[apptest.Analyst]); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", p.status, p.body)
	}
	refused := 0
	for range 10 {
		p := b.do(http.MethodGet, "/panel/graph/entities?q=order", nil)
		switch p.status {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			refused++
			if p.header.Get("Retry-After") == "" || !strings.Contains(p.body, `"rate_limited"`) || p.header.Get("X-Request-ID") == "" || !strings.Contains(p.body, `"request_id":"`+p.header.Get("X-Request-ID")+`"`) {
				t.Errorf("refusal without Retry-After, code or request id: %v %s", p.header, p.body)
			}
		default:
			t.Fatalf("graph query: %d %s", p.status, p.body)
		}
	}
	if refused < 4 {
		t.Errorf("%d of 10 graph queries refused past a burst of 6, want at least 4", refused)
	}
	if p := b.do(http.MethodGet, "/panel/graph", nil); p.status != http.StatusTooManyRequests {
		t.Errorf("a page past the limit: %d → %q, want 429 and the session kept", p.status, p.location)
	}
	if r := f.Do(t, apptest.Analyst, http.MethodGet, "/v1/whoami", nil); r.Status != http.StatusTooManyRequests {
		t.Errorf("the API with the same key: %d, want 429 (one bucket)", r.Status)
	}
}
