package workingmemory

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mneme/memory"
	"mneme/writefence"
)

// Ingestion limits.
const (
	MaxIngestTurns     = 200
	MaxTurnChars       = 8000
	MaxExtractedPerRun = memory.MaxBatch
)

// ReasonNothingWorthRemembering is IngestResult.Reason when the turns held
// no fact, preference or event the extractor recognises.
const ReasonNothingWorthRemembering = "nothing worth remembering: no preference, fact, amount, order, date, company or place found"

// ReasonRefused is IngestResult.Reason when policy and the write guard let
// the writer write none of what the conversation held.
const ReasonRefused = "policy and the write guard let you write none of what the conversation held"

// ReasonDeleted is IngestResult.Reason when a retry under an
// Idempotency-Key left out memories because what it wrote was deleted since.
const ReasonDeleted = "what these turns wrote under this Idempotency-Key was deleted since, and is not written again"

// A queued ingestion reports each memory policy did not let its writer
// write as a JobMemory of outcome OutcomeRefused and reason ReasonPolicy,
// and each the write guard refused (a password, an ID number) with reason
// ReasonGuard, as the synchronous one counts them in IngestResult.Refused.
const (
	OutcomeRefused = "refused"
	ReasonPolicy   = "policy"
	ReasonGuard    = "guard"
)

// JobIngest is the kind of a queued ingestion: conversation turns whose
// memories a worker extracts and writes.
const JobIngest = "ingest"

// Ingest extracts memories from conversation turns and writes them through
// Write, so policy and every write rule apply as to any other write.
// idemKey, when given, keys each memory found by its place (":0", ":1", …),
// as a batch written under the key is: a retry of the same turns writes
// nothing again (nor what was deleted since), other turns under the key are
// refused.
func (s *Service) Ingest(ctx context.Context, p memory.Principal, r memory.IngestRequest, idemKey string) (memory.IngestResult, error) {
	// What the turns hold reached Mneme now, whatever extraction takes: a
	// user erased meanwhile is not written about (writefence.BeginWrite).
	ctx = writefence.BeginWrite(ctx, s.now())
	// Who may not write learns it whatever the request holds.
	if err := writesAsItself(p, r.AgentID); err != nil {
		return memory.IngestResult{}, err
	}
	if err := validateIngest(r, s.now().UTC()); err != nil {
		return memory.IngestResult{}, err
	}
	if err := checkIdemKey(idemKey); err != nil {
		return memory.IngestResult{}, err
	}
	if err := s.mayWriteAbout(ctx, p, r.UserID, s.now().UTC()); err != nil {
		return memory.IngestResult{}, err
	}
	if err := s.mayFile(ctx, p, r); err != nil {
		return memory.IngestResult{}, err
	}
	found, err := s.extractFor(ctx, r)
	if err != nil {
		return memory.IngestResult{}, err
	}
	if len(found) == 0 {
		return nothing, nil
	}
	return s.createUnguarded(ctx, p, keyFound(found, idemKey))
}

// keyFound keys each memory found under an ingestion's idempotency key by
// its place (PlaceKey), queued or not: a synchronous retry of a queued
// ingestion, or a queued one of a synchronous, finds the memories the
// other wrote, and other turns under the key are refused either way.
func keyFound(found []memory.NewMemory, idemKey string) []memory.NewMemory {
	for i := range found {
		if idemKey != "" && found[i].IdempotencyKey == "" {
			found[i].IdempotencyKey = PlaceKey(idemKey, i)
		}
	}
	return found
}

// MaxIdemKey is the longest Idempotency-Key an ingestion takes, in bytes:
// as long as a memory's idempotency_key may be.
const MaxIdemKey = 128

// checkIdemKey refuses an Idempotency-Key that is not UTF-8 or longer than
// MaxIdemKey bytes, rather than key memories with a key the client never
// sent.
func checkIdemKey(key string) error {
	if len(key) > MaxIdemKey || !utf8.ValidString(key) {
		return memory.Invalid("Idempotency-Key", fmt.Sprintf("must be UTF-8 of at most %d bytes", MaxIdemKey))
	}
	return nil
}

// PlaceKey is the idempotency key of the memory at place i of an
// ingestion under key: the key and ":i", or, where that would be longer
// than MaxIdemKey, the key's SHA-256 in hex and ":i" ("sha256:…:i"), so
// that every key the API takes keys every place. A write's memories are
// keyed the same way (the handlers' placeKey), so that a write and an
// ingestion under one key are one request.
func PlaceKey(key string, i int) string {
	if place := ":" + strconv.Itoa(i); len(key)+len(place) <= MaxIdemKey {
		return key + place
	}
	return fmt.Sprintf("sha256:%x:%d", sha256.Sum256([]byte(key)), i)
}

// IngestAsync validates an ingestion and queues it; a worker extracts and
// writes its memories (ApplyIngestJobs). idemKey, when given, makes a
// retried call return the first call's job.
func (s *Service) IngestAsync(ctx context.Context, p memory.Principal, r memory.IngestRequest, idemKey string) (memory.JobStatus, error) {
	// Who may not write learns it whatever the request holds.
	if err := writesAsItself(p, r.AgentID); err != nil {
		return memory.JobStatus{}, err
	}
	if err := validateIngest(r, s.now().UTC()); err != nil {
		return memory.JobStatus{}, err
	}
	if err := checkIdemKey(idemKey); err != nil {
		return memory.JobStatus{}, err
	}
	now := s.now().UTC()
	// Every extracted memory is decided again when the job is applied.
	if err := s.mayWriteAbout(ctx, p, r.UserID, now); err != nil {
		return memory.JobStatus{}, err
	}
	if err := s.mayFile(ctx, p, r); err != nil {
		return memory.JobStatus{}, err
	}
	// What the turns hold is known only when a worker extracts it: an
	// ingestion is accepted while the tenant has room for one memory more.
	if s.quota != nil {
		if err := s.quota.Admit(ctx, p.Tenant, 1, 0); err != nil {
			return memory.JobStatus{}, err
		}
	}
	sent, err := json.Marshal(r)
	if err != nil {
		return memory.JobStatus{}, fmt.Errorf("encode job: %w", err)
	}
	// Relative dates must read the same on every attempt. The turns are
	// the caller's: fill a copy.
	r.Turns = slices.Clone(r.Turns)
	for i := range r.Turns {
		if r.Turns[i].At.IsZero() {
			r.Turns[i].At = now
		}
	}
	payload, err := json.Marshal(r)
	if err != nil {
		return memory.JobStatus{}, fmt.Errorf("encode job: %w", err)
	}
	return s.queue.Enqueue(ctx, memory.Job{
		Kind: JobIngest, Tenant: p.Tenant, UserID: r.UserID, Principal: p,
		AcceptedAt: now, IdempotencyKey: idemKey, Payload: payload,
		Sent: sent,
	})
}

// mayWriteAbout decides whether p may write about the user at all, before
// the turns are read: what they hold must not change the answer to a
// principal who may not write there.
func (s *Service) mayWriteAbout(ctx context.Context, p memory.Principal, userID string, now time.Time) error {
	probe := memory.Resource{Tenant: p.Tenant, UserID: userID, AgentID: AuthorOf(p), Type: memory.TypeEpisodic, Sensitivity: memory.SensitivityInternal}
	return s.require(ctx, p, memory.ActionWrite, probe, now)
}

// mayFile decides, once p may write about the user, whether what an
// ingestion finds may be filed as asked: about a user id that does not
// differ only by case from a user the tenant knows (checkUserID), and in a
// session that is not another user's or another agent's, open or closed,
// whose node would link two users' memories. That session answers as an
// append to it does (memory.ErrSessionTaken), which says no more than the
// append would.
func (s *Service) mayFile(ctx context.Context, p memory.Principal, r memory.IngestRequest) error {
	if err := s.checkUserID(ctx, p.Tenant, r.UserID); err != nil {
		return err
	}
	if r.SessionID == "" {
		return nil
	}
	sess, err := s.sessions.Get(ctx, p.Tenant, r.SessionID)
	author := AuthorOf(p)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		return s.checkOwner(ctx, p.Tenant, r.SessionID, r.UserID, author)
	case err != nil:
		return err
	case sess.UserID != r.UserID:
		return fmt.Errorf("session %s is about another user: %w", r.SessionID, memory.ErrSessionTaken)
	case sess.AgentID != author && author != "user:"+r.UserID:
		// Its memories are written as its owner: another agent's would
		// join them under its id.
		return fmt.Errorf("session %s belongs to another author: %w", r.SessionID, memory.ErrSessionTaken)
	}
	return nil
}

// ApplyIngestJobs extracts the memories of queued ingestions and writes
// them as ApplyMemoryJobs writes a memory job: policy again, valid from the
// job's acceptance, idempotency keys derived from the job, so a replayed job
// writes nothing new. A job whose turns hold nothing worth remembering is
// done with no memories.
func (s *Service) ApplyIngestJobs(ctx context.Context, jobs []memory.Job) ([]memory.JobResult, error) {
	results := make([]memory.JobResult, len(jobs))
	refused, guarded := make([]int, len(jobs)), make([]int, len(jobs))
	var writes []memory.Job
	var of []int
	for i, job := range jobs {
		var r memory.IngestRequest
		if err := json.Unmarshal(job.Payload, &r); err != nil || validateIngest(r, job.AcceptedAt.UTC()) != nil || r.UserID != job.UserID {
			results[i].Err = memory.Invalid("payload", "is not an ingestion about the job's user")
			continue
		}
		if !WritesAsItself(job.Principal, r.AgentID) {
			// Refused when accepted; a job queued before that check was in
			// place fails here rather than write as someone else.
			results[i].Err = memory.ErrForbidden
			continue
		}
		found, err := s.extractFor(ctx, r)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			results[i].Memories = []memory.JobMemory{}
			continue
		}
		found = keyFound(found, job.IdempotencyKey)
		// Applying a memory job does not ask policy again; what an ingestion
		// writes is known only now, so it is decided now, as of acceptance.
		// What policy refuses is left out and reported, as Ingest does.
		kept, err := s.authorized(ctx, job.Principal, found, job.AcceptedAt.UTC())
		if ge := (*memory.GuardError)(nil); errors.As(err, &ge) {
			// What the guard refuses is left out and reported too.
			var clean []memory.NewMemory
			if clean, err = s.unguarded(ctx, job.Principal, found); err == nil {
				guarded[i], found = len(found)-len(clean), clean
				kept, err = s.authorized(ctx, job.Principal, found, job.AcceptedAt.UTC())
			}
		}
		if errors.Is(err, memory.ErrForbidden) {
			kept, err = nil, nil
		}
		if err != nil {
			results[i].Err = err
			continue
		}
		refused[i] = len(found) - len(kept)
		if len(kept) == 0 {
			results[i].Memories = append(refusedMemories(refused[i], ReasonPolicy), refusedMemories(guarded[i], ReasonGuard)...)
			continue
		}
		payload, err := json.Marshal(kept)
		if err != nil {
			return nil, fmt.Errorf("encode memories: %w", err)
		}
		w := job
		w.Kind, w.Payload = memory.JobMemories, payload
		writes = append(writes, w)
		of = append(of, i)
	}
	if len(writes) == 0 {
		return results, nil
	}
	written, err := s.memories.ApplyMemoryJobs(ctx, writes)
	if err != nil {
		return nil, err
	}
	for k, res := range written {
		if res.Err == nil {
			res.Memories = append(append(res.Memories, refusedMemories(refused[of[k]], ReasonPolicy)...), refusedMemories(guarded[of[k]], ReasonGuard)...)
		}
		results[of[k]] = res
	}
	return results, nil
}

// refusedMemories reports n memories a job was not let write, for reason.
func refusedMemories(n int, reason string) []memory.JobMemory {
	out := make([]memory.JobMemory, n)
	for i := range out {
		out[i] = memory.JobMemory{Outcome: OutcomeRefused, Reason: reason}
	}
	return out
}

// authorized keeps what policy lets p write of found as of at (the whole
// batch is asked first: usually policy allows it all); when it allows none,
// the error is ErrForbidden.
func (s *Service) authorized(ctx context.Context, p memory.Principal, found []memory.NewMemory, at time.Time) ([]memory.NewMemory, error) {
	err := s.memories.AuthorizeWrites(ctx, p, found, at)
	if !errors.Is(err, memory.ErrForbidden) {
		return found, err
	}
	var kept []memory.NewMemory
	for _, n := range found {
		switch err := s.memories.AuthorizeWrites(ctx, p, []memory.NewMemory{n}, at); {
		case err == nil:
			kept = append(kept, n)
		case !errors.Is(err, memory.ErrForbidden):
			return nil, err
		}
	}
	if len(kept) == 0 {
		return nil, memory.ErrForbidden
	}
	return kept, nil
}

// extractFor runs the extractor over an ingestion's turns and makes what it
// found the request's: its user and session; tenant and author are left to
// the writer, so an extractor cannot choose them.
func (s *Service) extractFor(ctx context.Context, r memory.IngestRequest) ([]memory.NewMemory, error) {
	found, err := s.extract.Extract(ctx, r.Turns)
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	if len(found) > MaxExtractedPerRun {
		found = found[:MaxExtractedPerRun]
	}
	for i := range found {
		found[i].Tenant, found[i].AgentID = "", ""
		found[i].UserID, found[i].SessionID = r.UserID, r.SessionID
	}
	return found, nil
}

// WritesAsItself reports whether an author a request names is empty or the
// principal's own: nobody writes as another agent or user, and analysts,
// who only read, never write at all.
func WritesAsItself(p memory.Principal, agentID string) bool {
	return p.Kind != memory.KindAnalyst && (agentID == "" || agentID == AuthorOf(p))
}

// writesAsItself refuses what WritesAsItself does not allow: an analyst
// plainly, another author with a message naming agent_id.
func writesAsItself(p memory.Principal, agentID string) error {
	switch {
	case p.Kind == memory.KindAnalyst:
		return memory.ErrForbidden
	case !WritesAsItself(p, agentID):
		return memory.ForbiddenAuthor()
	}
	return nil
}

// AuthorOf is the agent id a principal's memories carry.
func AuthorOf(p memory.Principal) string {
	if p.Kind == memory.KindUser {
		return "user:" + p.ID
	}
	return p.ID
}

func validateIngest(r memory.IngestRequest, now time.Time) error {
	switch {
	case !memory.ValidName(r.UserID):
		return memory.Invalid("user_id", "is required: 1–64 letters, digits or -_.:@")
	case r.SessionID != "" && !memory.ValidName(r.SessionID):
		return memory.Invalid("session_id", "must be 1–64 letters, digits or -_.:@")
	case len(r.Turns) == 0:
		return memory.Invalid("turns", "at least one turn is required")
	case len(r.Turns) > MaxIngestTurns:
		return memory.Invalid("turns", fmt.Sprintf("at most %d turns per request", MaxIngestTurns))
	}
	return ValidateTurns(r.Turns, now)
}

// ValidateTurns checks conversation turns; an error names the first bad
// one's field as turns[i].field.
func ValidateTurns(turns []memory.Turn, now time.Time) error {
	for i, t := range turns {
		if err := validateTurn(t, now); err != nil {
			return prefixTurn(err, i)
		}
	}
	return nil
}

func validateTurn(t memory.Turn, now time.Time) error {
	switch {
	// A turn's time dates what it says ("tomorrow") and the conversation's
	// record; a clock far ahead would date them in the future. The past is
	// open, back to 1970 as for a memory's observed_at: history imported
	// from elsewhere keeps its dates. An absent (zero) time is now.
	case !t.At.IsZero() && t.At.UTC().Year() < 1970:
		return memory.Invalid("at", "must be a time after 1970, or absent for now")
	case t.At.After(now.Add(memory.ObservedSkew)):
		return memory.Invalid("at", "must not be in the future")
	case !slices.Contains(memory.Roles, t.Role):
		return memory.Invalid("role", "must be one of "+strings.Join(memory.Roles, ", "))
	case strings.TrimSpace(t.Content) == "":
		return memory.Invalid("content", "must not be empty")
	case !utf8.ValidString(t.Content) || strings.ContainsRune(t.Content, 0):
		return memory.Invalid("content", "must be valid UTF-8 without NUL characters")
	case utf8.RuneCountInString(t.Content) > MaxTurnChars:
		return memory.Invalid("content", fmt.Sprintf("must be at most %d characters", MaxTurnChars))
	}
	return nil
}

func prefixTurn(err error, i int) error {
	var inv *memory.InvalidError
	if errors.As(err, &inv) {
		return memory.Invalid(fmt.Sprintf("turns[%d].%s", i, inv.Field), inv.Reason)
	}
	return err
}
