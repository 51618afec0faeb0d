package memory

import (
	"maps"
	"slices"
	"strings"
	"time"

	"mneme/facts"
)

// The write plan: what becomes of each memory of a write, decided from what
// the store read under the write's locks. It is a pure function, so the
// store holds no domain rule: it reads, calls PlanBatch, and writes what the
// plan says.

// Slot is a (user, key) pair of one tenant, or for shared knowledge a
// (scope, scope id, key) triple: the place of one fact. Its active memories
// are its heads; writers that cannot read each other's (two agents without
// a grant, a user and a confidential note) each keep a head there.
type Slot struct{ UserID, Scope, ScopeID, Key string }

// SlotOf returns the slot m fills when it has a key.
func SlotOf(m Memory) Slot { return Slot{m.UserID, ScopeOf(m), m.ScopeID, m.Key} }

// TakesSlot says whether m becomes the head of its slot: only an active
// memory with a key does. A candidate (or a memory imported in another
// status) must not displace the trusted fact, and is never stale.
func TakesSlot(m Memory) bool { return m.Key != "" && m.Status == StatusActive }

// BatchState is what a write's outcome depends on, as the store read it
// under the write's locks.
type BatchState struct {
	// Duplicates are the stored memories holding the write's idempotency
	// keys, by key.
	Duplicates map[string]Memory
	// Deleted are the write's idempotency keys whose memory was deleted:
	// with Dedup, a principal's retry of the write does not bring it back.
	Deleted map[string]bool
	// Heads are the active memories of the write's slots.
	Heads map[Slot][]Memory
}

// WriteRules say how a write is planned: the store's part (CheckStale) and
// the service's rules for what a memory repeats and when a candidate is
// trusted.
type WriteRules struct {
	// Dedup lets a memory reinforce what it repeats instead of being
	// created, and creates memories as candidates where Thresholds or an
	// inference ask for it. Without it every memory is created as it is
	// (CreateMemories, WriteEvents).
	Dedup bool
	// CheckStale keeps an older event from overwriting its slot's head.
	CheckStale bool
	// DuplicateThreshold is SameFact's cosine threshold.
	DuplicateThreshold float64
	// Thresholds is, per kind of profile memory, how many distinct sessions
	// must observe it before it becomes active; kinds not listed need one.
	Thresholds map[string]int
	// Displaces, when set, says whether memory w of the write may
	// supersede h, a head of its slot: only if w's writer may read h, and
	// is an admin or Displaceable allows it. A head it may not read stays
	// in force beside w, so that writing a key neither reveals nor replaces
	// another author's hidden fact.
	Displaces func(w, h Memory) bool
}

// ownHeads splits the heads hs of w's slot into those w may supersede (or
// find newer) and the others.
func (r WriteRules) ownHeads(w Memory, hs []Memory) (own, others []Memory) {
	for _, h := range hs {
		if r.Displaces == nil || r.Displaces(w, h) {
			own = append(own, h)
		} else {
			others = append(others, h)
		}
	}
	return own, others
}

// Displaceable reports whether w, written by an agent or an end user, may
// supersede h, which its writer may read: its own writer's fact, what the
// user said themselves, or a profile memory by a profile memory (what
// someone prefers is theirs to restate, and any agent that reads it to
// update), and then only by a memory no more sensitive, so that no reader
// of h loses it to a version they cannot read. Another agent's business
// fact (payment terms, a rule) is no one else's to retire: an end user's or
// a grantee's write with its key stands beside it. An admin's write
// supersedes whatever the admin reads; a candidate made active, as its
// writer's would (graph's cypherSupersedeSlot).
func Displaceable(w, h Memory) bool {
	return w.AgentID == h.AgentID || SensitivityRank(w.Sensitivity) <= SensitivityRank(h.Sensitivity) && (h.SaidByUser() || w.Type == TypeProfile && h.Type == TypeProfile)
}

// threshold returns how many distinct sessions must observe m. What users
// say about themselves needs saying once: they are no guess.
func (r WriteRules) threshold(m Memory) int {
	if m.Type != TypeProfile || m.SaidByUser() {
		return 1
	}
	return max(r.Thresholds[m.Kind], 1)
}

// asCandidate returns m in the status it is created in: a candidate when it
// is inferred or its profile threshold asks for more than one observation.
func (r WriteRules) asCandidate(m Memory) Memory {
	if m.Status == StatusActive && (m.Source == SourceInferred || r.threshold(m) > 1) {
		m.Status = StatusCandidate
	}
	return m
}

// activateAt returns after how many distinct sessions a candidate target
// becomes active when m reinforces it; 0 never. Inferences wait for the
// user whatever the count; the user saying it themselves activates any.
func (r WriteRules) activateAt(m, target Memory) int {
	switch {
	case target.Status != StatusCandidate || m.Source == SourceInferred:
		return 0
	case m.SaidByUser():
		return 1
	case target.Source == SourceInferred:
		return 0
	}
	return r.threshold(target)
}

// sameOwner reports whether a and b are about one user or shared in one
// scope: only then may one repeat the other.
func sameOwner(a, b Memory) bool { return SlotOf(a) == Slot{b.UserID, ScopeOf(b), b.ScopeID, a.Key} }

// repeats reports whether m restates other: the same user and type, the
// same slot, the same fact (SameFact) at the given similarity, and other no
// less sensitive, so that a fact marked confidential is never merged into
// a note more readers may read.
func (r WriteRules) repeats(m, other Memory, similarity float64) bool {
	return sameOwner(other, m) && other.Type == m.Type && sameSlot(other, m) && SensitivityRank(m.Sensitivity) <= SensitivityRank(other.Sensitivity) &&
		facts.Same(other.Content, m.Content, similarity, r.DuplicateThreshold)
}

// WritePlan is what a segment of a write stores and reports.
type WritePlan struct {
	// N is how many memories of the write the segment covers, from the
	// first; the store plans the rest again once it has written these.
	N int
	// Written says, per memory of the segment, what becomes of it. A
	// reinforced memory stands for its target as read; the store replaces
	// it with the target as reinforced.
	Written []Written
	// Create are the memories to create, in write order, as the store will
	// read them back (times in UTC, entities as stored, sorted by id), with
	// their version and the head they supersede.
	Create []Memory
	// Supersedes are the active heads each created memory displaces.
	Supersedes []Supersession
	// ReinforceStored run before the creations, ReinforceNew (of memories
	// this segment creates) after them.
	ReinforceStored, ReinforceNew []Repeat
	// Reused is an idempotency key a deduplicated write sent with another
	// memory than the one stored under it; nothing of the write is stored.
	Reused string
}

// Supersession is a created memory (ID) displacing an active head (Prev).
type Supersession struct{ ID, Prev string }

// Repeat is memory Index of the segment recorded as one more observation of
// the memory Target.
type Repeat struct {
	Index  int
	Target string
	Reinforcement
}

// PlanBatch decides, in write order, what becomes of each memory of ms: a
// stored or earlier idempotency key makes it a duplicate (with Dedup, only
// of the same memory: another user, author, type or content under it makes
// the plan Reused and nothing else); with CheckStale, a
// head of its slot valid from later makes it stale; with Dedup, a memory
// that repeats an earlier memory of the write or one of similar[i] (the
// stored memories most like it, best first) reinforces it; otherwise it is
// created, and if it takes its slot it supersedes every active head there
// and takes the next version.
//
// Creations run in one query, after the reinforcements of stored memories
// and before those of memories the segment creates. So that this order
// gives what applying the memories one by one would, the segment ends
// before a memory whose reinforcement may activate a candidate that fills
// a slot (it then runs alone), before a reinforcement of a memory the
// segment superseded, and before a creation that supersedes a memory the
// segment reinforced.
func PlanBatch(st BatchState, ms []Memory, similar [][]Hit, rules WriteRules) WritePlan {
	p := WritePlan{N: len(ms), Written: make([]Written, len(ms))}
	dups := make(map[string]Memory, len(st.Duplicates))
	maps.Copy(dups, st.Duplicates)
	heads := make(map[Slot][]Memory, len(st.Heads))
	for sl, hs := range st.Heads {
		heads[sl] = slices.Clone(hs)
	}
	// The ids this segment creates, supersedes and reinforces.
	created, superseded, reinforced := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i, m := range ms {
		if d, ok := dups[m.IdempotencyKey]; ok && m.IdempotencyKey != "" {
			// Keys are the tenant's: answering another sender's memory
			// with the stored one would hand out what it may not read.
			// A retry asks for what the memory holds: the same text and slot,
			// no stricter a level (a reclassification may have raised it).
			if rules.Dedup && (d.UserID != m.UserID || d.AgentID != m.AgentID || d.Type != m.Type || d.Content != m.Content ||
				d.Kind != m.Kind || d.Key != m.Key || SensitivityRank(m.Sensitivity) > SensitivityRank(d.Sensitivity)) {
				return WritePlan{Reused: m.IdempotencyKey}
			}
			p.Written[i] = Written{Memory: d, Outcome: OutcomeDuplicate}
			continue
		}
		if rules.Dedup && m.IdempotencyKey != "" && st.Deleted[m.IdempotencyKey] {
			p.Written[i] = Written{Outcome: OutcomeDeleted}
			continue
		}
		if rules.Dedup {
			m = rules.asCandidate(m)
		}
		sl := SlotOf(m)
		own, others := rules.ownHeads(m, heads[sl])
		if rules.CheckStale && TakesSlot(m) {
			if newest := newestHead(own); newest != nil && newest.ValidFrom.After(m.ValidFrom) {
				p.Written[i] = Written{Memory: *newest, Outcome: OutcomeStale}
				continue
			}
		}
		if rules.Dedup {
			if target, ok := repeatOf(rules, m, ms[:i], p.Written[:i], hitsFor(similar, i, m, superseded)); ok {
				activate := rules.activateAt(m, target)
				slotted := activate > 0 && target.Key != ""
				if i > 0 && (slotted || superseded[target.ID]) {
					p.N = i
					break
				}
				r := Repeat{Index: i, Target: target.ID, Reinforcement: Reinforcement{
					UserID: m.UserID, SessionID: m.SessionID, At: m.CreatedAt.UTC(),
					ImportanceStep: ImportanceStep, ActivateAt: activate, IdempotencyKey: m.IdempotencyKey,
				}}
				if created[target.ID] {
					p.ReinforceNew = append(p.ReinforceNew, r)
				} else {
					p.ReinforceStored = append(p.ReinforceStored, r)
				}
				reinforced[target.ID] = true
				p.Written[i] = Written{Memory: target, Outcome: OutcomeReinforced}
				if slotted {
					p.N = i + 1
					break
				}
				continue
			}
		}
		m = asStored(m)
		if TakesSlot(m) {
			if top := own; len(top) > 0 {
				if i > 0 && slices.ContainsFunc(top, func(h Memory) bool { return reinforced[h.ID] }) {
					p.N = i
					break
				}
				best := top[0]
				for _, h := range top {
					p.Supersedes = append(p.Supersedes, Supersession{ID: m.ID, Prev: h.ID})
					superseded[h.ID] = true
					if h.Version > best.Version {
						best = h
					}
				}
				m.Version, m.Supersedes = best.Version+1, best.ID
			}
			heads[sl] = append(others, m)
		}
		if m.IdempotencyKey != "" {
			dups[m.IdempotencyKey] = m
		}
		created[m.ID] = true
		p.Written[i] = Written{Memory: m, Outcome: OutcomeCreated}
		p.Create = append(p.Create, m)
	}
	p.Written = p.Written[:p.N]
	return p
}

// hitsFor returns the stored memories like ms[i] that it may repeat: of its
// user, and not superseded by the segment.
func hitsFor(similar [][]Hit, i int, m Memory, superseded map[string]bool) []Hit {
	if i >= len(similar) {
		return nil
	}
	var hits []Hit
	for _, h := range similar[i] {
		if !superseded[h.Memory.ID] && sameOwner(h.Memory, m) {
			hits = append(hits, h)
		}
	}
	return hits
}

// repeatOf returns the memory m reinforces, if it repeats one: an earlier
// memory of the segment (written says what stands for it now) or else one
// of hits, best first.
func repeatOf(rules WriteRules, m Memory, earlier []Memory, written []Written, hits []Hit) (Memory, bool) {
	for j, e := range earlier {
		if rules.repeats(m, e, facts.Cosine(e.Embedding, m.Embedding)) {
			if written[j].Memory.ID == "" {
				return Memory{}, false
			}
			return written[j].Memory, true
		}
	}
	for _, h := range hits {
		if rules.repeats(m, h.Memory, h.Score) {
			return h.Memory, true
		}
	}
	return Memory{}, false
}

// newestHead returns the head valid from the latest time, nil for none.
func newestHead(hs []Memory) *Memory {
	if len(hs) == 0 {
		return nil
	}
	newest := slices.MaxFunc(hs, func(a, b Memory) int { return a.ValidFrom.Compare(b.ValidFrom) })
	return &newest
}

// asStored returns m as reading it back would: times in UTC, entities once
// each (the last one the writer gave), sorted by id.
func asStored(m Memory) Memory {
	m.ValidFrom, m.CreatedAt, m.UpdatedAt = utc(m.ValidFrom), utc(m.CreatedAt), utc(m.UpdatedAt)
	if m.ValidTo != nil {
		t := utc(*m.ValidTo)
		m.ValidTo = &t
	}
	if len(m.Entities) > 0 {
		byID := map[string]Entity{}
		for _, e := range m.Entities {
			byID[e.ID] = e
		}
		m.Entities = slices.SortedFunc(maps.Values(byID), func(a, b Entity) int { return strings.Compare(a.ID, b.ID) })
	}
	return m
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
