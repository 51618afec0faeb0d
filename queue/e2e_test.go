package queue_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"mneme/internal/apptest"
	"mneme/memory"
)

// TestAsyncWritesEndToEnd goes through the real router, queue, workers,
// policy and graph: writes of one user apply in order, a retried request is
// the same job, a replayed job creates nothing new, and an event older than
// its slot's head does not replace it.
func TestAsyncWritesEndToEnd(t *testing.T) {
	f := apptest.Start(t)
	const bot = "order-bot"
	post := func(content, idem string) memory.JobStatus {
		t.Helper()
		r := f.Do(t, bot, "POST", "/v1/memories?async=true", memory.NewMemory{
			UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: content,
		}, "Idempotency-Key", idem)
		if r.Status != http.StatusAccepted {
			t.Fatalf("async write: %d %s", r.Status, r.Body)
		}
		if loc := r.Header.Get("Location"); loc == "" {
			t.Error("202 without Location")
		}
		var st memory.JobStatus
		r.Decode(t, &st)
		return st
	}
	wait := func(id string) memory.JobStatus {
		t.Helper()
		var st memory.JobStatus
		waitFor(t, "job "+id, func() bool {
			r := f.Do(t, bot, "GET", "/v1/jobs/"+id, nil)
			r.Decode(t, &st)
			return r.Status == http.StatusOK && st.Status != memory.JobQueued && st.Status != memory.JobRunning
		})
		return st
	}

	first := post("Alice's budget is 100k", "budget-1")
	second := post("Alice's budget is 150k", "budget-2")
	if again := post("Alice's budget is 100k", "budget-1"); again.ID != first.ID {
		t.Errorf("retried request: job %s, want %s", again.ID, first.ID)
	}
	// The same key with another body, or from another sender, is a client's
	// mistake: answering with the first job would drop this write silently.
	code := func(r apptest.Response) string {
		var e struct{ Code string }
		_ = json.Unmarshal(r.Body, &e)
		return e.Code
	}
	reuse := memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's budget is 999k"}
	if r := f.Do(t, bot, "POST", "/v1/memories?async=true", reuse, "Idempotency-Key", "budget-1"); r.Status != http.StatusUnprocessableEntity || code(r) != "idempotency_key_reused" {
		t.Errorf("the key again with another body: %d %s, want 422 idempotency_key_reused", r.Status, r.Body)
	}
	reuse.Content = "Alice's budget is 100k"
	if r := f.Do(t, "support-bot", "POST", "/v1/memories?async=true", reuse, "Idempotency-Key", "budget-1"); r.Status != http.StatusUnprocessableEntity || code(r) != "idempotency_key_reused" {
		t.Errorf("the key again from another agent: %d %s, want 422 idempotency_key_reused", r.Status, r.Body)
	}
	a, b := wait(first.ID), wait(second.ID)
	for _, st := range []memory.JobStatus{a, b} {
		if st.Status != memory.JobDone || len(st.Memories) != 1 || st.Memories[0].Outcome != memory.OutcomeCreated {
			t.Fatalf("job %+v, want done with one created memory", st)
		}
	}
	var head memory.Memory
	if r := f.Do(t, bot, "GET", "/v1/memories/"+b.Memories[0].ID, nil); r.Status != http.StatusOK {
		t.Fatalf("get head: %d", r.Status)
	} else {
		r.Decode(t, &head)
	}
	if head.Version != 2 || head.Supersedes != a.Memories[0].ID || head.Status != memory.StatusActive {
		t.Errorf("head: v%d supersedes %s, %s; want v2 superseding %s, active", head.Version, head.Supersedes, head.Status, a.Memories[0].ID)
	}
	if !head.ValidFrom.Equal(second.AcceptedAt) {
		t.Errorf("head valid from %v, want the acceptance time %v", head.ValidFrom, second.AcceptedAt)
	}

	// A worker that crashed between commit and acknowledgement replays the
	// job, whose memory carries the key its header made: nothing new is
	// written, the same memory answers.
	payload, _ := json.Marshal([]memory.NewMemory{{UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's budget is 150k", IdempotencyKey: "budget-2:0"}})
	p := memory.Principal{Tenant: f.Tenant, Kind: memory.KindAgent, ID: bot}
	replay := memory.Job{ID: second.ID, Kind: memory.JobMemories, Tenant: f.Tenant, UserID: "alice", Principal: p, AcceptedAt: second.AcceptedAt, Payload: payload}
	res, err := f.App.Service.ApplyMemoryJobs(t.Context(), []memory.Job{replay})
	if err != nil || res[0].Err != nil {
		t.Fatalf("replay: %v %v", err, res[0].Err)
	}
	if got := res[0].Memories; len(got) != 1 || got[0].ID != head.ID || got[0].Outcome != memory.OutcomeDuplicate {
		t.Errorf("replayed job: %+v, want duplicate of %s", got, head.ID)
	}

	// An event accepted before the head was written arrives late: it does
	// not overwrite the head.
	payload, _ = json.Marshal([]memory.NewMemory{{UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's budget is 90k"}})
	late, err := f.App.Queue.Enqueue(t.Context(), memory.Job{
		Kind: memory.JobMemories, Tenant: f.Tenant, UserID: "alice", Principal: p,
		AcceptedAt: first.AcceptedAt.Add(-time.Hour), Payload: payload,
	})
	if err != nil {
		t.Fatal(err)
	}
	st := wait(late.ID)
	if st.Status != memory.JobDone || len(st.Memories) != 1 || st.Memories[0].Outcome != memory.OutcomeStale || st.Memories[0].ID != head.ID {
		t.Errorf("late event: %+v, want done, stale against %s", st, head.ID)
	}
	r := f.Do(t, bot, "GET", "/v1/memories?user_id=alice&status=active", nil)
	var page memory.Page
	r.Decode(t, &page)
	if len(page.Memories) != 1 || page.Memories[0].ID != head.ID {
		t.Errorf("active memories after the late event: %+v, want only %s", page.Memories, head.ID)
	}

	// Bad input and other users' jobs.
	if r := f.Do(t, bot, "POST", "/v1/memories?async=true", map[string]any{"memories": []memory.NewMemory{
		{UserID: "alice", Type: memory.TypeEpisodic, Content: "a"}, {UserID: "bob", Type: memory.TypeEpisodic, Content: "b"},
	}}); r.Status != http.StatusBadRequest {
		t.Errorf("async batch about two users: %d, want 400", r.Status)
	}
	if r := f.Do(t, "support-bot", "GET", "/v1/jobs/"+first.ID, nil); r.Status != http.StatusNotFound {
		t.Errorf("another agent's job: %d, want 404", r.Status)
	}
	if r := f.Do(t, apptest.Admin, "GET", "/v1/jobs/"+first.ID, nil); r.Status != http.StatusOK {
		t.Errorf("admin reads a job: %d, want 200", r.Status)
	}
}
