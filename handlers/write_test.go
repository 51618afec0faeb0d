package handlers_test

import (
	"net/http"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
)

// write writes one memory as who and returns it, created or reinforced.
func write(t *testing.T, f *apptest.Fixture, who string, m memory.NewMemory) memory.Memory {
	t.Helper()
	r := f.Do(t, who, http.MethodPost, "/v1/memories", m)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("write as %s: %d %s", who, r.Status, r.Body)
	}
	var out memory.Memory
	r.Decode(t, &out)
	return out
}

// writeBatch posts a batch and returns its response.
func writeBatch(t *testing.T, f *apptest.Fixture, who string, ms ...memory.NewMemory) (int, writeResponse) {
	t.Helper()
	r := f.Do(t, who, http.MethodPost, "/v1/memories", map[string]any{"memories": ms})
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("write batch: %d %s", r.Status, r.Body)
	}
	var out writeResponse
	r.Decode(t, &out)
	return r.Status, out
}

type writeResponse struct {
	Memories []memory.Memory      `json:"memories"`
	Results  []memory.WriteResult `json:"results"`
}

func TestChitChatIsNotStored(t *testing.T) {
	f := apptest.Start(t)
	status, got := writeBatch(t, f, "support-bot",
		memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "Thanks a lot!"},
		memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "好的，谢谢"},
		memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "👍 ..."},
	)
	want := []string{memory.ReasonChitChat, memory.ReasonChitChat, memory.ReasonContentFree}
	if status != http.StatusOK || len(got.Memories) != 0 || len(got.Results) != 3 {
		t.Fatalf("status %d, %d memories, %d results; want 200, none, 3", status, len(got.Memories), len(got.Results))
	}
	for i, r := range got.Results {
		if r.Outcome != memory.OutcomeSkipped || r.Reason != want[i] || r.ID != "" {
			t.Errorf("result %d = %+v, want skipped: %s", i, r, want[i])
		}
	}
	if ms := list(t, f, "support-bot", "user_id=alice"); len(ms) != 0 {
		t.Errorf("stored %d memories, want none", len(ms))
	}

	// A single chit-chat write says why it stored nothing.
	r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "ok"})
	var one memory.WriteResult
	if r.Decode(t, &one); r.Status != http.StatusOK || one.Outcome != memory.OutcomeSkipped || one.Reason != memory.ReasonChitChat {
		t.Errorf("single chit-chat: %d %s", r.Status, r.Body)
	}

	// Mixed with real content, only the content is stored.
	status, got = writeBatch(t, f, "support-bot",
		memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "ok"},
		memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "Alice wants her order 881 shipped to Berlin"},
	)
	if status != http.StatusCreated || len(got.Memories) != 1 || got.Results[1].Outcome != memory.OutcomeCreated || got.Results[1].ID != got.Memories[0].ID {
		t.Errorf("mixed batch: %d %+v", status, got)
	}
}

func TestInferredMemoryIsACandidateUntilConfirmed(t *testing.T) {
	f := apptest.Start(t)
	r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "fact", Source: memory.SourceInferred,
		Content: "Alice probably works in the purchasing department of Acme",
	})
	var m memory.Memory
	if r.Decode(t, &m); r.Status != http.StatusCreated || m.Status != memory.StatusCandidate || m.Outcome != memory.OutcomeCreated {
		t.Fatalf("inferred write: %d %s, want a created candidate", r.Status, r.Body)
	}
	got := recall(t, f, "support-bot", memory.RecallRequest{UserID: "alice", Query: "Which department does Alice work in at Acme?"})
	if has(recalledIDs(got), m.ID) {
		t.Errorf("recall returned the unconfirmed candidate %s", m.ID)
	}
}

func TestDuplicateReinforcesInsteadOfAdding(t *testing.T) {
	f := apptest.Start(t)
	first := create(t, f, "support-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "travel", Content: "Alice prefers window seats on long flights.",
	})
	r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "travel", Content: "  alice PREFERS window seats on long flights!!",
	})
	var again memory.Memory
	r.Decode(t, &again)
	if r.Status != http.StatusOK || again.Outcome != memory.OutcomeReinforced || again.ID != first.ID {
		t.Fatalf("repeat: %d %s, want 200 reinforced %s", r.Status, r.Body, first.ID)
	}
	if again.EvidenceCount != 2 || again.Importance <= first.Importance || !again.UpdatedAt.After(first.UpdatedAt) || again.Version != first.Version {
		t.Errorf("reinforced = evidence %d, importance %v→%v, updated %v→%v, version %d; want 2, higher, later, unchanged",
			again.EvidenceCount, first.Importance, again.Importance, first.UpdatedAt, again.UpdatedAt, again.Version)
	}
	if ms := list(t, f, "support-bot", "user_id=alice"); len(ms) != 1 {
		t.Errorf("%d memories stored, want 1", len(ms))
	}

	// Another type, or another user, is another memory.
	other := create(t, f, "support-bot", memory.NewMemory{
		UserID: "bob", Type: memory.TypeSemantic, Kind: "travel", Content: "Alice prefers window seats on long flights.",
	})
	if other.ID == first.ID || other.Outcome != memory.OutcomeCreated {
		t.Errorf("bob's memory reinforced alice's")
	}

	// A repeat inside one batch reinforces the memory the batch creates.
	_, got := writeBatch(t, f, "support-bot",
		memory.NewMemory{UserID: "carol", Type: memory.TypeEpisodic, Content: "Carol reported that the invoice PDF is blank"},
		memory.NewMemory{UserID: "carol", Type: memory.TypeEpisodic, Content: "Carol reported that the invoice PDF is blank."},
	)
	if got.Results[0].Outcome != memory.OutcomeCreated || got.Results[1].Outcome != memory.OutcomeReinforced ||
		got.Results[1].ID != got.Results[0].ID || got.Memories[1].EvidenceCount != 2 {
		t.Errorf("batch with a repeat: %+v", got.Results)
	}
}

func TestDifferentAmountsSupersedeNotReinforce(t *testing.T) {
	f := apptest.Start(t)
	budget := func(content string) memory.Memory {
		t.Helper()
		return write(t, f, "order-bot", memory.NewMemory{
			UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: content,
		})
	}
	v1 := budget("Alice's purchasing budget is 100k")
	v2 := budget("Alice's purchasing budget is 150k")
	if v2.Outcome != memory.OutcomeCreated || v2.ID == v1.ID || v2.Version != 2 || v2.Supersedes != v1.ID {
		t.Fatalf("150k after 100k = %+v, want a new version 2 superseding %s", v2, v1.ID)
	}
	v3 := budget("alice's purchasing budget is 150k.")
	if v3.Outcome != memory.OutcomeReinforced || v3.ID != v2.ID {
		t.Errorf("150k again = %s %s, want reinforced %s", v3.Outcome, v3.ID, v2.ID)
	}
	// A different slot is never the same fact, whatever the words.
	other := create(t, f, "order-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Key: "budget_2027", Content: "Alice's purchasing budget is 150k",
	})
	if other.Outcome != memory.OutcomeCreated {
		t.Errorf("another key reinforced: %+v", other)
	}
}

func TestPreferenceBecomesActiveAfterTwoSessions(t *testing.T) {
	f := apptest.Start(t)
	pref := func(session string) memory.Memory {
		t.Helper()
		return write(t, f, "support-bot", memory.NewMemory{
			UserID: "alice", SessionID: session, Type: memory.TypeProfile, Kind: "preference", Key: "drink",
			Content: "Alice prefers green tea without sugar.",
		})
	}
	ask := memory.RecallRequest{UserID: "alice", SessionID: "s-9", Query: "What does Alice like to drink? Green tea?"}

	first := pref("s-1")
	if first.Status != memory.StatusCandidate || first.Outcome != memory.OutcomeCreated {
		t.Fatalf("first observation = %s %s, want a created candidate", first.Outcome, first.Status)
	}
	if has(recalledIDs(recall(t, f, "support-bot", ask)), first.ID) {
		t.Fatal("recall returned the preference after one session")
	}
	same := pref("s-1")
	if same.ID != first.ID || same.Status != memory.StatusCandidate || same.EvidenceCount != 2 {
		t.Fatalf("second observation in the same session = %s %s evidence %d, want the candidate, reinforced", same.ID, same.Status, same.EvidenceCount)
	}
	if has(recalledIDs(recall(t, f, "support-bot", ask)), first.ID) {
		t.Fatal("recall returned the preference seen in one session only")
	}
	second := pref("s-2")
	if second.ID != first.ID || second.Status != memory.StatusActive || second.Outcome != memory.OutcomeReinforced {
		t.Fatalf("observation in a second session = %s %s %s, want %s reinforced and active", second.ID, second.Outcome, second.Status, first.ID)
	}
	if !has(recalledIDs(recall(t, f, "support-bot", ask)), first.ID) {
		t.Error("recall does not return the preference after two sessions")
	}
}

func TestUserConfirmsACandidate(t *testing.T) {
	f := apptest.Start(t)
	old := create(t, f, "support-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeProfile, Kind: "employer", Key: "employer", Content: "Alice works for Initech.",
	})
	guess := create(t, f, "support-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeProfile, Kind: "employer", Key: "employer", Source: memory.SourceInferred,
		Content: "Alice has probably moved to Acme Corp, judging by her new e-mail signature.",
	})
	if guess.Status != memory.StatusCandidate {
		t.Fatalf("inferred memory status %s, want candidate", guess.Status)
	}
	// The old fact still holds its slot until the user confirms.
	if got := getMemory(t, f, "support-bot", old.ID); got.Status != memory.StatusActive {
		t.Fatalf("the inference displaced the active fact: %s", got.Status)
	}
	path := "/v1/memories/" + guess.ID + "/confirm"
	for who, want := range map[string]int{"support-bot": http.StatusForbidden, "bob": http.StatusNotFound} {
		if r := f.Do(t, who, http.MethodPost, path, nil); r.Status != want {
			t.Errorf("confirm as %s = %d %s, want %d", who, r.Status, r.Body, want)
		}
	}
	r := f.Do(t, "alice", http.MethodPost, path, nil)
	var confirmed memory.Memory
	if r.Decode(t, &confirmed); r.Status != http.StatusOK || confirmed.Status != memory.StatusActive || confirmed.Supersedes != old.ID || confirmed.Version != 2 {
		t.Fatalf("confirm as alice = %d %s, want active version 2 superseding %s", r.Status, r.Body, old.ID)
	}
	if got := getMemory(t, f, "support-bot", old.ID); got.Status != memory.StatusSuperseded {
		t.Errorf("old fact is %s after the confirmation, want superseded", got.Status)
	}
	// Confirming again changes nothing; a superseded memory cannot be.
	if r := f.Do(t, "alice", http.MethodPost, path, nil); r.Status != http.StatusOK {
		t.Errorf("confirm again = %d", r.Status)
	}
	if r := f.Do(t, "alice", http.MethodPost, "/v1/memories/"+old.ID+"/confirm", nil); r.Status != http.StatusConflict {
		t.Errorf("confirm a superseded memory = %d, want 409", r.Status)
	}
}

func getMemory(t *testing.T, f *apptest.Fixture, who, id string) memory.Memory {
	t.Helper()
	r := f.Do(t, who, http.MethodGet, "/v1/memories/"+id, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get %s as %s: %d %s", id, who, r.Status, r.Body)
	}
	var m memory.Memory
	r.Decode(t, &m)
	return m
}
