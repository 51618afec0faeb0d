package handlers_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"mneme/app"
	"mneme/client"
	"mneme/internal/apptest"
	"mneme/internal/testidp"
	"mneme/memory"
)

// stored is how many memories f's tenant holds in Neo4j, counted there.
func stored(t *testing.T, f *apptest.Fixture) int64 {
	t.Helper()
	n, _, err := f.App.Tallies.TenantUsage(context.Background(), f.Tenant)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wantError checks a refusal's status and code.
func wantError(t *testing.T, step string, r apptest.Response, status int, code string) {
	t.Helper()
	var body struct {
		Code string `json:"code"`
	}
	r.Decode(t, &body)
	if r.Status != status || body.Code != code {
		t.Fatalf("%s: %d %s, want %d %s", step, r.Status, r.Body, status, code)
	}
}

// TestRateLimitAcrossReplicas: two replicas draw from one bucket per API
// key; past it a request is 429 with Retry-After and writes nothing.
func TestRateLimitAcrossReplicas(t *testing.T) {
	limit := func(c *app.Config) {
		// Four at once, then one every 20 s: the test never sees a refill.
		c.Limits.Rate, c.Limits.Burst = 0.05, 4
	}
	a := apptest.StartWith(t, limit)
	b := a.Replica(t, limit)
	replicas := []*apptest.Fixture{a, b}
	note := func(i int) client.NewMemory {
		return client.NewMemory{UserID: "alice", Type: client.TypeSemantic,
			Content: "Alice's order " + strconv.Itoa(1000+i) + " ships to warehouse " + strconv.Itoa(i) + " in Lyon"}
	}
	for i := range 4 {
		create(t, replicas[i%2], "support-bot", note(i))
	}
	for _, f := range replicas {
		before := stored(t, a)
		_, err := f.Client(t, "support-bot").Add(t.Context(), note(9))
		wantAPIError(t, "past the limit", err, http.StatusTooManyRequests, "rate_limited")
		var e *client.Error
		if errors.As(err, &e) && (e.RetryAfter < time.Second || e.RetryAfter > 20*time.Second) {
			t.Errorf("Retry-After = %v, want whole seconds in 1..20", e.RetryAfter)
		}
		if after := stored(t, a); after != before {
			t.Errorf("a refused request changed the stored memories: %d → %d", before, after)
		}
	}
	// Reads are limited too: the bucket is the caller's, not the route's.
	_, err := b.Client(t, "support-bot").WhoAmI(t.Context())
	wantAPIError(t, "a read past the limit", err, http.StatusTooManyRequests, "rate_limited")
	// So is /mcp, where the refusal is a JSON-RPC error an MCP client reads.
	r := b.Do(t, "support-bot", http.MethodPost, "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		"Accept", "application/json, text/event-stream")
	var rpc struct {
		Error struct {
			Code int
			Data struct{ Code string }
		}
	}
	r.Decode(t, &rpc)
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" || rpc.Error.Code != -32600 || rpc.Error.Data.Code != "rate_limited" {
		t.Errorf("/mcp past the limit: %d, Retry-After %q, %s; want 429 with Retry-After and a JSON-RPC error of code rate_limited",
			r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	// Another key has its own bucket.
	if _, err := b.Client(t, "order-bot").WhoAmI(t.Context()); err != nil {
		t.Errorf("another key: %v", err)
	}
}

// TestQuotaOnEveryWritePath: a write that would take the tenant past its
// quota is refused, 403 quota_exceeded, before anything is written, by
// every path that writes.
func TestQuotaOnEveryWritePath(t *testing.T) {
	f := apptest.StartWith(t, func(c *app.Config) { c.Limits.QuotaMemories = 3 })
	m := func(content string) client.NewMemory {
		return client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: content}
	}
	if got := writeBatch(t, f, "support-bot", m("Alice's invoices go to the Lyon office"), m("Alice pays by bank transfer within 30 days")); len(got.Memories) != 2 {
		t.Fatalf("batch within the quota: %+v, want two memories", got)
	}
	over := m("Alice's warehouse contact is Marc Dupont")
	first := write(t, f, "support-bot", over)
	if n := stored(t, f); n != 3 {
		t.Fatalf("%d memories stored, want 3", n)
	}

	// Raw requests: every wire form of every write path, the single-memory
	// body among them, which the client does not send.
	turns := client.IngestRequest{UserID: "alice", Turns: []client.Turn{{Role: "user", Content: "Please remember that my budget is 150k for the new trucks."}}}
	paths := []struct {
		name, method, path string
		body               any
	}{
		{"sync single", http.MethodPost, "/v1/memories", m("Alice prefers delivery on Tuesdays")},
		{"sync batch", http.MethodPost, "/v1/memories", map[string]any{"memories": []client.NewMemory{m("Alice's fleet has twelve trucks")}}},
		{"async accept", http.MethodPost, "/v1/memories?async=true", m("Alice renews her contract in March")},
		{"ingest, queued", http.MethodPost, "/v1/ingest", turns},
		{"ingest, sync", http.MethodPost, "/v1/ingest?sync=true", turns},
		{"new version", http.MethodPatch, "/v1/memories/" + first.ID, map[string]any{"content": "Alice's warehouse contact is Léa Martin"}},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			r := f.Do(t, "support-bot", p.method, p.path, p.body)
			wantError(t, p.name, r, http.StatusForbidden, "quota_exceeded")
			if n := stored(t, f); n != 3 {
				t.Errorf("%d memories stored after a refused write, want 3", n)
			}
		})
	}
}

// TestQuotaCountsSharedKnowledge: the tenant's quota counts its shared
// knowledge beside its users' memories, and refuses shared writes and
// knowledge-base imports past it like any other write.
func TestQuotaCountsSharedKnowledge(t *testing.T) {
	f := apptest.StartWith(t, func(c *app.Config) { c.Limits.QuotaMemories = 3 })
	rule := func(key, content string) client.NewMemory {
		return client.NewMemory{Scope: &client.ScopeRef{Kind: client.ScopeTenant}, Type: client.TypeSemantic, Kind: "rule", Key: key, Content: content}
	}
	write(t, f, apptest.Admin, rule("approval_threshold", "Orders above 50k CNY need approval."))
	write(t, f, apptest.Admin, rule("free_shipping", "Shipping is free above 5k CNY within East China."))
	write(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice pays by bank transfer within 30 days"})
	if n := stored(t, f); n != 3 {
		t.Fatalf("%d memories stored, want 3", n)
	}
	for _, step := range []struct {
		name, who, path string
		body            any
	}{
		{"a user's memory", "support-bot", "/v1/memories", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice's fleet has twelve trucks"}},
		{"a shared rule", apptest.Admin, "/v1/memories", rule("returns_window", "Returns are accepted within 14 days.")},
		{"a knowledge-base import", apptest.Admin, "/v1/knowledge/import", map[string]string{
			"id": "returns", "format": "markdown", "content": "# Returns\n\nReturns are accepted within 14 days of delivery.\n",
		}},
	} {
		wantError(t, step.name, f.Do(t, step.who, http.MethodPost, step.path, step.body), http.StatusForbidden, "quota_exceeded")
		if n := stored(t, f); n != 3 {
			t.Errorf("%s: %d memories stored after a refused write, want 3", step.name, n)
		}
	}
}

// TestQuotaOnCharacters: the content quota counts characters, Chinese as
// one each.
func TestQuotaOnCharacters(t *testing.T) {
	f := apptest.StartWith(t, func(c *app.Config) { c.Limits.QuotaChars = 40 })
	write(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice 的预算是十五万元，用于新卡车"}) // 20 characters
	_, err := f.Client(t, "support-bot").Add(t.Context(),
		client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice prefers invoices by e-mail"}) // 32
	wantAPIError(t, "past the character quota", err, http.StatusForbidden, "quota_exceeded")
}

// TestJWTEndToEnd: a token of the configured issuer works like an API key
// through the real router; every kind of bad token is 401.
func TestJWTEndToEnd(t *testing.T) {
	idp := testidp.New(t)
	f := apptest.StartWith(t, func(c *app.Config) {
		c.OIDC.Issuer, c.OIDC.JWKSURL, c.OIDC.Audience = testidp.IssuerName, idp.URL, testidp.Audience
	})
	good := idp.Sign("rsa-1", testidp.Claims{"tenant": f.Tenant, "sub": "support-bot", "kind": "agent", "roles": []string{"support"}})

	p, err := f.Client(t, good).WhoAmI(t.Context())
	if err != nil || p.Tenant != f.Tenant || p.Kind != memory.KindAgent || p.ID != "support-bot" || len(p.Roles) != 1 {
		t.Fatalf("whoami: %+v, %v", p, err)
	}
	written := write(t, f, good, client.NewMemory{UserID: "alice", Type: client.TypeSemantic,
		Content: "Alice wants invoices sent to the Lyon office by e-mail"})
	if written.AgentID != "support-bot" {
		t.Errorf("written by %q, want support-bot", written.AgentID)
	}
	if got := recall(t, f, good, client.RecallRequest{UserID: "alice", Query: "where do Alice's invoices go?"}); !has(recalledIDs(got), written.ID) {
		t.Fatalf("recall with a token: %v, want %s among them", recalledIDs(got), written.ID)
	}
	// API keys keep working beside tokens.
	if _, err := f.Client(t, "support-bot").WhoAmI(t.Context()); err != nil {
		t.Errorf("API key beside tokens: %v", err)
	}

	stranger := testidp.New(t)
	claims := testidp.Claims{"tenant": f.Tenant}
	with := func(k string, v any) testidp.Claims {
		c := testidp.Claims{"tenant": f.Tenant}
		c[k] = v
		return c
	}
	enc := base64.RawURLEncoding.EncodeToString
	payload := enc([]byte(`{"iss":"` + testidp.IssuerName + `","aud":"` + testidp.Audience + `","sub":"support-bot","tenant":"` +
		f.Tenant + `","kind":"admin","exp":` + strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10) + `}`))
	bad := map[string]string{
		"expired":        idp.Sign("rsa-1", with("exp", time.Now().Add(-time.Minute).Unix())),
		"wrong audience": idp.Sign("rsa-1", with("aud", "another-service")),
		"wrong issuer":   idp.Sign("rsa-1", with("iss", "https://evil.example")),
		"unsigned":       enc([]byte(`{"alg":"none","kid":"rsa-1"}`)) + "." + payload + ".",
		"unknown key":    stranger.Sign("rsa-1", claims),
		"malformed":      "eyJhbGciOiJSUzI1NiJ9." + payload + ".bm90LWEtc2lnbmF0dXJl",
		"unknown tenant": idp.Sign("rsa-1", with("tenant", "a_b")),
	}
	for name, tok := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := f.Client(t, tok).WhoAmI(t.Context())
			wantAPIError(t, name, err, http.StatusUnauthorized, "unauthenticated")
		})
	}
}

// TestJWTOff: without an issuer configured a token is just a bad key.
func TestJWTOff(t *testing.T) {
	f := apptest.Start(t)
	idp := testidp.New(t)
	tok := idp.Sign("rsa-1", testidp.Claims{"tenant": f.Tenant})
	_, err := f.Client(t, tok).WhoAmI(t.Context())
	wantAPIError(t, "token with OIDC off", err, http.StatusUnauthorized, "unauthenticated")
}

// TestBodylessRoutes: a route that reads no body takes none or {}; anything
// else is refused with a JSON error before the route acts. A NUL in any
// string of a body or the query string is refused, and so are query
// strings that are no UTF-8, as bodies are.
func TestBodylessRoutes(t *testing.T) {
	f := apptest.Start(t)
	m := create(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice's desk order ships from Lyon."})
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"sweep with garbage", "POST", "/v1/janitor/sweep", []byte("garbage"), http.StatusBadRequest, "bad_json"},
		{"sweep with a field", "POST", "/v1/janitor/sweep", map[string]any{"dry_run": false}, http.StatusBadRequest, "bad_json"},
		{"sweep with deep JSON", "POST", "/v1/janitor/sweep", []byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000)), http.StatusBadRequest, "bad_json"},
		{"sweep with {}", "POST", "/v1/janitor/sweep?dry_run=true", map[string]any{}, http.StatusOK, ""},
		{"sweep without a body", "POST", "/v1/janitor/sweep?dry_run=true", nil, http.StatusOK, ""},
		{"delete with a body", "DELETE", "/v1/memories/" + m.ID, map[string]any{"reason": "x"}, http.StatusBadRequest, "bad_json"},
		{"erase with a body", "DELETE", "/v1/users/alice", []byte(`{"confirm":"alice"}`), http.StatusBadRequest, "bad_json"},
		{"a NUL in content", "POST", "/v1/memories", map[string]any{"user_id": "alice", "type": "semantic", "content": "tea \x00 coffee"}, http.StatusBadRequest, "invalid_argument"},
		{"a query string of bytes that are no UTF-8", "GET", "/v1/graph/entities?q=%ff%fe", nil, http.StatusBadRequest, "invalid_utf8"},
		{"a query string with a NUL", "GET", "/v1/memories?user_id=al%00ice", nil, http.StatusBadRequest, "invalid_argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, apptest.Admin, tc.method, tc.path, tc.body)
			if tc.code == "" {
				if r.Status != tc.status {
					t.Fatalf("%d %s, want %d", r.Status, r.Body, tc.status)
				}
				return
			}
			wantError(t, tc.name, r, tc.status, tc.code)
		})
	}
	// The refused delete and erase acted on nothing.
	if r := f.Do(t, "support-bot", "GET", "/v1/memories/"+m.ID, nil); r.Status != http.StatusOK {
		t.Errorf("the memory is gone after refused requests: %d %s", r.Status, r.Body)
	}
}
