package handlers_test

import (
	"encoding/json"
	"math"
	"net/http"
	"testing"
	"time"

	"mneme/internal/apptest"
	"mneme/memory"
)

// TestObservedAtDatesTheFact: an admin imports a fact observed long ago; it
// is dated then (valid_from, created_at), recall decays it by that age and
// as_of finds it at a moment before it was written. An agent may not
// backdate, and no one may date a fact in the future.
func TestObservedAtDatesTheFact(t *testing.T) {
	f := apptest.Start(t)
	long := time.Now().UTC().Add(-400 * 24 * time.Hour).Truncate(time.Second)
	errCode := func(r apptest.Response) string {
		var e struct{ Code string }
		_ = json.Unmarshal(r.Body, &e)
		return e.Code
	}
	n := memory.NewMemory{UserID: "alice", AgentID: "support-bot", Type: memory.TypeEpisodic,
		Content: "Alice ordered 30 ergonomic desks for the Ningbo office.", ObservedAt: &long}

	agent := n
	agent.AgentID = ""
	if r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", agent); r.Status != http.StatusForbidden || errCode(r) != "backdate_forbidden" {
		t.Errorf("an agent backdating = %d %s, want 403 backdate_forbidden", r.Status, r.Body)
	}
	future := time.Now().UTC().Add(time.Hour)
	ahead := n
	ahead.ObservedAt = &future
	if r := f.Do(t, "admin", http.MethodPost, "/v1/memories", ahead); r.Status != http.StatusBadRequest || errCode(r) != "invalid_argument" {
		t.Errorf("a fact from the future = %d %s, want 400 invalid_argument", r.Status, r.Body)
	}

	m := create(t, f, "admin", n)
	if !m.CreatedAt.Equal(long) || !m.ValidFrom.Equal(long) {
		t.Fatalf("created %v, valid from %v; want both %v", m.CreatedAt, m.ValidFrom, long)
	}
	got := recall(t, f, "support-bot", memory.RecallRequest{UserID: "alice", Query: "How many ergonomic desks did Alice order for Ningbo?"})
	if len(got.Memories) != 1 || got.Memories[0].Memory.ID != m.ID {
		t.Fatalf("recall = %v, want %s", recalledIDs(got), m.ID)
	}
	if e := got.Memories[0].Explain; math.Abs(e.AgeDays-400) > 1 || e.DecayFactor > 0.001 {
		t.Errorf("age %v days, decay %v; want 400 days and an episode decayed to almost nothing", e.AgeDays, e.DecayFactor)
	}
	then := long.Add(24 * time.Hour)
	past := recall(t, f, "support-bot", memory.RecallRequest{UserID: "alice", Query: "How many ergonomic desks did Alice order for Ningbo?", AsOf: &then})
	if len(past.Memories) != 1 || past.Memories[0].Memory.ID != m.ID {
		t.Errorf("as_of a day after it was observed = %v, want %s", recalledIDs(past), m.ID)
	}
	before := long.Add(-24 * time.Hour)
	if none := recall(t, f, "support-bot", memory.RecallRequest{UserID: "alice", Query: "How many ergonomic desks did Alice order for Ningbo?", AsOf: &before}); len(none.Memories) != 0 {
		t.Errorf("as_of before it was observed = %v, want nothing", recalledIDs(none))
	}
}
