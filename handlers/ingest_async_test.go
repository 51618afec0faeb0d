package handlers_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/workingmemory"
)

// waitJob polls a job until it is no longer queued.
func waitJob(t *testing.T, f *apptest.Fixture, who, id string) client.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	st, err := f.Client(t, who).WaitJob(ctx, id, 100*time.Millisecond)
	if err != nil {
		t.Fatalf("job %s: %+v, %v", id, st, err)
	}
	return st
}

// The budget case through the queue: two conversations ingested
// asynchronously, one user's jobs applied in order; a replayed request with
// the same Idempotency-Key is the same job and writes nothing new.
func TestIngestAsyncBudgetSupersedes(t *testing.T) {
	f := apptest.Start(t)
	const bot = "order-bot"
	submit := func(key, text string) client.Job {
		t.Helper()
		st, err := f.Client(t, bot).IngestAsync(t.Context(), client.IngestRequest{UserID: "alice", IdempotencyKey: key, Turns: []client.Turn{
			{Role: memory.RoleUser, Content: text},
		}})
		if err != nil || st.ID == "" || st.Kind != workingmemory.JobIngest {
			t.Fatalf("ingest async: job %+v, %v", st, err)
		}
		return st
	}
	one := submit("conv-1", "我们的预算是10万。")
	two := submit("conv-2", "Our budget is now 150k.")
	if again := submit("conv-1", "我们的预算是10万。"); again.ID != one.ID {
		t.Errorf("replayed ingest = job %s, want %s", again.ID, one.ID)
	}
	first, second := waitJob(t, f, bot, one.ID), waitJob(t, f, bot, two.ID)
	if first.Status != memory.JobDone || second.Status != memory.JobDone || len(first.Memories) != 1 || len(second.Memories) != 1 {
		t.Fatalf("jobs = %+v / %+v", first, second)
	}
	got := recall(t, f, bot, client.RecallRequest{UserID: "alice", Query: "What is the budget?"})
	if len(got.Memories) == 0 || got.Memories[0].Memory.ID != second.Memories[0].ID || !strings.Contains(got.Context, "150,000") || strings.Contains(got.Context, "100,000") {
		t.Fatalf("recall = %v, context %q", recalledIDs(got), got.Context)
	}
	budgets := list(t, f, bot, "user_id=alice&kind=budget&status=superseded")
	if len(budgets) != 1 || budgets[0].ID != first.Memories[0].ID || budgets[0].ValidTo == nil {
		t.Errorf("superseded budgets = %+v", budgets)
	}
	// Chit-chat through the queue: done, nothing written.
	chat := submit("chat", "Thanks, bye!")
	if st := waitJob(t, f, bot, chat.ID); st.Status != memory.JobDone || len(st.Memories) != 0 {
		t.Errorf("chit-chat job = %+v", st)
	}
}

// A job that fails when applied tells its owner the code and message the
// API answers the same error with; the cause's own words stay in the
// dead-letter stream.
func TestFailedJobSpeaksLikeTheAPI(t *testing.T) {
	f := apptest.Start(t)
	agent := agentOf(f, "support-bot")
	// Accepted jobs are validated first: this one reaches the queue only
	// because it is put there directly, as a job written by an older
	// version of the service could be.
	payload, err := json.Marshal([]memory.NewMemory{{UserID: "alice", Type: memory.TypeSemantic, Content: ""}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.App.Queue.Enqueue(t.Context(), memory.Job{
		Kind: memory.JobMemories, Tenant: f.Tenant, UserID: "alice", Principal: agent,
		AcceptedAt: time.Now().UTC(), Payload: payload, Sent: payload,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := waitJob(t, f, "support-bot", st.ID)
	if got.Status != memory.JobFailed || got.ErrorCode != "invalid_argument" || !strings.Contains(got.Error, "content") {
		t.Errorf("job = %+v; want failed with invalid_argument about the content", got)
	}
}

// Ingestion, queued or not, passes the write guard. What it refuses (a
// password, an ID number) is left out and counted, not the rest of the
// conversation lost: the synchronous answer counts it in refused, the job
// reports it as refused for the guard; a phone number is masked.
func TestIngestAsyncPassesTheGuard(t *testing.T) {
	f := apptest.Start(t)
	const bot = "support-bot"
	turns := func(texts ...string) []client.Turn {
		out := make([]client.Turn, len(texts))
		for i, text := range texts {
			out[i] = client.Turn{Role: memory.RoleUser, Content: text}
		}
		return out
	}
	ingest := func(ts []client.Turn) client.Job {
		t.Helper()
		st, err := f.Client(t, bot).IngestAsync(t.Context(), client.IngestRequest{UserID: "carol", Turns: ts})
		if err != nil {
			t.Fatalf("ingest async: %v", err)
		}
		return waitJob(t, f, bot, st.ID)
	}
	for _, secret := range []string{
		"Remember that my password is Tr0ub4dor&3x and my card is 4111 1111 1111 1111.",
		"Remember that my ID number is 11010519491231002X.",
	} {
		ts := turns("I prefer to be contacted on WeChat.", secret)
		got, err := f.Client(t, bot).Ingest(t.Context(), client.IngestRequest{UserID: "carol", Turns: ts})
		if err != nil || got.Refused != 1 || len(got.Memories) == 0 {
			t.Errorf("sync ingest with %q: %+v, %v; want the preference written and one memory refused", secret, got, err)
		}
		st := ingest(ts)
		reasons := map[string]int{}
		for _, m := range st.Memories {
			reasons[m.Outcome+"/"+m.Reason]++
		}
		if st.Status != memory.JobDone || reasons["refused/guard"] != 1 || len(st.Memories) < 2 {
			t.Errorf("queued ingest with %q = %+v, want done with one memory refused for the guard", secret, st)
		}
	}
	st := ingest(turns("Remember that my phone is 13812345678, call me there."))
	if st.Status != memory.JobDone || len(st.Memories) == 0 {
		t.Fatalf("queued ingest of a phone = %+v, want done", st)
	}
	for _, m := range list(t, f, bot, "user_id=carol") {
		if strings.Contains(m.Content, "13812345678") || strings.Contains(m.Content, "Tr0ub4dor") || strings.Contains(m.Content, "11010519491231002X") {
			t.Errorf("stored %q", m.Content)
		}
	}
}

// A user's queued ingestion keeps what policy lets the user write, as the
// synchronous one does: a conversation of notes alone is done with each
// note refused, not failed; a mixed one writes the preference and reports
// the note.
func TestUserIngestAsyncReportsRefused(t *testing.T) {
	f := apptest.Start(t)
	ingest := func(text string) client.Job {
		t.Helper()
		st, err := f.Client(t, "alice").IngestAsync(t.Context(), client.IngestRequest{UserID: "alice", Turns: []client.Turn{{Role: memory.RoleUser, Content: text}}})
		if err != nil {
			t.Fatalf("ingest async: %v", err)
		}
		return waitJob(t, f, "alice", st.ID)
	}
	outcomes := func(st client.Job) []string {
		var out []string
		for _, m := range st.Memories {
			out = append(out, m.Outcome)
		}
		slices.Sort(out)
		return out
	}
	notes := ingest("Remember that my budget is 90k CNY.")
	if notes.Status != memory.JobDone || !slices.Equal(outcomes(notes), []string{workingmemory.OutcomeRefused}) || notes.Memories[0].Reason != workingmemory.ReasonPolicy {
		t.Errorf("notes only: %+v, want done with the note refused", notes)
	}
	mixed := ingest("Remember that my budget is 95k CNY. I prefer email.")
	if got := outcomes(mixed); mixed.Status != memory.JobDone || !slices.Contains(got, workingmemory.OutcomeRefused) || !slices.Contains(got, memory.OutcomeCreated) {
		t.Errorf("mixed: %+v (outcomes %v), want the preference created and the note refused", mixed, got)
	}
}
