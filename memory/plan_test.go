package memory

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// planned is a memory of alice as the write pipeline hands it to a store:
// active, version 1, created at testNow, embedded.
func planned(id, content string, edits ...func(*Memory)) Memory {
	m := Memory{
		ID: id, Tenant: "acme", UserID: "alice", AgentID: "support-bot", Type: TypeSemantic,
		Content: content, Status: StatusActive, Sensitivity: SensitivityInternal, Importance: 0.5, Confidence: 1,
		ValidFrom: testNow, CreatedAt: testNow, UpdatedAt: testNow, Version: 1, EvidenceCount: 1,
		Embedding: vectorOf(content),
	}
	for _, e := range edits {
		e(&m)
	}
	return m
}

func withKey(k string) func(*Memory)  { return func(m *Memory) { m.Key = k } }
func withIdem(k string) func(*Memory) { return func(m *Memory) { m.IdempotencyKey = k } }
func withStatus(s string) func(*Memory) {
	return func(m *Memory) { m.Status = s }
}
func withVersion(v int) func(*Memory) { return func(m *Memory) { m.Version = v } }
func withValidFrom(t time.Time) func(*Memory) {
	return func(m *Memory) { m.ValidFrom = t }
}
func withPreference(m *Memory) { m.Type, m.Kind = TypeProfile, "preference" }
func inferred(m *Memory)       { m.Source = SourceInferred }
func saidByUser(m *Memory)     { m.AgentID = "user:" + m.UserID }
func ofUser(u string) func(*Memory) {
	return func(m *Memory) { m.UserID = u }
}

// superseding returns m as created over prev: the next version.
func superseding(m Memory, prev Memory) Memory {
	m.Version, m.Supersedes = prev.Version+1, prev.ID
	return m
}

func as(m Memory, status string) Memory { m.Status = status; return m }

func created(m Memory) Written    { return Written{Memory: m, Outcome: OutcomeCreated} }
func reinforced(m Memory) Written { return Written{Memory: m, Outcome: OutcomeReinforced} }

// repeatOfAt is memory m, at index i, recorded as an observation of target.
func repeatOfAt(i int, m Memory, target string, activate int) Repeat {
	return Repeat{Index: i, Target: target, Reinforcement: Reinforcement{
		UserID: m.UserID, SessionID: m.SessionID, At: m.CreatedAt, ImportanceStep: ImportanceStep,
		ActivateAt: activate, IdempotencyKey: m.IdempotencyKey,
	}}
}

func TestPlanBatch(t *testing.T) {
	dedup := WriteRules{Dedup: true, DuplicateThreshold: DefaultDuplicateThreshold, Thresholds: DefaultThresholds}
	events := dedup
	events.CheckStale = true
	budget := Slot{UserID: "alice", Scope: ScopeUser, Key: "budget"}
	earlier := testNow.Add(-time.Hour)

	head := planned("head", "The budget is 100k.", withKey("budget"), withVersion(3), withValidFrom(earlier))
	head2 := planned("head2", "The budget is 90k.", withKey("budget"), withVersion(5), withValidFrom(earlier))
	later := planned("later", "The budget is 200k.", withKey("budget"), withVersion(4), withValidFrom(testNow.Add(time.Hour)))
	newBudget := planned("m1", "The budget is 150k.", withKey("budget"))
	tea := planned("m1", "Alice prefers tea over coffee.")
	teaAgain := planned("m2", "Alice prefers tea over coffee.")
	storedTea := planned("s1", "Alice prefers tea over coffee!", withValidFrom(earlier))
	candidatePref := planned("s1", "Alice likes window seats.", withPreference, withStatus(StatusCandidate), withValidFrom(earlier))
	slottedCandidate := planned("s1", "Alice's seat is the window.", withPreference, withKey("seat"), withStatus(StatusCandidate))

	// A writer may read its own memories and not finance-bot's.
	own := dedup
	own.Displaces = func(w, h Memory) bool { return h.AgentID == w.AgentID }
	ownEvents := own
	byAuthor := dedup
	byAuthor.Displaces = Displaceable
	ownEvents.CheckStale = true
	hidden := planned("hidden", "The budget is 90k, confidential.", withKey("budget"), withVersion(7), withValidFrom(testNow.Add(time.Hour)),
		func(m *Memory) { m.AgentID = "finance-bot" })

	tests := []struct {
		name    string
		st      BatchState
		ms      []Memory
		similar [][]Hit
		rules   WriteRules
		want    WritePlan
	}{
		// Supersession and versions.
		{
			name: "a memory of an empty slot is created at version 1",
			ms:   []Memory{newBudget}, rules: dedup,
			want: WritePlan{N: 1, Written: []Written{created(newBudget)}, Create: []Memory{newBudget}},
		},
		{
			name: "a memory supersedes its slot's head and takes the next version",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {head}}},
			ms:   []Memory{newBudget}, rules: dedup,
			want: WritePlan{N: 1, Written: []Written{created(superseding(newBudget, head))},
				Create: []Memory{superseding(newBudget, head)}, Supersedes: []Supersession{{"m1", "head"}}},
		},
		{
			name: "every active head is superseded; the version follows the highest",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {head, head2}}},
			ms:   []Memory{newBudget}, rules: dedup,
			want: WritePlan{N: 1, Written: []Written{created(superseding(newBudget, head2))},
				Create: []Memory{superseding(newBudget, head2)}, Supersedes: []Supersession{{"m1", "head"}, {"m1", "head2"}}},
		},
		{
			name:  "the second memory of a slot in one write supersedes the first",
			ms:    []Memory{newBudget, planned("m2", "The budget is 180k.", withKey("budget"))},
			rules: WriteRules{},
			want: func() WritePlan {
				second := superseding(planned("m2", "The budget is 180k.", withKey("budget")), newBudget)
				return WritePlan{N: 2, Written: []Written{created(newBudget), created(second)},
					Create: []Memory{newBudget, second}, Supersedes: []Supersession{{"m2", "m1"}}}
			}(),
		},
		{
			name: "a head its writer may not read stays in force beside the new memory",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {hidden}}},
			ms:   []Memory{newBudget}, rules: own,
			want: WritePlan{N: 1, Written: []Written{created(newBudget)}, Create: []Memory{newBudget}},
		},
		{
			name: "an end user's memory with the key of an agent's business fact stands beside it",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {head}}},
			ms:   []Memory{planned("m1", "My budget is 500k.", withKey("budget"), withPreference, saidByUser)}, rules: byAuthor,
			want: func() WritePlan {
				m := planned("m1", "My budget is 500k.", withKey("budget"), withPreference, saidByUser)
				return WritePlan{N: 1, Written: []Written{created(m)}, Create: []Memory{m}}
			}(),
		},
		{
			name: "only the heads its writer may read are superseded; the version follows them",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {hidden, head}}},
			ms:   []Memory{newBudget}, rules: own,
			want: WritePlan{N: 1, Written: []Written{created(superseding(newBudget, head))},
				Create: []Memory{superseding(newBudget, head)}, Supersedes: []Supersession{{"m1", "head"}}},
		},
		{
			name:  "a later memory of the slot in the write leaves the hidden head too",
			st:    BatchState{Heads: map[Slot][]Memory{budget: {hidden}}},
			ms:    []Memory{newBudget, planned("m2", "The budget is 180k.", withKey("budget"))},
			rules: own,
			want: func() WritePlan {
				second := superseding(planned("m2", "The budget is 180k.", withKey("budget")), newBudget)
				return WritePlan{N: 2, Written: []Written{created(newBudget), created(second)},
					Create: []Memory{newBudget, second}, Supersedes: []Supersession{{"m2", "m1"}}}
			}(),
		},
		{
			name: "a hidden head valid from later makes no event stale",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {hidden}}},
			ms:   []Memory{newBudget}, rules: ownEvents,
			want: WritePlan{N: 1, Written: []Written{created(newBudget)}, Create: []Memory{newBudget}},
		},
		{
			name: "a memory without a key takes no slot",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {head}}},
			ms:   []Memory{tea}, rules: dedup,
			want: WritePlan{N: 1, Written: []Written{created(tea)}, Create: []Memory{tea}},
		},
		{
			name: "entities once each, the last the writer gave, sorted by id",
			ms: []Memory{planned("m1", "Order 2 and order 1 shipped.", func(m *Memory) {
				m.Entities = []Entity{{ID: "order:2", Name: "sent"}, {ID: "order:1", Kind: "order", Name: "1"}, {ID: "order:2", Name: "again"}}
			})},
			rules: WriteRules{},
			want: func() WritePlan {
				m := planned("m1", "Order 2 and order 1 shipped.", func(m *Memory) {
					m.Entities = []Entity{{ID: "order:1", Kind: "order", Name: "1"}, {ID: "order:2", Name: "again"}}
				})
				return WritePlan{N: 1, Written: []Written{created(m)}, Create: []Memory{m}}
			}(),
		},

		// Duplicates by idempotency key.
		{
			name: "a stored idempotency key of the same memory makes a duplicate",
			st:   BatchState{Duplicates: map[string]Memory{"k1": storedTea}},
			ms:   []Memory{planned("m1", storedTea.Content, withIdem("k1"))}, rules: dedup,
			want: WritePlan{N: 1, Written: []Written{{Memory: storedTea, Outcome: OutcomeDuplicate}}},
		},
		{
			name: "a stored idempotency key of another memory refuses the write",
			st:   BatchState{Duplicates: map[string]Memory{"k1": storedTea}},
			ms:   []Memory{tea, planned("m2", "Anything else.", withIdem("k1"))}, rules: dedup,
			want: WritePlan{Reused: "k1"},
		},
		{
			name: "so does one of another author",
			st:   BatchState{Duplicates: map[string]Memory{"k1": storedTea}},
			ms:   []Memory{planned("m1", storedTea.Content, withIdem("k1"), func(m *Memory) { m.AgentID = "billing-bot" })}, rules: dedup,
			want: WritePlan{Reused: "k1"},
		},
		{
			name: "so does the same text in another kind",
			st:   BatchState{Duplicates: map[string]Memory{"k1": storedTea}},
			ms:   []Memory{planned("m1", storedTea.Content, withIdem("k1"), func(m *Memory) { m.Kind = "preference" })}, rules: dedup,
			want: WritePlan{Reused: "k1"},
		},
		{
			name: "or for another slot",
			st:   BatchState{Duplicates: map[string]Memory{"k1": storedTea}},
			ms:   []Memory{planned("m1", storedTea.Content, withIdem("k1"), withKey("drink"))}, rules: dedup,
			want: WritePlan{Reused: "k1"},
		},
		{
			name: "or at a stricter level",
			st:   BatchState{Duplicates: map[string]Memory{"k1": storedTea}},
			ms:   []Memory{planned("m1", storedTea.Content, withIdem("k1"), func(m *Memory) { m.Sensitivity = SensitivityConfidential })}, rules: dedup,
			want: WritePlan{Reused: "k1"},
		},
		{
			name: "a retry at the level the memory had before a reclassification raised it is one",
			st:   BatchState{Duplicates: map[string]Memory{"k1": withSensitivity(storedTea, SensitivityConfidential)}},
			ms:   []Memory{planned("m1", storedTea.Content, withIdem("k1"))}, rules: dedup,
			want: WritePlan{N: 1, Written: []Written{{Memory: withSensitivity(storedTea, SensitivityConfidential), Outcome: OutcomeDuplicate}}},
		},
		{
			name: "an import takes the stored memory of its key, whatever it says",
			st:   BatchState{Duplicates: map[string]Memory{"k1": storedTea}},
			ms:   []Memory{planned("m1", "Anything else.", withIdem("k1"))}, rules: WriteRules{},
			want: WritePlan{N: 1, Written: []Written{{Memory: storedTea, Outcome: OutcomeDuplicate}}},
		},
		{
			name: "a retry whose memory was deleted writes nothing, and the rest of the write goes on",
			st:   BatchState{Deleted: map[string]bool{"k1": true}},
			ms:   []Memory{planned("m2", "Retried.", withIdem("k1")), tea}, rules: dedup,
			want: WritePlan{N: 2, Written: []Written{{Outcome: OutcomeDeleted}, created(tea)}, Create: []Memory{tea}},
		},
		{
			name: "an import of a deleted key is created again (the seed is the system's)",
			st:   BatchState{Deleted: map[string]bool{"k1": true}},
			ms:   []Memory{planned("m1", "First.", withIdem("k1"))}, rules: WriteRules{},
			want: WritePlan{N: 1, Written: []Written{created(planned("m1", "First.", withIdem("k1")))}, Create: []Memory{planned("m1", "First.", withIdem("k1"))}},
		},
		{
			name:  "an idempotency key earlier in the write makes a duplicate of that memory",
			ms:    []Memory{planned("m1", "First.", withIdem("k1")), planned("m2", "Second.", withIdem("k1"))},
			rules: WriteRules{},
			want: WritePlan{N: 2, Written: []Written{
				created(planned("m1", "First.", withIdem("k1"))),
				{Memory: planned("m1", "First.", withIdem("k1")), Outcome: OutcomeDuplicate},
			}, Create: []Memory{planned("m1", "First.", withIdem("k1"))}},
		},

		// Stale events.
		{
			name: "with CheckStale, a head valid from later makes the event stale",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {head, later}}},
			ms:   []Memory{newBudget}, rules: events,
			want: WritePlan{N: 1, Written: []Written{{Memory: later, Outcome: OutcomeStale}}},
		},
		{
			name: "without CheckStale, the later head is superseded",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {later}}},
			ms:   []Memory{newBudget}, rules: dedup,
			want: WritePlan{N: 1, Written: []Written{created(superseding(newBudget, later))},
				Create: []Memory{superseding(newBudget, later)}, Supersedes: []Supersession{{"m1", "later"}}},
		},
		{
			name: "an older head does not make the event stale",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {head}}},
			ms:   []Memory{newBudget}, rules: events,
			want: WritePlan{N: 1, Written: []Written{created(superseding(newBudget, head))},
				Create: []Memory{superseding(newBudget, head)}, Supersedes: []Supersession{{"m1", "head"}}},
		},
		{
			name: "a candidate is never stale and displaces no head",
			st:   BatchState{Heads: map[Slot][]Memory{budget: {later}}},
			ms:   []Memory{planned("m1", "The budget is 150k.", withKey("budget"), inferred)}, rules: events,
			want: func() WritePlan {
				m := planned("m1", "The budget is 150k.", withKey("budget"), inferred, withStatus(StatusCandidate))
				return WritePlan{N: 1, Written: []Written{created(m)}, Create: []Memory{m}}
			}(),
		},

		// Dedup.
		{
			name:    "a repeat of a stored memory reinforces it",
			ms:      []Memory{tea},
			similar: [][]Hit{{{Memory: storedTea, Score: 0.99}}},
			rules:   dedup,
			want: WritePlan{N: 1, Written: []Written{reinforced(storedTea)},
				ReinforceStored: []Repeat{repeatOfAt(0, tea, "s1", 0)}},
		},
		{
			name:    "a repeat marked more sensitive is created beside the memory it repeats",
			ms:      []Memory{planned("m1", tea.Content, func(m *Memory) { m.Sensitivity = SensitivityConfidential })},
			similar: [][]Hit{{{Memory: storedTea, Score: 0.99}}},
			rules:   dedup,
			want: WritePlan{N: 1, Written: []Written{created(planned("m1", tea.Content, func(m *Memory) { m.Sensitivity = SensitivityConfidential }))},
				Create: []Memory{planned("m1", tea.Content, func(m *Memory) { m.Sensitivity = SensitivityConfidential })}},
		},
		{
			name:    "a repeat marked less sensitive reinforces the memory it repeats",
			ms:      []Memory{planned("m1", tea.Content, func(m *Memory) { m.Sensitivity = SensitivityPublic })},
			similar: [][]Hit{{{Memory: storedTea, Score: 0.99}}},
			rules:   dedup,
			want: WritePlan{N: 1, Written: []Written{reinforced(storedTea)},
				ReinforceStored: []Repeat{repeatOfAt(0, planned("m1", tea.Content), "s1", 0)}},
		},
		{
			name:    "without Dedup, a repeat is created",
			ms:      []Memory{tea},
			similar: [][]Hit{{{Memory: storedTea, Score: 0.99}}},
			rules:   WriteRules{},
			want:    WritePlan{N: 1, Written: []Written{created(tea)}, Create: []Memory{tea}},
		},
		{
			name:    "other numbers are another fact however alike",
			ms:      []Memory{newBudget},
			similar: [][]Hit{{{Memory: planned("s1", "The budget is 100k.", withValidFrom(earlier)), Score: 0.99}}},
			rules:   dedup,
			want:    WritePlan{N: 1, Written: []Written{created(newBudget)}, Create: []Memory{newBudget}},
		},
		{
			name:    "a similarity below the threshold is another fact",
			ms:      []Memory{tea},
			similar: [][]Hit{{{Memory: planned("s1", "Alice prefers coffee over tea.", withValidFrom(earlier)), Score: 0.5}}},
			rules:   dedup,
			want:    WritePlan{N: 1, Written: []Written{created(tea)}, Create: []Memory{tea}},
		},
		{
			name:    "another user's memory is never repeated",
			ms:      []Memory{tea},
			similar: [][]Hit{{{Memory: planned("s1", "Alice prefers tea over coffee.", ofUser("bob")), Score: 1}}},
			rules:   dedup,
			want:    WritePlan{N: 1, Written: []Written{created(tea)}, Create: []Memory{tea}},
		},
		{
			name:  "a repeat of an earlier memory of the write reinforces it after its creation",
			ms:    []Memory{tea, teaAgain},
			rules: dedup,
			want: WritePlan{N: 2, Written: []Written{created(tea), reinforced(tea)}, Create: []Memory{tea},
				ReinforceNew: []Repeat{repeatOfAt(1, teaAgain, "m1", 0)}},
		},

		// Candidates and their activation.
		{
			name:  "an inference is created a candidate",
			ms:    []Memory{planned("m1", "Alice may be vegetarian.", inferred)},
			rules: dedup,
			want: func() WritePlan {
				m := planned("m1", "Alice may be vegetarian.", inferred, withStatus(StatusCandidate))
				return WritePlan{N: 1, Written: []Written{created(m)}, Create: []Memory{m}}
			}(),
		},
		{
			name:  "a preference below its threshold is created a candidate",
			ms:    []Memory{planned("m1", "Alice likes aisle seats.", withPreference)},
			rules: dedup,
			want: func() WritePlan {
				m := planned("m1", "Alice likes aisle seats.", withPreference, withStatus(StatusCandidate))
				return WritePlan{N: 1, Written: []Written{created(m)}, Create: []Memory{m}}
			}(),
		},
		{
			name:  "a preference the user states themselves is active at once",
			ms:    []Memory{planned("m1", "I like aisle seats.", withPreference, saidByUser)},
			rules: dedup,
			want: func() WritePlan {
				m := planned("m1", "I like aisle seats.", withPreference, saidByUser)
				return WritePlan{N: 1, Written: []Written{created(m)}, Create: []Memory{m}}
			}(),
		},
		{
			name:  "an inference stays a candidate whoever sends it",
			ms:    []Memory{planned("m1", "I may be vegetarian.", inferred, saidByUser)},
			rules: dedup,
			want: func() WritePlan {
				m := planned("m1", "I may be vegetarian.", inferred, saidByUser, withStatus(StatusCandidate))
				return WritePlan{N: 1, Written: []Written{created(m)}, Create: []Memory{m}}
			}(),
		},
		{
			name:  "a profile kind without a threshold is active at once",
			ms:    []Memory{planned("m1", "Alice is left-handed.", func(m *Memory) { m.Type, m.Kind = TypeProfile, "trait" })},
			rules: dedup,
			want: func() WritePlan {
				m := planned("m1", "Alice is left-handed.", func(m *Memory) { m.Type, m.Kind = TypeProfile, "trait" })
				return WritePlan{N: 1, Written: []Written{created(m)}, Create: []Memory{m}}
			}(),
		},
		{
			name:  "without Dedup, statuses are kept as sent",
			ms:    []Memory{planned("m1", "Alice may be vegetarian.", inferred)},
			rules: WriteRules{},
			want: func() WritePlan {
				m := planned("m1", "Alice may be vegetarian.", inferred)
				return WritePlan{N: 1, Written: []Written{created(m)}, Create: []Memory{m}}
			}(),
		},
		{
			name:    "reinforcing a candidate preference activates it at its threshold",
			ms:      []Memory{planned("m1", "Alice likes window seats.", withPreference)},
			similar: [][]Hit{{{Memory: candidatePref, Score: 0.99}}},
			rules:   dedup,
			want: WritePlan{N: 1, Written: []Written{reinforced(candidatePref)},
				ReinforceStored: []Repeat{repeatOfAt(0, planned("m1", "Alice likes window seats.", withPreference), "s1", 2)}},
		},
		{
			name:    "an inferred repeat never activates a candidate",
			ms:      []Memory{planned("m1", "Alice likes window seats.", withPreference, inferred)},
			similar: [][]Hit{{{Memory: candidatePref, Score: 0.99}}},
			rules:   dedup,
			want: WritePlan{N: 1, Written: []Written{reinforced(candidatePref)},
				ReinforceStored: []Repeat{repeatOfAt(0, planned("m1", "Alice likes window seats.", withPreference, inferred), "s1", 0)}},
		},
		{
			name:    "a repeat of an inferred candidate waits for its user",
			ms:      []Memory{planned("m1", "Alice likes window seats.", withPreference)},
			similar: [][]Hit{{{Memory: as(planned("s1", "Alice likes window seats.", withPreference, inferred), StatusCandidate), Score: 0.99}}},
			rules:   dedup,
			want: WritePlan{N: 1, Written: []Written{reinforced(as(planned("s1", "Alice likes window seats.", withPreference, inferred), StatusCandidate))},
				ReinforceStored: []Repeat{repeatOfAt(0, planned("m1", "Alice likes window seats.", withPreference), "s1", 0)}},
		},

		{
			name:    "the user repeating a candidate activates it at once",
			ms:      []Memory{planned("m1", "Alice likes window seats.", withPreference, saidByUser)},
			similar: [][]Hit{{{Memory: candidatePref, Score: 0.99}}},
			rules:   dedup,
			want: WritePlan{N: 1, Written: []Written{reinforced(candidatePref)},
				ReinforceStored: []Repeat{repeatOfAt(0, planned("m1", "Alice likes window seats.", withPreference, saidByUser), "s1", 1)}},
		},
		{
			name:    "the user repeating an agent's inference activates it too",
			ms:      []Memory{planned("m1", "Alice likes window seats.", withPreference, saidByUser)},
			similar: [][]Hit{{{Memory: as(planned("s1", "Alice likes window seats.", withPreference, inferred), StatusCandidate), Score: 0.99}}},
			rules:   dedup,
			want: WritePlan{N: 1, Written: []Written{reinforced(as(planned("s1", "Alice likes window seats.", withPreference, inferred), StatusCandidate))},
				ReinforceStored: []Repeat{repeatOfAt(0, planned("m1", "Alice likes window seats.", withPreference, saidByUser), "s1", 1)}},
		},

		// Segment boundaries.
		{
			name:    "the segment ends before a reinforcement that may activate a candidate filling a slot",
			ms:      []Memory{tea, planned("m2", "Alice's seat is the window.", withPreference, withKey("seat"))},
			similar: [][]Hit{nil, {{Memory: slottedCandidate, Score: 0.99}}},
			rules:   dedup,
			want:    WritePlan{N: 1, Written: []Written{created(tea)}, Create: []Memory{tea}},
		},
		{
			name:    "such a reinforcement runs alone",
			ms:      []Memory{planned("m2", "Alice's seat is the window.", withPreference, withKey("seat")), tea},
			similar: [][]Hit{{{Memory: slottedCandidate, Score: 0.99}}, nil},
			rules:   dedup,
			want: WritePlan{N: 1, Written: []Written{reinforced(slottedCandidate)},
				ReinforceStored: []Repeat{repeatOfAt(0, planned("m2", "Alice's seat is the window.", withPreference, withKey("seat")), "s1", 2)}},
		},
		{
			name: "the segment ends before a reinforcement of a memory it superseded",
			st: BatchState{
				Duplicates: map[string]Memory{"k1": head},
				Heads:      map[Slot][]Memory{budget: {head}},
			},
			ms: []Memory{
				planned("m0", "The budget is 100k.", withIdem("k1"), withKey("budget")),
				newBudget,
				planned("m2", "The budget is 100k."),
			},
			rules: dedup,
			want: WritePlan{N: 2, Written: []Written{{Memory: head, Outcome: OutcomeDuplicate}, created(superseding(newBudget, head))},
				Create: []Memory{superseding(newBudget, head)}, Supersedes: []Supersession{{"m1", "head"}}},
		},
		{
			name:    "a superseded head is not repeated from the dedup search",
			st:      BatchState{Heads: map[Slot][]Memory{budget: {head}}},
			ms:      []Memory{newBudget, planned("m2", "The budget is 100k.")},
			similar: [][]Hit{nil, {{Memory: head, Score: 1}}},
			rules:   dedup,
			want: WritePlan{N: 2, Written: []Written{created(superseding(newBudget, head)), created(planned("m2", "The budget is 100k."))},
				Create: []Memory{superseding(newBudget, head), planned("m2", "The budget is 100k.")}, Supersedes: []Supersession{{"m1", "head"}}},
		},
		{
			name:    "the segment ends before a creation that supersedes a memory it reinforced",
			st:      BatchState{Heads: map[Slot][]Memory{budget: {head}}},
			ms:      []Memory{planned("m0", "The budget is 100k."), newBudget},
			similar: [][]Hit{{{Memory: head, Score: 0.99}}, nil},
			rules:   dedup,
			want: WritePlan{N: 1, Written: []Written{reinforced(head)},
				ReinforceStored: []Repeat{repeatOfAt(0, planned("m0", "The budget is 100k."), "head", 0)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanBatch(tt.st, tt.ms, tt.similar, tt.rules)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("PlanBatch (-want +got):\n%s", diff)
			}
		})
	}
}

// PlanBatch is pure: planning twice (a transaction retried) gives the same
// plan and leaves its inputs as they were.
func TestPlanBatchLeavesItsInputs(t *testing.T) {
	head := planned("head", "The budget is 100k.", withKey("budget"), withVersion(3))
	st := BatchState{Heads: map[Slot][]Memory{{UserID: "alice", Scope: ScopeUser, Key: "budget"}: {head}}, Duplicates: map[string]Memory{}}
	ms := []Memory{planned("m1", "The budget is 150k.", withKey("budget"), withIdem("k1")), planned("m2", "Alice may be vegan.", inferred)}
	rules := WriteRules{Dedup: true, DuplicateThreshold: DefaultDuplicateThreshold}
	first := PlanBatch(st, ms, nil, rules)
	if diff := cmp.Diff(first, PlanBatch(st, ms, nil, rules)); diff != "" {
		t.Errorf("a second plan differs (-first +second):\n%s", diff)
	}
	if len(st.Duplicates) != 0 || len(st.Heads[Slot{UserID: "alice", Scope: ScopeUser, Key: "budget"}]) != 1 || ms[1].Status != StatusActive {
		t.Errorf("PlanBatch changed its inputs: %+v, %+v", st, ms)
	}
}

// Across authors, a write retires only what the user said themselves or a
// profile memory by a profile memory; its own writer's facts anything it
// may read.
func TestDisplaceable(t *testing.T) {
	byFinance := func(m *Memory) { m.AgentID = "finance-bot" }
	terms := planned("h", "Alice pays on 30-day terms.", withKey("payment_terms"), byFinance)
	pref := planned("h", "Alice prefers e-mail.", withKey("contact_channel"), withPreference)
	said := planned("h", "I prefer e-mail.", withKey("contact_channel"), withPreference, saidByUser)
	tests := []struct {
		name string
		w, h Memory
		want bool
	}{
		{"its own writer's fact", planned("w", "Alice pays on 45-day terms.", withKey("payment_terms"), byFinance), terms, true},
		{"an end user's over an agent's business fact", planned("w", "I pay on 365-day terms.", withKey("payment_terms"), withPreference, saidByUser), terms, false},
		{"an end user's episodic over an agent's business fact", planned("w", "I pay on 365-day terms.", withKey("payment_terms"), saidByUser, func(m *Memory) { m.Type = TypeEpisodic }), terms, false},
		{"a grantee's over the source agent's fact", planned("w", "Alice pays on 60-day terms.", withKey("payment_terms")), terms, false},
		{"an end user's preference over an agent's", planned("w", "I prefer phone calls.", withKey("contact_channel"), withPreference, saidByUser), pref, true},
		{"another agent's preference over an agent's", planned("w", "Alice prefers phone calls.", withKey("contact_channel"), withPreference, byFinance), pref, true},
		{"an agent's fact over what the user said", planned("w", "Alice asked for phone calls.", withKey("contact_channel")), said, true},
		{"a confidential note over what the user said", planned("w", "Alice asked for phone calls; check her credit first.", withKey("contact_channel"), func(m *Memory) { m.Sensitivity = SensitivityConfidential }), said, false},
		{"its own writer's more sensitive version", planned("w", "Alice pays on 45-day terms, confidential.", withKey("payment_terms"), byFinance, func(m *Memory) { m.Sensitivity = SensitivityConfidential }), terms, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Displaceable(tc.w, tc.h); got != tc.want {
				t.Errorf("Displaceable = %v, want %v", got, tc.want)
			}
		})
	}
}

func withSensitivity(m Memory, level string) Memory {
	m.Sensitivity = level
	return m
}
