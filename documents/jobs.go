package documents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"mneme/memory"
)

// enqueue queues an import. The queue keeps one document's jobs in order:
// it shards by tenant and the job's user, here JobSubject of the document.
func (s *Service) enqueue(ctx context.Context, p memory.Principal, r ImportRequest) (memory.JobStatus, error) {
	payload, err := json.Marshal(r)
	if err != nil {
		return memory.JobStatus{}, fmt.Errorf("encode import: %w", err)
	}
	return s.queue.Enqueue(ctx, memory.Job{
		Kind: JobImport, Tenant: p.Tenant, UserID: JobSubject(r.ID), Principal: p,
		AcceptedAt: s.now().UTC(), Payload: payload,
	})
}

// ReasonLaterImport is why a queued import wrote nothing: the document was
// imported again after the job was accepted.
const ReasonLaterImport = "a later import of the document came first"

// errLaterImport is apply's answer to a queued import that yields.
var errLaterImport = errors.New("documents: " + ReasonLaterImport)

// OutcomeSuperseded is a queued import's outcome of a section written as
// the new version of one in force, which the import's counts call
// superseded too.
const OutcomeSuperseded = "superseded"

// JobSubject is the queue's user of a document's imports. The '/' keeps it
// out of the user ids: erasing a user never touches a document's jobs.
func JobSubject(docID string) string { return "kb/" + docID }

// ApplyJobs imports the documents of queued imports, one after the other.
// Applying a job twice writes nothing new the second time: the plan then
// finds every section unchanged. A job that cannot be valid fails alone.
func (s *Service) ApplyJobs(ctx context.Context, jobs []memory.Job) ([]memory.JobResult, error) {
	results := make([]memory.JobResult, len(jobs))
	for i, job := range jobs {
		var r ImportRequest
		if err := json.Unmarshal(job.Payload, &r); err != nil || JobSubject(r.ID) != job.UserID {
			results[i].Err = memory.Invalid("payload", "is not an import of the job's document")
			continue
		}
		if err := admin(job.Principal); err != nil || job.Principal.Tenant != job.Tenant {
			results[i].Err = memory.ErrForbidden
			continue
		}
		if s.sync != nil {
			// Outside a request nothing else has synced the tenant's policy.
			if err := s.sync(ctx, job.Tenant); err != nil {
				return nil, err
			}
		}
		doc, err := split(r)
		if err != nil {
			results[i].Err = err
			continue
		}
		// An import asked for after this one was accepted has the last word:
		// applied now, the older text would undo it.
		_, placed, err := s.apply(ctx, job.Principal, r, doc, job.AcceptedAt.UTC(), true)
		if errors.Is(err, errLaterImport) {
			results[i].Memories = []memory.JobMemory{{Outcome: memory.OutcomeStale, Reason: ReasonLaterImport}}
			continue
		}
		if err != nil {
			results[i].Err = err
			continue
		}
		results[i].Memories = make([]memory.JobMemory, 0, len(placed))
		for _, pl := range placed {
			out := memory.OutcomeReinforced
			switch {
			case pl.Superseding:
				out = OutcomeSuperseded
			case pl.Created:
				out = memory.OutcomeCreated
			}
			results[i].Memories = append(results[i].Memories, memory.JobMemory{ID: pl.MemoryID, Outcome: out, Status: memory.StatusActive})
		}
	}
	return results, nil
}
