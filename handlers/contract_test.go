package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"

	"mneme/client"
	"mneme/graphquery"
	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// The document takes what the server takes and refuses what it refuses, in
// the rules a type alone does not say: a change of nothing, the values of a
// flag, a null author, the length of an Idempotency-Key, the dates and node
// references of the graph routes. A client that follows the document is
// not refused, and one that relies on it to check a request finds what the
// server would refuse.
func TestTheDocumentStatesTheServersRules(t *testing.T) {
	v := newValidator(t, loadDocument(t))
	const turns = `"turns":[{"role":"user","content":"I prefer tea."}]`
	tests := []struct {
		name, method, target, body string
		headers                    []string
		valid                      bool
	}{
		{"a change of nothing", "PATCH", "/v1/memories/mem_1", `{}`, nil, false},
		{"a change of only nulls", "PATCH", "/v1/memories/mem_1", `{"content":null,"kind":null}`, nil, false},
		{"a change with one value", "PATCH", "/v1/memories/mem_1", `{"kind":null,"importance":0.2}`, nil, true},
		{"a grant change of nothing", "PATCH", "/v1/grants/g_1", `{}`, nil, false},
		{"a grant change of only no_expiry false", "PATCH", "/v1/grants/g_1", `{"no_expiry":false}`, nil, false},
		{"a grant change lifting the kinds", "PATCH", "/v1/grants/g_1", `{"kinds":[]}`, nil, true},
		{"a key change of nothing", "PATCH", "/v1/keys/k_1", `{}`, nil, false},
		{"a key change of no_expiry false", "PATCH", "/v1/keys/k_1", `{"no_expiry":false}`, nil, false},
		{"a key change of both", "PATCH", "/v1/keys/k_1", `{"no_expiry":true,"expires_at":"2030-01-01T00:00:00Z"}`, nil, false},
		{"a key change lifting the expiry", "PATCH", "/v1/keys/k_1", `{"no_expiry":true}`, nil, true},
		{"a key change setting the expiry", "PATCH", "/v1/keys/k_1", `{"expires_at":"2030-01-01T00:00:00Z"}`, nil, true},
		{"turns with a null author", "POST", "/v1/sessions/s-1/turns", `{"user_id":"alice","agent_id":null,` + turns + `}`, nil, true},
		{"an ingestion with a null author", "POST", "/v1/ingest", `{"user_id":"alice","agent_id":null,` + turns + `}`, nil, true},
		{"an Idempotency-Key of 128 bytes", "POST", "/v1/memories", `{"user_id":"alice","type":"episodic","content":"x"}`, []string{"Idempotency-Key", strings.Repeat("f", 128)}, true},
		{"an Idempotency-Key of 129 bytes", "POST", "/v1/memories", `{"user_id":"alice","type":"episodic","content":"x"}`, []string{"Idempotency-Key", strings.Repeat("f", 129)}, false},
		{"an ingestion's Idempotency-Key of 128 bytes", "POST", "/v1/ingest?sync=true", `{"user_id":"alice",` + turns + `}`, []string{"Idempotency-Key", strings.Repeat("f", 128)}, true},
	}
	// A flag takes what the server reads as a boolean, and nothing else.
	for _, s := range []string{"true", "false", "1", "0", "t", "f", "T", "F", "TRUE", "FALSE", "True", "False", "maybe", "yes", "no", "on", "2"} {
		_, err := strconv.ParseBool(s)
		tests = append(tests, struct {
			name, method, target, body string
			headers                    []string
			valid                      bool
		}{"dry_run=" + s, "POST", "/v1/janitor/sweep?dry_run=" + s, "", nil, err == nil})
	}
	// The graph's times and node references, as the server parses them (a
	// day a month does not have, 2026-02-30, which no pattern tells, is
	// left to the parameter's description).
	for _, s := range []string{"2026-03-01", "1970-01-01", "1969-12-31", "0001-01-01", "2026-13-01", "2026-03-01T08:00:00Z",
		"2026-03-01T08:00:00.5+02:00", "1969-12-31T23:00:00-01:00", "2026-03-01T24:00:00Z", "2026-03-01 08:00:00", "yesterday", "2026-3-1"} {
		vs := url.Values{"since": {s}}
		_, err := graphquery.ParseTimeline(vs)
		tests = append(tests, struct {
			name, method, target, body string
			headers                    []string
			valid                      bool
		}{"since=" + s, "GET", "/v1/graph/timeline?" + vs.Encode(), "", nil, err == nil})
	}
	for _, s := range []string{"entity:lianhua-trading", "user:alice", "memory:mem_1", "entity:a:b", "bogus", "thing:x", "entity:", ":x"} {
		vs := url.Values{"from": {s}}
		_, err := graphquery.ParseNeighbourhood(vs)
		tests = append(tests, struct {
			name, method, target, body string
			headers                    []string
			valid                      bool
		}{"neighbourhood from=" + s, "GET", "/v1/graph/neighbourhood?" + vs.Encode(), "", nil, err == nil})
	}
	for _, s := range []string{"lianhua-trading", "entity:lianhua-trading", "entity:a:b", "user:alice", "thing:x", "entity:"} {
		vs := url.Values{"from": {s}, "to": {"entity:acme"}}
		_, err := graphquery.ParsePaths(vs)
		tests = append(tests, struct {
			name, method, target, body string
			headers                    []string
			valid                      bool
		}{"paths from=" + s, "GET", "/v1/graph/paths?" + vs.Encode(), "", nil, err == nil})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			for i := 0; i+1 < len(tc.headers); i += 2 {
				req.Header.Set(tc.headers[i], tc.headers[i+1])
			}
			route, params, err := v.router.FindRoute(req)
			if err != nil {
				t.Fatalf("find route: %v", err)
			}
			err = openapi3filter.ValidateRequest(req.Context(), &openapi3filter.RequestValidationInput{
				Request: req, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
			})
			if valid := err == nil; valid != tc.valid {
				t.Errorf("the document finds it valid: %v, the server: %v (%v)", valid, tc.valid, err)
			}
		})
	}
}

// The server keeps the rules the document states: what the document
// refuses, the server refuses; a null author is read as none, as the
// document now says.
func TestTheServerKeepsTheDocumentsRules(t *testing.T) {
	f := apptest.Start(t)
	m := write(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice's office moved to Lisbon in May."})
	r := f.Do(t, apptest.Admin, http.MethodPost, "/v1/grants", policyadmin.NewGrant{Grantee: "order-bot", Source: "support-bot", Types: []string{memory.TypeEpisodic}, MaxSensitivity: memory.SensitivityInternal})
	expectResponse(t, "create grant", r, http.StatusCreated)
	var grant memory.Grant
	r.Decode(t, &grant)
	for _, tc := range []struct {
		name, who, method, path, body string
	}{
		{"a change of nothing", "support-bot", http.MethodPatch, "/v1/memories/" + m.ID, `{}`},
		{"a change of only nulls", "support-bot", http.MethodPatch, "/v1/memories/" + m.ID, `{"content":null,"kind":null}`},
		{"a grant change of nothing", apptest.Admin, http.MethodPatch, "/v1/grants/" + grant.ID, `{}`},
		{"a grant change of only no_expiry false", apptest.Admin, http.MethodPatch, "/v1/grants/" + grant.ID, `{"no_expiry":false}`},
		{"a sweep, maybe", apptest.Admin, http.MethodPost, "/v1/janitor/sweep?dry_run=maybe", ``},
		{"a timeline since before 1970", apptest.Admin, http.MethodGet, "/v1/graph/timeline?user=alice&since=1969-12-31", ``},
		{"a neighbourhood of no label", apptest.Admin, http.MethodGet, "/v1/graph/neighbourhood?from=lianhua", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = []byte(tc.body)
			}
			expectResponse(t, tc.name, f.Do(t, tc.who, tc.method, tc.path, body), http.StatusBadRequest, "invalid_argument")
		})
	}
	turns := []map[string]any{{"role": "user", "content": "Please remember I prefer NULLMARK straps on every pallet."}}
	r = f.Do(t, "support-bot", http.MethodPost, "/v1/sessions/s-null/turns", map[string]any{"user_id": "alice", "agent_id": nil, "turns": turns})
	expectResponse(t, "turns with a null author", r, http.StatusOK)
	r = f.Do(t, "support-bot", http.MethodPost, "/v1/ingest?sync=true", map[string]any{"user_id": "alice", "agent_id": nil, "turns": turns})
	expectResponse(t, "an ingestion with a null author", r, http.StatusOK)
}
