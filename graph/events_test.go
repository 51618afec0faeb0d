package graph

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/internal/testenv"
	"mneme/memory"
)

// TestWriteEventsOutcomes checks what WriteEvents reports per memory, and
// that an event older than its slot's head does not overwrite it.
func TestWriteEventsOutcomes(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	at := func(min int) func(*memory.Memory) {
		return func(m *memory.Memory) {
			ts := time.Date(2026, 1, 1, 12, min, 0, 0, time.UTC)
			m.ValidFrom, m.CreatedAt, m.UpdatedAt = ts, ts, ts
		}
	}
	mk := func(content, key, idem string, opts ...func(*memory.Memory)) memory.Memory {
		m := newMemory(tenant, "u1", content)
		m.Key, m.IdempotencyKey = key, idem
		for _, o := range opts {
			o(&m)
		}
		return m
	}
	head := mk("budget 150k", "budget", "ev-2", at(10))
	older := mk("budget 100k", "budget", "ev-1", at(5))
	replay := mk("budget 150k again", "budget", "ev-2", at(10))
	unkeyed := mk("called about order 7", "", "", at(1))
	candidate := mk("budget maybe 90k", "budget", "", at(2), func(m *memory.Memory) { m.Status = memory.StatusCandidate })
	newer := mk("budget 200k", "budget", "", at(20))

	ws, err := s.WriteEvents(testCtx(t), []memory.Memory{head, older, replay, unkeyed, candidate, newer})
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ Outcome, ID string }
	want := []got{
		{memory.OutcomeCreated, head.ID},
		{memory.OutcomeStale, head.ID}, // the older event meets the newer head
		{memory.OutcomeDuplicate, head.ID},
		{memory.OutcomeCreated, unkeyed.ID},
		{memory.OutcomeCreated, candidate.ID}, // a candidate never displaces, so it is never stale
		{memory.OutcomeCreated, newer.ID},
	}
	var gotList []got
	for _, w := range ws {
		gotList = append(gotList, got{w.Outcome, w.Memory.ID})
	}
	if d := cmp.Diff(want, gotList); d != "" {
		t.Fatalf("outcomes (-want +got):\n%s", d)
	}
	if _, err := s.GetMemory(testCtx(t), tenant, older.ID); err == nil {
		t.Error("the stale event was written")
	}
	h, err := s.History(testCtx(t), tenant, newer.ID)
	if err != nil {
		t.Fatal(err)
	}
	var chain []string
	for _, m := range h {
		chain = append(chain, m.ID+"/"+m.Status)
	}
	if d := cmp.Diff([]string{newer.ID + "/active", head.ID + "/superseded"}, chain); d != "" {
		t.Errorf("slot history (-want +got):\n%s", d)
	}

	// CreateMemories keeps its old rule: the last write of a slot wins.
	late := mk("budget 120k, entered late", "budget", "", at(0))
	out, err := s.CreateMemories(testCtx(t), []memory.Memory{late})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].ID != late.ID || out[0].Supersedes != newer.ID || out[0].Version != 3 {
		t.Errorf("CreateMemories of an older memory: %s v%d supersedes %s, want %s v3 superseding %s",
			out[0].ID, out[0].Version, out[0].Supersedes, late.ID, newer.ID)
	}
}
