package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mneme/client"
	"mneme/internal/apptest"
)

func newClient(f *apptest.Fixture, who string) *client.Client {
	return client.New(f.URL, f.Keys[who], &client.Options{Backoff: 10 * time.Millisecond})
}

func wantCode(t *testing.T, step string, err error, status int, code string) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %v, want an API error %s", step, err, code)
	}
	if e.Status != status || e.Code != code || e.RequestID == "" || e.Message == "" {
		t.Errorf("%s: %+v, want status %d code %s with a message and request id", step, e, status, code)
	}
}

func TestMemoryCallsAgainstTheRealService(t *testing.T) {
	f := apptest.Start(t)
	ctx := context.Background()
	bot := newClient(f, "support-bot")

	who, err := bot.WhoAmI(ctx)
	if err != nil || who.Kind != "agent" || who.ID != "support-bot" || who.Tenant != f.Tenant {
		t.Fatalf("whoami = %+v, %v", who, err)
	}

	w, err := bot.Add(ctx,
		client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Key: "delivery_address", Kind: "address",
			Content: "Alice's delivery address is Rua Augusta 12 in Lisbon."},
		client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Content: "Thanks!"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Results) != 2 || w.Results[0].Outcome != client.OutcomeCreated || w.Results[1].Outcome != client.OutcomeSkipped ||
		len(w.Memories) != 1 || w.Memories[0].AgentID != "support-bot" {
		t.Fatalf("add = %+v", w)
	}
	addr := w.Memories[0]

	// The same idempotency key stores the memory once.
	once := client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, IdempotencyKey: "client-test-once",
		Content: "Alice reported that parcel 7731 arrived damaged."}
	first, err := bot.Add(ctx, once)
	if err != nil {
		t.Fatal(err)
	}
	again, err := bot.Add(ctx, once)
	if err != nil || len(again.Results) != 1 || again.Results[0].ID != first.Results[0].ID {
		t.Fatalf("a replayed write: %+v, %v; want the first one's id %s", again, err, first.Results[0].ID)
	}

	got, err := bot.Get(ctx, addr.ID)
	if err != nil || got.Content != addr.Content || got.Version != 1 {
		t.Fatalf("get = %+v, %v", got, err)
	}
	page, err := bot.List(ctx, client.ListOptions{UserID: "alice", Status: "active", Limit: 10})
	if err != nil || len(page.Memories) != 2 {
		t.Fatalf("list = %+v, %v; want the address and the parcel", page, err)
	}

	content := "Alice's delivery address is Praça do Comércio 3 in Lisbon."
	updated, err := bot.Update(ctx, addr.ID, 1, client.UpdateRequest{Content: &content})
	if err != nil || updated.Content != content || updated.ID == addr.ID {
		t.Fatalf("update = %+v, %v", updated, err)
	}
	_, err = bot.Update(ctx, addr.ID, 1, client.UpdateRequest{Content: &content})
	wantCode(t, "update of a stale version", err, http.StatusConflict, "conflict")
	hist, err := bot.History(ctx, updated.ID)
	if err != nil || len(hist) != 2 || hist[0].ID != updated.ID || hist[1].ID != addr.ID {
		t.Fatalf("history = %+v, %v", hist, err)
	}

	rec, err := bot.Recall(ctx, client.RecallRequest{UserID: "alice", Query: "Where should Alice's parcel be delivered?"})
	if err != nil || !strings.Contains(rec.Context, "Praça do Comércio") || len(rec.Memories) == 0 || rec.Memories[0].Explain.Policy == "" {
		t.Fatalf("recall = %+v, %v", rec, err)
	}

	ing, err := bot.Ingest(ctx, client.IngestRequest{UserID: "alice", SessionID: "client-s1", Turns: []client.Turn{
		{Role: "user", Content: "My budget is 3000 euros for the new laptops."},
	}})
	if err != nil || !slices.ContainsFunc(ing.Memories, func(m client.Memory) bool { return m.Key == "budget" }) {
		t.Fatalf("ingest = %+v, %v", ing, err)
	}

	job, err := bot.AddAsync(ctx, client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Content: "Alice asked for a callback on Friday."})
	if err != nil || job.ID == "" {
		t.Fatalf("add async = %+v, %v", job, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if job, err = bot.WaitJob(wctx, job.ID, 50*time.Millisecond); err != nil || job.Status != "done" || len(job.Memories) != 1 {
		t.Fatalf("job = %+v, %v", job, err)
	}

	// A candidate is the user's to confirm.
	w, err = bot.Add(ctx, client.NewMemory{UserID: "alice", Type: client.TypeProfile, Kind: "preference",
		Content: "Alice seems to prefer morning deliveries.", Source: "inferred"})
	if err != nil || w.Results[0].Status != "candidate" {
		t.Fatalf("an inference: %+v, %v", w, err)
	}
	_, err = bot.Confirm(ctx, w.Results[0].ID)
	wantCode(t, "an agent confirms", err, http.StatusForbidden, "forbidden")
	if m, err := newClient(f, "alice").Confirm(ctx, w.Results[0].ID); err != nil || m.Status != "active" {
		t.Fatalf("confirm = %+v, %v", m, err)
	}

	// Another user sees nothing of alice's; deleting leaves a receipt.
	_, err = newClient(f, "bob").Get(ctx, updated.ID)
	wantCode(t, "bob reads alice's memory", err, http.StatusNotFound, "not_found")
	receipt, err := bot.Delete(ctx, updated.ID)
	if err != nil || receipt.MemoryID != updated.ID || receipt.Counts["graph.memories"] != 2 {
		t.Fatalf("delete = %+v, %v", receipt, err)
	}
	_, err = bot.Get(ctx, updated.ID)
	wantCode(t, "get after delete", err, http.StatusNotFound, "not_found")

	receipt, err = newClient(f, apptest.Admin).DeleteUser(ctx, "alice")
	if err != nil || receipt.UserID != "alice" || receipt.Counts["graph.memories"] < 3 {
		t.Fatalf("delete user = %+v, %v", receipt, err)
	}
	if page, err = bot.List(ctx, client.ListOptions{UserID: "alice"}); err != nil || len(page.Memories) != 0 {
		t.Fatalf("list after erase = %+v, %v", page, err)
	}

	_, err = client.New(f.URL, "mn_"+f.Tenant+"_notakey", nil).WhoAmI(ctx)
	wantCode(t, "a wrong key", err, http.StatusUnauthorized, "unauthenticated")
	if client.Code(err) != "unauthenticated" {
		t.Errorf("Code(err) = %q", client.Code(err))
	}
}

// flaky stands in front of the real service and answers 503 to the first
// failures requests, as a replica whose store is down would.
type flaky struct {
	mu       sync.Mutex
	failures int
	keys     []string // Idempotency-Key and the body of each request seen
	bodies   []string
	next     http.Handler
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	f.mu.Lock()
	f.keys = append(f.keys, r.Header.Get("Idempotency-Key"))
	f.bodies = append(f.bodies, string(body))
	fail := f.failures > 0
	f.failures--
	f.mu.Unlock()
	if fail {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"code":"unavailable","message":"a backing store is unavailable; retry later","request_id":"flaky"}`)
		return
	}
	f.next.ServeHTTP(w, r)
}

func TestRetriesOn503WithTheSameIdempotencyKey(t *testing.T) {
	f := apptest.Start(t)
	ctx := context.Background()
	target, _ := url.Parse(f.URL)
	proxy := &flaky{failures: 2, next: httputil.NewSingleHostReverseProxy(target)}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	c := client.New(srv.URL, f.Keys["support-bot"], &client.Options{Backoff: 5 * time.Millisecond})

	w, err := c.Add(ctx, client.NewMemory{UserID: "carol", Type: client.TypeSemantic, Content: "Carol's office is in Porto."})
	if err != nil || len(w.Memories) != 1 {
		t.Fatalf("add through two 503s = %+v, %v", w, err)
	}
	if len(proxy.bodies) != 3 || proxy.bodies[0] != proxy.bodies[2] || !strings.Contains(proxy.bodies[0], `"idempotency_key":"go-`) {
		t.Errorf("attempts %q: want three identical bodies with an idempotency key", proxy.bodies)
	}

	proxy.mu.Lock()
	proxy.failures, proxy.keys, proxy.bodies = 2, nil, nil
	proxy.mu.Unlock()
	job, err := c.AddAsync(ctx, client.NewMemory{UserID: "carol", Type: client.TypeSemantic, Content: "Carol's team is moving to Braga."})
	if err != nil || job.ID == "" {
		t.Fatalf("add async through two 503s = %+v, %v", job, err)
	}
	if len(proxy.keys) != 3 || proxy.keys[0] == "" || proxy.keys[0] != proxy.keys[2] {
		t.Errorf("Idempotency-Key per attempt %q: want one key sent three times", proxy.keys)
	}

	// Past its retries, the client gives the API's error.
	proxy.mu.Lock()
	proxy.failures, proxy.keys = 10, nil
	proxy.mu.Unlock()
	c = client.New(srv.URL, f.Keys["support-bot"], &client.Options{Backoff: time.Millisecond, MaxRetries: 2})
	_, err = c.Get(ctx, "mem_whatever")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || e.Code != "unavailable" {
		t.Fatalf("get through 503s = %v, want unavailable", err)
	}
	if len(proxy.keys) != 3 {
		t.Errorf("%d attempts, want 1 and 2 retries", len(proxy.keys))
	}
}
