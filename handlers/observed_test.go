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

// TestABackdatedFactDoesNotDisplaceANewerOne: an admin importing a fact
// observed before the head of its key's slot neither replaces the head nor
// ends it before it began; the synchronous and the queued write both say
// stale, and the head stays current for recall now and as of its time.
func TestABackdatedFactDoesNotDisplaceANewerOne(t *testing.T) {
	f := apptest.Start(t)
	head := write(t, f, "order-bot", client.NewMemory{UserID: "carol", Type: client.TypeProfile, Kind: "company", Key: "company",
		Content: "Carol runs Greenleaf Catering in Suzhou."})
	old := time.Now().UTC().Add(-6 * 365 * 24 * time.Hour).Truncate(time.Second)
	n := client.NewMemory{UserID: "carol", AgentID: "order-bot", Type: client.TypeProfile, Kind: "company", Key: "company",
		Content: "Carol ran a noodle stall in Wuxi.", ObservedAt: &old}
	admin := f.Client(t, "admin")
	w, err := admin.Add(t.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	if got := written(t, w); got.Outcome != client.OutcomeStale || got.ID != head.ID {
		t.Errorf("the backdated write: outcome %s answering %s; want stale answering the head %s", got.Outcome, got.ID, head.ID)
	}
	job, err := admin.AddAsync(t.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	if job, err = admin.WaitJob(t.Context(), job.ID, 50*time.Millisecond); err != nil || len(job.Memories) != 1 || job.Memories[0].Outcome != client.OutcomeStale {
		t.Errorf("the queued backdated write: %+v, %v; want stale", job, err)
	}
	all := list(t, f, "admin", "user_id=carol&kind=company&limit=50")
	if len(all) != 1 || all[0].ID != head.ID || all[0].Status != client.StatusActive || all[0].ValidTo != nil {
		t.Errorf("carol's company memories: %+v; want only the head, active without an end", all)
	}
}
