package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"mneme/facts"
	"mneme/guard"
)

// The write pipeline between validation and commit: guard, worth
// remembering, candidates, dedup and the profile threshold (DESIGN.md,
// "Writing"). Write runs it for every memory a principal sends.

// Guard actions, as rego/guard.rego returns them per finding kind.
const (
	GuardReject = "reject"
	GuardRedact = "redact"
	GuardAllow  = "allow"
)

// GuardPolicy decides what happens to the findings of the guard. The policy
// engine implements it.
type GuardPolicy interface {
	// GuardActions returns an action per finding kind for writing r. A
	// missing kind, an unknown action or an error rejects.
	GuardActions(ctx context.Context, p Principal, r Resource, findings []string, now time.Time) (map[string]string, error)
}

// Write outcomes, one per memory of a write.
const (
	OutcomeCreated    = "created"
	OutcomeReinforced = "reinforced"
	OutcomeSkipped    = "skipped"
)

// Reasons a memory was not stored as sent.
const (
	ReasonChitChat    = facts.ChitChat
	ReasonContentFree = facts.ContentFree
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
	c.DuplicateThreshold = cmp.Or(c.DuplicateThreshold, DefaultDuplicateThreshold)
	return c
}

// rules are the write config as a plan applies it (PlanBatch). checkStale
// is for writes that may be older than their slot's head: queued, or
// backdated with observed_at. A live write, dated when it was built, must
// supersede a head a concurrent writer committed a moment before it.
func (c WriteConfig) rules(checkStale bool) WriteRules {
	return WriteRules{Dedup: true, CheckStale: checkStale, DuplicateThreshold: c.DuplicateThreshold, Thresholds: c.Thresholds}
}

// Write validates, authorises, guards and stores memories, and says per
// memory what became of it. New memories are committed in one transaction:
// all of them or none; a guard rejection refuses the whole write.
func (s *Service) Write(ctx context.Context, p Principal, in []NewMemory) ([]WriteResult, error) {
	if err := checkBatch(in); err != nil {
		return nil, err
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
		if reason := facts.Worthless(m.Content); reason != "" {
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
	// Before anything is written, and counting what dedup may yet fold
	// into an existing memory: the quota errs on the safe side.
	if err := s.admit(ctx, keep[0].Tenant, keep); err != nil {
		return nil, err
	}
	if err := s.embedAll(ctx, keep); err != nil {
		return nil, err
	}
	writer := func(int) Principal { return p }
	scopes, scopeOf, err := s.dedupScopes(ctx, writer, keep, now)
	if err != nil {
		return nil, err
	}
	written, err := s.writes.WriteDeduped(ctx, s.dedupWrite(keep, scopes, scopeOf, writer, slices.ContainsFunc(in, func(n NewMemory) bool { return n.ObservedAt != nil })))
	if err != nil {
		return nil, err
	}
	for k, w := range written {
		r := &results[keepAt[k]]
		r.Outcome, r.ID, r.Status = w.Outcome, w.Memory.ID, w.Memory.Status
		if w.Outcome == OutcomeDeleted {
			continue
		}
		if w.Outcome == OutcomeDuplicate {
			// A replayed synchronous write answers as the first one did.
			r.Outcome = OutcomeCreated
		}
		r.Memory = &w.Memory // w is this iteration's own
		r.Reason = candidateReason(keep[k], w.Memory)
	}
	return results, nil
}

// candidateReason says why a memory is stored as a candidate: an inference
// (sent, or repeated) waits for its user, anything else for its threshold.
func candidateReason(sent, stored Memory) string {
	if stored.Status != StatusCandidate {
		return ""
	}
	if sent.Source == SourceInferred || stored.Source == SourceInferred {
		return ReasonInferred
	}
	return ReasonThreshold
}

// dedupScopes returns the read scopes the dedup search of ms runs in, one
// per principal (principalOf(i) wrote ms[i]), and the scope of each memory.
// A writer only ever repeats what it may read: a memory outside its scope
// cannot be reinforced, or confirmed to exist, through a write.
func (s *Service) dedupScopes(ctx context.Context, principalOf func(i int) Principal, ms []Memory, now time.Time) ([]Scope, []int, error) {
	var scopes []Scope
	byPrincipal := map[string]int{}
	scopeOf := make([]int, len(ms))
	for i := range ms {
		p := principalOf(i)
		k, ok := byPrincipal[principalKey(p)]
		if !ok {
			scope, err := s.authz.ReadScope(ctx, p, "", now)
			if err != nil {
				return nil, nil, fmt.Errorf("read scope: %w", err)
			}
			k = len(scopes)
			scopes = append(scopes, scope)
			byPrincipal[principalKey(p)] = k
		}
		scopeOf[i] = k
	}
	return scopes, scopeOf, nil
}

// principalKey tells principals apart: roles change what one may read.
func principalKey(p Principal) string {
	return strings.Join(append([]string{p.Tenant, p.Kind, p.ID}, p.Roles...), "\x00")
}

// dedupWrite is a write of ms as the service commits every write: with its
// writers' scopes and the service's rules, planned by PlanBatch in the
// store's transaction.
func (s *Service) dedupWrite(ms []Memory, scopes []Scope, scopeOf []int, writer func(int) Principal, checkStale bool) DedupWrite {
	rules, readers, admins := s.write.rules(checkStale), make(map[string]Scope, len(ms)), map[string]bool{}
	for i, m := range ms {
		readers[m.ID], admins[m.ID] = scopes[scopeOf[i]], writer(i).Kind == KindAdmin
	}
	rules.Displaces = func(w, h Memory) bool {
		return (admins[w.ID] || Displaceable(w, h)) && s.authz.Covers(readers[w.ID], ResourceOf(h))
	}
	return DedupWrite{Memories: ms, Scopes: scopes, ScopeOf: scopeOf, Rules: rules}
}

// ImportanceStep is how much a reinforcement raises importance (at most 1).
const ImportanceStep = 0.1

// Confirmer makes candidate memories active. graph.Store implements it.
type Confirmer interface {
	// ConfirmMemory makes a candidate active (an active one stays so);
	// ErrConflict for other statuses.
	ConfirmMemory(ctx context.Context, tenant, id, userID string, reader Scope, at time.Time) (Memory, error)
}

// DedupStore commits a write whose memories may repeat stored ones, in one
// transaction: under the locks of the write's users it reads the state the
// write depends on and finds, per memory, the stored memories most like it
// (same user and type, active or candidate, in the memory's scope), plans
// the write with PlanBatch, and then creates, supersedes and reinforces as
// the plan says. Two concurrent writes of one fact therefore create it
// once: the second waits for the first's user lock and then finds it.
// graph.Store implements it.
type DedupStore interface {
	// WriteDeduped reports per memory, in order, what became of it:
	// OutcomeCreated, OutcomeReinforced (Memory is the reinforced one as
	// stored), OutcomeDuplicate (its idempotency key was stored already) or,
	// with Rules.CheckStale, OutcomeStale (its slot's head is valid from
	// later). Every memory of w belongs to one tenant.
	WriteDeduped(ctx context.Context, w DedupWrite) ([]Written, error)
}

// DedupWrite is one write for DedupStore.
type DedupWrite struct {
	// Memories are created unless they repeat, in the status the plan
	// gives them (see WriteRules.Dedup).
	Memories []Memory
	// Scopes are what the writers may read; ScopeOf[i] is the index of
	// Memories[i]'s scope, which its dedup search stays in.
	Scopes  []Scope
	ScopeOf []int
	// Rules plan the write (PlanBatch); Dedup is set, and CheckStale for
	// queued events.
	Rules WriteRules
}

// SimilarQuery asks for a user's memories nearest to an embedding.
type SimilarQuery struct {
	UserID, Type string
	Embedding    []float32
	Statuses     []string
	Limit        int
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
	// The memory supersedes only what the confirming principal may read.
	reader, err := s.authz.ReadScope(ctx, p, m.UserID, now)
	if err != nil {
		return Memory{}, err
	}
	return s.confirm.ConfirmMemory(ctx, p.Tenant, id, m.UserID, reader, now)
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
	actions, err := s.guardPolicy.GuardActions(ctx, p, ResourceOf(*m), kinds, now)
	if err != nil {
		s.log.WarnContext(ctx, "guard policy error; rejecting", "kinds", kinds, "err", err)
		actions = nil
	}
	var reject, redact []string
	for _, k := range kinds {
		switch a := actions[k]; {
		case a == GuardAllow:
		case a == GuardRedact && !slices.ContainsFunc(fixed, func(f guard.Finding) bool { return f.Kind == k }):
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
	out := []string{m.Key, m.Kind, m.Source}
	for _, e := range m.Entities {
		out = append(append(out, e.ID, e.Name, e.Kind), e.Aliases...)
	}
	return out
}

// prefixGuard names the batch item a guard error is about.
func prefixGuard(err error, i, n int) error {
	if ge, ok := err.(*GuardError); ok && n > 1 {
		return &GuardError{Field: fmt.Sprintf("memories[%d].%s", i, ge.Field), Kinds: ge.Kinds}
	}
	return err
}

// checkBatch refuses a request of no memory, of too many, or that gives one
// idempotency key to two memories that say different things: only the first
// would be stored, and the other lost without a word.
func checkBatch(in []NewMemory) error {
	switch {
	case len(in) == 0:
		return Invalid("memories", "at least one memory is required")
	case len(in) > MaxBatch:
		return Invalid("memories", fmt.Sprintf("at most %d memories per request", MaxBatch))
	}
	byKey := map[string]NewMemory{}
	for i, n := range in {
		if first, ok := byKey[n.IdempotencyKey]; !ok {
			byKey[n.IdempotencyKey] = n
		} else if n.IdempotencyKey != "" && (first.UserID != n.UserID || first.Type != n.Type || first.Content != n.Content) {
			return Invalid(fmt.Sprintf("memories[%d].idempotency_key", i), "is that of an earlier memory of the request, which says something else")
		}
	}
	return nil
}
