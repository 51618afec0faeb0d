package memory

import (
	"context"
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
}

// DefaultThresholds: a preference is trusted once seen in two sessions.
var DefaultThresholds = map[string]int{"preference": 2}

func (c WriteConfig) withDefaults() WriteConfig {
	if c.Thresholds == nil {
		c.Thresholds = DefaultThresholds
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
		if m.Source == SourceInferred {
			m.Status, results[i].Reason = StatusCandidate, ReasonInferred
		}
		keep = append(keep, m)
		keepAt = append(keepAt, i)
	}
	if len(keep) == 0 {
		return results, nil
	}
	if err := s.embedAll(ctx, keep); err != nil {
		return nil, err
	}
	stored, err := s.store.CreateMemories(ctx, keep)
	if err != nil {
		return nil, err
	}
	for j, m := range stored {
		r := &results[keepAt[j]]
		r.Outcome, r.ID, r.Status, r.Memory = OutcomeCreated, m.ID, m.Status, &stored[j]
	}
	return results, nil
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
