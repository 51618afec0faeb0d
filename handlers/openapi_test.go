package handlers_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"

	"mneme/client"
	"mneme/export"
	"mneme/graphquery"
	"mneme/handlers"
	"mneme/identity"
	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
	"mneme/workingmemory"
)

// loadDocument parses and validates the document the server embeds and
// serves at /openapi.json.
func loadDocument(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(handlers.OpenAPI)
	if err != nil {
		t.Fatalf("load openapi.json: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI 3 document: %v", err)
	}
	return doc
}

// documentedOperations returns "METHOD /path" for every operation in doc.
func documentedOperations(doc *openapi3.T) []string {
	var ops []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			ops = append(ops, method+" "+path)
		}
	}
	slices.Sort(ops)
	return ops
}

var ginParam = regexp.MustCompile(`[:*]([^/]+)`)

func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc := loadDocument(t)

	engine, ok := routesOnly(t).(*gin.Engine)
	if !ok {
		t.Fatal("handlers.New no longer returns a *gin.Engine; adapt this test")
	}
	var registered []string
	for _, r := range engine.Routes() {
		registered = append(registered, r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}"))
	}
	slices.Sort(registered)
	if diff := cmp.Diff(registered, documentedOperations(doc)); diff != "" {
		t.Errorf("documented operations differ from the router's routes (-router +document):\n%s", diff)
	}

	// Every operation can fail unexpectedly, and every keyed one can be
	// refused a key or a malformed query string; a route added without
	// them is probably undocumented.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			want := []string{"500"}
			if strings.HasPrefix(path, "/v1/") {
				want = append(want, "400", "401", "503")
			}
			for _, status := range want {
				if op.Responses.Value(status) == nil {
					t.Errorf("%s %s does not document status %s", method, path, status)
				}
			}
		}
	}
}

// routesOnly returns the router over services whose parts are never
// called: it is for listing routes, not for serving a request.
func routesOnly(t *testing.T) http.Handler {
	t.Helper()
	type (
		store          struct{ memory.Store }
		authz          struct{ memory.Authorizer }
		embedder       struct{ memory.Embedder }
		policies       struct{ policyadmin.PolicyStore }
		grants         struct{ policyadmin.GrantStore }
		agentDirectory struct{ policyadmin.Directory }
		engine         struct{ policyadmin.PolicyEngine }
		adminAuthz     struct{ policyadmin.Authorizer }
		bus            struct{ policyadmin.RevisionBus }
		decisions      struct{ policyadmin.DecisionLog }
		keys           struct{ identity.Store }
		epochs         struct{ identity.Epochs }
	)
	type (
		guard     struct{ memory.GuardPolicy }
		writes    struct{ memory.DedupStore }
		warm      struct{ memory.WriteWarmer }
		confirm   struct{ memory.Confirmer }
		forget    struct{ memory.Forgetter }
		fence     struct{ memory.Fencer }
		eraser    struct{ memory.Eraser }
		sweeper   struct{ memory.Sweeper }
		extractor struct{ memory.Extractor }
		sessions  struct{ memory.SessionStore }
		jobs      struct{ memory.JobQueue }
		search    struct{ memory.SearchStore }
		recorder  struct{ memory.RecallRecorder }
		auditor   struct{ memory.Auditor }
		auditLog  struct{ policyadmin.AuditLog }
	)
	svc, err := memory.NewService(memory.Options{
		Store: store{}, Authz: authz{}, Embed: embedder{}, Guard: guard{}, Writes: writes{}, Warm: warm{},
		Confirm: confirm{}, Forget: forget{}, Fence: fence{}, Erasers: []memory.Eraser{eraser{}}, Janitor: sweeper{},
		Sessions: sessions{}, Queue: jobs{}, Search: search{}, Recorder: recorder{},
		Audit: auditor{},
	})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := policyadmin.New(policyadmin.Options{
		Policies: policies{}, Grants: grants{}, Principals: agentDirectory{}, Engine: engine{}, Authz: adminAuthz{}, Bus: bus{}, Decisions: decisions{},
		Audit: auditor{}, AuditLog: auditLog{},
	})
	if err != nil {
		t.Fatal(err)
	}
	hasher, err := identity.NewHasher("routes-only-secret-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	ident, err := identity.New(identity.Options{Store: keys{}, Epochs: epochs{}, Hasher: hasher})
	if err != nil {
		t.Fatal(err)
	}
	working, err := workingmemory.New(workingmemory.Options{Memories: svc, Sessions: sessions{}, Authz: authz{}, Extract: extractor{}, Queue: jobs{}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handlers.New(handlers.Options{
		Service: svc, Recalls: recallLogs{}, Admin: admin, Identity: ident, Sessions: working,
		Metrics: http.NotFoundHandler(), Panel: http.NotFoundHandler(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestNewRequiresEveryService(t *testing.T) {
	if _, err := handlers.New(handlers.Options{}); err == nil ||
		!strings.Contains(err.Error(), "Service") || !strings.Contains(err.Error(), "Admin") || !strings.Contains(err.Error(), "Identity") ||
		!strings.Contains(err.Error(), "Sessions") || !strings.Contains(err.Error(), "Recalls") {
		t.Errorf("handlers.New(Options{}) = %v, want an error naming Service, Recalls, Admin, Identity and Sessions", err)
	}
}

// recallLogs stands in for the recall log where routes are only listed.
type recallLogs struct{ handlers.RecallLogs }

// validator checks real traffic against the document.
type validator struct {
	doc    *openapi3.T
	router routers.Router

	mu   sync.Mutex
	seen map[string]bool // "METHOD /path" of documented operations seen
	n    int             // responses validated
}

func newValidator(t testing.TB, doc *openapi3.T) *validator {
	t.Helper()
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("openapi router: %v", err)
	}
	return &validator{doc: doc, router: router, seen: map[string]bool{}}
}

// observe is the apptest.Observe hook.
func (v *validator) observe(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	if err := v.check(req, resp, body); err != nil {
		t.Errorf("%s %s → %d does not match openapi.json: %v\nbody: %.500s", req.Method, req.URL.RequestURI(), resp.StatusCode, err, body)
	}
}

func (v *validator) check(req *http.Request, resp *http.Response, body []byte) error {
	ctx := req.Context()
	route, params, err := v.router.FindRoute(req)
	switch {
	case errors.Is(err, routers.ErrPathNotFound), errors.Is(err, routers.ErrMethodNotAllowed):
		// Not an operation of the document: the answer must be one of the
		// route errors the document describes in components/responses.
		route = v.routeErrors(req)
	case err != nil:
		return fmt.Errorf("find route: %w", err)
	default:
		v.mu.Lock()
		v.seen[req.Method+" "+route.Path] = true
		v.mu.Unlock()
	}
	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		ExcludeRequestBody:    true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		MultiError:            true,
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: opts,
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fmt.Errorf("response: %w", err)
	}
	v.mu.Lock()
	v.n++
	v.mu.Unlock()

	// A request the server accepted must be one the document accepts, or the
	// document is stricter than the handlers. The client consumed the body;
	// GetBody gives it back.
	if resp.StatusCode < 300 {
		reqIn := &openapi3filter.RequestValidationInput{
			Request: req.Clone(ctx), PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
		}
		if req.GetBody != nil {
			if reqIn.Request.Body, err = req.GetBody(); err != nil {
				return fmt.Errorf("request body: %w", err)
			}
		}
		if err := openapi3filter.ValidateRequest(ctx, reqIn); err != nil {
			return fmt.Errorf("the server accepted a request the document rejects: %w", err)
		}
	}
	return nil
}

// routeErrors is a stand-in operation for requests that match no documented
// operation: they may only get the document's route errors.
func (v *validator) routeErrors(req *http.Request) *routers.Route {
	rs := v.doc.Components.Responses
	return &routers.Route{
		Spec: v.doc, Path: req.URL.Path, Method: req.Method,
		Operation: &openapi3.Operation{Responses: openapi3.NewResponses(
			openapi3.WithStatus(http.StatusNotFound, rs["RouteNotFound"]),
			openapi3.WithStatus(http.StatusMethodNotAllowed, rs["MethodNotAllowed"]),
		)},
	}
}

func (v *validator) validated() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.n
}

func (v *validator) missing() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for _, op := range documentedOperations(v.doc) {
		if !v.seen[op] {
			out = append(out, op)
		}
	}
	return out
}

// TestOpenAPIValidatorCatchesDrift shows that the validator behind
// TestResponsesMatchOpenAPI rejects what it must, so that test cannot pass
// because the document is too loose.
func TestOpenAPIValidatorCatchesDrift(t *testing.T) {
	v := newValidator(t, loadDocument(t))
	const memoryJSON = `{"id":"mem_1","tenant":"t-1","user_id":"alice","agent_id":"order-bot","type":"semantic",` +
		`"content":"x","status":"active","sensitivity":"internal","importance":0.5,"confidence":1,` +
		`"valid_from":"2026-03-01T00:00:00Z","created_at":"2026-03-01T00:00:00Z","updated_at":"2026-03-01T00:00:00Z","version":1%s}`
	mem := fmt.Sprintf(memoryJSON, "")
	tests := []struct {
		name    string
		method  string
		path    string
		status  int
		headers []string
		body    string
		ok      bool
	}{
		{"a memory", "GET", "/v1/memories/mem_1", 200, []string{"ETag", `"1"`}, mem, true},
		{"an undocumented field", "GET", "/v1/memories/mem_1", 200, []string{"ETag", `"1"`}, fmt.Sprintf(memoryJSON, `,"embedding":[0.1]`), false},
		{"a required field missing", "GET", "/v1/memories/mem_1", 200, []string{"ETag", `"1"`}, strings.Replace(mem, `"status":"active",`, "", 1), false},
		{"a value outside its enum", "GET", "/v1/memories/mem_1", 200, []string{"ETag", `"1"`}, strings.Replace(mem, `"semantic"`, `"gossip"`, 1), false},
		{"a required header missing", "GET", "/v1/memories/mem_1", 200, nil, mem, false},
		{"an undocumented status", "GET", "/v1/memories/mem_1", 418, nil, `{"code":"internal","message":"m","request_id":"r"}`, false},
		{"an error code of another status", "GET", "/v1/memories/mem_1", 404, nil, `{"code":"forbidden","message":"m","request_id":"r"}`, false},
		{"an unknown route", "GET", "/v1/nowhere", 404, nil, `{"code":"route_not_found","message":"m","request_id":"r"}`, true},
		{"a wrong method", "PUT", "/v1/memories", 405, []string{"Allow", "GET, POST"}, `{"code":"method_not_allowed","message":"m","request_id":"r"}`, true},
		{"a wrong method without Allow", "PUT", "/v1/memories", 405, nil, `{"code":"method_not_allowed","message":"m","request_id":"r"}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{}}
			resp.Header.Set("Content-Type", "application/json; charset=utf-8")
			resp.Header.Set("X-Request-ID", "r")
			for i := 0; i+1 < len(tc.headers); i += 2 {
				resp.Header.Set(tc.headers[i], tc.headers[i+1])
			}
			err := v.check(req, resp, []byte(tc.body))
			if ok := err == nil; ok != tc.ok {
				t.Errorf("valid = %v, want %v (err: %v)", ok, tc.ok, err)
			}
		})
	}
}

// expectResponse fails the test unless r has the status and, when one is
// given and not empty, the error code.
func expectResponse(t testing.TB, step string, r apptest.Response, status int, code ...string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d; body %.500s", step, r.Status, status, r.Body)
	}
	if len(code) > 0 && code[0] != "" {
		var e struct{ Code string }
		r.Decode(t, &e)
		if e.Code != code[0] {
			t.Errorf("%s: code %q, want %q", step, e.Code, code[0])
		}
	}
}

// TestResponsesMatchOpenAPI drives every route of the real service and
// validates each response against openapi.json.
func TestResponsesMatchOpenAPI(t *testing.T) {
	f := apptest.Start(t)
	v := newValidator(t, loadDocument(t))
	apptest.Observe = v.observe
	t.Cleanup(func() { apptest.Observe = nil })
	// The panel's pages are HTML: checked as text against the document.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
	t.Cleanup(func() { openapi3filter.UnregisterBodyDecoder("text/html") })

	start := time.Now().UTC().Add(-time.Minute)
	const bot = "order-bot"

	// The Go client's traffic, which most end-to-end tests send, passes
	// the validator too.
	before := v.validated()
	if _, err := f.Client(t, bot).WhoAmI(t.Context()); err != nil || v.validated() != before+1 {
		t.Fatalf("a client call: %v; validated %d exchanges, want %d", err, v.validated(), before+1)
	}

	// Create one, then a batch.
	r := f.Do(t, bot, "POST", "/v1/memories", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Key: "budget", Kind: "preference", SessionID: "s-1",
		Content: "Alice's monthly budget for office supplies is 500 euros", Source: "chat",
		Entities: []memory.Entity{{ID: "company-acme", Kind: "company", Name: "Acme"}},
	})
	expectResponse(t, "create one", r, http.StatusCreated)
	var first memory.Memory
	r.Decode(t, &first)
	if got := r.Header.Get("ETag"); got != `"1"` {
		t.Errorf("create one: ETag %q, want 1", got)
	}

	r = f.Do(t, bot, "POST", "/v1/memories", map[string]any{"memories": []memory.NewMemory{
		{UserID: "alice", Type: memory.TypeEpisodic, Content: "Alice asked when order 42 will be delivered"},
		{UserID: "alice", Type: memory.TypeProcedural, Content: "Refunds over 100 euros need a manager's approval", Sensitivity: memory.SensitivityPublic},
	}})
	expectResponse(t, "create batch", r, http.StatusCreated)
	r = f.Do(t, bot, "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "Thanks!"})
	expectResponse(t, "create chit-chat", r, http.StatusOK)
	r = f.Do(t, bot, "POST", "/v1/memories", map[string]any{"memories": []memory.NewMemory{
		{UserID: "alice", Type: memory.TypeEpisodic, Content: "ok"},
		{UserID: "alice", Type: memory.TypeEpisodic, Content: "Alice paid with card 4111 1111 1111 1111", Source: memory.SourceInferred},
	}})
	expectResponse(t, "create batch with a skip and a candidate", r, http.StatusCreated)
	var withCandidate struct{ Memories []memory.Memory }
	r.Decode(t, &withCandidate)
	r = f.Do(t, "alice", "POST", "/v1/memories/"+withCandidate.Memories[0].ID+"/confirm", nil)
	expectResponse(t, "confirm", r, http.StatusOK)
	r = f.Do(t, bot, "POST", "/v1/memories/"+withCandidate.Memories[0].ID+"/confirm", nil)
	expectResponse(t, "confirm as an agent", r, http.StatusForbidden, "forbidden")
	r = f.Do(t, bot, "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "Alice asked when order 42 will be delivered."})
	expectResponse(t, "create a repeat", r, http.StatusOK)

	// An asynchronous write, and its job until a worker has applied it.
	r = f.Do(t, bot, "POST", "/v1/memories?async=true", memory.NewMemory{
		UserID: "alice", Type: memory.TypeEpisodic, Content: "Alice asked for a callback tomorrow morning",
	}, "Idempotency-Key", "openapi-async-1")
	expectResponse(t, "create async", r, http.StatusAccepted)
	reused := f.Do(t, bot, "POST", "/v1/memories?async=true", memory.NewMemory{
		UserID: "alice", Type: memory.TypeEpisodic, Content: "Alice asked for a callback on Friday",
	}, "Idempotency-Key", "openapi-async-1")
	expectResponse(t, "create async, the key again with another body", reused, http.StatusUnprocessableEntity, "idempotency_key_reused")
	var job memory.JobStatus
	r.Decode(t, &job)
	deadline := time.Now().Add(30 * time.Second)
	for {
		r = f.Do(t, bot, "GET", "/v1/jobs/"+job.ID, nil)
		expectResponse(t, "job", r, http.StatusOK)
		r.Decode(t, &job)
		if job.Status != memory.JobQueued && job.Status != memory.JobRunning || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if job.Status != memory.JobDone || len(job.Memories) != 1 {
		t.Errorf("async job: %+v, want done with one memory", job)
	}

	r = f.Do(t, bot, "GET", "/v1/memories/"+first.ID, nil)
	expectResponse(t, "get", r, http.StatusOK)
	if got := r.Header.Get("ETag"); got != `"1"` {
		t.Errorf("get: ETag %q, want 1", got)
	}

	// List: filters, then two pages of one.
	q := url.Values{"user_id": {"alice"}, "status": {"active"}, "limit": {"1"},
		"from": {start.Format(time.RFC3339)}, "to": {time.Now().UTC().Add(time.Hour).Format(time.RFC3339)}}
	r = f.Do(t, bot, "GET", "/v1/memories?"+q.Encode(), nil)
	expectResponse(t, "list page 1", r, http.StatusOK)
	var page memory.Page
	r.Decode(t, &page)
	if len(page.Memories) != 1 || page.NextCursor == "" {
		t.Fatalf("list page 1: %d memories, cursor %q; want 1 and a cursor", len(page.Memories), page.NextCursor)
	}
	q.Set("cursor", page.NextCursor)
	r = f.Do(t, bot, "GET", "/v1/memories?"+q.Encode(), nil)
	expectResponse(t, "list page 2", r, http.StatusOK)
	r = f.Do(t, bot, "GET", "/v1/memories?user_id=alice&type=semantic&kind=preference", nil)
	expectResponse(t, "list by type and kind", r, http.StatusOK)
	r = f.Do(t, bot, "GET", "/v1/memories?user_id=alice&to=0001-01-01T00:00:00Z", nil)
	expectResponse(t, "list up to the year 1, which would read as no bound", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, apptest.Admin, "GET", "/v1/audit?since=1969-12-31T23:59:59Z", nil)
	expectResponse(t, "audit since before 1970", r, http.StatusBadRequest, "invalid_argument")

	// Update with the current version, then with a stale one.
	r = f.Do(t, bot, "PATCH", "/v1/memories/"+first.ID,
		map[string]any{"content": "Alice's monthly budget for office supplies is 650 euros", "importance": 0.9},
		"If-Match", `"1"`)
	expectResponse(t, "patch", r, http.StatusOK)
	var second memory.Memory
	r.Decode(t, &second)
	if got := r.Header.Get("ETag"); got != `"2"` || second.Supersedes != first.ID {
		t.Errorf("patch: ETag %q, supersedes %q; want 2 and %s", got, second.Supersedes, first.ID)
	}
	r = f.Do(t, bot, "PATCH", "/v1/memories/"+second.ID, map[string]any{"kind": "budget"}, "If-Match", "1")
	expectResponse(t, "patch with a stale If-Match", r, http.StatusConflict, "conflict")

	r = f.Do(t, bot, "GET", "/v1/memories/"+second.ID+"/history", nil)
	expectResponse(t, "history", r, http.StatusOK)

	// Recall: a query that matches, and one that matches nothing.
	r = f.Do(t, bot, "POST", "/v1/recall", memory.RecallRequest{UserID: "alice", Query: "office supplies budget", K: 3})
	expectResponse(t, "recall", r, http.StatusOK)
	var res memory.RecallResult
	r.Decode(t, &res)
	if len(res.Memories) == 0 {
		t.Errorf("recall: no memories; the Recalled and Explain schemas went unchecked")
	}
	r = f.Do(t, bot, "POST", "/v1/recall", memory.RecallRequest{UserID: "alice", Query: "zebra saxophone quasar"})
	expectResponse(t, "recall nothing", r, http.StatusOK)
	res = memory.RecallResult{}
	r.Decode(t, &res)
	if len(res.Memories) != 0 {
		t.Errorf("recall nothing: got %d memories, first %q because %+v", len(res.Memories), res.Memories[0].Memory.Content, res.Memories[0].Explain)
	}

	// Grants: an admin creates, lists and deletes one; an agent may not.
	expires := time.Now().UTC().Add(24 * time.Hour)
	r = f.Do(t, apptest.Admin, "POST", "/v1/grants", policyadmin.NewGrant{
		Grantee: "support-bot", Source: bot, Types: []string{memory.TypeSemantic},
		Kinds: []string{"preference"}, MaxSensitivity: memory.SensitivityInternal, ExpiresAt: &expires,
	})
	expectResponse(t, "create grant", r, http.StatusCreated)
	var grant memory.Grant
	r.Decode(t, &grant)
	r = f.Do(t, apptest.Admin, "GET", "/v1/grants", nil)
	expectResponse(t, "list grants", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "GET", "/v1/grants/"+grant.ID, nil)
	expectResponse(t, "get grant", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "PATCH", "/v1/grants/"+grant.ID, map[string]any{"kinds": []string{}, "no_expiry": true})
	expectResponse(t, "change grant", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "PATCH", "/v1/grants/"+grant.ID, map[string]any{"max_sensitivity": "secret"})
	expectResponse(t, "change grant badly", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, apptest.Admin, "PATCH", "/v1/grants/"+grant.ID, map[string]any{})
	expectResponse(t, "change nothing of a grant", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, apptest.Admin, "DELETE", "/v1/grants/"+grant.ID, nil)
	expectResponse(t, "delete grant", r, http.StatusNoContent)
	r = f.Do(t, apptest.Admin, "DELETE", "/v1/grants/"+grant.ID, nil)
	expectResponse(t, "delete grant again", r, http.StatusNotFound, "not_found")

	// Ingest: turns with a budget, then chit-chat that stores nothing.
	r = f.Do(t, bot, "POST", "/v1/ingest?sync=true", memory.IngestRequest{UserID: "alice", SessionID: "s-ingest", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "我们的预算是15万，订单 SO-1004 请周五前送到杭州。", At: time.Now().UTC()},
		{Role: memory.RoleAssistant, Content: "好的。"},
	}})
	expectResponse(t, "ingest", r, http.StatusOK)
	r = f.Do(t, bot, "POST", "/v1/ingest", memory.IngestRequest{UserID: "alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "thanks!"}}})
	expectResponse(t, "ingest queued", r, http.StatusAccepted)

	// Sessions: open with turns, read, recall with the session, close.
	r = f.Do(t, bot, "POST", "/v1/sessions/s-open/turns", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "Remember that the loading dock closes at 5 pm."},
	}})
	expectResponse(t, "append turns", r, http.StatusOK)
	r = f.Do(t, bot, "GET", "/v1/sessions/s-open", nil)
	expectResponse(t, "get session", r, http.StatusOK)
	r = f.Do(t, bot, "POST", "/v1/sessions/s-open/turns", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "This was said long before.", At: time.Now().UTC().Add(-time.Hour)},
	}})
	expectResponse(t, "append a turn out of order", r, http.StatusUnprocessableEntity, "turn_out_of_order")
	r = f.Do(t, bot, "POST", "/v1/sessions/s-other/turns", memory.AppendRequest{UserID: "Alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "Hello."}}})
	expectResponse(t, "append about a case twin of a user", r, http.StatusConflict, "user_id_case_conflict")
	r = f.Do(t, bot, "POST", "/v1/ingest?sync=true", memory.IngestRequest{UserID: "bob", SessionID: "s-open", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "My budget is 20k."},
	}})
	expectResponse(t, "ingest in another user's session", r, http.StatusConflict, "session_taken")
	r = f.Do(t, bot, "POST", "/v1/ingest", memory.IngestRequest{UserID: "ALICE", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "My budget is 20k."}}})
	expectResponse(t, "ingest about a case twin of a user", r, http.StatusConflict, "user_id_case_conflict")
	r = f.Do(t, bot, "POST", "/v1/memories", memory.NewMemory{UserID: "Alice", Type: memory.TypeEpisodic, Content: "Alice asked about order 43"})
	expectResponse(t, "create about a case twin of a user", r, http.StatusConflict, "user_id_case_conflict")
	r = f.Do(t, bot, "POST", "/v1/recall", memory.RecallRequest{UserID: "alice", SessionID: "s-open", Query: "office supplies budget"})
	expectResponse(t, "recall with session", r, http.StatusOK)
	r = f.Do(t, bot, "POST", "/v1/sessions/s-open/close", nil)
	expectResponse(t, "close session", r, http.StatusOK)
	r = f.Do(t, bot, "GET", "/v1/sessions/s-open", nil)
	expectResponse(t, "get closed session", r, http.StatusNotFound, "not_found")

	exercisePolicyRoutes(t, f)

	// The recall above is logged after the answer: wait for it.
	logDeadline := time.Now().Add(10 * time.Second)
	for {
		r = f.Do(t, apptest.Admin, "GET", "/v1/recall-log?user_id=alice&limit=5", nil)
		expectResponse(t, "recall log", r, http.StatusOK)
		var log struct{ Recalls []memory.RecallRecord }
		r.Decode(t, &log)
		if len(log.Recalls) > 0 || time.Now().After(logDeadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Who am I, by either header.
	r = f.Do(t, apptest.Analyst, "GET", "/v1/whoami", nil)
	expectResponse(t, "whoami", r, http.StatusOK)
	r = f.Do(t, "", "GET", "/v1/whoami", nil, "X-API-Key", f.Keys[bot])
	expectResponse(t, "whoami by X-API-Key", r, http.StatusOK)
	r = f.Do(t, bot, "GET", "/v1/whoami?x=1;y=2", nil)
	expectResponse(t, "whoami with a malformed query string", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, bot, "GET", "/v1/whoami?verbose=1", nil)
	expectResponse(t, "whoami with a parameter it does not take", r, http.StatusBadRequest, "invalid_argument")

	// Principals and keys.
	exerciseIdentity(t, f)
	exerciseGraph(t, f)

	// Delete, then it is gone.
	r = f.Do(t, bot, "DELETE", "/v1/memories/"+second.ID+"?reason="+strings.Repeat("x", memory.MaxDeleteReason+1), nil)
	expectResponse(t, "delete with a reason too long", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, bot, "DELETE", "/v1/memories/"+second.ID+"?reason=the+customer+asked", nil)
	expectResponse(t, "delete", r, http.StatusOK)
	r = f.Do(t, bot, "GET", "/v1/memories/"+second.ID, nil)
	expectResponse(t, "get deleted", r, http.StatusNotFound, "not_found")

	// Who may see what: the tenant's settings, and a data-subject export.
	r = f.Do(t, apptest.Admin, "GET", "/v1/policy/settings", nil)
	expectResponse(t, "settings", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "PUT", "/v1/policy/settings", map[string]any{"user_max_sensitivity": memory.SensitivityInternal, "users_read_shared": false})
	expectResponse(t, "put settings", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "PUT", "/v1/policy/settings", map[string]any{"user_max_sensitivity": memory.SensitivityInternal})
	expectResponse(t, "put settings without users_read_shared", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, apptest.Admin, "PATCH", "/v1/policy/settings", map[string]any{"user_max_sensitivity": memory.SensitivityInternal})
	expectResponse(t, "patch settings", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "PATCH", "/v1/policy/settings", policyadmin.Settings{UserMaxSensitivity: "secret"})
	expectResponse(t, "patch a bad setting", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, apptest.Admin, "PUT", "/v1/policy/settings", []byte("null"))
	expectResponse(t, "put settings of null", r, http.StatusBadRequest, "bad_json")
	r = f.Do(t, "alice", "PUT", "/v1/policy/settings", policyadmin.Settings{UserMaxSensitivity: memory.SensitivityRestricted})
	expectResponse(t, "put settings as a user", r, http.StatusForbidden, "forbidden")
	r = f.Do(t, "alice", "PATCH", "/v1/policy/settings", policyadmin.Settings{UserMaxSensitivity: memory.SensitivityRestricted})
	expectResponse(t, "patch settings as a user", r, http.StatusForbidden, "forbidden")
	r = f.Do(t, apptest.Admin, "GET", "/v1/users/alice/export", nil)
	expectResponse(t, "export", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "GET", "/v1/users/nobody-here/export", nil)
	expectResponse(t, "export of nobody", r, http.StatusNotFound, "not_found")
	r = f.Do(t, bot, "GET", "/v1/users/alice/export", nil)
	expectResponse(t, "export as an agent", r, http.StatusForbidden, "forbidden")
	r = f.Do(t, apptest.Admin, "GET", "/v1/users/a%20b/export", nil)
	expectResponse(t, "export a bad user id", r, http.StatusBadRequest, "invalid_argument")

	// Erase a user: an agent may not; the user themself and admins may.
	r = f.Do(t, bot, "DELETE", "/v1/users/alice", nil)
	expectResponse(t, "erase user as an agent", r, http.StatusForbidden, "forbidden")
	r = f.Do(t, "bob", "DELETE", "/v1/users/bob", nil)
	expectResponse(t, "erase myself", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "DELETE", "/v1/users/alice", nil)
	expectResponse(t, "erase user", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "DELETE", "/v1/users/a%20b", nil)
	expectResponse(t, "erase a bad user id", r, http.StatusBadRequest, "invalid_argument")

	// The janitor: admins sweep or dry-run their tenant; agents may not.
	r = f.Do(t, apptest.Admin, "POST", "/v1/janitor/sweep?dry_run=true", nil)
	expectResponse(t, "janitor dry run", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "POST", "/v1/janitor/sweep", nil)
	expectResponse(t, "janitor run", r, http.StatusOK)
	r = f.Do(t, bot, "POST", "/v1/janitor/sweep", nil)
	expectResponse(t, "janitor as an agent", r, http.StatusForbidden, "forbidden")
	r = f.Do(t, apptest.Admin, "POST", "/v1/janitor/sweep?dry_run=maybe", nil)
	expectResponse(t, "janitor with a bad dry_run", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, apptest.Admin, "POST", "/v1/janitor/sweep?dryrun=true", nil)
	expectResponse(t, "janitor with a misspelt dry_run", r, http.StatusBadRequest, "invalid_argument")

	// The audit trail of what the admin did above.
	r = f.Do(t, apptest.Admin, "GET", "/v1/audit?action=policy.&limit=5&since="+start.Format(time.RFC3339), nil)
	expectResponse(t, "audit", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "GET", "/v1/audit?limit=0", nil)
	expectResponse(t, "audit with a bad limit", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, bot, "GET", "/v1/audit", nil)
	expectResponse(t, "audit as an agent", r, http.StatusForbidden, "forbidden")

	// Errors and the routes outside /v1.
	valid := []byte(`{"user_id":"alice","type":"semantic","content":"x"}`)
	tooLarge := []byte(`{"user_id":"alice","type":"semantic","content":"` + strings.Repeat("a", handlers.DefaultMaxBody) + `"}`)
	tests := []struct {
		name    string
		who     string
		method  string
		path    string
		body    any
		headers []string
		status  int
		code    string
	}{
		{"malformed json", bot, "POST", "/v1/memories", []byte(`{"user_id":`), nil, 400, "bad_json"},
		{"unknown field", bot, "POST", "/v1/memories", []byte(`{"user_id":"alice","type":"semantic","content":"x","colour":"red"}`), nil, 400, "bad_json"},
		{"invalid field", bot, "POST", "/v1/memories", []byte(`{"user_id":"alice","type":"gossip","content":"x"}`), nil, 400, "invalid_argument"},
		{"bad limit", bot, "GET", "/v1/memories?limit=0", nil, nil, 400, "invalid_argument"},
		{"bad If-Match", bot, "PATCH", "/v1/memories/" + first.ID, []byte(`{}`), []string{"If-Match", "abc"}, 400, "invalid_precondition"},
		{"empty recall", bot, "POST", "/v1/recall", []byte(`{"user_id":"alice","query":" "}`), nil, 400, "invalid_argument"},
		{"ingest without turns", bot, "POST", "/v1/ingest", []byte(`{"user_id":"alice","turns":[]}`), nil, 400, "invalid_argument"},
		{"wrong content type", bot, "POST", "/v1/memories", valid, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
		{"body over 1 MiB", bot, "POST", "/v1/memories", tooLarge, nil, 413, "body_too_large"},
		{"guard rejects a secret", bot, "POST", "/v1/memories", []byte(`{"user_id":"alice","type":"semantic","content":"api_key=Zx81kQp0vLr7TnW2yB5m"}`), nil, 422, "guard_rejected"},
		{"write as another agent", bot, "POST", "/v1/memories", []byte(`{"user_id":"alice","agent_id":"support-bot","type":"semantic","content":"x"}`), nil, 403, "forbidden"},
		{"grant as an agent", "support-bot", "POST", "/v1/grants", policyadmin.NewGrant{Grantee: "support-bot", Source: bot, Types: []string{memory.TypeSemantic}, MaxSensitivity: memory.SensitivityInternal}, nil, 403, "forbidden"},
		{"list grants as an agent", "support-bot", "GET", "/v1/grants", nil, nil, 403, "forbidden"},
		{"policy as an agent", "support-bot", "GET", "/v1/policy", nil, nil, 403, "forbidden"},
		{"push policy as an analyst", apptest.Analyst, "PUT", "/v1/policy", policyadmin.NewPolicy{Modules: []policyadmin.PolicyModule{{Name: "a.rego", Source: "package a"}}}, nil, 403, "forbidden"},
		{"decisions as a user", "carol", "GET", "/v1/decisions", nil, nil, 403, "forbidden"},
		{"recall log as an agent", "support-bot", "GET", "/v1/recall-log?user_id=alice", nil, nil, 403, "forbidden"},
		{"recall log without a user", apptest.Admin, "GET", "/v1/recall-log", nil, nil, 400, "invalid_argument"},
		{"history of nothing", bot, "GET", "/v1/memories/mem_missing/history", nil, nil, 404, "not_found"},
		{"someone else's job", "support-bot", "GET", "/v1/jobs/" + job.ID, nil, nil, 404, "not_found"},
		{"bad async flag", bot, "POST", "/v1/memories?async=maybe", valid, nil, 400, "invalid_argument"},
		{"import as an agent", bot, "POST", "/v1/knowledge/import", []byte(`{"id":"guide","content":"# Guide\n\nOrders above 50k need approval."}`), nil, 403, "forbidden"},
		{"import an unknown format", apptest.Admin, "POST", "/v1/knowledge/import", []byte(`{"id":"guide","format":"pdf","content":"x"}`), nil, 400, "document_format"},
		{"import an empty document", apptest.Admin, "POST", "/v1/knowledge/import", []byte(`{"id":"guide","content":" \n "}`), nil, 400, "document_empty"},
		{"import a bad document id", apptest.Admin, "POST", "/v1/knowledge/import", []byte(`{"id":"a b","content":"x"}`), nil, 400, "document_id"},
		{"list documents", apptest.Admin, "GET", "/v1/knowledge/documents", nil, nil, 200, ""},
		{"list documents as a user", "carol", "GET", "/v1/knowledge/documents", nil, nil, 403, "forbidden"},
		{"remove a missing document", apptest.Admin, "DELETE", "/v1/knowledge/documents/nothing-here", nil, nil, 404, "not_found"},
		{"remove a bad document id", apptest.Admin, "DELETE", "/v1/knowledge/documents/a%20b", nil, nil, 400, "document_id"},
		{"missing key", "", "GET", "/v1/memories", nil, nil, 401, "unauthenticated"},
		{"unknown key", "mn_" + f.Tenant + "_notarealsecret", "GET", "/v1/whoami", nil, nil, 401, "unauthenticated"},
		{"healthz", "", "GET", "/healthz", nil, nil, 200, ""},
		{"readyz", "", "GET", "/readyz", nil, nil, 200, ""},
		{"openapi.json", "", "GET", "/openapi.json", nil, nil, 200, ""},
		{"unknown route", bot, "GET", "/v1/nowhere", nil, nil, 404, "route_not_found"},
		{"a trailing slash", bot, "GET", "/v1/memories/", nil, nil, 404, "route_not_found"},
		{"wrong method", bot, "PUT", "/v1/memories", valid, nil, 405, "method_not_allowed"},
		{"mcp tools/list", bot, "POST", "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), mcpAccept, 200, ""},
		{"mcp notification", bot, "POST", "/mcp", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), mcpAccept, 202, ""},
		{"mcp without a key", "", "POST", "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), mcpAccept, 401, ""},
		{"mcp with a bad key", "mn_" + f.Tenant + "_notarealsecret", "POST", "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), mcpAccept, 401, ""},
		{"mcp not json-rpc", bot, "POST", "/mcp", []byte(`{"hello":1}`), mcpAccept, 400, ""},
		{"mcp said compressed", bot, "POST", "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), append(slices.Clone(mcpAccept), "Content-Encoding", "gzip"), 415, ""},
		{"mcp in another charset", bot, "POST", "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), append(slices.Clone(mcpAccept), "Content-Type", "application/json; charset=latin-1"), 415, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, tc.who, tc.method, tc.path, tc.body, tc.headers...)
			expectResponse(t, tc.name, r, tc.status, tc.code)
			if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", got)
			}
		})
	}

	// Knowledge-base documents: imported at once, listed, removed; a large
	// one queued, and its job read once done.
	doc := "# Guide\n\n## Approval\n\nOrders above 50k CNY need approval.\n\n## Steps\n\n1. Check stock.\n2. Confirm the price.\n"
	r = f.Do(t, apptest.Admin, "POST", "/v1/knowledge/import", map[string]any{"id": "guide", "content": doc, "scope": "team", "team": "orders"})
	expectResponse(t, "import a document", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "GET", "/v1/knowledge/documents", nil)
	expectResponse(t, "list documents", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "DELETE", "/v1/knowledge/documents/guide", nil)
	expectResponse(t, "remove a document", r, http.StatusOK)
	// An id with slashes, as knowledge bases name their pages, is removed
	// with each slash escaped (TestKnowledgeIDWithSlashes: or not).
	r = f.Do(t, apptest.Admin, "POST", "/v1/knowledge/import", map[string]any{"id": "guides/returns", "content": "# Returns\n\nReturns need the receipt.\n"})
	expectResponse(t, "import a document with a slash in its id", r, http.StatusOK)
	r = f.Do(t, apptest.Admin, "DELETE", "/v1/knowledge/documents/guides%2Freturns", nil)
	expectResponse(t, "remove a document with a slash in its id", r, http.StatusOK)
	var big strings.Builder
	for i := range 201 {
		fmt.Fprintf(&big, "## Rule %d\n\nOrders from district %d need desk %d.\n\n", i, i, 900+i)
	}
	r = f.Do(t, apptest.Admin, "POST", "/v1/knowledge/import", map[string]any{"id": "big-guide", "content": big.String()})
	expectResponse(t, "queue a large import", r, http.StatusAccepted)
	var queued struct{ Job memory.JobStatus }
	r.Decode(t, &queued)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		r = f.Do(t, apptest.Admin, "GET", "/v1/jobs/"+queued.Job.ID, nil)
		var st memory.JobStatus
		r.Decode(t, &st)
		if st.Status != memory.JobQueued && st.Status != memory.JobRunning || time.Now().After(deadline) {
			expectResponse(t, "a done import job", r, http.StatusOK)
			if st.Status != memory.JobDone {
				t.Errorf("import job: %s", r.Body)
			}
			break
		}
	}

	// The metrics and the panel's HTML routes, each seen as sent: the
	// panel's redirects are not followed.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		method, path, form string
		status             int
	}{
		{"GET", "/metrics", "", http.StatusOK},
		{"GET", "/panel", "", http.StatusSeeOther},
		{"GET", "/panel/signin", "", http.StatusOK},
		{"POST", "/panel/signin", "key=nothing", http.StatusForbidden},
	} {
		req, err := http.NewRequest(tc.method, f.URL+tc.path, strings.NewReader(tc.form))
		if err != nil {
			t.Fatal(err)
		}
		if tc.form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
		v.observe(t, req, resp, body)
	}

	if r := f.Do(t, "", "GET", "/openapi.json", nil); !bytes.Equal(r.Body, handlers.OpenAPI) {
		t.Error("/openapi.json does not serve the embedded document")
	}
	if missing := v.missing(); len(missing) > 0 {
		t.Errorf("operations never exercised: %v", missing)
	}
	if n := v.validated(); n < 25 {
		t.Errorf("only %d responses validated; want at least 25", n)
	}
	t.Logf("%d responses validated against openapi.json", v.validated())
}

// mcpAccept is the Accept header MCP clients send.
var mcpAccept = []string{"Accept", "application/json, text/event-stream"}

// TestSchemasMatchGoTypes keeps the document's object schemas and the Go
// types that are encoded or decoded with them in step, field for field, so
// that a new field cannot reach the wire undocumented.
func TestSchemasMatchGoTypes(t *testing.T) {
	doc := loadDocument(t)
	types := map[string]any{
		"Entity": memory.Entity{}, "Memory": memory.Memory{}, "NewMemory": memory.NewMemory{},
		"UpdateRequest": memory.UpdateRequest{}, "Page": memory.Page{}, "RecallRequest": memory.RecallRequest{},
		"RecallResult": memory.RecallResult{}, "Recalled": memory.Recalled{}, "Explain": memory.Explain{},
		"NewGrant": policyadmin.NewGrant{}, "Grant": memory.Grant{}, "Principal": memory.Principal{},
		"Receipt": memory.Receipt{}, "SweepReport": memory.SweepReport{}, "Change": memory.Change{},
		"Turn": memory.Turn{}, "IngestRequest": memory.IngestRequest{}, "IngestResult": memory.IngestResult{},
		"Session": memory.Session{}, "AppendRequest": memory.AppendRequest{}, "CloseResult": memory.CloseResult{},
		"RecallSession": memory.RecallSession{},
		"GrantChange":   policyadmin.GrantChange{}, "GrantSet": policyadmin.GrantSet{},
		"PolicyModule": policyadmin.PolicyModule{}, "NewPolicy": policyadmin.NewPolicy{}, "PolicyRevision": policyadmin.PolicyRevision{},
		"PolicyReport": policyadmin.PolicyReport{}, "PolicyState": policyadmin.PolicyState{}, "Resource": memory.Resource{},
		"DecisionInput": policyadmin.DecisionInput{}, "SimulateRequest": policyadmin.SimulateRequest{}, "Simulation": policyadmin.Simulation{},
		"ReplayRequest": policyadmin.ReplayRequest{}, "ReplayReport": policyadmin.ReplayReport{}, "DecisionChange": policyadmin.DecisionChange{},
		"DecisionRecord": policyadmin.DecisionRecord{},
		"WriteResult":    memory.WriteResult{},
		"JobStatus":      memory.JobStatus{}, "JobMemory": memory.JobMemory{},
		"SearchInfo": memory.SearchInfo{}, "SourceCounts": memory.SourceCounts{}, "Stages": memory.Stages{},
		"RecallRecord": memory.RecallRecord{}, "RecalledMemory": memory.RecalledMemory{},

		"Settings": policyadmin.Settings{}, "Tombstone": export.Tombstone{}, "ExportDocument": export.Document{},

		"GraphNode": graphquery.Node{}, "GraphEdge": graphquery.Edge{}, "Graph": graphquery.Graph{}, "GraphPath": graphquery.Path{},
		"Paths": graphquery.Paths{}, "EntityCount": graphquery.EntityCount{}, "CoMention": graphquery.CoMention{}, "EntityRef": graphquery.EntityRef{},
		"CoMentions": graphquery.CoMentions{}, "Timeline": graphquery.Timeline{}, "Bucket": graphquery.Bucket{},
		"Aggregate": graphquery.Aggregate{}, "Entities": graphquery.Entities{},
	}
	for name, v := range types {
		t.Run(name, func(t *testing.T) {
			ref, ok := doc.Components.Schemas[name]
			if !ok || ref.Value == nil {
				t.Fatalf("schema %s is missing", name)
			}
			var documented []string
			for p := range ref.Value.Properties {
				documented = append(documented, p)
			}
			slices.Sort(documented)
			if diff := cmp.Diff(jsonFields(reflect.TypeOf(v)), documented); diff != "" {
				t.Errorf("fields of %s (-Go +document):\n%s", name, diff)
			}
		})
	}
}

// TestClientTypesMatchSchemas keeps the Go client's types in step with the
// document, field for field: the client imports nothing of the server, so
// a field the server adds reaches its users only through here.
func TestClientTypesMatchSchemas(t *testing.T) {
	doc := loadDocument(t)
	types := map[string]any{
		"Entity": client.Entity{}, "Memory": client.Memory{}, "NewMemory": client.NewMemory{},
		"UpdateRequest": client.UpdateRequest{}, "Page": client.Page{}, "RecallRequest": client.RecallRequest{},
		"RecallResult": client.RecallResult{}, "Recalled": client.Recalled{}, "Explain": client.Explain{},
		"SearchInfo": client.SearchInfo{}, "SourceCounts": client.SourceCounts{}, "Stages": client.Stages{},
		"RecallSession": client.RecallSession{}, "Turn": client.Turn{},
		"IngestRequest": client.IngestRequest{}, "IngestResult": client.IngestResult{},
		"AppendRequest": client.AppendRequest{}, "Session": client.Session{}, "CloseResult": client.CloseResult{},
		"WriteResult": client.WriteResult{}, "writeResponse": client.WriteResponse{},
		"JobStatus": client.Job{}, "JobMemory": client.JobMemory{}, "Receipt": client.Receipt{}, "Principal": client.Principal{},
		"NewGrant": client.NewGrant{}, "Grant": client.Grant{}, "GrantChange": client.GrantChange{}, "GrantSet": client.GrantSet{},
	}
	// Fields the client leaves out on purpose: a memory's tenant is always
	// the key's, so the client never names one.
	omitted := map[string][]string{"NewMemory": {"tenant"}}
	for name, v := range types {
		t.Run(name, func(t *testing.T) {
			ref, ok := doc.Components.Schemas[name]
			if !ok || ref.Value == nil {
				t.Fatalf("schema %s is missing", name)
			}
			var documented []string
			for p := range ref.Value.Properties {
				if !slices.Contains(omitted[name], p) {
					documented = append(documented, p)
				}
			}
			slices.Sort(documented)
			if diff := cmp.Diff(jsonFields(reflect.TypeOf(v)), documented); diff != "" {
				t.Errorf("fields of the client's %s (-Go +document):\n%s", name, diff)
			}
		})
	}
}

// jsonFields lists the JSON names encoding/json gives the fields of t,
// those of an untagged embedded struct among them.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// exerciseIdentity calls every principal and key route once, and the
// errors they add.
func exerciseIdentity(t *testing.T, f *apptest.Fixture) {
	t.Helper()
	admin := apptest.Admin
	r := f.Do(t, admin, "POST", "/v1/principals", identity.NewPrincipal{Kind: memory.KindAgent, ID: "doc-bot", Team: "docs"})
	expectResponse(t, "create principal", r, http.StatusCreated)
	r = f.Do(t, admin, "POST", "/v1/principals", identity.NewPrincipal{Kind: memory.KindAgent, ID: "doc-bot"})
	expectResponse(t, "create principal twice", r, http.StatusConflict, "principal_exists")
	r = f.Do(t, "order-bot", "POST", "/v1/principals", identity.NewPrincipal{Kind: memory.KindAgent, ID: "spy"})
	expectResponse(t, "create principal as an agent", r, http.StatusForbidden, "forbidden")
	r = f.Do(t, admin, "GET", "/v1/principals", nil)
	expectResponse(t, "list principals", r, http.StatusOK)
	r = f.Do(t, admin, "GET", "/v1/principals/agent/doc-bot", nil)
	expectResponse(t, "get principal", r, http.StatusOK)
	r = f.Do(t, admin, "GET", "/v1/principals/agent/nobody", nil)
	expectResponse(t, "get unknown principal", r, http.StatusNotFound, "not_found")
	r = f.Do(t, admin, "POST", "/v1/principals", identity.NewPrincipal{Kind: memory.KindUser, ID: "named-user", Name: "Ethan Zhou"})
	expectResponse(t, "create a user with a name", r, http.StatusCreated)
	r = f.Do(t, admin, "GET", "/v1/principals/user/named-user", nil)
	expectResponse(t, "get a user with a name", r, http.StatusOK)
	r = f.Do(t, admin, "POST", "/v1/principals", identity.NewPrincipal{Kind: memory.KindAgent, ID: "named-bot", Name: "Bot"})
	expectResponse(t, "create an agent with a name", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, admin, "PATCH", "/v1/principals/user/named-user", map[string]string{"name": "Ethan  Chow"})
	expectResponse(t, "rename a user", r, http.StatusOK)
	r = f.Do(t, admin, "PATCH", "/v1/principals/agent/doc-bot", map[string]string{"name": "Doc"})
	expectResponse(t, "name an agent", r, http.StatusBadRequest, "invalid_argument")
	r = f.Do(t, admin, "PATCH", "/v1/principals/agent/doc-bot", map[string]string{"kind": "user"})
	expectResponse(t, "change a principal's kind", r, http.StatusBadRequest, "bad_json")
	r = f.Do(t, admin, "PATCH", "/v1/principals/user/nobody", map[string]string{"name": "X"})
	expectResponse(t, "rename an unknown user", r, http.StatusNotFound, "not_found")
	r = f.Do(t, "support-bot", "PATCH", "/v1/principals/agent/doc-bot", map[string]string{"team": "support"})
	expectResponse(t, "change a principal as an agent", r, http.StatusForbidden, "forbidden")

	r = f.Do(t, admin, "POST", "/v1/keys", identity.NewKey{OwnerKind: memory.KindAgent, OwnerID: "doc-bot"})
	expectResponse(t, "create key", r, http.StatusCreated)
	var issued identity.IssuedKey
	r.Decode(t, &issued)
	r = f.Do(t, admin, "POST", "/v1/keys", identity.NewKey{OwnerKind: memory.KindAgent, OwnerID: "nobody"})
	expectResponse(t, "create key for nobody", r, http.StatusUnprocessableEntity, "unknown_principal")
	r = f.Do(t, admin, "GET", "/v1/keys", nil)
	expectResponse(t, "list keys", r, http.StatusOK)
	r = f.Do(t, admin, "GET", "/v1/keys/"+issued.Key.ID, nil)
	expectResponse(t, "get key", r, http.StatusOK)
	r = f.Do(t, admin, "PATCH", "/v1/keys/"+issued.Key.ID, identity.KeyChange{NoExpiry: true})
	expectResponse(t, "change key", r, http.StatusOK)
	r = f.Do(t, admin, "POST", "/v1/keys/"+issued.Key.ID+"/rotate", map[string]int{"grace_seconds": 60})
	expectResponse(t, "rotate key", r, http.StatusCreated)
	r = f.Do(t, admin, "POST", "/v1/keys/"+issued.Key.ID+"/rotate", nil)
	expectResponse(t, "rotate a rotated key", r, http.StatusConflict, "key_inactive")
	r = f.Do(t, admin, "DELETE", "/v1/keys/"+issued.Key.ID, nil)
	expectResponse(t, "revoke key", r, http.StatusOK)
	r = f.Do(t, admin, "DELETE", "/v1/principals/agent/doc-bot", nil)
	expectResponse(t, "delete principal", r, http.StatusNoContent)
	r = f.Do(t, admin, "DELETE", "/v1/principals/admin/"+admin, nil)
	expectResponse(t, "delete oneself", r, http.StatusBadRequest, "invalid_argument")
}
