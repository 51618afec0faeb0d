package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"mneme/facts"
)

// Job kinds. A kind names the handler a queue worker gives a job to.
const (
	// JobMemories writes memories accepted by CreateAsync.
	JobMemories = "memories"
)

// Job statuses: running from when a worker takes the job until it is done
// or failed, or back in the queue for a retry.
const (
	JobQueued  = "queued"
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// Job is one unit of queued work about one user: the queue shards by
// (Tenant, UserID), so one user's jobs apply in the order they were accepted.
type Job struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Tenant string `json:"tenant"`
	UserID string `json:"user_id"`
	// Principal submitted the job; it is authorised again when applied.
	Principal Principal `json:"principal"`
	// AcceptedAt is the event time: memories written by the job are valid
	// from then, and a slot whose head is newer keeps its head.
	AcceptedAt time.Time `json:"accepted_at"`
	// IdempotencyKey makes a resubmission return the first job.
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	Payload        json.RawMessage `json:"payload"`
	// Sent is the request as its sender sent it, before defaults that
	// differ between attempts: under one IdempotencyKey, a resubmission
	// is the same kind, sender and Sent (Payload when Sent is nil).
	Sent []byte `json:"-"`
	// Seq orders the job against erasures of its user: the queue sets it
	// from one sequence with Fencer.FenceUser.
	Seq int64 `json:"-"`
}

// JobStatus is what a client sees of a job.
type JobStatus struct {
	ID         string      `json:"id"`
	Kind       string      `json:"kind"`
	Status     string      `json:"status"`
	AcceptedAt time.Time   `json:"accepted_at"`
	FinishedAt *time.Time  `json:"finished_at,omitempty"`
	Attempts   int         `json:"attempts,omitempty"`
	Memories   []JobMemory `json:"memories,omitempty"`
	// A failed job's stable error code and message, as the API answers.
	ErrorCode string `json:"error_code,omitempty"`
	Error     string `json:"error,omitempty"`
	// Owner submitted the job; only it and admins may see the status.
	Owner Principal `json:"-"`
}

// JobMemory is what became of one memory of a job: the write's outcome
// (created, reinforced, skipped, or, see Written, duplicate or stale), the
// memory written or standing in for it, and the status it has now. A
// queued write gets the outcomes a synchronous one would.
type JobMemory struct {
	ID      string `json:"id,omitempty"`
	Outcome string `json:"outcome"`
	Status  string `json:"status,omitempty"`
	// Reason says why a memory was skipped or is a candidate.
	Reason string `json:"reason,omitempty"`
}

// JobQueue keeps jobs until a worker applies them. The queue package
// implements it on Redis Streams.
type JobQueue interface {
	// Enqueue stores a new job and returns its status. A job whose
	// IdempotencyKey the queue has seen for the same tenant and user is not
	// stored again: the first job's status is returned, or
	// ErrIdempotencyKeyReused when the two are not the same request.
	Enqueue(ctx context.Context, job Job) (JobStatus, error)
	// Status returns a job of the tenant, or ErrNotFound.
	Status(ctx context.Context, tenant, id string) (JobStatus, error)
}

// JobResult is the outcome of applying one job. Err set means the job failed
// and may be retried; Memories lists what it wrote otherwise.
type JobResult struct {
	Memories []JobMemory
	Err      error
}

// CreateAsync validates and authorises memories like Create and queues them
// for a worker; nothing is stored yet. Every memory of one call must be
// about the same user, whose writes apply in order. idemKey, when given,
// makes a retried call return the first call's job.
func (s *Service) CreateAsync(ctx context.Context, p Principal, in []NewMemory, idemKey string) (JobStatus, error) {
	if len(idemKey) > 128 {
		return JobStatus{}, Invalid("idempotency_key", "must be at most 128 bytes")
	}
	if err := checkBatch(in); err != nil {
		return JobStatus{}, err
	}
	if idemKey == "" && len(in) == 1 {
		idemKey = in[0].IdempotencyKey
	}
	// As sent: the guard may mask differently once its policy changes, and
	// a retry must still match. What fails to encode here fails below.
	sent, _ := json.Marshal(in)
	now := s.now().UTC()
	var tenant string
	in = append([]NewMemory(nil), in...)
	for i, n := range in {
		m, err := s.build(p, n, now)
		if err != nil {
			return JobStatus{}, prefixField(err, i, len(in))
		}
		if i > 0 && (m.UserID != in[0].UserID || m.Tenant != tenant) {
			return JobStatus{}, Invalid("memories", "an asynchronous write is about one user: every memory needs the same user_id")
		}
		tenant = m.Tenant
		if err := s.require(ctx, p, ActionWrite, ResourceOf(m), now); err != nil {
			return JobStatus{}, err
		}
		// The guard runs before the write is queued: what it rejects is
		// refused now, and what it masks never reaches Redis in clear.
		if _, err := s.guard(ctx, p, &m, now); err != nil {
			return JobStatus{}, prefixGuard(err, i, len(in))
		}
		in[i].Content = m.Content
	}
	// The quota is asked when the write is accepted, not when a worker
	// applies it: an accepted job is a promise.
	if err := s.admitContents(ctx, tenant, len(in), func(i int) string { return in[i].Content }); err != nil {
		return JobStatus{}, err
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return JobStatus{}, fmt.Errorf("encode job: %w", err)
	}
	return s.queue.Enqueue(ctx, Job{
		Kind: JobMemories, Tenant: tenant, UserID: in[0].UserID, Principal: p,
		AcceptedAt: now, IdempotencyKey: idemKey, Payload: payload, Sent: sent,
	})
}

// JobStatus returns a job of the principal's tenant. Only the principal that
// submitted it and the tenant's admins see it; anyone else gets ErrNotFound.
func (s *Service) JobStatus(ctx context.Context, p Principal, id string) (JobStatus, error) {
	st, err := s.queue.Status(ctx, p.Tenant, id)
	if err != nil {
		return JobStatus{}, err
	}
	if p.Kind != KindAdmin && (st.Owner.Kind != p.Kind || st.Owner.ID != p.ID) {
		return JobStatus{}, ErrNotFound
	}
	return st, nil
}

// ApplyMemoryJobs writes the memories of queued JobMemories jobs, in order,
// with the pipeline of Write after the guard (which ran when the job was
// accepted): worth remembering, embedding, dedup, candidates and profile
// thresholds, so a queued write ends as the same write made synchronously
// would. Policy is not asked again whether the write is allowed: it allowed
// it when the job was accepted, and a write must not turn into a failure
// because a policy evaluation timed out on a busy worker; only the dedup
// search asks for the writer's read scope. Each memory is valid from its
// job's AcceptedAt, and carries an idempotency key (the client's, or one
// derived from the job), so a job applied twice — after a crash between
// commit and acknowledgement — writes nothing new. Jobs of one tenant are
// written in one transaction, at most MaxApplyGroup memories each; when one
// fails the error is returned for the caller to retry the jobs one by one. A job that cannot be valid or
// allowed gets its own Err and writes nothing.
func (s *Service) ApplyMemoryJobs(ctx context.Context, jobs []Job) ([]JobResult, error) {
	results := make([]JobResult, len(jobs))
	type place struct{ job, at int } // a kept memory's job and index in it
	ms, places := []Memory(nil), []place(nil)
	for j, job := range jobs {
		built, err := s.buildJob(job)
		if err != nil {
			results[j].Err = err
			continue
		}
		out := make([]JobMemory, len(built))
		for i, m := range built {
			if reason := facts.Worthless(m.Content); reason != "" {
				out[i] = JobMemory{Outcome: OutcomeSkipped, Reason: reason}
				continue
			}
			m.EvidenceCount = 1
			ms = append(ms, m)
			places = append(places, place{j, i})
		}
		results[j].Memories = out
	}
	if len(ms) == 0 {
		return results, nil
	}
	if err := s.embedAll(ctx, ms); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	for from := 0; from < len(ms); {
		to := from + 1
		for to < len(ms) && ms[to].Tenant == ms[from].Tenant && to-from < MaxApplyGroup {
			to++
		}
		group, at := ms[from:to], places[from:to]
		writer := func(i int) Principal { return jobs[at[i].job].Principal }
		scopes, scopeOf, err := s.dedupScopes(ctx, writer, group, now)
		if err != nil {
			return nil, err
		}
		written, err := s.writes.WriteDeduped(ctx, s.dedupWrite(group, scopes, scopeOf, writer, true))
		if err != nil {
			return nil, err
		}
		for k, w := range written {
			jm := JobMemory{ID: w.Memory.ID, Outcome: w.Outcome}
			if w.Outcome != OutcomeErased && w.Outcome != OutcomeDeleted {
				jm.Status, jm.Reason = w.Memory.Status, candidateReason(group[k], w.Memory)
			}
			results[at[k].job].Memories[at[k].at] = jm
		}
		from = to
	}
	return results, nil
}

// MaxApplyGroup bounds the memories ApplyMemoryJobs writes in one
// transaction: a queue batch of full jobs (256 of 100) would outlive the
// store's deadline and be redone job by job.
const MaxApplyGroup = 1000

// buildJob turns one queued job into the memories it writes.
func (s *Service) buildJob(job Job) ([]Memory, error) {
	var in []NewMemory
	if err := json.Unmarshal(job.Payload, &in); err != nil {
		return nil, Invalid("payload", "is not a list of memories")
	}
	ms := make([]Memory, len(in))
	for i, n := range in {
		n.IdempotencyKey = cmp.Or(n.IdempotencyKey, "job:"+job.ID+":"+strconv.Itoa(i))
		m, err := s.build(job.Principal, n, job.AcceptedAt.UTC())
		if err != nil {
			return nil, prefixField(err, i, len(in))
		}
		if m.Tenant != job.Tenant || m.UserID != job.UserID {
			return nil, Invalid("memories", "a job's memories must be about the job's tenant and user")
		}
		m.QueueSeq = job.Seq
		ms[i] = m
	}
	return ms, nil
}

// AuthorizeWrites asks policy whether p may write each memory of in as of
// at, as the memories a write would store, and runs the guard over each,
// masking in place what it masks; an error names the first one refused.
// Queued ingestion decides with it what it extracted, which is known only
// when its job is applied.
func (s *Service) AuthorizeWrites(ctx context.Context, p Principal, in []NewMemory, at time.Time) error {
	for k, n := range in {
		m, err := s.build(p, n, at)
		if err == nil {
			err = s.require(ctx, p, ActionWrite, ResourceOf(m), at)
		}
		if err == nil {
			_, err = s.guard(ctx, p, &m, at)
			in[k].Content, in[k].Sensitivity = m.Content, m.Sensitivity
		}
		if err != nil {
			return prefixField(err, k, len(in))
		}
	}
	return nil
}
