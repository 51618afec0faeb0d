// Package storetest is the contract suite for memory.Store and
// policyadmin.GrantStore. graph runs it against a real Neo4j; any other
// implementation, a fake included, must pass the same suite.
//
// Every subtest works in its own random tenant, so the suite can share a
// database with other tests and with earlier runs.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mneme/memory"
	"mneme/policyadmin"
)

// Store is what the suite exercises.
type Store interface {
	memory.Store
	policyadmin.GrantStore
}

// Harness tells the suite how to reach the store under test.
type Harness struct {
	// Store returns the store under test; it may be shared by subtests.
	Store func(t *testing.T) Store
	// Dim is the embedding dimension to use (the store's vector index
	// dimension, if it has one). Default 8.
	Dim int
	// AddAgents makes agent principals of tenant: a grant is stored only
	// between agents that exist.
	AddAgents func(t *testing.T, tenant string, ids ...string)
}

// Run runs the whole contract suite.
func Run(t *testing.T, h Harness) {
	if h.Dim <= 0 {
		h.Dim = 8
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store, f *fixture)
	}{
		{"CreateOne", testCreateOne},
		{"CreateBatch", testCreateBatch},
		{"BatchIsAtomic", testBatchIsAtomic},
		{"IdempotencyKey", testIdempotencyKey},
		{"SupersedeByKey", testSupersedeByKey},
		{"SupersedeWithinBatch", testSupersedeWithinBatch},
		{"ReplaceMemory", testReplaceMemory},
		{"ListFiltersAndCursor", testListFiltersAndCursor},
		{"ListTextIsASubstring", testListTextIsASubstring},
		{"ListLargestPage", testListLargestPage},
		{"ScopeFiltering", testScopeFiltering},
		{"TenantIsolation", testTenantIsolation},
		{"Delete", testDelete},
		{"SearchVector", testSearchVector},
		{"SearchFullText", testSearchFullText},
		{"FullTextEscapesLuceneSyntax", testFullTextEscaping},
		{"Grants", testGrants},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h.Store(t), &fixture{t: t, tenant: NewTenant(t), dim: h.Dim, addAgents: h.AddAgents})
		})
	}
}

// NewTenant returns a random tenant id such as "t-1a2b3c4d".
func NewTenant(t testing.TB) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("tenant id: %v", err)
	}
	return "t-" + hex.EncodeToString(b[:])
}

// fixture builds memories for one subtest's tenant.
type fixture struct {
	t         *testing.T
	tenant    string
	dim       int
	n         int
	addAgents func(t *testing.T, tenant string, ids ...string)
}

// base is the creation time of the first memory a fixture builds; each next
// memory is a second younger, so listings have a known order.
var base = time.Date(2025, 3, 14, 9, 26, 53, 589793238, time.UTC)

// mem returns a valid active memory of the fixture's tenant about user.
func (f *fixture) mem(user, content string, opts ...func(*memory.Memory)) memory.Memory {
	f.n++
	at := base.Add(time.Duration(f.n) * time.Second)
	m := memory.Memory{
		ID: memory.NewID("mem"), Tenant: f.tenant, UserID: user, AgentID: "agent-a",
		Type: memory.TypeSemantic, Content: content, Status: memory.StatusActive,
		Sensitivity: memory.SensitivityInternal, Importance: 0.5, Confidence: 1,
		ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1,
	}
	for _, o := range opts {
		o(&m)
	}
	return m
}

// vec returns a unit-free vector of the fixture's dimension whose first
// components are xs.
func (f *fixture) vec(xs ...float32) []float32 {
	v := make([]float32, f.dim)
	copy(v, xs)
	return v
}

func withKey(k string) func(*memory.Memory) { return func(m *memory.Memory) { m.Key = k } }
func withType(ty string) func(*memory.Memory) {
	return func(m *memory.Memory) { m.Type = ty }
}
func withKind(k string) func(*memory.Memory)   { return func(m *memory.Memory) { m.Kind = k } }
func withAgent(a string) func(*memory.Memory)  { return func(m *memory.Memory) { m.AgentID = a } }
func withStatus(s string) func(*memory.Memory) { return func(m *memory.Memory) { m.Status = s } }
func withSensitivity(s string) func(*memory.Memory) {
	return func(m *memory.Memory) { m.Sensitivity = s }
}
func withIdem(k string) func(*memory.Memory) { return func(m *memory.Memory) { m.IdempotencyKey = k } }
func withEmbedding(v []float32) func(*memory.Memory) {
	return func(m *memory.Memory) { m.Embedding = v }
}
func withCreated(at time.Time) func(*memory.Memory) {
	return func(m *memory.Memory) { m.CreatedAt, m.ValidFrom, m.UpdatedAt = at, at, at }
}

// all is a scope that reads everything of the tenant.
func (f *fixture) all() memory.Scope {
	return memory.Scope{Tenant: f.tenant, Clauses: []memory.Clause{{}}}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func create(t *testing.T, s Store, ms ...memory.Memory) []memory.Memory {
	t.Helper()
	out, err := s.CreateMemories(ctx(t), ms)
	if err != nil {
		t.Fatalf("CreateMemories: %v", err)
	}
	if len(out) != len(ms) {
		t.Fatalf("CreateMemories returned %d memories, want %d", len(out), len(ms))
	}
	return out
}

func get(t *testing.T, s Store, tenant, id string) memory.Memory {
	t.Helper()
	m, err := s.GetMemory(ctx(t), tenant, id)
	if err != nil {
		t.Fatalf("GetMemory(%s): %v", id, err)
	}
	return m
}

// allPages lists q page by page, at most most pages, and returns the ids in
// order and the number of pages that held any.
func allPages(t *testing.T, s Store, f *fixture, q memory.ListQuery, most int) ([]string, int) {
	t.Helper()
	var got []string
	pages := 0
	for range most {
		page, err := s.ListMemories(ctx(t), f.all(), q)
		if err != nil {
			t.Fatalf("ListMemories page %d: %v", pages, err)
		}
		if len(page) == 0 {
			break
		}
		pages++
		got = append(got, ids(page)...)
		last := page[len(page)-1]
		q.After = &memory.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return got, pages
}

func ids(ms []memory.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func hitIDs(hs []memory.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Memory.ID
	}
	return out
}

var memOpts = cmp.Options{cmpopts.EquateEmpty()}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got, memOpts); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error = %v, want %v", what, err, target)
	}
}

func testCreateOne(t *testing.T, s Store, f *fixture) {
	in := f.mem("u1", "prefers email over phone", withKind("preference"), withEmbedding(f.vec(1, 2, 3)),
		func(m *memory.Memory) {
			m.SessionID = "s-1"
			m.Source = "chat"
			m.Importance, m.Confidence = 0.75, 0.9
			to := m.ValidFrom.Add(48 * time.Hour)
			m.ValidTo = &to
			m.Entities = []memory.Entity{{ID: "channel:email", Kind: "channel", Name: "email"}, {ID: "order:42", Kind: "order", Name: "#42"}}
		})
	out := create(t, s, in)
	diff(t, "created", in, out[0])
	diff(t, "stored", in, get(t, s, f.tenant, in.ID))
}

func testCreateBatch(t *testing.T, s Store, f *fixture) {
	in := []memory.Memory{
		f.mem("u1", "one", withType(memory.TypeEpisodic)),
		f.mem("u2", "two", withType(memory.TypeProfile)),
		f.mem("u1", "three", withType(memory.TypeProcedural)),
	}
	out := create(t, s, in...)
	diff(t, "created batch", in, out)
	for _, m := range in {
		diff(t, "stored "+m.ID, m, get(t, s, f.tenant, m.ID))
	}
}

func testBatchIsAtomic(t *testing.T, s Store, f *fixture) {
	a := f.mem("u1", "first of a failing batch")
	b := f.mem("u1", "second of a failing batch", withKey("budget"))
	dup := f.mem("u1", "duplicate id", func(m *memory.Memory) { m.ID = a.ID })
	prior := create(t, s, f.mem("u1", "budget 1", withKey("budget")))[0]

	_, err := s.CreateMemories(ctx(t), []memory.Memory{a, b, dup})
	if err == nil {
		t.Fatal("batch with a duplicate id: want an error")
	}
	wantErr(t, "duplicate id", err, memory.ErrConflict)
	for _, m := range []memory.Memory{a, b} {
		if _, err := s.GetMemory(ctx(t), f.tenant, m.ID); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("GetMemory(%s) after failed batch: %v, want ErrNotFound", m.ID, err)
		}
	}
	diff(t, "slot head untouched", prior, get(t, s, f.tenant, prior.ID))
}

func testIdempotencyKey(t *testing.T, s Store, f *fixture) {
	first := create(t, s, f.mem("u1", "original", withIdem("req-1")))[0]
	retry := f.mem("u1", "retried with another id", withIdem("req-1"))
	got := create(t, s, retry)[0]
	diff(t, "retry returns the stored memory", first, got)
	if _, err := s.GetMemory(ctx(t), f.tenant, retry.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("GetMemory(retry) = %v, want ErrNotFound: the retry must create nothing", err)
	}

	// Within one batch the second use of a key returns the first memory.
	a, b := f.mem("u1", "a", withIdem("req-2")), f.mem("u1", "b", withIdem("req-2"))
	out := create(t, s, a, b)
	diff(t, "batch with a repeated key", []string{a.ID, a.ID}, ids(out))

	// Keys are per tenant.
	other := fixture{t: t, tenant: NewTenant(t), dim: f.dim}
	o := other.mem("u1", "same key, other tenant", withIdem("req-1"))
	diff(t, "other tenant", o, create(t, s, o)[0])

	// A concurrent retry storm creates one memory.
	const n = 8
	results := make(chan memory.Memory, n)
	errs := make(chan error, n)
	c := ctx(t)
	for range n {
		m := f.mem("u1", "storm", withIdem("req-3"))
		go func() {
			out, err := s.CreateMemories(c, []memory.Memory{m})
			if err != nil {
				errs <- err
				return
			}
			results <- out[0]
		}()
	}
	var winner string
	for range n {
		select {
		case err := <-errs:
			t.Errorf("concurrent idempotent create: %v", err)
		case m := <-results:
			if winner == "" {
				winner = m.ID
			}
			if m.ID != winner {
				t.Errorf("concurrent idempotent creates returned %s and %s", winner, m.ID)
			}
		}
	}
}

func testSupersedeByKey(t *testing.T, s Store, f *fixture) {
	old := create(t, s, f.mem("u1", "budget is 100k", withKey("budget"), withKind("budget")))[0]
	other := create(t, s, f.mem("u2", "budget is 5k", withKey("budget")))[0]
	in := f.mem("u1", "budget is 150k", withKey("budget"), withKind("budget"))
	cur := create(t, s, in)[0]

	want := in
	want.Version, want.Supersedes = 2, old.ID
	diff(t, "new head", want, cur)
	diff(t, "new head stored", want, get(t, s, f.tenant, in.ID))

	prev := get(t, s, f.tenant, old.ID)
	if prev.Status != memory.StatusSuperseded {
		t.Errorf("old status = %s, want superseded", prev.Status)
	}
	if prev.ValidTo == nil || !prev.ValidTo.Equal(cur.ValidFrom) {
		t.Errorf("old valid_to = %v, want %v", prev.ValidTo, cur.ValidFrom)
	}
	if prev.Version != 1 {
		t.Errorf("old version = %d, want 1", prev.Version)
	}
	diff(t, "other user's slot untouched", other, get(t, s, f.tenant, other.ID))

	for _, id := range []string{old.ID, cur.ID} {
		h, err := s.History(ctx(t), f.tenant, id)
		if err != nil {
			t.Fatalf("History(%s): %v", id, err)
		}
		diff(t, "history from "+id, []string{cur.ID, old.ID}, ids(h))
	}
	h, err := s.History(ctx(t), f.tenant, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "history of a single version", []string{other.ID}, ids(h))
	if _, err := s.History(ctx(t), f.tenant, "mem_missing"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("History(missing) = %v, want ErrNotFound", err)
	}

	// A third version chains on.
	third := create(t, s, f.mem("u1", "budget is 200k", withKey("budget")))[0]
	if third.Version != 3 || third.Supersedes != cur.ID {
		t.Errorf("third: version %d supersedes %q, want 3 and %s", third.Version, third.Supersedes, cur.ID)
	}
	h, err = s.History(ctx(t), f.tenant, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "three versions", []string{third.ID, cur.ID, old.ID}, ids(h))
	active, err := s.ListMemories(ctx(t), f.all(), memory.ListQuery{UserID: "u1", Status: memory.StatusActive})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "one active memory per slot", []string{third.ID}, ids(active))

	// A candidate does not displace the slot's trusted head.
	cand := create(t, s, f.mem("u1", "budget might be 300k", withKey("budget"), withStatus(memory.StatusCandidate)))[0]
	if cand.Version != 1 || cand.Supersedes != "" {
		t.Errorf("candidate: v%d supersedes %q, want v1 superseding nothing", cand.Version, cand.Supersedes)
	}
	if head := get(t, s, f.tenant, third.ID); head.Status != memory.StatusActive {
		t.Errorf("head after a candidate: %s, want active", head.Status)
	}
}

func testSupersedeWithinBatch(t *testing.T, s Store, f *fixture) {
	a := f.mem("u1", "lives in Paris", withKey("city"))
	b := f.mem("u1", "lives in Lyon", withKey("city"))
	c := f.mem("u1", "lives in Nice", withKey("city"))
	out := create(t, s, a, b, c)
	got := []string{out[0].Supersedes, out[1].Supersedes, out[2].Supersedes}
	diff(t, "supersedes", []string{"", a.ID, b.ID}, got)
	diff(t, "versions", []int{1, 2, 3}, []int{out[0].Version, out[1].Version, out[2].Version})
	for id, status := range map[string]string{a.ID: memory.StatusSuperseded, b.ID: memory.StatusSuperseded, c.ID: memory.StatusActive} {
		if m := get(t, s, f.tenant, id); m.Status != status {
			t.Errorf("%s: status %s, want %s", id, m.Status, status)
		}
	}
}

func testReplaceMemory(t *testing.T, s Store, f *fixture) {
	prev := create(t, s, f.mem("u1", "likes tea", withKey("drink"), withEmbedding(f.vec(1))))[0]
	next := f.mem("u1", "likes green tea", withKey("drink"), withEmbedding(f.vec(0, 1)))
	got, err := s.ReplaceMemory(ctx(t), f.tenant, prev.ID, 1, next)
	if err != nil {
		t.Fatalf("ReplaceMemory: %v", err)
	}
	want := next
	want.Version, want.Supersedes = 2, prev.ID
	diff(t, "replacement", want, got)
	old := get(t, s, f.tenant, prev.ID)
	if old.Status != memory.StatusSuperseded || old.ValidTo == nil || !old.ValidTo.Equal(next.ValidFrom) {
		t.Errorf("replaced memory: status %s valid_to %v, want superseded at %v", old.Status, old.ValidTo, next.ValidFrom)
	}
	h, err := s.History(ctx(t), f.tenant, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "history", []string{got.ID, prev.ID}, ids(h))

	tests := []struct {
		name   string
		prevID string
		expect int
		want   error
	}{
		{"stale version of the head", got.ID, 1, memory.ErrConflict},
		{"superseded version", prev.ID, 1, memory.ErrConflict},
		{"superseded version, any version", prev.ID, 0, memory.ErrConflict},
		{"missing", "mem_missing", 0, memory.ErrNotFound},
		{"a candidate in place of an active head", got.ID, 0, memory.ErrConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := f.mem("u1", "should not be written", withKey("drink"))
			if strings.HasPrefix(tc.name, "a candidate") {
				n.Status = memory.StatusCandidate
			}
			_, err := s.ReplaceMemory(ctx(t), f.tenant, tc.prevID, tc.expect, n)
			wantErr(t, "ReplaceMemory", err, tc.want)
			if _, err := s.GetMemory(ctx(t), f.tenant, n.ID); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("failed replacement was written: %v", err)
			}
		})
	}
	if head := get(t, s, f.tenant, got.ID); head.Status != memory.StatusActive || head.Version != 2 {
		t.Errorf("head after failed replacements: %s v%d, want active v2", head.Status, head.Version)
	}

	// Any version (0) replaces the head.
	third, err := s.ReplaceMemory(ctx(t), f.tenant, got.ID, 0, f.mem("u1", "likes coffee", withKey("drink")))
	if err != nil {
		t.Fatalf("ReplaceMemory(any version): %v", err)
	}
	if third.Version != 3 || third.Supersedes != got.ID {
		t.Errorf("third: v%d supersedes %q", third.Version, third.Supersedes)
	}

	// Concurrent replacements of one head: exactly one wins.
	head := create(t, s, f.mem("u2", "v1"))[0]
	const n = 6
	errs := make(chan error, n)
	c := ctx(t)
	for range n {
		m := f.mem("u2", "racing")
		go func() {
			_, err := s.ReplaceMemory(c, f.tenant, head.ID, 1, m)
			errs <- err
		}()
	}
	wins := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			wins++
		case !errors.Is(err, memory.ErrConflict):
			t.Errorf("concurrent replace: %v, want nil or ErrConflict", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d concurrent replacements of one version won, want 1", wins)
	}
}

// testListLargestPage: the service asks for one more memory than its
// largest page to learn whether another page follows, so the store must
// return that many.
func testListLargestPage(t *testing.T, s Store, f *fixture) {
	want := memory.MaxListSize + 1
	ms := make([]memory.Memory, want+1)
	for i := range ms {
		ms[i] = f.mem("u1", fmt.Sprintf("page filler %d", i))
	}
	create(t, s, ms...)
	for _, q := range []memory.ListQuery{{Limit: want}, {UserID: "u1", Limit: want}} {
		got, err := s.ListMemories(ctx(t), f.all(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want {
			t.Errorf("ListMemories(%+v) returned %d memories, want %d", q, len(got), want)
		}
	}
}

func testListFiltersAndCursor(t *testing.T, s Store, f *fixture) {
	var all []memory.Memory
	for i := range 25 {
		opts := []func(*memory.Memory){
			withType(memory.Types[i%len(memory.Types)]),
			withKind([]string{"preference", "order_status", "budget"}[i%3]),
		}
		user := "u1"
		if i%5 == 4 {
			user = "u2"
		}
		if i%7 == 6 {
			opts = append(opts, withStatus(memory.StatusArchived))
		}
		if i >= 20 {
			// Equal timestamps: the id breaks the tie.
			opts = append(opts, withCreated(base.Add(time.Hour)))
		}
		if i%3 == 1 {
			opts = append(opts, withAgent("agent-b"))
		}
		all = append(all, f.mem(user, fmt.Sprintf("Memory %02d", i), opts...))
	}
	create(t, s, all...)
	newestFirst := slices.Clone(all)
	slices.SortFunc(newestFirst, func(a, b memory.Memory) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(b.ID, a.ID)
	})
	pick := func(keep func(memory.Memory) bool) []string {
		var out []string
		for _, m := range newestFirst {
			if keep(m) {
				out = append(out, m.ID)
			}
		}
		return out
	}
	from, to := all[5].CreatedAt, all[12].CreatedAt
	tests := []struct {
		name string
		q    memory.ListQuery
		want []string
	}{
		{"everything", memory.ListQuery{}, pick(func(memory.Memory) bool { return true })},
		{"user", memory.ListQuery{UserID: "u2"}, pick(func(m memory.Memory) bool { return m.UserID == "u2" })},
		{"type", memory.ListQuery{Type: memory.TypeProfile}, pick(func(m memory.Memory) bool { return m.Type == memory.TypeProfile })},
		{"kind", memory.ListQuery{Kind: "budget"}, pick(func(m memory.Memory) bool { return m.Kind == "budget" })},
		{"status", memory.ListQuery{Status: memory.StatusArchived}, pick(func(m memory.Memory) bool { return m.Status == memory.StatusArchived })},
		{"window", memory.ListQuery{From: from, To: to}, pick(func(m memory.Memory) bool {
			return !m.CreatedAt.Before(from) && m.CreatedAt.Before(to)
		})},
		{"combined", memory.ListQuery{UserID: "u1", Kind: "preference", Status: memory.StatusActive}, pick(func(m memory.Memory) bool {
			return m.UserID == "u1" && m.Kind == "preference" && m.Status == memory.StatusActive
		})},
		{"user and type", memory.ListQuery{UserID: "u1", Type: memory.TypeSemantic}, pick(func(m memory.Memory) bool {
			return m.UserID == "u1" && m.Type == memory.TypeSemantic
		})},
		{"agent", memory.ListQuery{AgentID: "agent-b"}, pick(func(m memory.Memory) bool { return m.AgentID == "agent-b" })},
		{"user and agent", memory.ListQuery{UserID: "u1", AgentID: "agent-b"}, pick(func(m memory.Memory) bool {
			return m.UserID == "u1" && m.AgentID == "agent-b"
		})},
		{"user and kind", memory.ListQuery{UserID: "u1", Kind: "budget"}, pick(func(m memory.Memory) bool {
			return m.UserID == "u1" && m.Kind == "budget"
		})},
		{"text, any case", memory.ListQuery{UserID: "u1", Text: "mEMORY 1"}, pick(func(m memory.Memory) bool {
			return m.UserID == "u1" && strings.HasPrefix(m.Content, "Memory 1")
		})},
		{"limit", memory.ListQuery{Limit: 3}, pick(func(memory.Memory) bool { return true })[:3]},
		{"no match", memory.ListQuery{UserID: "nobody"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListMemories(ctx(t), f.all(), tc.q)
			if err != nil {
				t.Fatalf("ListMemories: %v", err)
			}
			diff(t, "ids", tc.want, ids(got))
		})
	}

	t.Run("cursor", func(t *testing.T) {
		got, pages := allPages(t, s, f, memory.ListQuery{Limit: 10}, 10)
		diff(t, "pages", 3, pages)
		diff(t, "all pages in order", ids(newestFirst), got)
	})

	// One user's listing reads an index in order; its pages must still
	// cover the user's memories newest first, ties broken by id.
	for _, tc := range []struct {
		name string
		q    memory.ListQuery
		keep func(memory.Memory) bool
	}{
		{"user cursor", memory.ListQuery{UserID: "u1", Limit: 4}, func(m memory.Memory) bool { return m.UserID == "u1" }},
		{"user and type cursor", memory.ListQuery{UserID: "u1", Type: memory.TypeEpisodic, Limit: 2}, func(m memory.Memory) bool {
			return m.UserID == "u1" && m.Type == memory.TypeEpisodic
		}},
		{"user and agent cursor", memory.ListQuery{UserID: "u1", AgentID: "agent-b", Limit: 2}, func(m memory.Memory) bool {
			return m.UserID == "u1" && m.AgentID == "agent-b"
		}},
		{"user and kind cursor", memory.ListQuery{UserID: "u1", Kind: "budget", Limit: 2}, func(m memory.Memory) bool {
			return m.UserID == "u1" && m.Kind == "budget"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := allPages(t, s, f, tc.q, 20)
			diff(t, "all pages in order", pick(tc.keep), got)
		})
	}

	t.Run("listed memory", func(t *testing.T) {
		got, err := s.ListMemories(ctx(t), f.all(), memory.ListQuery{Limit: 1})
		if err != nil || len(got) != 1 {
			t.Fatalf("ListMemories: %v, %d memories", err, len(got))
		}
		diff(t, "listed memory", newestFirst[0], got[0])
	})
}

// A listing's text is a case-insensitive substring of the content, however
// the store finds it: every memory whose content contains the text, in any
// script, next to any punctuation, within words or across them, and none
// other, newest first, in pages and with the other filters.
func testListTextIsASubstring(t *testing.T, s Store, f *fixture) {
	contents := []string{
		"Note 5042 about alice's order #700007.",
		"Note 15042 about bob's order #35.",
		"The reorder of (urgent) x-ray films, ORDERED twice",
		"snake_case key:value v12.5 and the rest",
		"Café crème at the station; no sugar",
		"我的预算是十万元，会员 level 3 gold",
		"预算 was raised: budget 120000 CNY",
		"They said then there these were the www pages",
		"an e-mail to support@example.com about the refund",
		"Ｆｕｌｌ-width ＡＢＣ letters and ｘｙｚ",
	}
	var all []memory.Memory
	for i, c := range contents {
		opts := []func(*memory.Memory){withType(memory.Types[i%len(memory.Types)])}
		if i%3 == 2 {
			opts = append(opts, withStatus(memory.StatusArchived))
		}
		all = append(all, f.mem("u1", c, opts...))
	}
	// The same contents about another user, who must never show.
	for _, c := range contents {
		all = append(all, f.mem("u2", c))
	}
	create(t, s, all...)
	newestFirst := slices.Clone(all)
	slices.Reverse(newestFirst)
	texts := []string{
		"order", "Order #7", "note 5042 about", "note 5042", "5042 about alice", "e 5042 a", "'s order", "s ord",
		"reorder", "eorde", "(urgent) x-ray", "urgent) x", "x-ray films", "ray films, ORD",
		"snake_case", "case key", "key:value v12", "v12.5 and the", "and the", "the rest", "the", "t",
		"café", "crème at", "station; no", "我的预算", "预算", "预", "会员 level 3 gold", "level 3",
		"budget 120000", "120000 cny", "they said", "then there these", "www pages", "e-mail",
		"support@example.com about", "@example", "refund", "ＡＢＣ", "ｘｙｚ", "abc", "width", "nothing like this",
	}
	for _, text := range texts {
		for _, q := range []memory.ListQuery{
			{UserID: "u1", Text: text},
			{UserID: "u1", Text: strings.ToUpper(text), Type: memory.TypeEpisodic},
			{UserID: "u1", Text: text, Status: memory.StatusArchived},
		} {
			var want []string
			for _, m := range newestFirst {
				if m.UserID == q.UserID && strings.Contains(strings.ToLower(m.Content), strings.ToLower(q.Text)) &&
					(q.Type == "" || m.Type == q.Type) && (q.Status == "" || m.Status == q.Status) {
					want = append(want, m.ID)
				}
			}
			got, err := s.ListMemories(ctx(t), f.all(), q)
			if err != nil {
				t.Fatalf("ListMemories(%+v): %v", q, err)
			}
			diff(t, fmt.Sprintf("text %q, type %q, status %q", q.Text, q.Type, q.Status), want, ids(got))
		}
	}
	// Page by page, the first pages found in the newest memories.
	got, _ := allPages(t, s, f, memory.ListQuery{UserID: "u1", Text: "E", Limit: 2}, 10)
	var want []string
	for _, m := range newestFirst {
		if m.UserID == "u1" && strings.Contains(strings.ToLower(m.Content), "e") {
			want = append(want, m.ID)
		}
	}
	diff(t, "pages of a common letter", want, got)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func testScopeFiltering(t *testing.T, s Store, f *fixture) {
	type spec struct {
		name, user, agent, typ, kind, sens string
	}
	specs := []spec{
		{"a-pub", "u1", "agent-a", memory.TypeSemantic, "preference", memory.SensitivityPublic},
		{"a-conf", "u1", "agent-a", memory.TypeSemantic, "budget", memory.SensitivityConfidential},
		{"b-int", "u1", "agent-b", memory.TypeEpisodic, "order_status", memory.SensitivityInternal},
		{"b-restr", "u1", "agent-b", memory.TypeEpisodic, "budget", memory.SensitivityRestricted},
		{"c-int", "u2", "agent-c", memory.TypeProfile, "preference", memory.SensitivityInternal},
		// What u1 said about themselves, and an author id of that form on
		// another user's memory, which only an admin can write.
		{"u1-own", "u1", "user:u1", memory.TypeProfile, "stated", memory.SensitivityInternal},
		{"u2-by-u1", "u2", "user:u1", memory.TypeProfile, "stated", memory.SensitivityInternal},
	}
	byName := map[string]string{}
	var ms []memory.Memory
	for _, sp := range specs {
		m := f.mem(sp.user, sp.name, withAgent(sp.agent), withType(sp.typ), withKind(sp.kind), withSensitivity(sp.sens),
			withEmbedding(f.vec(1)))
		byName[sp.name] = m.ID
		ms = append(ms, m)
	}
	create(t, s, ms...)
	names := func(ns ...string) []string {
		var out []string
		for _, n := range ns {
			out = append(out, byName[n])
		}
		slices.Sort(out)
		return out
	}
	authorIs := func(a string) *memory.Filter {
		return &memory.Filter{Op: memory.FilterEq, Field: "author", Values: []string{a}}
	}
	tests := []struct {
		name    string
		clauses []memory.Clause
		want    []string
		filter  *memory.Filter // when set, the scope's filter instead of its clauses
	}{
		{"empty scope", nil, nil, nil},
		{"all", []memory.Clause{{}}, names("a-pub", "a-conf", "b-int", "b-restr", "c-int", "u1-own", "u2-by-u1"), nil},
		{"one agent", []memory.Clause{{AgentIDs: []string{"agent-a"}}}, names("a-pub", "a-conf"), nil},
		{"a clause per agent", []memory.Clause{
			{AgentIDs: []string{"agent-a"}, MaxSensitivity: memory.SensitivityPublic},
			{AgentIDs: []string{"agent-b"}, Types: []string{memory.TypeEpisodic}, Kinds: []string{"order_status"}},
		}, names("a-pub", "b-int"), nil},
		{"kinds", []memory.Clause{{Kinds: []string{"budget", "preference"}}}, names("a-pub", "a-conf", "b-restr", "c-int"), nil},
		{"sensitivity ceiling", []memory.Clause{{MaxSensitivity: memory.SensitivityInternal}}, names("a-pub", "b-int", "c-int", "u1-own", "u2-by-u1"), nil},
		{"confidential ceiling", []memory.Clause{{MaxSensitivity: memory.SensitivityConfidential}}, names("a-pub", "a-conf", "b-int", "c-int", "u1-own", "u2-by-u1"), nil},
		{"unknown ceiling admits nothing", []memory.Clause{{MaxSensitivity: "top-secret"}}, nil, nil},
		{"user", []memory.Clause{{UserID: "u2"}}, names("c-int", "u2-by-u1"), nil},
		{"types", []memory.Clause{{Types: []string{memory.TypeSemantic, memory.TypeProfile}}}, names("a-pub", "a-conf", "c-int", "u1-own", "u2-by-u1"), nil},
		{"every field", []memory.Clause{{UserID: "u1", AgentIDs: []string{"agent-b"}, Types: []string{memory.TypeEpisodic},
			Kinds: []string{"budget"}, MaxSensitivity: memory.SensitivityRestricted}}, names("b-restr"), nil},
		{"disjoint clauses", []memory.Clause{{UserID: "u2"}, {AgentIDs: []string{"agent-a"}, Kinds: []string{"budget"}}}, names("a-conf", "c-int", "u2-by-u1"), nil},
		{"the user's own word", []memory.Clause{{Authors: []string{memory.AuthorUser}}}, names("u1-own"), nil},
		{"agents' memories", []memory.Clause{{Authors: []string{memory.AuthorAgent}}}, names("a-pub", "a-conf", "b-int", "b-restr", "c-int", "u2-by-u1"), nil},
		{"the user's own word, filtered", nil, names("u1-own"), authorIs(memory.AuthorUser)},
		{"agents' memories, filtered", nil, names("a-pub", "a-conf", "b-int", "b-restr", "c-int", "u2-by-u1"), authorIs(memory.AuthorAgent)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scope := memory.Scope{Tenant: f.tenant, Clauses: tc.clauses, Filter: tc.filter}
			got, err := s.ListMemories(ctx(t), scope, memory.ListQuery{})
			if err != nil {
				t.Fatalf("ListMemories: %v", err)
			}
			gotIDs := ids(got)
			slices.Sort(gotIDs)
			diff(t, "listed", tc.want, gotIDs)

			// Searches apply the same scope within user u1.
			var want []string
			for _, id := range tc.want {
				if m := get(t, s, f.tenant, id); m.UserID == "u1" {
					want = append(want, id)
				}
			}
			hits, err := s.SearchVector(ctx(t), scope, memory.SearchQuery{UserID: "u1", Embedding: f.vec(1), Limit: 50})
			if err != nil {
				t.Fatalf("SearchVector: %v", err)
			}
			gotIDs = hitIDs(hits)
			slices.Sort(gotIDs)
			diff(t, "vector hits", want, gotIDs)
		})
	}
}

func testTenantIsolation(t *testing.T, s Store, f *fixture) {
	g := &fixture{t: t, tenant: NewTenant(t), dim: f.dim}
	mine := f.mem("u1", "tenant one secret", withKey("budget"), withEmbedding(f.vec(1)), withIdem("same"),
		func(m *memory.Memory) { m.Entities = []memory.Entity{{ID: "order:1", Kind: "order", Name: "1"}} })
	theirs := mine
	theirs.Tenant, theirs.Content = g.tenant, "tenant two secret"
	theirs.Entities = []memory.Entity{{ID: "order:1", Kind: "order", Name: "one"}}
	create(t, s, mine)
	create(t, s, theirs)
	diff(t, "tenant one", mine, get(t, s, f.tenant, mine.ID))
	diff(t, "tenant two", theirs, get(t, s, g.tenant, mine.ID))

	// Same key and user in two tenants: no cross-tenant supersession.
	if m := get(t, s, f.tenant, mine.ID); m.Status != memory.StatusActive {
		t.Errorf("tenant one's memory was superseded by tenant two's: %s", m.Status)
	}
	nobody := NewTenant(t)
	if _, err := s.GetMemory(ctx(t), nobody, mine.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("GetMemory from a third tenant = %v, want ErrNotFound", err)
	}
	if _, err := s.History(ctx(t), nobody, mine.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("History from a third tenant = %v, want ErrNotFound", err)
	}
	if _, err := s.ReplaceMemory(ctx(t), nobody, mine.ID, 0, memory.Memory{ID: memory.NewID("mem"), Tenant: nobody, UserID: "u1", Key: "budget"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("ReplaceMemory from a third tenant = %v, want ErrNotFound", err)
	}
	if err := s.DeleteMemory(ctx(t), nobody, mine.ID, "x", "y"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("DeleteMemory from a third tenant = %v, want ErrNotFound", err)
	}
	for _, tn := range []*fixture{f, g} {
		listed, err := s.ListMemories(ctx(t), tn.all(), memory.ListQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) != 1 || listed[0].Tenant != tn.tenant {
			t.Errorf("tenant %s lists %v", tn.tenant, listed)
		}
		hits, err := s.SearchVector(ctx(t), tn.all(), memory.SearchQuery{UserID: "u1", Embedding: f.vec(1)})
		if err != nil || len(hits) != 1 || hits[0].Memory.Tenant != tn.tenant {
			t.Errorf("tenant %s vector hits %v, %v", tn.tenant, hits, err)
		}
		hits, err = s.SearchFullText(ctx(t), tn.all(), memory.SearchQuery{UserID: "u1", Text: "secret"})
		if err != nil || len(hits) != 1 || hits[0].Memory.Tenant != tn.tenant {
			t.Errorf("tenant %s full-text hits %v, %v", tn.tenant, hits, err)
		}
	}
	// The idempotency key is per tenant, and deleting in one tenant leaves
	// the other alone.
	if err := s.DeleteMemory(ctx(t), f.tenant, mine.ID, "test", "isolation"); err != nil {
		t.Fatal(err)
	}
	diff(t, "tenant two after tenant one's delete", theirs, get(t, s, g.tenant, mine.ID))
}

func testDelete(t *testing.T, s Store, f *fixture) {
	v1 := create(t, s, f.mem("u1", "v1", withKey("k")))[0]
	v2 := create(t, s, f.mem("u1", "v2", withKey("k")))[0]
	v3 := create(t, s, f.mem("u1", "v3", withKey("k")))[0]
	if err := s.DeleteMemory(ctx(t), f.tenant, v2.ID, "user:u1", "forget"); err != nil {
		t.Fatalf("DeleteMemory: %v", err)
	}
	if _, err := s.GetMemory(ctx(t), f.tenant, v2.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("GetMemory(deleted) = %v, want ErrNotFound", err)
	}
	if err := s.DeleteMemory(ctx(t), f.tenant, v2.ID, "user:u1", "again"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("second DeleteMemory = %v, want ErrNotFound", err)
	}
	// The chain is cut where the deleted version was.
	h, err := s.History(ctx(t), f.tenant, v3.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "history after delete", []string{v3.ID}, ids(h))
	if got := get(t, s, f.tenant, v3.ID); got.Supersedes != "" {
		t.Errorf("head still supersedes the deleted version %q", got.Supersedes)
	}
	if got := get(t, s, f.tenant, v1.ID); got.Status != memory.StatusSuperseded {
		t.Errorf("v1 status %s, want superseded", got.Status)
	}
}

func testSearchVector(t *testing.T, s Store, f *fixture) {
	q := f.vec(1, 0, 0)
	near := f.mem("u1", "near", withEmbedding(f.vec(0.9, 0.1, 0)))
	mid := f.mem("u1", "mid", withEmbedding(f.vec(0.5, 0.5, 0)), withKey("answer_style"))
	far := f.mem("u1", "far", withEmbedding(f.vec(-1, 0, 0.1)), withKind("rule"))
	noVec := f.mem("u1", "no embedding")
	otherUser := f.mem("u2", "identical but another user", withEmbedding(q))
	inactive := f.mem("u1", "identical but archived", withEmbedding(q), withStatus(memory.StatusArchived))
	episodic := f.mem("u1", "episodic, exact", withEmbedding(f.vec(1, 0, 0)), withType(memory.TypeEpisodic), withAgent("agent-b"))
	create(t, s, near, mid, far, noVec, otherUser, inactive, episodic)

	tests := []struct {
		name  string
		scope memory.Scope
		q     memory.SearchQuery
		want  []string
	}{
		{"ranked", f.all(), memory.SearchQuery{UserID: "u1", Embedding: q}, []string{episodic.ID, near.ID, mid.ID, far.ID}},
		{"limit", f.all(), memory.SearchQuery{UserID: "u1", Embedding: q, Limit: 2}, []string{episodic.ID, near.ID}},
		{"types", f.all(), memory.SearchQuery{UserID: "u1", Embedding: q, Types: []string{memory.TypeSemantic}}, []string{near.ID, mid.ID, far.ID}},
		{"scope", memory.Scope{Tenant: f.tenant, Clauses: []memory.Clause{{AgentIDs: []string{"agent-a"}}}},
			memory.SearchQuery{UserID: "u1", Embedding: q}, []string{near.ID, mid.ID, far.ID}},
		{"empty scope", memory.Scope{Tenant: f.tenant}, memory.SearchQuery{UserID: "u1", Embedding: q}, nil},
		{"other user", f.all(), memory.SearchQuery{UserID: "u2", Embedding: q}, []string{otherUser.ID}},
		// What a question about the user asks for: any of slot, kind or type.
		{"slots by key or kind", f.all(), memory.SearchQuery{UserID: "u1", Embedding: q,
			Slots: &memory.Slots{Keys: []string{"answer_style"}, Kinds: []string{"rule"}}}, []string{mid.ID, far.ID}},
		{"slots by type", f.all(), memory.SearchQuery{UserID: "u1", Embedding: q,
			Slots: &memory.Slots{Types: []string{memory.TypeEpisodic}}}, []string{episodic.ID}},
		{"slots inside the filters", f.all(), memory.SearchQuery{UserID: "u1", Embedding: q, Types: []string{memory.TypeSemantic},
			Slots: &memory.Slots{Types: []string{memory.TypeEpisodic}}}, nil},
		{"slots naming nothing", f.all(), memory.SearchQuery{UserID: "u1", Embedding: q, Slots: &memory.Slots{}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := s.SearchVector(ctx(t), tc.scope, tc.q)
			if err != nil {
				t.Fatalf("SearchVector: %v", err)
			}
			diff(t, "hits", tc.want, hitIDs(hits))
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Errorf("hit %d scores %v above hit %d's %v", i, hits[i].Score, i-1, hits[i-1].Score)
				}
			}
			// Embeddings come back only when asked for (MMR needs them).
			if len(hits) > 0 && len(hits[0].Memory.Embedding) != 0 {
				t.Errorf("hit carries an embedding of %d dimensions without asking", len(hits[0].Memory.Embedding))
			}
			asked := tc.q
			asked.Embeddings = true
			with, err := s.SearchVector(ctx(t), tc.scope, asked)
			if err != nil {
				t.Fatalf("SearchVector with embeddings: %v", err)
			}
			if len(with) > 0 && len(with[0].Memory.Embedding) != f.dim {
				t.Errorf("hit embedding has %d dimensions, want %d", len(with[0].Memory.Embedding), f.dim)
			}
		})
	}
	hits, err := s.SearchVector(ctx(t), f.all(), memory.SearchQuery{UserID: "u1", Embedding: q, Limit: 1})
	if err != nil || len(hits) != 1 {
		t.Fatalf("SearchVector: %v %v", hits, err)
	}
	if math.Abs(hits[0].Score-1) > 1e-6 {
		t.Errorf("identical vector scores %v, want 1", hits[0].Score)
	}
}

func testSearchFullText(t *testing.T, s Store, f *fixture) {
	email := f.mem("u1", "The customer prefers email contact over phone calls")
	budget := f.mem("u1", "预算是十万元")
	mixed := f.mem("u1", "会员 membership expires in March, 会员到期")
	other := f.mem("u2", "email is also mentioned for another user")
	archived := f.mem("u1", "old email address", withStatus(memory.StatusArchived))
	agentB := f.mem("u1", "email from agent b", withAgent("agent-b"), withType(memory.TypeEpisodic))
	create(t, s, email, budget, mixed, other, archived, agentB)

	onlyA := memory.Scope{Tenant: f.tenant, Clauses: []memory.Clause{{AgentIDs: []string{"agent-a"}}}}
	tests := []struct {
		name  string
		scope memory.Scope
		q     memory.SearchQuery
		want  []string
	}{
		{"english word", onlyA, memory.SearchQuery{UserID: "u1", Text: "email"}, []string{email.ID}},
		{"case-insensitive", onlyA, memory.SearchQuery{UserID: "u1", Text: "EMAIL"}, []string{email.ID}},
		{"chinese word", f.all(), memory.SearchQuery{UserID: "u1", Text: "预算"}, []string{budget.ID}},
		{"chinese phrase in a question", f.all(), memory.SearchQuery{UserID: "u1", Text: "我的预算是多少"}, []string{budget.ID}},
		{"mixed", f.all(), memory.SearchQuery{UserID: "u1", Text: "会员"}, []string{mixed.ID}},
		{"scope and types", f.all(), memory.SearchQuery{UserID: "u1", Text: "email", Types: []string{memory.TypeEpisodic}}, []string{agentB.ID}},
		{"empty scope", memory.Scope{Tenant: f.tenant}, memory.SearchQuery{UserID: "u1", Text: "email"}, nil},
		{"no match", f.all(), memory.SearchQuery{UserID: "u1", Text: "zebra"}, nil},
		{"blank", f.all(), memory.SearchQuery{UserID: "u1", Text: "   "}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := s.SearchFullText(ctx(t), tc.scope, tc.q)
			if err != nil {
				t.Fatalf("SearchFullText(%q): %v", tc.q.Text, err)
			}
			diff(t, "hits", tc.want, hitIDs(hits))
		})
	}
	hits, err := s.SearchFullText(ctx(t), f.all(), memory.SearchQuery{UserID: "u1", Text: "email", Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].Score <= 0 {
		t.Errorf("limit 1: %v, %v", hits, err)
	}
	// An identifier ranks the memory that holds it above one that holds
	// more of the question's other words and the parts the analyzer splits
	// the identifier into.
	asked := f.mem("u3", "Order SO-1001 of paper shipped on 15 Sep")
	near := f.mem("u3", "Status of order SO-1007: on hold; order status checked daily")
	create(t, s, asked, near)
	hits, err = s.SearchFullText(ctx(t), f.all(), memory.SearchQuery{UserID: "u3", Text: "status order SO-1001"})
	if err != nil || len(hits) != 2 || hits[0].Memory.ID != asked.ID {
		t.Errorf("identifier: %v, %v; want %s first", hitIDs(hits), err, asked.ID)
	}
}

func testFullTextEscaping(t *testing.T, s Store, f *fixture) {
	x := f.mem("u1", "x marks the spot")
	plus := f.mem("u1", "C++ and Go are languages")
	quoted := f.mem("u1", `she said "hello" twice`)
	create(t, s, x, plus, quoted)
	tests := []struct {
		text string
		want []string // nil: no hits, and above all no error
	}{
		{"*:*", nil},
		{"*", nil},
		{"?", nil},
		// Escaped, "content:x" is one term; the tokenizer keeps a colon
		// between letters inside a word (Unicode UAX #29), so it matches
		// nothing here. What matters is that no field query happens.
		{"content:x OR y", nil},
		{"x OR y", []string{x.ID}},
		{"x AND NOT spot", []string{x.ID}},
		{`"unbalanced quote`, nil},
		{`"hello`, []string{quoted.ID}},
		{`hello"`, []string{quoted.ID}},
		{"(((", nil},
		{"marks)", []string{x.ID}},
		{"[a TO z]", nil},
		{"{* TO *}", nil},
		{"spot~2", []string{x.ID}},
		{"spot^10", []string{x.ID}},
		{"-spot", []string{x.ID}},
		{"+languages +zebra", []string{plus.ID}},
		{"c++", []string{plus.ID}},
		{`\`, nil},
		{`spot\`, []string{x.ID}},
		{"/regex.*/", nil},
		{"&& || !", nil},
		{"AND", nil},
		{"OR OR OR", nil},
		{"NOT", nil},
		{"content:", nil},
		{"预算:*", nil},
		{"'; MATCH (n) DETACH DELETE n //", nil},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			hits, err := s.SearchFullText(ctx(t), f.all(), memory.SearchQuery{UserID: "u1", Text: tc.text})
			if err != nil {
				t.Fatalf("SearchFullText(%q): %v", tc.text, err)
			}
			got := hitIDs(hits)
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			diff(t, "hits", want, got)
		})
	}
	// The injection attempt above did nothing.
	for _, m := range []memory.Memory{x, plus, quoted} {
		get(t, s, f.tenant, m.ID)
	}
}

func testGrants(t *testing.T, s Store, f *fixture) {
	expires := base.Add(30 * 24 * time.Hour)
	g1 := memory.Grant{
		ID: memory.NewID("grant"), Tenant: f.tenant, Grantee: "agent-b", Source: "agent-a",
		Types: []string{memory.TypeSemantic, memory.TypeProfile}, Kinds: []string{"preference"},
		MaxSensitivity: memory.SensitivityInternal, ExpiresAt: &expires, CreatedAt: base,
	}
	g2 := memory.Grant{
		ID: memory.NewID("grant"), Tenant: f.tenant, Grantee: "agent-c", Source: "*",
		Types: []string{memory.TypeEpisodic}, MaxSensitivity: memory.SensitivityPublic, CreatedAt: base.Add(time.Second),
	}
	other := g1
	other.Tenant, other.ID = NewTenant(t), memory.NewID("grant")
	if _, err := s.CreateGrant(ctx(t), g1); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("CreateGrant between agents that do not exist = %v, want ErrNotFound", err)
	}
	f.addAgents(t, f.tenant, "agent-a", "agent-b", "agent-c")
	f.addAgents(t, other.Tenant, "agent-a", "agent-b")
	for _, g := range []memory.Grant{g1, g2, other} {
		got, err := s.CreateGrant(ctx(t), g)
		if err != nil {
			t.Fatalf("CreateGrant: %v", err)
		}
		diff(t, "created grant", g, got)
	}
	if _, err := s.CreateGrant(ctx(t), g1); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("CreateGrant(duplicate id) = %v, want ErrConflict", err)
	}
	// The same grant again, its types and kinds in another order, is not
	// made twice: the one the tenant has is returned.
	again := g1
	again.ID, again.CreatedAt = memory.NewID("grant"), base.Add(time.Hour)
	again.Types = []string{memory.TypeProfile, memory.TypeSemantic}
	if got, err := s.CreateGrant(ctx(t), again); err != nil || got.ID != g1.ID {
		t.Errorf("CreateGrant(identical to g1) = %+v, %v; want g1 returned", got, err)
	}
	got, err := s.ListGrants(ctx(t), f.tenant)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "tenant grants", []memory.Grant{g1, g2}, got)

	all, err := s.ListGrants(ctx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, g := range all {
		if g.ID == g1.ID || g.ID == g2.ID || g.ID == other.ID {
			found++
		}
	}
	if found != 3 {
		t.Errorf("ListGrants(all tenants) holds %d of the 3 grants", found)
	}

	if err := s.DeleteGrant(ctx(t), other.Tenant, g1.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("DeleteGrant from another tenant = %v, want ErrNotFound", err)
	}
	if err := s.DeleteGrant(ctx(t), f.tenant, g1.ID); err != nil {
		t.Fatalf("DeleteGrant: %v", err)
	}
	if err := s.DeleteGrant(ctx(t), f.tenant, g1.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("DeleteGrant twice = %v, want ErrNotFound", err)
	}
	got, err = s.ListGrants(ctx(t), f.tenant)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "after delete", []memory.Grant{g2}, got)
}
