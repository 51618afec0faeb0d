// Package apptest runs a whole Mneme — the real router, graph store, policy
// engine and embedder — on a loopback port against the Neo4j and Redis of
// internal/testenv, and gives each test its own tenant with API keys.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"mneme/app"
	"mneme/client"
	"mneme/handlers"
	"mneme/identity"
	"mneme/internal/testenv"
	"mneme/memory"
)

// Principals every fixture tenant has, by name. Agents and users share the
// name as their id.
var (
	Agents   = map[string]string{"support-bot": "support", "order-bot": "orders", "finance-bot": "finance"}
	Users    = []string{"alice", "bob", "carol"}
	Admin    = "admin"
	Analyst  = "analyst"
	shared   sync.Once
	instance *app.App
	server   *httptest.Server
	startErr error
)

// Fixture is one test's view of the running service.
type Fixture struct {
	URL    string
	App    *app.App
	Tenant string
	// Keys maps a principal name ("support-bot", "alice", "admin", …) to its
	// API key in this fixture's tenant.
	Keys map[string]string
}

// Start returns a fixture with a fresh tenant. The service itself is shared
// by every test of the binary, and so are its workers (App.RunWorkers: queued
// writes are applied, recalls recorded, decisions logged, sessions expired):
// they run as long as the test binary does.
func Start(t testing.TB) *Fixture {
	t.Helper()
	testenv.Neo4j(t) // skips in -short mode, fails without NEO4J_URI
	redisURL := testenv.RedisURL(t)
	shared.Do(func() {
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		if os.Getenv("MNEME_TEST_LOG") != "" {
			log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		instance, startErr = app.New(context.Background(), config(redisURL), log)
		if startErr == nil {
			// The shared service outlives every test, so nothing stops
			// its workers: the process's exit does.
			_ = instance.StartWorkers(context.Background())
			// As memoryd does at start: an analyst's first query must not
			// wait for Neo4j to plan its statements (a test may meet a
			// Neo4j nothing has queried yet).
			if instance.Graph != nil {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_ = instance.Graph.WarmUp(ctx)
				cancel()
			}
			server = httptest.NewServer(instance.Handler)
		}
	})
	if startErr != nil {
		t.Fatalf("start mneme: %v", startErr)
	}
	return provision(t, instance, server.URL)
}

// StartLogged is Start with a Mneme of the test's own whose log, at debug
// level and with request ids, goes to w. Tests that must prove what is never
// logged use it, and tests that apply its queue themselves: it runs every
// worker but the queue workers. Its workers are stopped and it is closed
// when the test ends.
func StartLogged(t testing.TB, w io.Writer) *Fixture {
	t.Helper()
	testenv.Neo4j(t)
	log := slog.New(handlers.LogHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})))
	cfg := config(testenv.RedisURL(t))
	cfg.Queue.Workers = false
	a, url := serve(t, cfg, log)
	return provision(t, a, url)
}

func config(redisURL string) app.Config {
	cfg := app.Defaults()
	cfg.Neo4j.URI = os.Getenv(testenv.EnvNeo4jURI)
	cfg.Neo4j.User = os.Getenv(testenv.EnvNeo4jUser)
	cfg.Neo4j.Password = os.Getenv(testenv.EnvNeo4jPassword)
	cfg.Neo4j.Database = testenv.Neo4jDatabase()
	cfg.Redis.URL = redisURL
	if os.Getenv(testenv.EnvAppOnCluster) != "" {
		cfg.Redis.Cluster = os.Getenv(testenv.EnvRedisClusterAddrs)
	}
	cfg.Identity.KeySecret = testenv.KeySecret()
	// The lexical embedder: fast and deterministic; tests of the real model
	// load it themselves.
	cfg.Embedding.Kind, cfg.Embedding.Dim = app.EmbedderBuiltin, testenv.EmbeddingDimension
	// A loaded CI machine (a test that boots a Neo4j of its own beside
	// the others) must not fail a start, turn slow decisions into denials
	// or a slow store into a stalled one; the stall test sets its own.
	cfg.Server.StartTimeout = 90 * time.Second
	cfg.Policy.Timeout = 5 * time.Second
	cfg.Server.StallTimeout = 10 * time.Second
	// A queue of this test process's own: workers of other processes on
	// the same Redis must not apply its jobs to their graphs.
	cfg.Queue.Prefix = "mneme-test-" + memory.NewID("q")
	return cfg
}

// provision gives a fixture a fresh tenant with its agents, users and keys.
func provision(t testing.TB, instance *app.App, url string) *Fixture {
	t.Helper()
	f := &Fixture{URL: url, App: instance, Tenant: testenv.Tenant(t), Keys: map[string]string{}}
	ctx := context.Background()
	add := func(name string, p memory.Principal, team ...string) {
		key := identity.NewAPIKey(f.Tenant)
		if err := instance.Identity.PutKey(ctx, key, p, teamOf(team)); err != nil {
			t.Fatalf("put api key for %s: %v", name, err)
		}
		f.Keys[name] = key
	}
	for id, team := range Agents {
		if err := instance.Keys.EnsureAgent(ctx, f.Tenant, id, team); err != nil {
			t.Fatalf("ensure agent: %v", err)
		}
		add(id, memory.Principal{Tenant: f.Tenant, Kind: memory.KindAgent, ID: id}, team)
	}
	for _, id := range Users {
		if err := instance.Keys.EnsureUser(ctx, f.Tenant, id, ""); err != nil {
			t.Fatalf("ensure user: %v", err)
		}
		add(id, memory.Principal{Tenant: f.Tenant, Kind: memory.KindUser, ID: id})
	}
	add(Admin, memory.Principal{Tenant: f.Tenant, Kind: memory.KindAdmin, ID: Admin})
	add(Analyst, memory.Principal{Tenant: f.Tenant, Kind: memory.KindAnalyst, ID: Analyst, Roles: []string{"analyst"}})
	return f
}

// AddUser gives the fixture's tenant one more user, with an API key under
// the user's id. Tests that look for a user's id in every key and value use
// it: the shared users' ids occur in every tenant.
func (f *Fixture) AddUser(t testing.TB, id string) {
	t.Helper()
	ctx := context.Background()
	if err := f.App.Keys.EnsureUser(ctx, f.Tenant, id, ""); err != nil {
		t.Fatalf("ensure user: %v", err)
	}
	key := identity.NewAPIKey(f.Tenant)
	if err := f.App.Identity.PutKey(ctx, key, memory.Principal{Tenant: f.Tenant, Kind: memory.KindUser, ID: id}, ""); err != nil {
		t.Fatalf("put api key for %s: %v", id, err)
	}
	f.Keys[id] = key
}

// Response is what a request got back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode unmarshals the body into v or fails the test.
func (r Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Do sends a request as the named principal ("" for no key). body may be
// nil, a []byte sent as is, or a value encoded as JSON.
func (f *Fixture) Do(t testing.TB, who, method, path string, body any, headers ...string) Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode request: %v", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, f.URL+path, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if who != "" {
		key, ok := f.Keys[who]
		if !ok {
			key = who // a raw key, for tests of bad keys
		}
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	if Observe != nil {
		Observe(t, req, resp, raw)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// Observe, when set, sees every request and response; the OpenAPI test uses
// it to validate real traffic against the document.
var Observe func(t testing.TB, req *http.Request, resp *http.Response, body []byte)

// Client returns a Go client of the service acting as the named principal
// (a name of Keys, or a raw key or token). Its traffic passes Observe like
// Do's, and it never retries, so that a test sees each answer the service
// gave.
func (f *Fixture) Client(t testing.TB, who string) *client.Client {
	t.Helper()
	key, ok := f.Keys[who]
	if !ok {
		key = who
	}
	return client.New(f.URL, key, &client.Options{MaxRetries: -1, HTTPClient: &http.Client{
		Timeout: 2 * time.Minute, Transport: observed{t: t, next: http.DefaultTransport},
	}})
}

// observed hands every exchange to Observe, with the answer's body read
// and put back for the client.
type observed struct {
	t    testing.TB
	next http.RoundTripper
}

func (o observed) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(req)
	if err != nil || Observe == nil {
		return resp, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	Observe(o.t, req, resp, raw)
	return resp, nil
}

// teamOf is the optional team of a principal the fixture registers.
func teamOf(team []string) string {
	if len(team) == 0 {
		return ""
	}
	return team[0]
}
