package handlers_test

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"

	"mneme/client"
	"mneme/internal/apptest"
)

// TestConcurrentWritersOfOneKeyKeepOneChain has two agents write the same
// key of one user from many goroutines at once, through the API. Every
// write must land as one version of a single chain: one active head,
// versions 1..n without gaps or repeats, each superseding the one before,
// and the head's history holding them all.
func TestConcurrentWritersOfOneKeyKeepOneChain(t *testing.T) {
	f := apptest.Start(t)
	const perAgent = 12
	agents := []string{"order-bot", "finance-bot"}
	var wg sync.WaitGroup
	for _, agent := range agents {
		for i := range perAgent {
			wg.Go(func() {
				m := write(t, f, agent, client.NewMemory{
					UserID: "alice", Type: client.TypeSemantic, Kind: "budget", Key: "budget",
					Content: fmt.Sprintf("Alice's purchasing budget is %dk, says %s", 100+i, agent),
				})
				if m.Outcome != client.OutcomeCreated {
					t.Errorf("%s write %d: outcome %s, want created", agent, i, m.Outcome)
				}
			})
		}
	}
	wg.Wait()
	n := perAgent * len(agents)

	all := list(t, f, apptest.Admin, "user_id=alice&kind=budget&limit=500")
	if len(all) != n {
		t.Fatalf("%d memories stored, want %d", len(all), n)
	}
	byVersion := map[int]client.Memory{}
	var head client.Memory
	for _, m := range all {
		if _, dup := byVersion[m.Version]; dup {
			t.Errorf("version %d appears twice", m.Version)
		}
		byVersion[m.Version] = m
		if m.Status == client.StatusActive {
			if head.ID != "" {
				t.Errorf("two active heads: %s and %s", head.ID, m.ID)
			}
			head = m
		}
	}
	if head.Version != n {
		t.Fatalf("head %s is version %d, want %d", head.ID, head.Version, n)
	}
	for v := 1; v <= n; v++ {
		m, ok := byVersion[v]
		switch {
		case !ok:
			t.Errorf("version %d is missing", v)
		case v == 1 && m.Supersedes != "":
			t.Errorf("version 1 supersedes %s", m.Supersedes)
		case v > 1 && m.Supersedes != byVersion[v-1].ID:
			t.Errorf("version %d supersedes %q, want version %d (%s)", v, m.Supersedes, v-1, byVersion[v-1].ID)
		case v < n && (m.Status != client.StatusSuperseded || m.ValidTo == nil):
			t.Errorf("version %d is %s with valid_to %v, want superseded with an end", v, m.Status, m.ValidTo)
		}
	}

	admin := f.Client(t, apptest.Admin)
	hist, err := admin.History(t.Context(), head.ID)
	if err != nil {
		t.Fatalf("history of the head: %v", err)
	}
	versions := make([]int, len(hist))
	for i, m := range hist {
		versions[i] = m.Version
	}
	if len(versions) != n || !sort.SliceIsSorted(versions, func(i, j int) bool { return versions[i] > versions[j] }) || versions[0] != n {
		t.Errorf("history of the head = versions %v, want %d..1", versions, n)
	}
	// Both agents' writes are in the history.
	by := map[string]int{}
	for _, m := range hist {
		by[m.AgentID]++
	}
	for _, a := range agents {
		if by[a] != perAgent {
			t.Errorf("history holds %d versions by %s, want %d", by[a], a, perAgent)
		}
	}

	// A writer holding a stale version is refused.
	_, err = admin.Update(t.Context(), head.ID, n-1, client.UpdateRequest{Importance: ptrTo(0.9)})
	wantAPIError(t, "update with a stale If-Match", err, http.StatusConflict, "conflict")
}

// TestAgentsKnowWhatTheUserSaid: a user restating what an agent wrote about
// them supersedes the agent's version, at once (their own word waits for no
// second observation), and every agent recalls the user's word in its place.
// Agents read it; they may not change or delete it, and other users never
// see it.
func TestAgentsKnowWhatTheUserSaid(t *testing.T) {
	f := apptest.Start(t)
	byBot := write(t, f, "support-bot", client.NewMemory{
		UserID: "bob", Type: client.TypeProfile, Kind: "contact", Key: "contact_channel",
		Content: "Bob wants to be contacted by email during working hours.",
	})
	said := write(t, f, "bob", client.NewMemory{
		UserID: "bob", Type: client.TypeProfile, Kind: "preference", Key: "contact_channel",
		Content: "From now on, reach me on WeChat instead of email.",
	})
	if said.AgentID != "user:bob" || said.Status != client.StatusActive || said.Supersedes != byBot.ID {
		t.Fatalf("bob's word stored by %s as %s superseding %q; want user:bob, active, superseding %s", said.AgentID, said.Status, said.Supersedes, byBot.ID)
	}
	for _, agent := range []string{"support-bot", "order-bot"} {
		got := recalledIDs(recall(t, f, agent, client.RecallRequest{UserID: "bob", Query: "How does Bob want to be contacted?"}))
		if !has(got, said.ID) || has(got, byBot.ID) {
			t.Errorf("%s recalls %v: want bob's word %s, not the superseded %s", agent, got, said.ID, byBot.ID)
		}
		c := f.Client(t, agent)
		if _, err := c.Get(t.Context(), said.ID); err != nil {
			t.Errorf("%s reads bob's word: %v", agent, err)
		}
		faxes := "Bob wants faxes."
		if _, err := c.Update(t.Context(), said.ID, 0, client.UpdateRequest{Content: &faxes}); client.Code(err) != "forbidden" {
			t.Errorf("%s changes bob's word: %v, want forbidden", agent, err)
		}
		if _, err := c.Delete(t.Context(), said.ID); client.Code(err) != "forbidden" {
			t.Errorf("%s deletes bob's word: %v, want forbidden", agent, err)
		}
	}
	if _, err := f.Client(t, "alice").Get(t.Context(), said.ID); client.Code(err) != "not_found" {
		t.Errorf("alice reads bob's word: %v, want not_found", err)
	}
}
