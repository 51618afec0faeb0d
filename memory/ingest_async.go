package memory

import (
	"context"
	"encoding/json"
	"fmt"
)

// JobIngest is the kind of a queued ingestion: conversation turns whose
// memories a worker extracts and writes.
const JobIngest = "ingest"

// IngestAsync validates an ingestion and queues it; a worker extracts and
// writes its memories (ApplyIngestJobs). idemKey, when given, makes a
// retried call return the first call's job.
func (s *Service) IngestAsync(ctx context.Context, p Principal, r IngestRequest, idemKey string) (JobStatus, error) {
	if err := validateIngest(r); err != nil {
		return JobStatus{}, err
	}
	if len(idemKey) > 128 {
		return JobStatus{}, Invalid("idempotency_key", "must be at most 128 bytes")
	}
	if !WritesAsItself(p, r.AgentID) {
		return JobStatus{}, ErrForbidden
	}
	now := s.now().UTC()
	// Whether p may write about this user at all is decided now; every
	// extracted memory is decided again when the job is applied.
	probe := Resource{Tenant: p.Tenant, UserID: r.UserID, AgentID: AuthorOf(p), Type: TypeEpisodic, Sensitivity: SensitivityInternal}
	if err := s.require(ctx, p, ActionWrite, probe, now); err != nil {
		return JobStatus{}, err
	}
	// What the turns hold is known only when a worker extracts it: an
	// ingestion is accepted while the tenant has room for one memory more.
	if s.quota != nil {
		if err := s.quota.Admit(ctx, p.Tenant, 1, 0); err != nil {
			return JobStatus{}, err
		}
	}
	// Relative dates must read the same on every attempt.
	for i := range r.Turns {
		if r.Turns[i].At.IsZero() {
			r.Turns[i].At = now
		}
	}
	payload, err := json.Marshal(r)
	if err != nil {
		return JobStatus{}, fmt.Errorf("encode job: %w", err)
	}
	return s.queue.Enqueue(ctx, Job{
		Kind: JobIngest, Tenant: p.Tenant, UserID: r.UserID, Principal: p,
		AcceptedAt: now, IdempotencyKey: idemKey, Payload: payload,
	})
}

// ApplyIngestJobs extracts the memories of queued ingestions and writes
// them as ApplyMemoryJobs writes a memory job: policy again, valid from the
// job's acceptance, idempotency keys derived from the job, so a replayed job
// writes nothing new. A job whose turns hold nothing worth remembering is
// done with no memories.
func (s *Service) ApplyIngestJobs(ctx context.Context, jobs []Job) ([]JobResult, error) {
	results := make([]JobResult, len(jobs))
	var writes []Job
	var of []int
	for i, job := range jobs {
		var r IngestRequest
		if err := json.Unmarshal(job.Payload, &r); err != nil || validateIngest(r) != nil || r.UserID != job.UserID {
			results[i].Err = Invalid("payload", "is not an ingestion about the job's user")
			continue
		}
		if !WritesAsItself(job.Principal, r.AgentID) {
			// Refused when accepted; a job queued before that check was in
			// place fails here rather than write as someone else.
			results[i].Err = ErrForbidden
			continue
		}
		found, err := s.extractFor(ctx, r)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			results[i].Memories = []JobMemory{}
			continue
		}
		// Applying a memory job does not ask policy again; what an ingestion
		// writes is known only now, so it is decided now, as of acceptance.
		if err := s.authorizeFound(ctx, job, found); err != nil {
			results[i].Err = err
			continue
		}
		payload, err := json.Marshal(found)
		if err != nil {
			return nil, fmt.Errorf("encode memories: %w", err)
		}
		w := job
		w.Kind, w.Payload = JobMemories, payload
		writes = append(writes, w)
		of = append(of, i)
	}
	if len(writes) == 0 {
		return results, nil
	}
	written, err := s.ApplyMemoryJobs(ctx, writes)
	if err != nil {
		return nil, err
	}
	for k, res := range written {
		results[of[k]] = res
	}
	return results, nil
}

// authorizeFound asks policy whether the job's principal may write each
// memory extracted for it.
func (s *Service) authorizeFound(ctx context.Context, job Job, found []NewMemory) error {
	for k, n := range found {
		m, err := s.build(job.Principal, n, job.AcceptedAt.UTC())
		if err == nil {
			err = s.require(ctx, job.Principal, ActionWrite, ResourceOf(m), job.AcceptedAt.UTC())
		}
		if err != nil {
			return prefixField(err, k, len(found))
		}
	}
	return nil
}
