package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/memory"
)

var docParam = regexp.MustCompile(`\{[^}]+\}`)

// declaredQuery returns the names of the query parameters openapi.json
// declares for one operation, on the operation or on its path.
func declaredQuery(item *openapi3.PathItem, op *openapi3.Operation) []string {
	var names []string
	for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
		if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
			names = append(names, p.Value.Name)
		}
	}
	return names
}

// sendNoKey sends a request without a key to h: one that gets past the
// query check is refused a key (401), one that does not is refused there.
func sendNoKey(t *testing.T, h http.Handler, method, target string) (int, string, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	// Outside /v1 the answer may be no JSON: its code and message are "".
	var e struct{ Code, Message string }
	_ = json.Unmarshal(w.Body.Bytes(), &e)
	return w.Code, e.Code, e.Message
}

// TestEveryDeclaredQueryParameterIsAccepted: for every /v1 operation of
// openapi.json, each query parameter it declares, alone or with all the
// others, passes the check (the request goes on to be refused a key): the
// check never refuses what the contract offers.
func TestEveryDeclaredQueryParameterIsAccepted(t *testing.T) {
	doc := loadDocument(t)
	h := routesOnly(t)
	withParams := 0
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		target := docParam.ReplaceAllString(path, "x")
		for method, op := range item.Operations() {
			names := declaredQuery(item, op)
			if len(names) > 0 {
				withParams++
			}
			all := url.Values{}
			var queries []string
			for _, name := range names {
				queries = append(queries, url.Values{name: {"x"}}.Encode())
				all.Set(name, "x")
			}
			queries = append(queries, "", all.Encode())
			for _, q := range queries {
				status, code, msg := sendNoKey(t, h, method, target+"?"+q)
				if status != http.StatusUnauthorized {
					t.Errorf("%s %s?%s = %d %s %q, want 401: every parameter the document declares is taken", method, path, q, status, code, msg)
				}
			}
		}
	}
	// Declared parameters of sweep, listings, recall log, logs, graph,
	// ingest and writes at least: the loop above did check something.
	if withParams < 15 {
		t.Errorf("only %d operations declare query parameters; is the document read?", withParams)
	}
}

// TestEmptyQueryValuesAreRefused: for every /v1 operation of openapi.json,
// each query parameter it declares, given with no value (?name= or ?name),
// is 400 invalid_argument naming it before anything else, unless the
// document says it takes an empty value: an empty flag or filter is never
// read as not given.
func TestEmptyQueryValuesAreRefused(t *testing.T) {
	doc := loadDocument(t)
	h := routesOnly(t)
	var takeEmpty []string
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		target := docParam.ReplaceAllString(path, "x")
		for method, op := range item.Operations() {
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.Value == nil || p.Value.In != openapi3.ParameterInQuery {
					continue
				}
				name := p.Value.Name
				if p.Value.AllowEmptyValue {
					takeEmpty = append(takeEmpty, method+" "+path+" "+name)
				}
				for _, q := range []string{name + "=", name} {
					status, code, msg := sendNoKey(t, h, method, target+"?"+q)
					switch {
					case p.Value.AllowEmptyValue && status != http.StatusUnauthorized:
						t.Errorf("%s %s?%s = %d %s %q, want 401: the document says %s takes an empty value", method, path, q, status, code, msg, name)
					case !p.Value.AllowEmptyValue && (status != http.StatusBadRequest || code != "invalid_argument" || msg != name+": has no value: give it one, or leave the parameter out"):
						t.Errorf("%s %s?%s = %d %s %q, want 400 invalid_argument: %s has no value", method, path, q, status, code, msg, name)
					}
				}
			}
		}
	}
	// Only an entity search's text and a delete's reason mean the same
	// empty as left out.
	slices.Sort(takeEmpty)
	if want := []string{"DELETE /v1/memories/{id} reason", "GET /v1/graph/entities q"}; !slices.Equal(takeEmpty, want) {
		t.Errorf("parameters that take an empty value: %q, want %q", takeEmpty, want)
	}
}

// TestUndeclaredQueryParametersAreRefused: a parameter the route does not
// declare is 400 invalid_argument before anything else, naming it and the
// declared ones it likely misspells, or those the route takes.
func TestUndeclaredQueryParametersAreRefused(t *testing.T) {
	h := routesOnly(t)
	tests := []struct {
		name, method, target string
		want                 []string // in the message
	}{
		{"a misspelt dry run", "POST", "/v1/janitor/sweep?dryrun=true", []string{"dryrun:", "did you mean dry_run?"}},
		{"dry_run in other case", "POST", "/v1/janitor/sweep?Dry_Run=true", []string{"Dry_Run:", "did you mean dry_run?"}},
		{"user for user_id", "GET", "/v1/memories?user=alice&limit=5", []string{"user:", "did you mean user_id?"}},
		{"userid for user_id", "GET", "/v1/memories?userid=alice", []string{"userid:", "did you mean user_id?"}},
		{"query for q", "GET", "/v1/graph/entities?query=lianhua", []string{"query:", "did you mean q?"}},
		{"bogus beside a declared one", "GET", "/v1/graph/aggregates?by=type&bogus=1", []string{"bogus:", "GET /v1/graph/aggregates, which takes agent, by, entity"}},
		{"limt for limit", "GET", "/v1/recall-log?user_id=bob&limt=5", []string{"limt:", "did you mean limit?"}},
		{"a route that takes none", "GET", "/v1/whoami?bogus=1", []string{"bogus:", "GET /v1/whoami, which takes none"}},
		{"on a route with a path parameter", "DELETE", "/v1/memories/mem_1?reson=dup", []string{"reson:", "DELETE /v1/memories/{id}; did you mean reason?"}},
		{"on a wildcard route", "DELETE", "/v1/knowledge/documents/guides/returns?force=1", []string{"force:", "DELETE /v1/knowledge/documents/{id}, which takes none"}},
		{"a body's field in the query", "POST", "/v1/recall?user_id=alice", []string{"user_id:", "POST /v1/recall, which takes none"}},
		{"the first of two by name", "GET", "/v1/audit?zeta=1&alpha=1", []string{"alpha:"}},
		{"an empty name", "GET", "/v1/decisions?=1", []string{"query:", "no name"}},
		{"an unknown one before one with no value", "POST", "/v1/janitor/sweep?dry_run&zz=1", []string{"zz:", "which takes dry_run"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, code, msg := sendNoKey(t, h, tc.method, tc.target)
			if status != http.StatusBadRequest || code != "invalid_argument" {
				t.Fatalf("%s %s = %d %s %q, want 400 invalid_argument", tc.method, tc.target, status, code, msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}
		})
	}

	// A long name is echoed cut to 64 characters, the last an ellipsis.
	long := strings.Repeat("a", 3000)
	for _, target := range []string{"/v1/memories?" + long + "=1", "/v1/memories?" + long + "=1&" + long + "=2"} {
		status, code, msg := sendNoKey(t, h, "GET", target)
		name, _, _ := strings.Cut(msg, ":")
		if status != http.StatusBadRequest || code != "invalid_argument" || name != strings.Repeat("a", 63)+"…" {
			t.Errorf("GET %.40s… = %d %s %.100q, want the name cut to 63 letters and an ellipsis", target, status, code, msg)
		}
	}

	// Routes outside /v1 are not checked here.
	for _, target := range []string{"/healthz?x=1", "/openapi.json?x=1", "/panel?x=1", "/metrics?x=1", "/panel?user_id=", "/healthz?dry_run"} {
		if status, code, msg := sendNoKey(t, h, "GET", target); status == http.StatusBadRequest {
			t.Errorf("GET %s = %d %s %q: only /v1 checks its parameters", target, status, code, msg)
		}
	}
}

// TestMisspeltParametersDoNothing: through the real service, a misspelt
// parameter is refused before it can turn a dry run into a sweep or a
// filtered listing into a listing of every user's memories.
func TestMisspeltParametersDoNothing(t *testing.T) {
	f := apptest.Start(t)
	create(t, f, "support-bot", client.NewMemory{UserID: "bob", Type: client.TypeSemantic, Content: "Bob prefers to be called in the afternoon."})

	for _, tc := range []struct{ who, method, path string }{
		{apptest.Admin, http.MethodPost, "/v1/janitor/sweep?dryrun=true"},
		{"support-bot", http.MethodGet, "/v1/memories?user=alice&limit=5"},
		{"support-bot", http.MethodGet, "/v1/memories?userid=alice"},
		{apptest.Admin, http.MethodGet, "/v1/graph/aggregates?by=type&bogus=1"},
		{apptest.Admin, http.MethodGet, "/v1/graph/entities?query=lianhua"},
	} {
		r := f.Do(t, tc.who, tc.method, tc.path, nil)
		expectResponse(t, tc.method+" "+tc.path, r, http.StatusBadRequest, "invalid_argument")
	}
	var audit struct{ Events []struct{ Action string } }
	f.Do(t, apptest.Admin, http.MethodGet, "/v1/audit?action=janitor.sweep", nil).Decode(t, &audit)
	if len(audit.Events) != 0 {
		t.Errorf("the refused sweep ran: audit %+v", audit.Events)
	}
	// Spelt right, the same requests are answered.
	r := f.Do(t, apptest.Admin, http.MethodPost, "/v1/janitor/sweep?dry_run=true", nil)
	expectResponse(t, "a dry run", r, http.StatusOK)
	if got := list(t, f, "support-bot", "user_id=alice&limit=5"); slices.ContainsFunc(got, func(m client.Memory) bool { return m.UserID != "alice" }) {
		t.Errorf("user_id=alice lists %+v", got)
	}
}

// TestEmptyValuesDoNothing: through the real service, a flag or filter
// given with no value is refused before it can run a sweep, write at once
// what was to be queued (or queue what was to be written), or list every
// user's memories; the two parameters that take an empty value still work.
func TestEmptyValuesDoNothing(t *testing.T) {
	f := apptest.Start(t)
	bob := create(t, f, "support-bot", client.NewMemory{UserID: "bob", Type: client.TypeSemantic, Content: "Bob prefers to be called in the afternoon."})
	note := client.NewMemory{UserID: "bob", Type: client.TypeSemantic, Content: "Bob's crates go to the east dock."}
	turns := memory.IngestRequest{UserID: "bob", Turns: []memory.Turn{{Role: "user", Content: "I prefer orange boxes."}}}

	for _, tc := range []struct {
		who, method, path string
		body              any
	}{
		{apptest.Admin, http.MethodPost, "/v1/janitor/sweep?dry_run", nil},
		{apptest.Admin, http.MethodPost, "/v1/janitor/sweep?dry_run=", nil},
		{"support-bot", http.MethodGet, "/v1/memories?user_id=&limit=2", nil},
		{"support-bot", http.MethodGet, "/v1/memories?user_id=alice&status=", nil},
		{"support-bot", http.MethodPost, "/v1/memories?async", note},
		{"support-bot", http.MethodPost, "/v1/memories?async=", note},
		{"support-bot", http.MethodPost, "/v1/ingest?sync", turns},
		{apptest.Analyst, http.MethodGet, "/v1/graph/neighbourhood?from=user:bob&hops=", nil},
	} {
		r := f.Do(t, tc.who, tc.method, tc.path, tc.body)
		expectResponse(t, tc.method+" "+tc.path, r, http.StatusBadRequest, "invalid_argument")
	}
	var audit struct{ Events []struct{ Action string } }
	f.Do(t, apptest.Admin, http.MethodGet, "/v1/audit?action=janitor.sweep", nil).Decode(t, &audit)
	if len(audit.Events) != 0 {
		t.Errorf("a refused sweep ran: audit %+v", audit.Events)
	}
	if got := list(t, f, "support-bot", "user_id=bob"); len(got) != 1 || got[0].ID != bob.ID {
		t.Errorf("bob's memories after refused writes: %+v, want only %s", got, bob.ID)
	}

	r := f.Do(t, apptest.Analyst, http.MethodGet, "/v1/graph/entities?q=", nil)
	expectResponse(t, "an entity search for no text", r, http.StatusOK)
	r = f.Do(t, "support-bot", http.MethodDelete, "/v1/memories/"+bob.ID+"?reason=", nil)
	expectResponse(t, "a delete with an empty reason", r, http.StatusOK)
}
