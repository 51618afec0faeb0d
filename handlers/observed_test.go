package handlers_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"mneme/client"
	"mneme/internal/apptest"
)

// TestObservedAtDatesTheFact: an admin imports a fact observed long ago; it
// is dated then (valid_from, created_at), recall decays it by that age and
// as_of finds it at a moment before it was written. An agent may not
// backdate, and no one may date a fact in the future.
func TestObservedAtDatesTheFact(t *testing.T) {
	f := apptest.Start(t)
	long := time.Now().UTC().Add(-400 * 24 * time.Hour).Truncate(time.Second)
	n := client.NewMemory{UserID: "alice", AgentID: "support-bot", Type: client.TypeEpisodic,
		Content: "Alice ordered 30 ergonomic desks for the Ningbo office.", ObservedAt: &long}

	agent := n
	agent.AgentID = ""
	_, err := f.Client(t, "support-bot").Add(t.Context(), agent)
	wantAPIError(t, "an agent backdating", err, http.StatusForbidden, "backdate_forbidden")
	future := time.Now().UTC().Add(time.Hour)
	ahead := n
	ahead.ObservedAt = &future
	_, err = f.Client(t, "admin").Add(t.Context(), ahead)
	wantAPIError(t, "a fact from the future", err, http.StatusBadRequest, "invalid_argument")

	m := create(t, f, "admin", n)
	if !m.CreatedAt.Equal(long) || !m.ValidFrom.Equal(long) {
		t.Fatalf("created %v, valid from %v; want both %v", m.CreatedAt, m.ValidFrom, long)
	}
	got := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "How many ergonomic desks did Alice order for Ningbo?"})
	if len(got.Memories) != 1 || got.Memories[0].Memory.ID != m.ID {
		t.Fatalf("recall = %v, want %s", recalledIDs(got), m.ID)
	}
	if e := got.Memories[0].Explain; math.Abs(e.AgeDays-400) > 1 || math.Abs(e.DecayFactor-0.5) > 0.001 {
		t.Errorf("age %v days, decay %v; want 400 days and an episode decayed to its floor, 0.5", e.AgeDays, e.DecayFactor)
	}
	then := long.Add(24 * time.Hour)
	past := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "How many ergonomic desks did Alice order for Ningbo?", AsOf: &then})
	if len(past.Memories) != 1 || past.Memories[0].Memory.ID != m.ID {
		t.Errorf("as_of a day after it was observed = %v, want %s", recalledIDs(past), m.ID)
	}
	before := long.Add(-24 * time.Hour)
	if none := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "How many ergonomic desks did Alice order for Ningbo?", AsOf: &before}); len(none.Memories) != 0 {
		t.Errorf("as_of before it was observed = %v, want nothing", recalledIDs(none))
	}
}
