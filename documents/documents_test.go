package documents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mneme/knowledge"
	"mneme/memory"
)

// fakeStore keeps documents and links in maps; status is the memories'.
type fakeStore struct {
	docs   map[string]Info
	links  map[string][]Placed // by document
	status map[string]string   // by memory id
	claims map[string]claim    // by document
	// removed holds the documents removed and not imported since.
	removed map[string]bool
}

// claim is a document's claimed scope and until when, and until when an
// import runs.
type claim struct {
	scope          string
	until, running time.Time
}

func newFakeStore() *fakeStore {
	return &fakeStore{docs: map[string]Info{}, links: map[string][]Placed{}, status: map[string]string{}, claims: map[string]claim{}, removed: map[string]bool{}}
}

func (s *fakeStore) Claim(ctx context.Context, tenant, id, kind, scopeID string, run bool, now, until time.Time) (bool, error) {
	held, ok := s.claims[id]
	if ok && held.scope != kind+":"+scopeID {
		active, _ := s.Sections(ctx, tenant, id)
		if len(active) > 0 || held.until.After(now) {
			return false, nil
		}
	}
	if run && held.running.After(now) {
		return true, ErrImportRunning
	}
	c := claim{scope: kind + ":" + scopeID, until: until, running: held.running}
	if run {
		c.running = until
	}
	s.claims[id] = c
	return true, nil
}

func (s *fakeStore) Document(_ context.Context, _, id string) (Info, error) {
	d, ok := s.docs[id]
	if _, claimed := s.claims[id]; claimed && !ok {
		return Info{ID: id}, nil // a claim makes the node, out of the listing
	}
	if !ok {
		return Info{}, memory.ErrNotFound
	}
	return d, nil
}

func (s *fakeStore) Sections(_ context.Context, _, id string) ([]knowledge.Stored, error) {
	var out []knowledge.Stored
	for _, p := range s.links[id] {
		if s.status[p.MemoryID] == memory.StatusActive {
			out = append(out, knowledge.Stored{Key: p.Key, Digest: p.Digest, ID: p.MemoryID})
		}
	}
	return out, nil
}

func (s *fakeStore) Record(ctx context.Context, _ string, d Info, placed []Placed) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.docs[d.ID] = d
	delete(s.removed, d.ID)
	if placed == nil {
		c := s.claims[d.ID]
		s.claims[d.ID] = claim{scope: c.scope}
	}
	for _, p := range placed {
		s.links[d.ID] = slices.DeleteFunc(s.links[d.ID], func(q Placed) bool { return q.MemoryID == p.MemoryID })
		s.links[d.ID] = append(s.links[d.ID], p)
	}
	return nil
}

func (s *fakeStore) Retire(_ context.Context, _, id string, ids []string, _ time.Time) (int, error) {
	n := 0
	for _, p := range s.links[id] {
		if s.status[p.MemoryID] == memory.StatusActive && (ids == nil || slices.Contains(ids, p.MemoryID)) {
			s.status[p.MemoryID] = memory.StatusArchived
			n++
		}
	}
	return n, nil
}

func (s *fakeStore) List(context.Context, string) ([]Info, error) { return nil, nil }

func (s *fakeStore) Remove(ctx context.Context, tenant, id string, at time.Time) (int, error) {
	if s.claims[id].until.After(at) {
		return 0, memory.ErrConflict
	}
	if s.removed[id] {
		return 0, memory.ErrNotFound
	}
	n, _ := s.Retire(ctx, tenant, id, nil, at)
	delete(s.docs, id)
	s.removed[id] = true
	return n, nil
}

func (s *fakeStore) Release(_ context.Context, _, id string) error {
	c := s.claims[id]
	s.claims[id] = claim{scope: c.scope}
	return nil
}

// fakeWriter supersedes by key as the write path does.
type fakeWriter struct {
	store  *fakeStore
	heads  map[string]string // key → active memory id
	writes int
	next   int
	// written, when set, runs after each write (a client hanging up).
	written func()
}

func (w *fakeWriter) Write(ctx context.Context, _ memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if w.written != nil {
		defer w.written()
	}
	w.writes++
	out := make([]memory.WriteResult, len(in))
	for i, n := range in {
		w.next++
		id := fmt.Sprintf("mem_%d", w.next)
		if old, ok := w.heads[n.Key]; ok {
			w.store.status[old] = memory.StatusSuperseded
		}
		w.heads[n.Key] = id
		w.store.status[id] = memory.StatusActive
		out[i] = memory.WriteResult{Outcome: memory.OutcomeCreated, ID: id}
	}
	return out, nil
}

func newTestService(t *testing.T, q memory.JobQueue) (*Service, *fakeStore, *fakeWriter) {
	t.Helper()
	st := newFakeStore()
	w := &fakeWriter{store: st, heads: map[string]string{}}
	o := Options{Store: st, Writer: w, Authz: allowAll{}}
	if q != nil {
		o.Queue = q
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, st, w
}

func doc(n int, edited map[int]bool, removed int) string {
	var b strings.Builder
	for i := range n {
		if i == removed {
			continue
		}
		v := i
		if edited[i] {
			v += 1000
		}
		fmt.Fprintf(&b, "## Rule %d\n\nRule %d says %d.\n\n", i, i, v)
	}
	return b.String()
}

var root = memory.Principal{Tenant: "acme", Kind: memory.KindAdmin, ID: "root"}

func TestImportCounts(t *testing.T) {
	s, st, _ := newTestService(t, nil)
	ctx := context.Background()
	steps := []struct {
		content string
		want    Counts
		active  int
	}{
		{doc(20, nil, -1), Counts{Created: 20}, 20},
		{doc(20, map[int]bool{2: true, 9: true}, 5), Counts{Superseded: 2, Retired: 1, Unchanged: 17}, 19},
		{doc(20, map[int]bool{2: true, 9: true}, 5), Counts{Unchanged: 19}, 19},
		{doc(20, map[int]bool{2: true, 9: true}, -1), Counts{Created: 1, Unchanged: 19}, 20},
	}
	for i, step := range steps {
		res, err := s.Import(ctx, root, ImportRequest{ID: "rules", Content: step.content})
		if err != nil || res.Counts == nil || *res.Counts != step.want {
			t.Fatalf("import %d: %+v %v, want %+v", i, res.Counts, err, step.want)
		}
		if got, _ := st.Sections(ctx, "acme", "rules"); len(got) != step.active {
			t.Errorf("import %d: %d active sections, want %d", i, len(got), step.active)
		}
	}
}

func TestImportRefuses(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		p    memory.Principal
		r    ImportRequest
		want error
	}{
		{"an agent", memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "bot"}, ImportRequest{ID: "a", Content: "x y z"}, memory.ErrForbidden},
		{"a user", memory.Principal{Tenant: "acme", Kind: memory.KindUser, ID: "alice"}, ImportRequest{ID: "a", Content: "x y z"}, memory.ErrForbidden},
		{"an unknown format", root, ImportRequest{ID: "a", Format: "pdf", Content: "x"}, ErrFormat},
		{"an empty document", root, ImportRequest{ID: "a", Content: "  \n"}, ErrEmpty},
		{"a bad id", root, ImportRequest{ID: "a b", Content: "x"}, ErrID},
		{"an id that climbs a path", root, ImportRequest{ID: "../x", Content: "x"}, ErrID},
		{"an id of a dot", root, ImportRequest{ID: ".", Content: "x"}, ErrID},
		{"an id with an empty part", root, ImportRequest{ID: "a//b", Content: "x"}, ErrID},
		{"an id that reads as a card number", root, ImportRequest{ID: "s201-1796587892", Content: "x"}, ErrID},
		{"an id of a card grouped by colons", root, ImportRequest{ID: "4111:1111:1111:1111", Content: "x"}, ErrID},
		{"an id of a mobile grouped by slashes", root, ImportRequest{ID: "tel/138/1234/5678", Content: "x"}, ErrID},
		{"a team without a name", root, ImportRequest{ID: "a", Content: "x", Scope: "team"}, nil},
		{"an unknown scope", root, ImportRequest{ID: "a", Content: "x", Scope: "galaxy"}, nil},
		{"a team with scope tenant", root, ImportRequest{ID: "a", Content: "x", Team: "sales"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, w := newTestService(t, nil)
			_, err := s.Import(ctx, tt.p, tt.r)
			var inv *memory.InvalidError
			if tt.want == nil && !errors.As(err, &inv) || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Import: %v, want %v", err, tt.want)
			}
			if w.writes != 0 {
				t.Errorf("%d writes, want none", w.writes)
			}
		})
	}
}

func TestImportKeepsItsScope(t *testing.T) {
	s, _, _ := newTestService(t, nil)
	ctx := context.Background()
	if _, err := s.Import(ctx, root, ImportRequest{ID: "rules", Content: doc(3, nil, -1), Scope: "team", Team: "sales"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Import(ctx, root, ImportRequest{ID: "rules", Content: doc(3, nil, -1)}); !errors.Is(err, ErrOtherScope) {
		t.Fatalf("import into another scope: %v, want ErrOtherScope", err)
	}
	if _, err := s.Remove(ctx, root, "4111111111111111"); !errors.Is(err, ErrID) {
		t.Errorf("removing a card-like id: %v, want ErrID", err)
	}
	if n, err := s.Remove(ctx, root, "rules"); err != nil || n != 3 {
		t.Fatalf("Remove = %d, %v; want 3", n, err)
	}
	if n, err := s.Remove(ctx, root, "rules"); !errors.Is(err, memory.ErrNotFound) || n != 0 {
		t.Errorf("Remove again = %d, %v; want ErrNotFound", n, err)
	}
	if res, err := s.Import(ctx, root, ImportRequest{ID: "rules", Content: doc(3, nil, -1)}); err != nil || res.Counts.Created != 3 {
		t.Fatalf("import after removal: %+v, %v; want 3 created", res.Counts, err)
	}
}

type fakeQueue struct{ jobs []memory.Job }

func (q *fakeQueue) Enqueue(_ context.Context, j memory.Job) (memory.JobStatus, error) {
	q.jobs = append(q.jobs, j)
	return memory.JobStatus{ID: "job_1", Kind: j.Kind, Status: memory.JobQueued}, nil
}

func (q *fakeQueue) Status(context.Context, string, string) (memory.JobStatus, error) {
	return memory.JobStatus{}, memory.ErrNotFound
}

func TestLargeImportIsQueued(t *testing.T) {
	q := &fakeQueue{}
	s, st, w := newTestService(t, q)
	ctx := context.Background()
	res, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(QueueAbove+1, nil, -1)})
	if err != nil || res.Job == nil || res.Counts != nil || len(q.jobs) != 1 || w.writes != 0 {
		t.Fatalf("Import: %+v %v, %d jobs, %d writes; want one job and no write", res, err, len(q.jobs), w.writes)
	}
	// While it waits in the queue, the import holds the document.
	if _, err := s.Remove(ctx, root, "big"); !errors.Is(err, ErrImportRunning) {
		t.Errorf("Remove of a document whose import is queued: %v, want ErrImportRunning", err)
	}
	if _, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(QueueAbove+1, nil, -1), Scope: "team", Team: "sales"}); !errors.Is(err, ErrOtherScope) {
		t.Errorf("import into another scope while one is queued: %v, want ErrOtherScope", err)
	}
	out, err := s.ApplyJobs(ctx, q.jobs)
	if err != nil || out[0].Err != nil || len(out[0].Memories) != QueueAbove+1 {
		t.Fatalf("ApplyJobs: %v %v", err, out[0].Err)
	}
	if got, _ := st.Sections(ctx, "acme", "big"); len(got) != QueueAbove+1 {
		t.Errorf("%d sections stored, want %d", len(got), QueueAbove+1)
	}
	// A job whose principal is not an admin writes nothing.
	j := q.jobs[0]
	j.Principal = memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "bot"}
	if out, _ := s.ApplyJobs(ctx, []memory.Job{j}); !errors.Is(out[0].Err, memory.ErrForbidden) {
		t.Errorf("job of an agent: %v, want ErrForbidden", out[0].Err)
	}
	// With no queue, a large import is written at once.
	s, _, _ = newTestService(t, nil)
	if res, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(QueueAbove+1, nil, -1)}); err != nil || res.Counts == nil || res.Counts.Created != QueueAbove+1 {
		t.Fatalf("Import without a queue: %+v %v", res, err)
	}
}

// A client that hangs up while its import writes does not cut the import
// between a batch's write and its link to the document: every section in
// force belongs to the document.
func TestImportOutlivesItsClient(t *testing.T) {
	s, st, w := newTestService(t, nil)
	ctx, hangUp := context.WithCancel(context.Background())
	w.written = hangUp
	res, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(150, nil, -1)})
	if err != nil || res.Counts == nil || res.Counts.Created != 150 {
		t.Fatalf("import whose client hung up after the first batch: %+v, %v", res, err)
	}
	if got, _ := st.Sections(context.Background(), "acme", "big"); len(got) != 150 {
		t.Errorf("%d sections linked to the document, want 150", len(got))
	}
}

// Imports of one document run one at a time: another asked for while one
// writes is refused (the admin retries once it ends), so that two plans
// made against the same stored sections never both apply.
func TestImportWaitsForTheOneRunning(t *testing.T) {
	s, st, _ := newTestService(t, nil)
	ctx := context.Background()
	now := time.Now()
	if _, err := st.Claim(ctx, "acme", "big", memory.ScopeTenant, "", true, now, now.Add(ClaimFor)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(3, nil, -1)}); !errors.Is(err, ErrImportRunning) {
		t.Fatalf("an import while another runs: %v, want ErrImportRunning", err)
	}
	if err := st.Release(ctx, "acme", "big"); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(3, nil, -1)}); err != nil || res.Counts.Created != 3 {
		t.Fatalf("the import once the other ended: %+v, %v", res, err)
	}
}

// A queued import yields to an import of the same document asked for after
// it was accepted: applied later, its older text would undo the newer.
func TestQueuedImportYieldsToALaterOne(t *testing.T) {
	q := &fakeQueue{}
	s, st, w := newTestService(t, q)
	ctx := context.Background()
	if _, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(QueueAbove+1, nil, -1)}); err != nil || len(q.jobs) != 1 {
		t.Fatalf("queued import: %v, %d jobs", err, len(q.jobs))
	}
	if res, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(3, nil, -1)}); err != nil || res.Counts == nil {
		t.Fatalf("later import: %+v, %v", res, err)
	}
	writes := w.writes
	out, err := s.ApplyJobs(ctx, q.jobs)
	if err != nil || out[0].Err != nil || len(out[0].Memories) != 1 || out[0].Memories[0].Outcome != memory.OutcomeStale {
		t.Fatalf("the queued job: %d results, error %v; want one stale result", len(out[0].Memories), errors.Join(err, out[0].Err))
	}
	if w.writes != writes {
		t.Errorf("the stale job wrote %d batches", w.writes-writes)
	}
	if got, _ := st.Sections(ctx, "acme", "big"); len(got) != 3 {
		t.Errorf("%d sections in force, want the later import's 3", len(got))
	}
}

// failingWriter refuses every write after the first.
type failingWriter struct{ *fakeWriter }

func (w failingWriter) Write(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error) {
	if w.writes > 0 {
		return nil, memory.ErrUnavailable
	}
	return w.fakeWriter.Write(ctx, p, in)
}

// TestFailedBatchLeavesItsPredecessorsLinked: an import that fails after
// its first batch leaves that batch linked to the document, and the next
// import writes only the rest.
func TestFailedBatchLeavesItsPredecessorsLinked(t *testing.T) {
	st := newFakeStore()
	w := &fakeWriter{store: st, heads: map[string]string{}}
	s, err := New(Options{Store: st, Writer: failingWriter{w}, Authz: allowAll{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := memory.MaxBatch + 30
	r := ImportRequest{ID: "rules", Content: doc(n, nil, -1)}
	if _, err := s.Import(ctx, root, r); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("Import: %v, want ErrUnavailable", err)
	}
	if got, _ := st.Sections(ctx, "acme", "rules"); len(got) != memory.MaxBatch {
		t.Fatalf("%d sections linked after the failure, want %d", len(got), memory.MaxBatch)
	}
	s.writer = w
	res, err := s.Import(ctx, root, r)
	if err != nil || *res.Counts != (Counts{Created: 30, Unchanged: memory.MaxBatch}) {
		t.Fatalf("Import again: %+v %v, want 30 created", res.Counts, err)
	}
}

// TestRemoveDuringAnImport: while an import holds the document, removing
// it is refused and archives nothing; an import that failed lets the
// document go at once, rather than when its claim would run out.
func TestRemoveDuringAnImport(t *testing.T) {
	s, st, _ := newTestService(t, nil)
	ctx := context.Background()
	if _, err := s.Import(ctx, root, ImportRequest{ID: "rules", Content: doc(3, nil, -1)}); err != nil {
		t.Fatal(err)
	}
	st.claims["rules"] = claim{scope: "tenant:", until: time.Now().Add(time.Minute)} // an import under way
	if n, err := s.Remove(ctx, root, "rules"); !errors.Is(err, ErrImportRunning) || n != 0 {
		t.Fatalf("Remove during an import = %d, %v; want ErrImportRunning", n, err)
	}
	if got, _ := st.Sections(ctx, "acme", "rules"); len(got) != 3 {
		t.Fatalf("%d sections in force after a refused removal, want 3", len(got))
	}
	s.writer = failingWriter{&fakeWriter{store: st, heads: map[string]string{}, writes: 1}}
	if _, err := s.Import(ctx, root, ImportRequest{ID: "rules", Content: doc(3, map[int]bool{0: true}, -1)}); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("failing import: %v, want ErrUnavailable", err)
	}
	if n, err := s.Remove(ctx, root, "rules"); err != nil || n != 3 {
		t.Fatalf("Remove after a failed import = %d, %v; want 3", n, err)
	}
}

// TestJobSubjectIsNoUser: the queue files a document's imports under a
// subject no user id can be, so that erasing a user ("kb:returns", say)
// never cancels or counts a document's queued imports.
func TestJobSubjectIsNoUser(t *testing.T) {
	for _, id := range []string{"returns", "guides/returns", "kb:returns", strings.Repeat("d", 61)} {
		if s := JobSubject(id); memory.ValidName(s) {
			t.Errorf("JobSubject(%q) = %q, a valid user id", id, s)
		}
	}
}

// roomFor is a quota with room for at most n more memories.
type roomFor struct {
	n     int64
	asked []int64
}

func (q *roomFor) Admit(_ context.Context, _ string, memories, _ int64) error {
	q.asked = append(q.asked, memories)
	if memories > q.n {
		return &memory.QuotaError{Quota: "memories", Limit: q.n}
	}
	return nil
}

// TestQueuedImportIsAdmitted: a queued import is admitted against the
// tenant's quota when it is accepted, for the sections it would write now,
// so that a job past the quota is refused at once rather than failing in
// the queue.
func TestQueuedImportIsAdmitted(t *testing.T) {
	ctx := context.Background()
	q := &fakeQueue{}
	st := newFakeStore()
	quota := &roomFor{n: QueueAbove + 5}
	s, err := New(Options{Store: st, Writer: &fakeWriter{store: st, heads: map[string]string{}}, Authz: allowAll{}, Queue: q, Quota: quota})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(QueueAbove+10, nil, -1)}); !errors.As(err, new(*memory.QuotaError)) || len(q.jobs) != 0 {
		t.Fatalf("an import past the quota: %v, %d jobs; want a quota error and no job", err, len(q.jobs))
	}
	res, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(QueueAbove+1, nil, -1)})
	if err != nil || res.Job == nil {
		t.Fatalf("an import within the quota: %+v %v", res, err)
	}
	if out, err := s.ApplyJobs(ctx, q.jobs); err != nil || out[0].Err != nil {
		t.Fatalf("ApplyJobs: %v %v", err, out[0].Err)
	}
	// Importing it again with two sections changed asks room for those two.
	quota.asked = nil
	if _, err := s.Import(ctx, root, ImportRequest{ID: "big", Content: doc(QueueAbove+1, map[int]bool{3: true, 7: true}, -1)}); err != nil {
		t.Fatalf("a re-import: %v", err)
	}
	if len(quota.asked) != 1 || quota.asked[0] != 2 {
		t.Errorf("the re-import asked for room for %v memories, want [2]", quota.asked)
	}
}

// allowAll lets everyone read everything.
type allowAll struct{}

func (allowAll) Decide(context.Context, memory.Principal, string, memory.Resource, time.Time) (memory.Decision, error) {
	return memory.Decision{Allow: true}, nil
}

// listStore lists the documents it holds.
type listStore struct {
	*fakeStore
	listed []Info
}

func (s listStore) List(context.Context, string) ([]Info, error) { return s.listed, nil }

// decideBy decides with a function.
type decideBy func(r memory.Resource) (memory.Decision, error)

func (f decideBy) Decide(_ context.Context, _ memory.Principal, _ string, r memory.Resource, _ time.Time) (memory.Decision, error) {
	return f(r)
}

// TestListShowsWhatPolicyLetsTheCallerRead: a document is listed only when
// the policy lets the caller read its knowledge, decided on the resource
// its sections are; a decision out of time fails the listing.
func TestListShowsWhatPolicyLetsTheCallerRead(t *testing.T) {
	admin := memory.Principal{Tenant: "acme", Kind: memory.KindAdmin, ID: "root"}
	st := listStore{fakeStore: newFakeStore(), listed: []Info{
		{ID: "handbook", Scope: memory.ScopeTenant},
		{ID: "support-faq", Scope: memory.ScopeTeam, ScopeID: "support"},
	}}
	for name, tc := range map[string]struct {
		decide func(memory.Resource) (memory.Decision, error)
		want   []string
		err    error
	}{
		"everything": {func(memory.Resource) (memory.Decision, error) { return memory.Decision{Allow: true}, nil }, []string{"handbook", "support-faq"}, nil},
		"nothing":    {func(memory.Resource) (memory.Decision, error) { return memory.Decision{}, nil }, nil, nil},
		"tenant only": {func(r memory.Resource) (memory.Decision, error) {
			return memory.Decision{Allow: r.Scope == memory.ScopeTenant}, nil
		}, []string{"handbook"}, nil},
		"out of time": {func(memory.Resource) (memory.Decision, error) { return memory.Decision{}, memory.ErrUnavailable }, nil, memory.ErrUnavailable},
	} {
		t.Run(name, func(t *testing.T) {
			var seen []memory.Resource
			s, err := New(Options{Store: st, Writer: &fakeWriter{store: st.fakeStore, heads: map[string]string{}}, Authz: decideBy(func(r memory.Resource) (memory.Decision, error) {
				seen = append(seen, r)
				return tc.decide(r)
			})})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.List(context.Background(), admin)
			var ids []string
			for _, d := range got {
				ids = append(ids, d.ID)
			}
			if !errors.Is(err, tc.err) || !slices.Equal(ids, tc.want) {
				t.Errorf("List = %v, %v; want %v, %v", ids, err, tc.want, tc.err)
			}
			if len(seen) == 0 || seen[0].Kind != KindSection || seen[0].Tenant != "acme" || seen[0].Scope != memory.ScopeTenant {
				t.Errorf("decided on %+v, want the handbook's sections", seen)
			}
		})
	}
}
