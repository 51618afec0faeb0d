package handlers_test

import (
	"net/http"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
)

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
