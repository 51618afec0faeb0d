package memory

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// In-package fakes of the small interfaces the Service consumes. They record
// what they were asked so tests can check what did (and did not) reach them.
// Every fake is safe for concurrent use: Recall queries the store from two
// goroutines.

// testNow is the fixed clock of every test service.
var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeStore is an in-memory Store. Each method returns its canned answer and
// records its arguments.
type fakeStore struct {
	mu sync.Mutex

	memories map[string]Memory // GetMemory by id
	getErr   error

	created   [][]Memory
	createErr error

	list       []Memory
	listErr    error
	listScopes []Scope
	listCalls  []ListQuery

	replaced   []replaceCall
	replaceErr error

	history      []Memory
	historyErr   error
	historyCalls int

	deleted     []deleteCall
	erasedUsers []deleteCall
	deleteErr   error
	// erasedMeanwhile makes EraseMemories find nothing left: a concurrent
	// delete erased it first.
	erasedMeanwhile bool

	vector, fullText           []Hit
	vectorErr, fullTextErr     error
	vectorCalls, fullTextCalls []SearchQuery
	searchScopes               []Scope

	// writes are the deduplicated writes asked for (WriteDeduped); their
	// memories are also in created. written holds what they stored.
	writes  []DedupWrite
	written map[string]Memory
	warms   []DedupWrite
	confirm []string // ids confirmed
}

type replaceCall struct {
	Tenant, PrevID string
	ExpectVersion  int
	Next           Memory
}

type deleteCall struct {
	Tenant     string
	IDs        []string
	By, Reason string
	Fence      int64
}

var (
	_ Store       = (*fakeStore)(nil)
	_ Forgetter   = (*fakeStore)(nil)
	_ DedupStore  = (*fakeStore)(nil)
	_ WriteWarmer = (*fakeStore)(nil)
	_ Confirmer   = (*fakeStore)(nil)
)

// WriteDeduped plans w with PlanBatch, as graph.Store does, over what the
// fake holds: the memories it was given and those earlier writes stored.
// It has no dedup search: only earlier memories of a write are repeated.
func (f *fakeStore) WriteDeduped(_ context.Context, w DedupWrite) ([]Written, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, w)
	f.created = append(f.created, append([]Memory(nil), w.Memories...))
	if f.createErr != nil {
		return nil, f.createErr
	}
	if f.written == nil {
		f.written = map[string]Memory{}
	}
	var out []Written
	for from := 0; from < len(w.Memories); {
		p := PlanBatch(f.batchState(), w.Memories[from:], nil, w.Rules)
		for _, m := range p.Create {
			f.written[m.ID] = m
		}
		for _, sup := range p.Supersedes {
			prev := f.written[sup.Prev]
			prev.Status = StatusSuperseded
			f.written[sup.Prev] = prev
		}
		for _, r := range append(p.ReinforceStored, p.ReinforceNew...) {
			m := f.written[r.Target]
			m.EvidenceCount++
			f.written[r.Target] = m
			p.Written[r.Index].Memory = m
		}
		out = append(out, p.Written...)
		from += p.N
	}
	return out, nil
}

// batchState is what the fake's writes read: every memory written.
func (f *fakeStore) batchState() BatchState {
	st := BatchState{Duplicates: map[string]Memory{}, Heads: map[Slot][]Memory{}}
	for _, m := range f.written {
		if m.IdempotencyKey != "" {
			st.Duplicates[m.IdempotencyKey] = m
		}
		if TakesSlot(m) {
			sl := SlotOf(m)
			st.Heads[sl] = append(st.Heads[sl], m)
		}
	}
	return st
}

func (f *fakeStore) WarmWrite(_ context.Context, w DedupWrite) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.warms = append(f.warms, w)
	return nil
}

func (f *fakeStore) ConfirmMemory(_ context.Context, tenant, id, _ string, _ Scope, at time.Time) (Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.confirm = append(f.confirm, id)
	m, ok := f.memories[id]
	if !ok || m.Tenant != tenant {
		return Memory{}, ErrNotFound
	}
	if m.Status == StatusCandidate {
		m.Status, m.ValidFrom, m.UpdatedAt = StatusActive, at, at
		f.memories[id] = m
	}
	return m, nil
}

func (f *fakeStore) CreateMemories(_ context.Context, ms []Memory) ([]Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, append([]Memory(nil), ms...))
	if f.createErr != nil {
		return nil, f.createErr
	}
	return ms, nil
}

func (f *fakeStore) GetMemory(_ context.Context, tenant, id string) (Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.getErr != nil {
		return Memory{}, f.getErr
	}
	m, ok := f.memories[id]
	if !ok || m.Tenant != tenant {
		return Memory{}, ErrNotFound
	}
	return m, nil
}

func (f *fakeStore) ListMemories(_ context.Context, scope Scope, q ListQuery) ([]Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listScopes = append(f.listScopes, scope)
	f.listCalls = append(f.listCalls, q)
	return f.list, f.listErr
}

func (f *fakeStore) ReplaceMemory(_ context.Context, tenant, prevID string, expectVersion int, next Memory) (Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replaced = append(f.replaced, replaceCall{Tenant: tenant, PrevID: prevID, ExpectVersion: expectVersion, Next: next})
	if f.replaceErr != nil {
		return Memory{}, f.replaceErr
	}
	return next, nil
}

func (f *fakeStore) History(_ context.Context, _, _ string) ([]Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.historyCalls++
	return f.history, f.historyErr
}

func (f *fakeStore) DeleteMemory(_ context.Context, tenant, id, by, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, deleteCall{Tenant: tenant, IDs: []string{id}, By: by, Reason: reason})
	return f.deleteErr
}

func (f *fakeStore) EraseMemories(_ context.Context, tenant string, ids, _ []string, t Tombstone) (GraphErased, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, deleteCall{Tenant: tenant, IDs: ids, By: t.By, Reason: t.Reason})
	if f.erasedMeanwhile {
		return GraphErased{}, f.deleteErr
	}
	return GraphErased{Memories: int64(len(ids))}, f.deleteErr
}

func (f *fakeStore) EraseUser(_ context.Context, tenant, userID string, t Tombstone) (GraphErased, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.erasedUsers = append(f.erasedUsers, deleteCall{Tenant: tenant, IDs: []string{userID}, By: t.By, Reason: t.Reason, Fence: t.Fence})
	var n int64
	for id, m := range f.memories {
		if m.Tenant == tenant && m.UserID == userID {
			delete(f.memories, id)
			n++
		}
	}
	return GraphErased{Memories: n, Users: min(n, 1)}, f.deleteErr
}

func (f *fakeStore) SearchVector(_ context.Context, scope Scope, q SearchQuery) ([]Hit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sl := q.Slots; sl != nil {
		// A question about the user: the hits its slots, kinds or types name.
		var out []Hit
		for _, h := range f.vector {
			m := h.Memory
			if slices.Contains(sl.Keys, m.Key) || slices.Contains(sl.Kinds, m.Kind) || slices.Contains(sl.Types, m.Type) {
				out = append(out, h)
			}
		}
		return out, f.vectorErr
	}
	f.vectorCalls = append(f.vectorCalls, q)
	f.searchScopes = append(f.searchScopes, scope)
	return f.vector, f.vectorErr
}

func (f *fakeStore) SearchFullText(_ context.Context, scope Scope, q SearchQuery) ([]Hit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fullTextCalls = append(f.fullTextCalls, q)
	f.searchScopes = append(f.searchScopes, scope)
	return f.fullText, f.fullTextErr
}

// calls counts every call that reached the store.
func (f *fakeStore) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.created) + len(f.listCalls) + len(f.replaced) + f.historyCalls + len(f.deleted) +
		len(f.vectorCalls) + len(f.fullTextCalls)
}

// decideCall is one policy evaluation as the fake saw it.
type decideCall struct {
	Principal Principal
	Action    string
	Resource  Resource
}

// fakeAuthz decides with a function (nil: allow everything) and answers
// ReadScope with a fixed scope.
type fakeAuthz struct {
	mu sync.Mutex
	// decide, if set, makes every decision; nil allows with reason "test".
	decide    func(p Principal, action string, r Resource) (Decision, error)
	decisions []decideCall

	scope      Scope
	scopeErr   error
	scopeCalls []string // userID of each ReadScope
	// hidden are the ids of memories no scope covers.
	hidden map[string]bool
}

var _ Authorizer = (*fakeAuthz)(nil)

func (f *fakeAuthz) Decide(_ context.Context, p Principal, action string, r Resource, _ time.Time) (Decision, error) {
	f.mu.Lock()
	f.decisions = append(f.decisions, decideCall{Principal: p, Action: action, Resource: r})
	decide := f.decide
	f.mu.Unlock()
	if decide == nil {
		return Decision{Allow: true, Reasons: []string{"test"}}, nil
	}
	return decide(p, action, r) // unlocked, as the engine is
}

func (f *fakeAuthz) Covers(_ Scope, r Resource) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.hidden[r.ID]
}

func (f *fakeAuthz) ReadScope(_ context.Context, _ Principal, userID string, _ time.Time) (Scope, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scopeCalls = append(f.scopeCalls, userID)
	return f.scope, f.scopeErr
}

// allowAll, denyAll and friends build decide functions.
func denyAll(Principal, string, Resource) (Decision, error) {
	return Decision{Allow: false, Reasons: []string{"test deny"}}, nil
}

func failAll(Principal, string, Resource) (Decision, error) {
	return Decision{}, errTest("policy engine down")
}

// denyAction denies one action and allows every other.
func denyAction(action string) func(Principal, string, Resource) (Decision, error) {
	return func(_ Principal, a string, _ Resource) (Decision, error) {
		if a == action {
			return Decision{Allow: false}, nil
		}
		return Decision{Allow: true, Reasons: []string{"test"}}, nil
	}
}

// denyIDs denies every action on the memories with these ids.
func denyIDs(ids ...string) func(Principal, string, Resource) (Decision, error) {
	return func(_ Principal, _ string, r Resource) (Decision, error) {
		for _, id := range ids {
			if r.ID == id {
				return Decision{Allow: false}, nil
			}
		}
		return Decision{Allow: true, Reasons: []string{"owner", "same team"}}, nil
	}
}

// fakeEmbedder maps each text to a small non-zero vector derived from its
// length, so tests can predict the embedding of any content.
type fakeEmbedder struct {
	mu    sync.Mutex
	err   error
	zero  bool // return zero vectors, as an embedder does for text it cannot embed
	calls [][]string
}

var _ Embedder = (*fakeEmbedder)(nil)

func (f *fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, append([]string(nil), texts...))
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = vectorOf(t)
		if f.zero {
			out[i] = []float32{0, 0}
		}
	}
	return out, nil
}

func (f *fakeEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := f.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (f *fakeEmbedder) Dimension() int { return 2 }
func (f *fakeEmbedder) Model() string  { return "fake" }

func (f *fakeEmbedder) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// vectorOf is the fake embedding of text.
func vectorOf(text string) []float32 { return []float32{float32(len(text)), 1} }

// errTest is an error no production code returns.
type errTest string

func (e errTest) Error() string { return string(e) }

// fakeGuard answers the guard policy with fixed actions; none (the
// default) rejects every finding.
type fakeGuard struct {
	mu      sync.Mutex
	actions map[string]string
	err     error
	asked   [][]string // findings of each call
}

var _ GuardPolicy = (*fakeGuard)(nil)

func (f *fakeGuard) GuardActions(_ context.Context, _ Principal, _ Resource, findings []string, _ time.Time) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, findings)
	return f.actions, f.err
}

// fakeQueue is an in-memory JobQueue that also fences erased users.
type fakeQueue struct {
	mu     sync.Mutex
	jobs   []Job
	status map[string]JobStatus // by job id
	err    error
	fence  int64
	fenced []string // "tenant/user"
}

var (
	_ JobQueue = (*fakeQueue)(nil)
	_ Fencer   = (*fakeQueue)(nil)
)

func (f *fakeQueue) Enqueue(_ context.Context, job Job) (JobStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return JobStatus{}, f.err
	}
	if job.ID == "" {
		job.ID = NewID("job")
	}
	f.jobs = append(f.jobs, job)
	st := JobStatus{ID: job.ID, Kind: job.Kind, Status: JobQueued, AcceptedAt: job.AcceptedAt, Owner: job.Principal}
	if f.status == nil {
		f.status = map[string]JobStatus{}
	}
	f.status[job.ID] = st
	return st, nil
}

func (f *fakeQueue) Status(_ context.Context, _, id string) (JobStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.status[id]
	if !ok {
		return JobStatus{}, ErrNotFound
	}
	return st, nil
}

func (f *fakeQueue) FenceUser(_ context.Context, tenant, userID string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fenced = append(f.fenced, tenant+"/"+userID)
	return f.fence, f.err
}

// fakeRecorder keeps the recalls it was handed; it is also the recall log
// they are read back from.
type fakeRecorder struct {
	mu      sync.Mutex
	records []RecallRecord
}

var (
	_ RecallRecorder  = (*fakeRecorder)(nil)
	_ RecallLogReader = (*fakeRecorder)(nil)
)

func (f *fakeRecorder) Record(r RecallRecord) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = append(f.records, r)
}

func (f *fakeRecorder) RecentRecalls(_ context.Context, tenant, userID string, limit int) ([]RecallRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []RecallRecord
	for i := len(f.records) - 1; i >= 0 && len(out) < limit; i-- {
		if r := f.records[i]; r.Tenant == tenant && r.UserID == userID {
			out = append(out, r)
		}
	}
	return out, nil
}

// fixture bundles a Service with its fakes.
type fixture struct {
	svc      *Service
	store    *fakeStore
	authz    *fakeAuthz
	embed    *fakeEmbedder
	guard    *fakeGuard
	queue    *fakeQueue
	sessions *fakeSessions
	search   *fakeSearch
	recorder *fakeRecorder
	places   *fakeEraser
	sweeper  *fakeSweeper
	audit    *fakeAuditor
}

// newFixture returns a Service on fresh fakes, with the fixed clock testNow
// and a discarding logger. cfg tunes recall.
func newFixture(t *testing.T, cfg RecallConfig) *fixture {
	t.Helper()
	f := &fixture{
		store:    &fakeStore{memories: map[string]Memory{}},
		authz:    &fakeAuthz{},
		embed:    &fakeEmbedder{},
		guard:    &fakeGuard{},
		queue:    &fakeQueue{},
		sessions: &fakeSessions{open: map[string]Session{}, claimed: map[string]bool{}},
		search:   &fakeSearch{},
		recorder: &fakeRecorder{},
		places:   &fakeEraser{place: "places", held: map[string]int64{}},
		sweeper:  &fakeSweeper{},
		audit:    &fakeAuditor{},
	}
	f.svc = f.service(t, f.options(t, cfg))
	return f
}

// options are the Service options of f's fakes: every dependency set.
func (f *fixture) options(t *testing.T, cfg RecallConfig) Options {
	t.Helper()
	return Options{
		Store: f.store, Authz: f.authz, Embed: f.embed,
		Logger: slog.New(slog.DiscardHandler),
		Now:    func() time.Time { return testNow },
		Recall: cfg,
		// The fake embedder's vectors are all alike ((length, 1)): only
		// texts SameFact finds equal may repeat each other.
		Write: WriteConfig{DuplicateThreshold: 1},
		Guard: f.guard, Writes: f.store, Warm: f.store, Confirm: f.store, Forget: f.store,
		Fence: f.queue, Erasers: []Eraser{f.places}, Janitor: f.sweeper,
		Sessions: f.sessions, Queue: f.queue, Search: f.search, Recorder: f.recorder,
		Audit: f.audit,
	}
}

// service returns a Service with opts, or fails the test.
func (f *fixture) service(t *testing.T, opts Options) *Service {
	t.Helper()
	svc, err := NewService(opts)
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	return svc
}

// Principals used across the tests; all in tenant acme.
var (
	agentSupport = Principal{Tenant: "acme", Kind: KindAgent, ID: "support-bot", Roles: []string{"agent"}}
	agentBilling = Principal{Tenant: "acme", Kind: KindAgent, ID: "billing-bot", Roles: []string{"agent"}}
	userAlice    = Principal{Tenant: "acme", Kind: KindUser, ID: "alice", Roles: []string{"user"}}
	adminAcme    = Principal{Tenant: "acme", Kind: KindAdmin, ID: "root", Roles: []string{"admin"}}
)

// stored returns a complete active memory as the store would hold it.
func stored(id, content string) Memory {
	return Memory{
		ID: id, Tenant: "acme", UserID: "alice", AgentID: "support-bot", Type: TypeSemantic,
		Content: content, Status: StatusActive, Sensitivity: SensitivityInternal,
		Importance: 0.5, Confidence: 1, ValidFrom: testNow.Add(-time.Hour),
		CreatedAt: testNow.Add(-time.Hour), UpdatedAt: testNow.Add(-time.Hour), Version: 1,
	}
}

func ptr[T any](v T) *T { return &v }

// create writes in through svc and returns what it stored or reinforced,
// skipped memories left out.
func create(ctx context.Context, svc *Service, p Principal, in []NewMemory) ([]Memory, error) {
	results, err := svc.Write(ctx, p, in)
	if err != nil {
		return nil, err
	}
	ms := make([]Memory, 0, len(results))
	for _, r := range results {
		if r.Memory != nil {
			ms = append(ms, *r.Memory)
		}
	}
	return ms, nil
}
