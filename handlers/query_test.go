package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mneme/internal/apptest"
)

// TestMalformedQueryStrings: a query string Go would read only in part (a
// pair with ';' or a bad escape, more than 10,000 pairs) is refused as a
// whole before anything runs, so a dry run can never sweep for real and a
// filter is never dropped.
func TestMalformedQueryStrings(t *testing.T) {
	f := apptest.Start(t)
	many := strings.Repeat("p=1&", 10_001) + "dry_run=true"
	for _, tc := range []struct{ name, method, path string }{
		{"a semicolon", http.MethodPost, "/v1/janitor/sweep?dry_run=true;x=1"},
		{"a bad escape", http.MethodPost, "/v1/janitor/sweep?dry_run=true&x=%zz"},
		{"too many pairs", http.MethodPost, "/v1/janitor/sweep?" + many},
		{"a listing's filter", http.MethodGet, "/v1/memories?user_id=alice;limit=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, apptest.Admin, tc.method, tc.path, nil)
			var e struct{ Code, Message string }
			r.Decode(t, &e)
			if r.Status != http.StatusBadRequest || e.Code != "invalid_argument" || !strings.Contains(e.Message, "query") {
				t.Errorf("%d %s, want 400 invalid_argument about the query", r.Status, r.Body)
			}
		})
	}
	// A parameter given twice: the handler would read the first alone.
	r := f.Do(t, "support-bot", http.MethodGet, "/v1/memories?user_id=alice&user_id=bob", nil)
	var e struct{ Code, Message string }
	r.Decode(t, &e)
	if r.Status != http.StatusBadRequest || e.Code != "invalid_argument" || !strings.Contains(e.Message, "user_id") {
		t.Errorf("user_id twice: %d %s, want 400 invalid_argument about user_id", r.Status, r.Body)
	}
	r = f.Do(t, apptest.Admin, http.MethodPost, "/v1/janitor/sweep?dry_run=true", nil)
	var report struct {
		DryRun bool `json:"dry_run"`
	}
	r.Decode(t, &report)
	if r.Status != http.StatusOK || !report.DryRun {
		t.Errorf("a well-formed dry run: %d %s", r.Status, r.Body)
	}
}

// TestBearerSchemeIgnoresCase: the scheme's name is case-insensitive.
func TestBearerSchemeIgnoresCase(t *testing.T) {
	f := apptest.Start(t)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		r := f.Do(t, "", http.MethodGet, "/v1/whoami", nil, "Authorization", scheme+" "+f.Keys["alice"])
		if r.Status != http.StatusOK {
			t.Errorf("%s: %d %s", scheme, r.Status, r.Body)
		}
	}
	if r := f.Do(t, "", http.MethodGet, "/v1/whoami", nil, "Authorization", "Basic "+f.Keys["alice"]); r.Status != http.StatusUnauthorized {
		t.Errorf("another scheme: %d %s, want 401", r.Status, r.Body)
	}
}
