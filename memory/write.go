package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"mneme/guard"
)

// The write pipeline between validation and commit: guard, worth
// remembering, candidates, dedup and the profile threshold (DESIGN.md,
// "Writing"). Create and Write run it for every memory a principal sends.

// Guard actions, as rego/guard.rego returns them per finding kind.
const (
	GuardReject = "reject"
	GuardRedact = "redact"
	GuardAllow  = "allow"
)

// GuardPolicy decides what happens to the findings of the guard. The policy
// engine implements it; Service uses it when its Authorizer does.
type GuardPolicy interface {
	// GuardActions returns an action per finding kind for writing r. A
	// missing kind, an unknown action or an error rejects.
	GuardActions(ctx context.Context, p Principal, r Resource, findings []string, now time.Time) (map[string]string, error)
}

// GuardError is a write refused because its content holds values the guard
// policy rejects. It names the kinds found, never the values.
type GuardError struct {
	// Field is the rejected field, e.g. "content" or "memories[2].content".
	Field string
	Kinds []string
}

func (e *GuardError) Error() string {
	return fmt.Sprintf("%s holds %s, which this tenant's guard policy does not let be remembered", e.Field, strings.Join(e.Kinds, ", "))
}

// Write outcomes, one per memory of a write.
const (
	OutcomeCreated    = "created"
	OutcomeReinforced = "reinforced"
	OutcomeSkipped    = "skipped"
)

// Reasons a memory was not stored as sent.
const (
	ReasonChitChat    = "chit_chat"
	ReasonContentFree = "content_free"
	// ReasonInferred: stored as a candidate until the user confirms it.
	ReasonInferred = "inferred"
	// ReasonThreshold: a candidate until observed in enough sessions.
	ReasonThreshold = "threshold"
)

// SourceInferred marks a memory the agent inferred rather than was told. It
// is stored as a candidate until the user confirms it.
const SourceInferred = "inferred"

// WriteResult says what became of one memory of a write.
type WriteResult struct {
	Outcome string `json:"outcome"`
	// Reason says why a memory was skipped or is a candidate.
	Reason string `json:"reason,omitempty"`
	// ID is the memory created or reinforced; empty when skipped.
	ID     string `json:"id,omitempty"`
	Status string `json:"status,omitempty"`
	// Redacted lists the finding kinds masked in the content.
	Redacted []string `json:"redacted,omitempty"`
	// Memory is the stored memory; absent when skipped.
	Memory *Memory `json:"-"`
}

// WriteConfig tunes the write pipeline. Zero values take defaults.
type WriteConfig struct {
	// Thresholds is, per kind of profile memory, how many distinct sessions
	// must observe it before it becomes active. Kinds not listed need one.
	// Nil means DefaultThresholds.
	Thresholds map[string]int
	// DuplicateThreshold is the cosine similarity at which a memory with
	// the same numbers restates another (SameFact). Zero means
	// DefaultDuplicateThreshold.
	DuplicateThreshold float64
}

// DefaultThresholds: a preference is trusted once seen in two sessions.
var DefaultThresholds = map[string]int{"preference": 2}

func (c WriteConfig) withDefaults() WriteConfig {
	if c.Thresholds == nil {
		c.Thresholds = DefaultThresholds
	}
	if c.DuplicateThreshold == 0 {
		c.DuplicateThreshold = DefaultDuplicateThreshold
	}
	return c
}

// threshold returns how many distinct sessions must observe m.
func (c WriteConfig) threshold(m Memory) int {
	if m.Type != TypeProfile {
		return 1
	}
	return max(c.Thresholds[m.Kind], 1)
}

// Write validates, authorises, guards and stores memories, and says per
// memory what became of it. New memories are committed in one transaction:
// all of them or none; a guard rejection refuses the whole write.
func (s *Service) Write(ctx context.Context, p Principal, in []NewMemory) ([]WriteResult, error) {
	if len(in) == 0 {
		return nil, Invalid("memories", "at least one memory is required")
	}
	if len(in) > MaxBatch {
		return nil, Invalid("memories", fmt.Sprintf("at most %d memories per request", MaxBatch))
	}
	now := s.now().UTC()
	results := make([]WriteResult, len(in))
	var keep []Memory
	var keepAt []int
	for i, n := range in {
		m, err := s.build(p, n, now)
		if err != nil {
			return nil, prefixField(err, i, len(in))
		}
		if err := s.require(ctx, p, ActionWrite, ResourceOf(m), now); err != nil {
			return nil, err
		}
		redacted, err := s.guard(ctx, p, &m, now)
		if err != nil {
			return nil, prefixGuard(err, i, len(in))
		}
		results[i].Redacted = redacted
		if reason := worthless(m.Content); reason != "" {
			results[i].Outcome, results[i].Reason = OutcomeSkipped, reason
			continue
		}
		m.EvidenceCount = 1
		keep = append(keep, m)
		keepAt = append(keepAt, i)
	}
	if len(keep) == 0 {
		return results, nil
	}
	if err := s.embedAll(ctx, keep); err != nil {
		return nil, err
	}
	steps, err := s.plan(ctx, p, keep, keepAt, now)
	if err != nil {
		return nil, err
	}
	if err := s.commit(ctx, steps, results, now); err != nil {
		return nil, err
	}
	return results, nil
}

// step is one memory of a write on its way to the store: created, or
// reinforcing a stored memory or an earlier memory of the same write.
type step struct {
	at     int     // its index in the write
	m      Memory  // what was sent, guarded and embedded
	dupOf  *Memory // the stored memory it repeats, if any
	sameAs int     // the earlier step it repeats, or -1
}

// plan decides per memory between creating and reinforcing: a memory that
// restates an active or candidate memory of the same user and type that the
// writer may read (SameFact, same slot) reinforces it; one that restates an
// earlier memory of the same write reinforces that. A new memory is a
// candidate when inferred or below its profile threshold.
func (s *Service) plan(ctx context.Context, p Principal, ms []Memory, at []int, now time.Time) ([]step, error) {
	ws, dedup := s.store.(WriteStore)
	scopes := map[string]Scope{}
	steps := make([]step, len(ms))
	for i, m := range ms {
		steps[i] = step{at: at[i], m: m, sameAs: -1}
		for j := range i {
			e := steps[j].m
			if e.UserID == m.UserID && e.Type == m.Type && sameSlot(e, m) &&
				SameFact(e.Content, m.Content, cosine(e.Embedding, m.Embedding), s.write.DuplicateThreshold) {
				steps[i].sameAs = j
				break
			}
		}
		if steps[i].sameAs < 0 && dedup {
			scope, ok := scopes[m.UserID]
			if !ok {
				var err error
				if scope, err = s.authz.ReadScope(ctx, p, m.UserID, now); err != nil {
					return nil, fmt.Errorf("read scope: %w", err)
				}
				scopes[m.UserID] = scope
			}
			hits, err := ws.SimilarMemories(ctx, scope, SimilarQuery{
				UserID: m.UserID, Type: m.Type, Embedding: m.Embedding,
				Statuses: []string{StatusActive, StatusCandidate}, Limit: 5,
			})
			if err != nil {
				return nil, err
			}
			for _, h := range hits {
				if sameSlot(h.Memory, m) && SameFact(h.Memory.Content, m.Content, h.Score, s.write.DuplicateThreshold) {
					steps[i].dupOf = &h.Memory
					break
				}
			}
		}
		if steps[i].sameAs < 0 && steps[i].dupOf == nil {
			switch {
			case m.Source == SourceInferred:
				steps[i].m.Status = StatusCandidate
			case s.write.threshold(m) > 1:
				steps[i].m.Status = StatusCandidate
			}
		}
	}
	return steps, nil
}

// commit creates the new memories in one transaction, then records each
// repetition as a reinforcement of the memory it repeats. A memory whose
// original vanished in between (deleted, superseded) is created after all.
func (s *Service) commit(ctx context.Context, steps []step, results []WriteResult, now time.Time) error {
	stored := make([]*Memory, len(steps))
	create := func(idx []int) error {
		if len(idx) == 0 {
			return nil
		}
		ms := make([]Memory, len(idx))
		for k, i := range idx {
			ms[k] = steps[i].m
		}
		out, err := s.store.CreateMemories(ctx, ms)
		if err != nil {
			return err
		}
		for k, i := range idx {
			stored[i] = &out[k]
			results[steps[i].at].Outcome = OutcomeCreated
		}
		return nil
	}
	var fresh []int
	for i, st := range steps {
		if st.dupOf == nil && st.sameAs < 0 {
			fresh = append(fresh, i)
		}
	}
	if err := create(fresh); err != nil {
		return err
	}
	for i, st := range steps {
		var target *Memory
		switch {
		case st.dupOf != nil:
			target = st.dupOf
		case st.sameAs >= 0:
			target = stored[st.sameAs]
		default:
			continue
		}
		m, err := s.reinforce(ctx, st.m, *target, now)
		if errors.Is(err, ErrNotFound) {
			steps[i].m.Status = StatusActive
			if err := create([]int{i}); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		stored[i] = &m
		results[st.at].Outcome = OutcomeReinforced
	}
	for i, st := range steps {
		r := &results[st.at]
		r.ID, r.Status, r.Memory = stored[i].ID, stored[i].Status, stored[i]
		if r.Status == StatusCandidate {
			r.Reason = ReasonThreshold
			if stored[i].Source == SourceInferred || st.m.Source == SourceInferred {
				r.Reason = ReasonInferred
			}
		}
	}
	return nil
}

// reinforce records m as one more observation of target. A candidate
// becomes active once seen in as many distinct sessions as its threshold
// asks, unless an inference is involved: inferences wait for the user.
func (s *Service) reinforce(ctx context.Context, m, target Memory, now time.Time) (Memory, error) {
	ws, ok := s.store.(WriteStore)
	if !ok {
		return Memory{}, ErrNotFound
	}
	activate := 0
	if target.Status == StatusCandidate && m.Source != SourceInferred && target.Source != SourceInferred {
		activate = s.write.threshold(target)
	}
	return ws.ReinforceMemory(ctx, target.Tenant, target.ID, Reinforcement{
		UserID: target.UserID, SessionID: m.SessionID, At: now, ImportanceStep: ImportanceStep, ActivateAt: activate,
		IdempotencyKey: m.IdempotencyKey,
	})
}

// ImportanceStep is how much a reinforcement raises importance (at most 1).
const ImportanceStep = 0.1

// WriteStore is what dedup, reinforcement and confirmation need from the
// store beyond Store. graph.Store implements it; with a Store that does not,
// every memory is created as new and Confirm is unavailable.
type WriteStore interface {
	// SimilarMemories returns a user's memories of one type and the given
	// statuses, in scope, most similar to q.Embedding first (cosine).
	SimilarMemories(ctx context.Context, scope Scope, q SimilarQuery) ([]Hit, error)
	// ReinforceMemory records one more observation of an active or
	// candidate memory; ErrNotFound when it is neither any more.
	ReinforceMemory(ctx context.Context, tenant, id string, r Reinforcement) (Memory, error)
	// ConfirmMemory makes a candidate active (an active one stays so);
	// ErrConflict for other statuses.
	ConfirmMemory(ctx context.Context, tenant, id, userID string, at time.Time) (Memory, error)
}

// SimilarQuery asks for a user's memories nearest to an embedding.
type SimilarQuery struct {
	UserID    string
	Type      string
	Embedding []float32
	Statuses  []string
	Limit     int
}

// Reinforcement is one more observation of a stored memory.
type Reinforcement struct {
	UserID    string // the memory's user, locked like every write's
	SessionID string // where it was observed; "" counts as one session
	At        time.Time
	// ImportanceStep is added to importance, which stays at most 1.
	ImportanceStep float64
	// ActivateAt turns a candidate active once this many distinct sessions
	// observed it; 0 never does.
	ActivateAt int
	// IdempotencyKey, when set, makes the reinforcement happen once: a
	// replay of the same write changes nothing.
	IdempotencyKey string
}

// ActionConfirm is the policy action of confirming a candidate memory.
const ActionConfirm = "confirm"

// Confirm makes a candidate memory active: its user confirms what an agent
// inferred, or a preference seen too few times. Policy decides who may
// (rego/authz.rego: the user the memory is about, and admins). An active
// memory is returned unchanged.
func (s *Service) Confirm(ctx context.Context, p Principal, id string) (Memory, error) {
	m, err := s.Get(ctx, p, id)
	if err != nil {
		return Memory{}, err
	}
	now := s.now().UTC()
	if err := s.require(ctx, p, ActionConfirm, ResourceOf(m), now); err != nil {
		return Memory{}, err
	}
	ws, ok := s.store.(WriteStore)
	if !ok {
		return Memory{}, errors.New("memory: the store cannot confirm memories")
	}
	return ws.ConfirmMemory(ctx, p.Tenant, id, m.UserID, now)
}

// guard scans m's content, key and entities and applies the guard policy:
// a rejected kind refuses the write, a redacted kind is masked in the
// content. It returns the kinds it masked. A policy error rejects. Values
// are never logged; kinds are.
func (s *Service) guard(ctx context.Context, p Principal, m *Memory, now time.Time) ([]string, error) {
	found := guard.Scan(m.Content)
	// The key and entities are identifiers: they cannot be masked in
	// place, so anything found there that is not allowed rejects.
	var fixed []guard.Finding
	for _, text := range entityTexts(*m) {
		fixed = append(fixed, guard.Scan(text)...)
	}
	if len(found) == 0 && len(fixed) == 0 {
		return nil, nil
	}
	kinds := guard.KindsOf(append(append([]guard.Finding(nil), found...), fixed...))
	var actions map[string]string
	if gp, ok := s.authz.(GuardPolicy); ok {
		var err error
		if actions, err = gp.GuardActions(ctx, p, ResourceOf(*m), kinds, now); err != nil {
			s.log.WarnContext(ctx, "guard policy error; rejecting", "kinds", kinds, "err", err)
			actions = nil
		}
	}
	var reject, redact []string
	for _, k := range kinds {
		switch a := actions[k]; {
		case a == GuardAllow:
		case a == GuardRedact && !containsKind(fixed, k):
			redact = append(redact, k)
		default:
			reject = append(reject, k)
		}
	}
	if len(reject) > 0 {
		return nil, &GuardError{Field: "content", Kinds: reject}
	}
	m.Content = guard.Redact(m.Content, found, redact)
	if len(redact) < len(kinds) && SensitivityRank(m.Sensitivity) < SensitivityRank(SensitivityConfidential) {
		// Personal data kept as written is confidential at least.
		m.Sensitivity = SensitivityConfidential
	}
	return redact, nil
}

func entityTexts(m Memory) []string {
	out := []string{m.Key}
	for _, e := range m.Entities {
		out = append(out, e.ID, e.Name)
	}
	return out
}

func containsKind(fs []guard.Finding, kind string) bool {
	for _, f := range fs {
		if f.Kind == kind {
			return true
		}
	}
	return false
}

// prefixGuard names the batch item a guard error is about.
func prefixGuard(err error, i, n int) error {
	if ge, ok := err.(*GuardError); ok && n > 1 {
		return &GuardError{Field: fmt.Sprintf("memories[%d].%s", i, ge.Field), Kinds: ge.Kinds}
	}
	return err
}
