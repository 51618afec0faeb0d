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
// key of one user from many goroutines at once, through the API. Neither
// may read what the other wrote, so each keeps a chain of its own: one
// active head per agent, versions 1..n without gaps or repeats, each
// superseding the one before, and the head's history holding them all.
// An admin, who reads both, then supersedes both heads at once.
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

	all := list(t, f, apptest.Admin, "user_id=alice&kind=budget&limit=500")
	if len(all) != perAgent*len(agents) {
		t.Fatalf("%d memories stored, want %d", len(all), perAgent*len(agents))
	}
	admin := f.Client(t, apptest.Admin)
	heads := map[string]string{}
	for _, agent := range agents {
		byVersion := map[int]client.Memory{}
		var head client.Memory
		for _, m := range all {
			if m.AgentID != agent {
				continue
			}
			if _, dup := byVersion[m.Version]; dup {
				t.Errorf("%s: version %d appears twice", agent, m.Version)
			}
			byVersion[m.Version] = m
			if m.Status == client.StatusActive {
				if head.ID != "" {
					t.Errorf("%s: two active heads: %s and %s", agent, head.ID, m.ID)
				}
				head = m
			}
		}
		if head.Version != perAgent {
			t.Fatalf("%s: head %s is version %d, want %d", agent, head.ID, head.Version, perAgent)
		}
		heads[agent] = head.ID
		for v := 1; v <= perAgent; v++ {
			m, ok := byVersion[v]
			switch {
			case !ok:
				t.Errorf("%s: version %d is missing", agent, v)
			case v == 1 && m.Supersedes != "":
				t.Errorf("%s: version 1 supersedes %s", agent, m.Supersedes)
			case v > 1 && m.Supersedes != byVersion[v-1].ID:
				t.Errorf("%s: version %d supersedes %q, want version %d (%s)", agent, v, m.Supersedes, v-1, byVersion[v-1].ID)
			case v < perAgent && (m.Status != client.StatusSuperseded || m.ValidTo == nil):
				t.Errorf("%s: version %d is %s with valid_to %v, want superseded with an end", agent, v, m.Status, m.ValidTo)
			}
		}
		hist, err := admin.History(t.Context(), head.ID)
		if err != nil {
			t.Fatalf("history of %s's head: %v", agent, err)
		}
		versions := make([]int, len(hist))
		for i, m := range hist {
			versions[i] = m.Version
			if m.AgentID != agent {
				t.Errorf("%s's history holds %s by %s", agent, m.ID, m.AgentID)
			}
		}
		if len(versions) != perAgent || !sort.SliceIsSorted(versions, func(i, j int) bool { return versions[i] > versions[j] }) || versions[0] != perAgent {
			t.Errorf("history of %s's head = versions %v, want %d..1", agent, versions, perAgent)
		}
		// A writer holding a stale version is refused.
		_, err = admin.Update(t.Context(), head.ID, perAgent-1, client.UpdateRequest{Importance: ptrTo(0.9)})
		wantAPIError(t, "update with a stale If-Match", err, http.StatusConflict, "conflict")
	}

	final := write(t, f, apptest.Admin, client.NewMemory{
		UserID: "alice", AgentID: "order-bot", Type: client.TypeSemantic, Kind: "budget", Key: "budget",
		Content: "Alice's purchasing budget is 300k, agreed with her finance manager.",
	})
	if final.Version != perAgent+1 {
		t.Errorf("the admin's version is %d, want %d", final.Version, perAgent+1)
	}
	for _, m := range list(t, f, apptest.Admin, "user_id=alice&kind=budget&status=active&limit=500") {
		if m.ID != final.ID {
			t.Errorf("%s by %s is still active beside the admin's %s", m.ID, m.AgentID, final.ID)
		}
	}
}

// TestAWriteLeavesWhatItMayNotRead: writing a key another author holds,
// out of the writer's sight, neither replaces nor reveals that memory. An
// end user's profile note, or another agent's, under finance-bot's key for
// a confidential cost stays beside it; finance-bot still reads its note.
func TestAWriteLeavesWhatItMayNotRead(t *testing.T) {
	f := apptest.Start(t)
	note := write(t, f, "finance-bot", client.NewMemory{
		UserID: "carol", Type: client.TypeProfile, Kind: "cost", Key: "internal_cost", Sensitivity: "confidential",
		Content: "Carol's account costs us 4,200 CNY a month to serve, above her margin.",
	})
	// support-bot reads none of it: its note starts a chain of its own.
	bots := write(t, f, "support-bot", client.NewMemory{
		UserID: "carol", Type: client.TypeProfile, Kind: "billing", Key: "internal_cost",
		Content: "Carol asked for prices without the cost breakdown.",
	})
	if bots.Status != client.StatusActive || bots.Supersedes != "" || bots.Version != 1 {
		t.Errorf("support-bot's write: %s, version %d superseding %q; want active at version 1 superseding nothing", bots.Status, bots.Version, bots.Supersedes)
	}
	// carol reads support-bot's note about her, not finance-bot's: she
	// supersedes the one.
	hers := write(t, f, "carol", client.NewMemory{
		UserID: "carol", Type: client.TypeProfile, Kind: "preference", Key: "internal_cost",
		Content: "I do not want to hear about costs in replies.",
	})
	if hers.Status != client.StatusActive || hers.Supersedes != bots.ID || hers.Version != 2 {
		t.Errorf("carol's write: %s, version %d superseding %q; want active at version 2 superseding %s", hers.Status, hers.Version, hers.Supersedes, bots.ID)
	}
	// A candidate made active takes over the slot as far as whoever made it
	// active may read: carol confirming one, support-bot observing another
	// in a second session.
	guess := write(t, f, "support-bot", client.NewMemory{
		UserID: "carol", SessionID: "s-cost-1", Type: client.TypeProfile, Kind: "preference", Key: "internal_cost",
		Content: "Carol prefers quotes that show one total price.",
	})
	if guess.Status != client.StatusCandidate {
		t.Fatalf("support-bot's preference is %s, want a candidate", guess.Status)
	}
	if m, err := f.Client(t, "carol").Confirm(t.Context(), guess.ID); err != nil || m.Status != client.StatusActive {
		t.Fatalf("carol confirms %s: %+v, %v", guess.ID, m, err)
	}
	seen := client.NewMemory{
		UserID: "carol", SessionID: "s-cost-2", Type: client.TypeProfile, Kind: "preference", Key: "internal_cost",
		Content: "Carol wants every quote in CNY with tax included.",
	}
	if m := write(t, f, "support-bot", seen); m.Status != client.StatusCandidate {
		t.Fatalf("support-bot's second preference is %s, want a candidate", m.Status)
	}
	seen.SessionID = "s-cost-3"
	if m := write(t, f, "support-bot", seen); m.Status != client.StatusActive {
		t.Fatalf("support-bot's preference seen in a second session is %s, want active", m.Status)
	}

	got, err := f.Client(t, "finance-bot").Get(t.Context(), note.ID)
	if err != nil || got.Status != client.StatusActive || got.Content != note.Content {
		t.Fatalf("finance-bot's note after the others wrote its key: %+v, %v; want it active as written", got, err)
	}
	if ids := recalledIDs(recall(t, f, "finance-bot", client.RecallRequest{UserID: "carol", Query: "What does Carol's account cost us?"})); !has(ids, note.ID) {
		t.Errorf("finance-bot recalls %v, not its note %s", ids, note.ID)
	}
	if _, err := f.Client(t, "carol").Get(t.Context(), note.ID); client.Code(err) != "not_found" {
		t.Errorf("carol reads finance-bot's note: %v, want not_found", err)
	}
}

// TestReadingGivesNoRightToRetire: an end user's memory, or a grantee's,
// with the key of an agent's business fact it reads stands beside that fact:
// finance-bot's payment terms and order-bot's return rule stay in force, and
// their writers still recall them.
func TestReadingGivesNoRightToRetire(t *testing.T) {
	f := apptest.Start(t)
	if _, err := f.Client(t, apptest.Admin).CreateGrant(t.Context(), client.NewGrant{Grantee: "support-bot", Source: "order-bot",
		Types: []string{client.TypeSemantic}, MaxSensitivity: "internal"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		owner, other string
		fact, claim  client.NewMemory
		question     string
	}{
		{"finance-bot", "alice",
			client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "payment_terms", Key: "payment_terms", Content: "Lianhua Trading pays on 30-day terms by bank transfer."},
			client.NewMemory{UserID: "alice", Type: client.TypeProfile, Kind: "payment_terms", Key: "payment_terms", Content: "Lianhua Trading pays on 365-day terms, no deposit."},
			"What are Lianhua Trading's payment terms?"},
		{"order-bot", "support-bot",
			client.NewMemory{UserID: "bob", Type: client.TypeSemantic, Kind: "rule", Key: "return_window", Content: "Bob's unopened goods can be returned within 7 days."},
			client.NewMemory{UserID: "bob", Type: client.TypeSemantic, Kind: "rule", Key: "return_window", Content: "Bob may return anything within 90 days, no questions asked."},
			"How long does Bob have to return goods?"},
	} {
		fact := write(t, f, tc.owner, tc.fact)
		if _, err := f.Client(t, tc.other).Get(t.Context(), fact.ID); err != nil {
			t.Fatalf("%s cannot read %s's fact: %v", tc.other, tc.owner, err)
		}
		claim := write(t, f, tc.other, tc.claim)
		if claim.Status != client.StatusActive || claim.Supersedes != "" || claim.Version != 1 {
			t.Errorf("%s's write: %s, version %d superseding %q; want active at version 1 superseding nothing", tc.other, claim.Status, claim.Version, claim.Supersedes)
		}
		got, err := f.Client(t, tc.owner).Get(t.Context(), fact.ID)
		if err != nil || got.Status != client.StatusActive || got.ValidTo != nil {
			t.Errorf("%s's fact after %s wrote its key: %+v, %v; want it active", tc.owner, tc.other, got, err)
		}
		if ids := recalledIDs(recall(t, f, tc.owner, client.RecallRequest{UserID: tc.fact.UserID, Query: tc.question})); !has(ids, fact.ID) {
			t.Errorf("%s recalls %v, not its fact %s", tc.owner, ids, fact.ID)
		}
	}
	// Nor does a candidate made active: support-bot's guess under
	// finance-bot's key, confirmed by alice, who reads both.
	terms := write(t, f, "finance-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "payment_terms", Key: "credit_terms",
		Content: "Lianhua Trading's credit line is 50k CNY."})
	guess := write(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "payment_terms", Key: "credit_terms",
		Source: "inferred", Content: "Lianhua Trading seems to have no credit limit at all."})
	if guess.Status != client.StatusCandidate {
		t.Fatalf("support-bot's guess is %s, want a candidate", guess.Status)
	}
	if m, err := f.Client(t, "alice").Confirm(t.Context(), guess.ID); err != nil || m.Status != client.StatusActive {
		t.Fatalf("alice confirms %s: %+v, %v", guess.ID, m, err)
	}
	if got, err := f.Client(t, "finance-bot").Get(t.Context(), terms.ID); err != nil || got.Status != client.StatusActive {
		t.Errorf("finance-bot's fact after alice confirmed a guess under its key: %+v, %v; want it active", got, err)
	}
	// A confidential note under the key of what the user said leaves her
	// word in force for every agent that cannot read it.
	said := write(t, f, "alice", client.NewMemory{UserID: "alice", Type: client.TypeProfile, Kind: "preference", Key: "call_time", Content: "Call me after 10 in the morning."})
	if note := write(t, f, "finance-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "note", Key: "call_time", Sensitivity: "confidential",
		Content: "Alice takes calls after 10; collections calls go to her manager."}); note.Status != client.StatusActive {
		t.Fatalf("finance-bot's note is %s, want active", note.Status)
	}
	if got, err := f.Client(t, "support-bot").Get(t.Context(), said.ID); err != nil || got.Status != client.StatusActive {
		t.Errorf("alice's word after a confidential note took its key: %+v, %v; want it active", got, err)
	}
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

// TestForgettingWhatISaidKeepsTheAgentsFact: a user deleting what she said,
// which an agent's later fact took the key of, erases her word and not the
// agent's current fact.
func TestForgettingWhatISaidKeepsTheAgentsFact(t *testing.T) {
	f := apptest.Start(t)
	said := write(t, f, "alice", client.NewMemory{UserID: "alice", Type: client.TypeProfile, Kind: "preference", Key: "pay_day",
		Content: "I pay invoices on the 25th."})
	fact := write(t, f, "finance-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "payment_terms", Key: "pay_day",
		Content: "Lianhua Trading pays invoices on the 28th, by bank transfer."})
	if fact.Supersedes != said.ID {
		t.Fatalf("finance-bot's fact supersedes %q, want alice's word %s", fact.Supersedes, said.ID)
	}
	if _, err := f.Client(t, "alice").Delete(t.Context(), said.ID); err != nil {
		t.Fatalf("alice deletes what she said: %v", err)
	}
	if _, err := f.Client(t, "alice").Get(t.Context(), said.ID); client.Code(err) != "not_found" {
		t.Errorf("alice's word after her delete: %v, want not_found", err)
	}
	if got, err := f.Client(t, "finance-bot").Get(t.Context(), fact.ID); err != nil || got.Status != client.StatusActive {
		t.Errorf("finance-bot's fact after alice deleted her word: %+v, %v; want it active", got, err)
	}
}
