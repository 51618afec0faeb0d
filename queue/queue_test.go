package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/redis/go-redis/v9"

	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/queue"
	"mneme/userids"
)

const kind = "test"

// newQueue returns a queue on the test Redis under a prefix of its own, and
// removes its keys when the test ends.
func newQueue(t *testing.T, rdb redis.UniversalClient, shards int) *queue.Queue {
	t.Helper()
	return newQueueAt(t, rdb, "qtest-"+testenv.Tenant(t), shards)
}

// newQueueAt is newQueue under a key prefix the test knows.
func newQueueAt(t *testing.T, rdb redis.UniversalClient, prefix string, shards int) *queue.Queue {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := testenv.ScanKeys(ctx, rdb, prefix+":*")
		for _, k := range keys {
			rdb.Del(ctx, k)
		}
	})
	return queue.New(rdb, queue.Options{Prefix: prefix, Shards: shards})
}

// recorder is a handler that remembers what it applied, per user in order,
// and fails the jobs fail says to.
type recorder struct {
	mu      sync.Mutex
	applied map[string][]int // user → sequence numbers in the order applied
	by      map[string]int   // consumer → jobs applied
	fail    func(job memory.Job, seq int) error
	failAll func(seqs []int) error
}

func newRecorder() *recorder {
	return &recorder{applied: map[string][]int{}, by: map[string]int{}}
}

func (r *recorder) handler(consumer string) queue.Handler {
	return func(_ context.Context, jobs []memory.Job) ([]memory.JobResult, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		out := make([]memory.JobResult, len(jobs))
		seqs := make([]int, len(jobs))
		for i, j := range jobs {
			if err := json.Unmarshal(j.Payload, &seqs[i]); err != nil {
				return nil, err
			}
		}
		if r.failAll != nil {
			if err := r.failAll(seqs); err != nil {
				return nil, err
			}
		}
		for i, j := range jobs {
			seq := seqs[i]
			if r.fail != nil {
				if err := r.fail(j, seq); err != nil {
					out[i].Err = err
					continue
				}
			}
			r.applied[j.UserID] = append(r.applied[j.UserID], seq)
			r.by[consumer]++
			out[i].Memories = []memory.JobMemory{{ID: fmt.Sprintf("mem-%s-%d", j.UserID, seq), Outcome: memory.OutcomeCreated}}
		}
		return out, nil
	}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.applied {
		n += len(s)
	}
	return n
}

func enqueue(t *testing.T, q *queue.Queue, tenant, user string, seq int, idem string) memory.JobStatus {
	t.Helper()
	payload, _ := json.Marshal(seq)
	st, err := q.Enqueue(t.Context(), memory.Job{
		Kind: kind, Tenant: tenant, UserID: user, Payload: payload, IdempotencyKey: idem,
		Principal: memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: "bot"},
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return st
}

func startPool(t *testing.T, q *queue.Queue, r *recorder, opts queue.PoolOptions) *queue.Pool {
	t.Helper()
	if opts.Backoff == 0 {
		opts.Backoff = 10 * time.Millisecond
	}
	if opts.LeaseTTL == 0 {
		opts.LeaseTTL = 2 * time.Second
	}
	p := queue.NewPool(q, opts)
	p.Handle(kind, r.handler(p.Consumer()))
	if err := p.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Stop(ctx); err != nil {
			t.Errorf("stop pool: %v", err)
		}
	})
	return p
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func status(t *testing.T, q *queue.Queue, tenant, id string) memory.JobStatus {
	t.Helper()
	st, err := q.Status(t.Context(), tenant, id)
	if err != nil {
		t.Fatalf("status of %s: %v", id, err)
	}
	return st
}

// TestOrderPerUserAcrossPools enqueues interleaved jobs of many users while
// two pools share the shards: every job is applied once, each user's in the
// order accepted, and both pools take part.
func TestOrderPerUserAcrossPools(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		q := newQueue(t, rdb, 4)
		tenant := testenv.Tenant(t)
		const users, perUser = 12, 40
		r := newRecorder()
		a := startPool(t, q, r, queue.PoolOptions{Batch: 7})
		b := startPool(t, q, r, queue.PoolOptions{Batch: 5})
		waitFor(t, "the pools to split the shards", func() bool { return a.Leased() == 2 && b.Leased() == 2 })
		var last memory.JobStatus
		for seq := range perUser {
			for u := range users {
				last = enqueue(t, q, tenant, fmt.Sprintf("user-%d", u), seq, "")
			}
		}
		waitFor(t, "every job applied", func() bool { return r.count() >= users*perUser })
		time.Sleep(200 * time.Millisecond) // a duplicate would show up now
		r.mu.Lock()
		defer r.mu.Unlock()
		want := make([]int, perUser)
		for i := range want {
			want[i] = i
		}
		for u := range users {
			if got := r.applied[fmt.Sprintf("user-%d", u)]; !slices.Equal(got, want) {
				t.Errorf("user-%d applied %v, want 0..%d once each, in order", u, got, perUser-1)
			}
		}
		if len(r.by) != 2 {
			t.Errorf("jobs applied per pool: %v, want both pools at work", r.by)
		}
		if st := status(t, q, tenant, last.ID); st.Status != memory.JobDone || len(st.Memories) != 1 {
			t.Errorf("last job: %+v, want done with its memory", st)
		}
	})
}

// TestRetryThenDeadLetter: a batch that fails is retried job by job, in
// order; a job that fails once alone and then succeeds is done after two
// attempts; one that always fails goes to the dead-letter stream after
// MaxAttempts and is marked failed; bad input, an idempotency key of
// another write, a guard's or a quota's refusal, or one with a code of its
// own (a user id that differs from another's by case), is dead-lettered at once; the
// user's later jobs still apply, in order.
func TestRetryThenDeadLetter(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		q := newQueue(t, rdb, 2)
		tenant := testenv.Tenant(t)
		tries := map[int]int{}
		r := newRecorder()
		r.failAll = func(seqs []int) error {
			if slices.Contains(seqs, 1) {
				if tries[1]++; tries[1] <= 2 {
					return errors.New("transient trouble")
				}
			}
			return nil
		}
		r.fail = func(_ memory.Job, seq int) error {
			switch {
			case seq == 2:
				return errors.New("always broken")
			case seq == 3:
				return memory.Invalid("content", "must not be empty")
			case seq == 5:
				return fmt.Errorf("idempotency key %q: %w", "k-5", memory.ErrIdempotencyKeyReused)
			case seq == 6:
				return &memory.QuotaError{Quota: "memories", Limit: 60}
			case seq == 7:
				return &memory.GuardError{Field: "content", Kinds: []string{"password"}}
			case seq == 8:
				return lastingTrouble{}
			case seq == 9:
				return &userids.CaseConflictError{ID: "Alice", Existing: "alice"}
			}
			return nil
		}
		jobs := make([]memory.JobStatus, 10)
		for seq := range jobs {
			jobs[seq] = enqueue(t, q, tenant, "alice", seq, "")
		}
		describe := func(err error) (string, string) {
			var inv *memory.InvalidError
			var guarded *memory.GuardError
			if errors.As(err, &inv) || errors.As(err, &guarded) {
				return "described", err.Error()
			}
			return "other", "not described"
		}
		p := startPool(t, q, r, queue.PoolOptions{MaxAttempts: 4, Describe: describe})
		waitFor(t, "the last job", func() bool {
			st := status(t, q, tenant, jobs[9].ID).Status
			return st == memory.JobDone || st == memory.JobFailed
		})

		tests := []struct {
			seq      int
			status   string
			attempts int
		}{
			{0, memory.JobDone, 1},
			{1, memory.JobDone, 2},
			{2, memory.JobFailed, 4},
			{3, memory.JobFailed, 1},
			{4, memory.JobDone, 1},
			{5, memory.JobFailed, 1}, // a key of another write: retrying cannot help
			{6, memory.JobFailed, 1}, // nor a quota, nor the guard
			{7, memory.JobFailed, 1},
			// Unavailable, but lasting (a user being erased): counted, so
			// that it does not hold the shard.
			{8, memory.JobFailed, 4},
			{9, memory.JobFailed, 1},
		}
		for _, tc := range tests {
			st := status(t, q, tenant, jobs[tc.seq].ID)
			if st.Status != tc.status || st.Attempts != tc.attempts {
				t.Errorf("job %d: %s after %d attempts (%s), want %s after %d", tc.seq, st.Status, st.Attempts, st.Error, tc.status, tc.attempts)
			}
		}
		// The owner is told the code and words the API would answer with,
		// never the cause's own text, which may name stores and statements.
		for _, tc := range []struct {
			seq           int
			code, message string
		}{
			{2, "other", "not described"},
			{3, "described", "content: must not be empty"},
			{7, "described", "content holds password, which this tenant's guard policy does not let be remembered"},
		} {
			if st := status(t, q, tenant, jobs[tc.seq].ID); st.ErrorCode != tc.code || st.Error != tc.message {
				t.Errorf("job %d failed with %q %q, want %q %q", tc.seq, st.ErrorCode, st.Error, tc.code, tc.message)
			}
		}
		if got := r.applied["alice"]; !slices.Equal(got, []int{0, 1, 4}) {
			t.Errorf("applied %v, want [0 1 4]", got)
		}
		dead := 0
		for s := range q.Shards() {
			n, err := rdb.XLen(t.Context(), q.DeadStream(s)).Result()
			if err != nil {
				t.Fatal(err)
			}
			dead += int(n)
		}
		if dead != 7 || p.Stats().DeadLettered.Load() != 7 {
			t.Errorf("dead-letter streams hold %d entries (pool counted %d), want 7", dead, p.Stats().DeadLettered.Load())
		}
		// The operator's dead letter keeps the cause.
		causes := 0
		for s := range q.Shards() {
			es, err := rdb.XRange(t.Context(), q.DeadStream(s), "-", "+").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				if e.Values["error"] == "always broken" {
					causes++
				}
			}
		}
		if causes != 1 {
			t.Errorf("%d dead letters hold the cause \"always broken\", want 1", causes)
		}
	})
}

// TestARefusedKeyIsReleased: a job that failed because another write holds
// its idempotency key leaves the key to that write's retry; a job that
// failed for any other reason answers its retries with its failure.
func TestARefusedKeyIsReleased(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		q := newQueue(t, rdb, 2)
		tenant := testenv.Tenant(t)
		r := newRecorder()
		r.fail = func(_ memory.Job, seq int) error {
			switch seq {
			case 1:
				return fmt.Errorf("idempotency key %q: %w", "k-held", memory.ErrIdempotencyKeyReused)
			case 2:
				return memory.Invalid("content", "must not be empty")
			}
			return nil
		}
		startPool(t, q, r, queue.PoolOptions{MaxAttempts: 2})
		refused, invalid := enqueue(t, q, tenant, "alice", 1, "k-held"), enqueue(t, q, tenant, "alice", 2, "k-invalid")
		waitFor(t, "both jobs to fail", func() bool {
			return status(t, q, tenant, refused.ID).Status == memory.JobFailed && status(t, q, tenant, invalid.ID).Status == memory.JobFailed
		})
		retry := enqueue(t, q, tenant, "alice", 3, "k-held")
		if retry.ID == refused.ID {
			t.Fatalf("a write under the key the refused job named was answered with that job")
		}
		waitFor(t, "the retry", func() bool { return status(t, q, tenant, retry.ID).Status == memory.JobDone })
		if again := enqueue(t, q, tenant, "alice", 2, "k-invalid"); again.ID != invalid.ID {
			t.Errorf("the retry of an invalid job is job %s, want its own %s", again.ID, invalid.ID)
		}
	})
}

// TestAJobRunsVisibly: a job a worker applies reads running until it is
// done, so that the owner of a long one sees it move.
func TestAJobRunsVisibly(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		q := newQueue(t, rdb, 1)
		tenant := testenv.Tenant(t)
		release := make(chan struct{})
		r := newRecorder()
		r.fail = func(_ memory.Job, seq int) error {
			if seq == 1 {
				<-release
			}
			return nil
		}
		job := enqueue(t, q, tenant, "alice", 1, "")
		if job.Status != memory.JobQueued {
			t.Fatalf("a job no worker took: %s, want queued", job.Status)
		}
		startPool(t, q, r, queue.PoolOptions{})
		var once sync.Once
		let := func() { once.Do(func() { close(release) }) }
		t.Cleanup(let) // before the pool's: a failed wait must not leave the handler blocked
		waitFor(t, "the job to run", func() bool { return status(t, q, tenant, job.ID).Status == memory.JobRunning })
		let()
		waitFor(t, "the job to be done", func() bool { return status(t, q, tenant, job.ID).Status == memory.JobDone })
	})
}

// lastingTrouble is a store's refusal that may last though nothing is down.
type lastingTrouble struct{}

func (lastingTrouble) Error() string { return "lasting trouble" }
func (lastingTrouble) Unwrap() error { return memory.ErrUnavailable }
func (lastingTrouble) Lasting() bool { return true }

// TestIdempotentEnqueue: a job enqueued again with the same key is the same
// job, queued once.
func TestIdempotentEnqueue(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		q := newQueue(t, rdb, 2)
		tenant := testenv.Tenant(t)
		a := enqueue(t, q, tenant, "alice", 1, "req-1")
		b := enqueue(t, q, tenant, "alice", 1, "req-1") // a retry
		c := enqueue(t, q, tenant, "bob", 3, "req-1")   // keys are per user
		if a.ID != b.ID || a.ID == c.ID {
			t.Errorf("ids %s %s %s: want the first two equal, the third apart", a.ID, b.ID, c.ID)
		}
		var n int64
		for s := range q.Shards() {
			l, _ := rdb.XLen(t.Context(), q.Stream(s)).Result()
			n += l
		}
		if n != 2 {
			t.Errorf("%d stream entries, want 2", n)
		}
		if _, err := q.Status(t.Context(), "other-tenant", a.ID); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("status from another tenant: %v, want ErrNotFound", err)
		}
		for _, id := range []string{"job_x", "job_1_short", "mem_123", ""} {
			if _, err := q.Status(t.Context(), tenant, id); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("status of %q: %v, want ErrNotFound", id, err)
			}
		}
	})
}

// TestOrphansAreClaimed: entries a dead consumer read but never
// acknowledged are applied by the pool that leases their shard.
func TestOrphansAreClaimed(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		q := newQueue(t, rdb, 1)
		tenant := testenv.Tenant(t)
		for seq := range 3 {
			enqueue(t, q, tenant, "alice", seq, "")
		}
		if err := rdb.XGroupCreateMkStream(t.Context(), q.Stream(0), "workers", "0").Err(); err != nil {
			t.Fatal(err)
		}
		read, err := rdb.XReadGroup(t.Context(), &redis.XReadGroupArgs{
			Group: "workers", Consumer: "dead-process", Streams: []string{q.Stream(0), ">"}, Count: 2,
		}).Result()
		if err != nil || len(read[0].Messages) != 2 {
			t.Fatalf("read as the dead consumer: %v", err)
		}
		r := newRecorder()
		startPool(t, q, r, queue.PoolOptions{})
		waitFor(t, "every job", func() bool { return r.count() >= 3 })
		r.mu.Lock()
		defer r.mu.Unlock()
		if got := r.applied["alice"]; !slices.Equal(got, []int{0, 1, 2}) {
			t.Errorf("applied %v, want [0 1 2]", got)
		}
		pending, err := rdb.XPending(t.Context(), q.Stream(0), "workers").Result()
		if err != nil || pending.Count != 0 {
			t.Errorf("pending after the claim: %+v %v, want none", pending, err)
		}
	})
}

// TestEraseUser drops a user's queued jobs, statuses included, and leaves
// other users' alone.
func TestEraseUser(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		q := newQueue(t, rdb, 2)
		tenant := testenv.Tenant(t)
		var alice []memory.JobStatus
		for seq := range 4 {
			alice = append(alice, enqueue(t, q, tenant, "alice", seq, fmt.Sprintf("k-%d", seq)))
			enqueue(t, q, tenant, "bob", seq, "")
		}
		n, err := q.EraseUser(t.Context(), tenant, "alice")
		if err != nil || n != 4 {
			t.Fatalf("EraseUser = %d, %v; want 4", n, err)
		}
		if q.Place() != "queue" {
			t.Errorf("Place = %q", q.Place())
		}
		// Each job stays, done, content-free, with its memories erased.
		for _, j := range alice {
			st := status(t, q, tenant, j.ID)
			want := memory.JobStatus{ID: j.ID, Kind: kind, Status: memory.JobDone, AcceptedAt: j.AcceptedAt,
				Memories: []memory.JobMemory{{Outcome: memory.OutcomeErased}}, Owner: j.Owner}
			if diff := cmp.Diff(want, st, cmpopts.IgnoreFields(memory.JobStatus{}, "FinishedAt")); diff != "" || st.FinishedAt == nil {
				t.Errorf("status of an erased job (-want +got):\n%s (finished at %v)", diff, st.FinishedAt)
			}
		}
		r := newRecorder()
		startPool(t, q, r, queue.PoolOptions{})
		waitFor(t, "bob's jobs", func() bool { return r.count() >= 4 })
		time.Sleep(300 * time.Millisecond)
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.applied["alice"]) != 0 || len(r.applied["bob"]) != 4 {
			t.Errorf("applied %v, want bob's 4 jobs and none of alice's", r.applied)
		}
		// The idempotency keys went with the jobs: the same key is a new job.
		if again := enqueue(t, q, tenant, "alice", 9, "k-0"); again.ID == alice[0].ID {
			t.Error("an erased job's idempotency key still answers")
		}
	})
}

// TestEraseUserKeepsJobsContentFree: once its user is erased, a memories
// job reads as done with one erased memory per memory sent, before it ran
// or after (keeping the ids, which tombstones keep too), and nothing of
// what it said; a job the user sent about themself names them no more,
// so that only admins read it; a worker finishing a job it held leaves
// the erased status as it is.
func TestEraseUserKeepsJobsContentFree(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		prefix := "qtest-" + testenv.Tenant(t)
		q := newQueueAt(t, rdb, prefix, 1)
		tenant := testenv.Tenant(t)
		const secret = "zq-plans-a-trip-to-oslo"
		send := func(p memory.Principal, contents ...string) memory.JobStatus {
			t.Helper()
			var in []memory.NewMemory
			for _, c := range contents {
				in = append(in, memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: c})
			}
			payload, _ := json.Marshal(in)
			st, err := q.Enqueue(t.Context(), memory.Job{Kind: memory.JobMemories, Tenant: tenant, UserID: "alice",
				Principal: p, Payload: payload, IdempotencyKey: "k-" + contents[0]})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		bot := memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: "bot"}
		queued := send(bot, "one "+secret, "two "+secret)
		self := send(memory.Principal{Tenant: tenant, Kind: memory.KindUser, ID: "alice"}, "mine "+secret)

		// A job that ran before the erase: a pool applies it.
		ran := send(bot, "ran "+secret)
		p := queue.NewPool(q, queue.PoolOptions{Backoff: 10 * time.Millisecond, LeaseTTL: 2 * time.Second})
		p.Handle(memory.JobMemories, func(_ context.Context, jobs []memory.Job) ([]memory.JobResult, error) {
			out := make([]memory.JobResult, len(jobs))
			for i, j := range jobs {
				out[i].Memories = []memory.JobMemory{{ID: "mem-" + j.ID, Outcome: memory.OutcomeCreated, Status: "active", Reason: "inference"}}
			}
			return out, nil
		})
		if err := p.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the jobs to run", func() bool {
			for _, j := range []memory.JobStatus{queued, self, ran} {
				if status(t, q, tenant, j.ID).Status != memory.JobDone {
					return false
				}
			}
			return true
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		queued = send(bot, "late one "+secret, "late two "+secret) // accepted, never run

		if _, err := q.EraseUser(t.Context(), tenant, "alice"); err != nil {
			t.Fatal(err)
		}
		erased := memory.JobMemory{Outcome: memory.OutcomeErased}
		for _, tt := range []struct {
			name  string
			job   memory.JobStatus
			owner memory.Principal
			want  []memory.JobMemory
		}{
			{"queued", queued, bot, []memory.JobMemory{erased, erased}},
			{"sent by the user", self, memory.Principal{Tenant: tenant, Kind: memory.KindUser}, []memory.JobMemory{{ID: "mem-" + self.ID, Outcome: memory.OutcomeErased}}},
			{"ran", ran, bot, []memory.JobMemory{{ID: "mem-" + ran.ID, Outcome: memory.OutcomeErased}}},
		} {
			st := status(t, q, tenant, tt.job.ID)
			if st.Status != memory.JobDone || st.FinishedAt == nil || st.Error != "" || st.ErrorCode != "" {
				t.Errorf("%s: status %+v, want done", tt.name, st)
			}
			if diff := cmp.Diff(tt.want, st.Memories); diff != "" {
				t.Errorf("%s: memories (-want +got):\n%s", tt.name, diff)
			}
			if diff := cmp.Diff(tt.owner, st.Owner); diff != "" {
				t.Errorf("%s: owner (-want +got):\n%s", tt.name, diff)
			}
		}
		keys, err := testenv.ScanKeys(t.Context(), rdb, prefix+":*")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if typ, _ := rdb.Type(t.Context(), k).Result(); typ != "hash" {
				continue
			}
			h, _ := rdb.HGetAll(t.Context(), k).Result()
			if b, _ := json.Marshal(h); strings.Contains(string(b), secret) || strings.Contains(string(b), "alice") {
				t.Errorf("%s keeps %s", k, b)
			}
		}
	})
}

// TestFenceUser: the shard's sequence numbers jobs in the order they were
// accepted; a fence falls between the jobs accepted before it, which
// workers drop, and those accepted after, which they apply.
func TestFenceUser(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		q := newQueue(t, rdb, 1)
		tenant := testenv.Tenant(t)
		for seq := range 3 {
			enqueue(t, q, tenant, "alice", seq, "")
		}
		enqueue(t, q, tenant, "bob", 0, "")
		fence, err := q.FenceUser(t.Context(), tenant, "alice")
		if err != nil {
			t.Fatal(err)
		}
		again, err := q.FenceUser(t.Context(), tenant, "alice")
		if err != nil || again <= fence {
			t.Errorf("second fence %d (%v), want above %d", again, err, fence)
		}
		enqueue(t, q, tenant, "alice", 3, "")

		var mu sync.Mutex
		seqs := map[int]int64{} // alice's payload → Job.Seq as the worker saw it
		r := newRecorder()
		r.fail = func(j memory.Job, n int) error {
			if j.UserID == "alice" {
				mu.Lock()
				seqs[n] = j.Seq
				mu.Unlock()
			}
			return nil
		}
		startPool(t, q, r, queue.PoolOptions{})
		waitFor(t, "the jobs after the fence", func() bool { return r.count() >= 2 })
		time.Sleep(300 * time.Millisecond)
		r.mu.Lock()
		defer r.mu.Unlock()
		if got := r.applied["alice"]; !slices.Equal(got, []int{3}) {
			t.Errorf("alice's applied jobs %v, want only [3], accepted after the fence", got)
		}
		if got := r.applied["bob"]; !slices.Equal(got, []int{0}) {
			t.Errorf("bob's applied jobs %v, want [0]", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if seqs[3] <= again {
			t.Errorf("job accepted after the fence has Seq %d, want above %d", seqs[3], again)
		}
	})
}

// TestIdempotencyKeyFingerprint: under one key the same request is the same
// job; another request (another body, kind or sender) is refused rather
// than answered with the first job; a key stored before fingerprints were
// kept matches any request.
func TestIdempotencyKeyFingerprint(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		tenant := testenv.Tenant(t)
		prefix := "qtest-" + tenant
		q := newQueueAt(t, rdb, prefix, 2)
		job := func(sent, sender, jobKind string) memory.Job {
			return memory.Job{
				Kind: jobKind, Tenant: tenant, UserID: "alice", Payload: json.RawMessage(`1`), IdempotencyKey: "k",
				Principal: memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: sender}, Sent: []byte(sent),
			}
		}
		first, err := q.Enqueue(t.Context(), job("a", "bot", kind))
		if err != nil {
			t.Fatal(err)
		}
		if again, err := q.Enqueue(t.Context(), job("a", "bot", kind)); err != nil || again.ID != first.ID {
			t.Errorf("the same request again: %+v, %v; want job %s", again, err, first.ID)
		}
		for name, other := range map[string]memory.Job{
			"another body": job("b", "bot", kind), "another sender": job("a", "other-bot", kind), "another kind": job("a", "bot", "other"),
		} {
			if st, err := q.Enqueue(t.Context(), other); !errors.Is(err, memory.ErrIdempotencyKeyReused) {
				t.Errorf("%s under the key: %+v, %v; want ErrIdempotencyKeyReused", name, st, err)
			}
		}

		// A job that says nothing of what was sent is compared by payload.
		bare := func(payload string) memory.Job {
			j := job("", "bot", kind)
			j.IdempotencyKey, j.Sent, j.Payload = "k-bare", nil, json.RawMessage(payload)
			return j
		}
		one, err := q.Enqueue(t.Context(), bare(`1`))
		if err != nil {
			t.Fatal(err)
		}
		if again, err := q.Enqueue(t.Context(), bare(`1`)); err != nil || again.ID != one.ID {
			t.Errorf("the same payload again: %+v, %v; want job %s", again, err, one.ID)
		}
		if _, err := q.Enqueue(t.Context(), bare(`2`)); !errors.Is(err, memory.ErrIdempotencyKeyReused) {
			t.Errorf("another payload under the key: %v, want ErrIdempotencyKeyReused", err)
		}

		keys, err := testenv.ScanKeys(t.Context(), rdb, prefix+":*:idem:*")
		if err != nil || len(keys) != 2 {
			t.Fatalf("idempotency keys %v, %v; want two", keys, err)
		}
		for _, k := range keys { // as stored before fingerprints
			if err := rdb.Set(t.Context(), k, first.ID, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if old, err := q.Enqueue(t.Context(), job("b", "bot", kind)); err != nil || old.ID != first.ID {
			t.Errorf("a key stored without a fingerprint: %+v, %v; want job %s", old, err, first.ID)
		}
	})
}
