package handlers_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
	"mneme/workingmemory"
)

// write writes one memory as who through the Go client and returns it,
// created or reinforced.
func write(t *testing.T, f *apptest.Fixture, who string, m client.NewMemory) client.Memory {
	t.Helper()
	w, err := f.Client(t, who).Add(t.Context(), m)
	if err != nil {
		t.Fatalf("write as %s: %v", who, err)
	}
	out := written(t, w)
	if out.Outcome != client.OutcomeCreated && out.Outcome != client.OutcomeReinforced {
		t.Fatalf("write as %s: %+v, want one memory created or reinforced", who, w)
	}
	return out
}

// writeBatch writes a batch as who through the Go client and returns the
// answer: one result per memory, in order.
func writeBatch(t *testing.T, f *apptest.Fixture, who string, ms ...client.NewMemory) client.WriteResponse {
	t.Helper()
	w, err := f.Client(t, who).Add(t.Context(), ms...)
	if err != nil {
		t.Fatalf("write batch as %s: %v", who, err)
	}
	if len(w.Results) != len(ms) {
		t.Fatalf("write batch as %s: %d results for %d memories", who, len(w.Results), len(ms))
	}
	return w
}

func TestChitChatIsNotStored(t *testing.T) {
	f := apptest.Start(t)
	got := writeBatch(t, f, "support-bot",
		client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Content: "Thanks a lot!"},
		client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Content: "好的，谢谢"},
		client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Content: "👍 ..."},
	)
	want := []string{memory.ReasonChitChat, memory.ReasonChitChat, memory.ReasonContentFree}
	if len(got.Memories) != 0 || len(got.Results) != 3 {
		t.Fatalf("%d memories, %d results; want none, 3", len(got.Memories), len(got.Results))
	}
	for i, r := range got.Results {
		if r.Outcome != client.OutcomeSkipped || r.Reason != want[i] || r.ID != "" {
			t.Errorf("result %d = %+v, want skipped: %s", i, r, want[i])
		}
	}
	if ms := list(t, f, "support-bot", "user_id=alice"); len(ms) != 0 {
		t.Errorf("stored %d memories, want none", len(ms))
	}

	// A single chit-chat write says why it stored nothing. The client sends
	// batches; the single form is the API's too.
	r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Content: "ok"})
	var one client.WriteResult
	if r.Decode(t, &one); r.Status != http.StatusOK || one.Outcome != client.OutcomeSkipped || one.Reason != memory.ReasonChitChat {
		t.Errorf("single chit-chat: %d %s", r.Status, r.Body)
	}

	// Mixed with real content, only the content is stored.
	got = writeBatch(t, f, "support-bot",
		client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Content: "ok"},
		client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Content: "Alice wants her order 881 shipped to Berlin"},
	)
	if len(got.Memories) != 1 || got.Results[1].Outcome != client.OutcomeCreated || got.Results[1].ID != got.Memories[0].ID {
		t.Errorf("mixed batch: %+v", got)
	}
}

func TestInferredMemoryIsACandidateUntilConfirmed(t *testing.T) {
	f := apptest.Start(t)
	m := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "fact", Source: memory.SourceInferred,
		Content: "Alice probably works in the purchasing department of Acme",
	})
	if m.Status != client.StatusCandidate || m.Outcome != client.OutcomeCreated {
		t.Fatalf("inferred write: %+v, want a created candidate", m)
	}
	got := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "Which department does Alice work in at Acme?"})
	if has(recalledIDs(got), m.ID) {
		t.Errorf("recall returned the unconfirmed candidate %s", m.ID)
	}
}

func TestDuplicateReinforcesInsteadOfAdding(t *testing.T) {
	f := apptest.Start(t)
	first := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "travel", Content: "Alice prefers window seats on long flights.",
	})
	again := write(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "travel", Content: "  alice PREFERS window seats on long flights!!",
	})
	if again.Outcome != client.OutcomeReinforced || again.ID != first.ID {
		t.Fatalf("repeat: %+v, want reinforced %s", again, first.ID)
	}
	if again.EvidenceCount != 2 || again.Importance <= first.Importance || !again.UpdatedAt.After(first.UpdatedAt) || again.Version != first.Version {
		t.Errorf("reinforced = evidence %d, importance %v→%v, updated %v→%v, version %d; want 2, higher, later, unchanged",
			again.EvidenceCount, first.Importance, again.Importance, first.UpdatedAt, again.UpdatedAt, again.Version)
	}
	if ms := list(t, f, "support-bot", "user_id=alice"); len(ms) != 1 {
		t.Errorf("%d memories stored, want 1", len(ms))
	}

	// Another type, or another user, is another memory.
	other := create(t, f, "support-bot", client.NewMemory{
		UserID: "bob", Type: client.TypeSemantic, Kind: "travel", Content: "Alice prefers window seats on long flights.",
	})
	if other.ID == first.ID || other.Outcome != client.OutcomeCreated {
		t.Errorf("bob's memory reinforced alice's")
	}

	// A repeat inside one batch reinforces the memory the batch creates.
	got := writeBatch(t, f, "support-bot",
		client.NewMemory{UserID: "carol", Type: client.TypeEpisodic, Content: "Carol reported that the invoice PDF is blank"},
		client.NewMemory{UserID: "carol", Type: client.TypeEpisodic, Content: "Carol reported that the invoice PDF is blank."},
	)
	if got.Results[0].Outcome != client.OutcomeCreated || got.Results[1].Outcome != client.OutcomeReinforced ||
		got.Results[1].ID != got.Results[0].ID || got.Memories[1].EvidenceCount != 2 {
		t.Errorf("batch with a repeat: %+v", got.Results)
	}
}

func TestDifferentAmountsSupersedeNotReinforce(t *testing.T) {
	f := apptest.Start(t)
	budget := func(content string) client.Memory {
		t.Helper()
		return write(t, f, "order-bot", client.NewMemory{
			UserID: "alice", Type: client.TypeSemantic, Kind: "budget", Key: "budget", Content: content,
		})
	}
	v1 := budget("Alice's purchasing budget is 100k")
	v2 := budget("Alice's purchasing budget is 150k")
	if v2.Outcome != client.OutcomeCreated || v2.ID == v1.ID || v2.Version != 2 || v2.Supersedes != v1.ID {
		t.Fatalf("150k after 100k = %+v, want a new version 2 superseding %s", v2, v1.ID)
	}
	v3 := budget("alice's purchasing budget is 150k.")
	if v3.Outcome != client.OutcomeReinforced || v3.ID != v2.ID {
		t.Errorf("150k again = %s %s, want reinforced %s", v3.Outcome, v3.ID, v2.ID)
	}
	// A different slot is never the same fact, whatever the words.
	other := create(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "budget", Key: "budget_2027", Content: "Alice's purchasing budget is 150k",
	})
	if other.Outcome != client.OutcomeCreated {
		t.Errorf("another key reinforced: %+v", other)
	}
}

func TestPreferenceBecomesActiveAfterTwoSessions(t *testing.T) {
	f := apptest.Start(t)
	pref := func(session string) client.Memory {
		t.Helper()
		return write(t, f, "support-bot", client.NewMemory{
			UserID: "alice", SessionID: session, Type: client.TypeProfile, Kind: "preference", Key: "drink",
			Content: "Alice prefers green tea without sugar.",
		})
	}
	ask := client.RecallRequest{UserID: "alice", SessionID: "s-9", Query: "What does Alice like to drink? Green tea?"}

	first := pref("s-1")
	if first.Status != client.StatusCandidate || first.Outcome != client.OutcomeCreated {
		t.Fatalf("first observation = %s %s, want a created candidate", first.Outcome, first.Status)
	}
	if has(recalledIDs(recall(t, f, "support-bot", ask)), first.ID) {
		t.Fatal("recall returned the preference after one session")
	}
	same := pref("s-1")
	if same.ID != first.ID || same.Status != client.StatusCandidate || same.EvidenceCount != 2 {
		t.Fatalf("second observation in the same session = %s %s evidence %d, want the candidate, reinforced", same.ID, same.Status, same.EvidenceCount)
	}
	if has(recalledIDs(recall(t, f, "support-bot", ask)), first.ID) {
		t.Fatal("recall returned the preference seen in one session only")
	}
	second := pref("s-2")
	if second.ID != first.ID || second.Status != client.StatusActive || second.Outcome != client.OutcomeReinforced {
		t.Fatalf("observation in a second session = %s %s %s, want %s reinforced and active", second.ID, second.Outcome, second.Status, first.ID)
	}
	if !has(recalledIDs(recall(t, f, "support-bot", ask)), first.ID) {
		t.Error("recall does not return the preference after two sessions")
	}
}

func TestUserConfirmsACandidate(t *testing.T) {
	f := apptest.Start(t)
	old := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeProfile, Kind: "employer", Key: "employer", Content: "Alice works for Initech.",
	})
	guess := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeProfile, Kind: "employer", Key: "employer", Source: memory.SourceInferred,
		Content: "Alice has probably moved to Acme Corp, judging by her new e-mail signature.",
	})
	if guess.Status != client.StatusCandidate {
		t.Fatalf("inferred memory status %s, want candidate", guess.Status)
	}
	// The old fact still holds its slot until the user confirms.
	if got := getMemory(t, f, "support-bot", old.ID); got.Status != client.StatusActive {
		t.Fatalf("the inference displaced the active fact: %s", got.Status)
	}
	for who, want := range map[string]struct {
		status int
		code   string
	}{"support-bot": {http.StatusForbidden, "forbidden"}, "bob": {http.StatusNotFound, "not_found"}} {
		_, err := f.Client(t, who).Confirm(t.Context(), guess.ID)
		wantAPIError(t, "confirm as "+who, err, want.status, want.code)
	}
	alice := f.Client(t, "alice")
	confirmed, err := alice.Confirm(t.Context(), guess.ID)
	if err != nil || confirmed.Status != client.StatusActive || confirmed.Supersedes != old.ID || confirmed.Version != 2 {
		t.Fatalf("confirm as alice = %+v, %v; want active version 2 superseding %s", confirmed, err, old.ID)
	}
	if got := getMemory(t, f, "support-bot", old.ID); got.Status != client.StatusSuperseded {
		t.Errorf("old fact is %s after the confirmation, want superseded", got.Status)
	}
	// Confirming again changes nothing; a superseded memory cannot be.
	if again, err := alice.Confirm(t.Context(), guess.ID); err != nil || again.ID != confirmed.ID || again.Version != 2 {
		t.Errorf("confirm again = %+v, %v; want %s unchanged", again, err, confirmed.ID)
	}
	_, err = alice.Confirm(t.Context(), old.ID)
	wantAPIError(t, "confirm a superseded memory", err, http.StatusConflict, "conflict")
}

func getMemory(t *testing.T, f *apptest.Fixture, who, id string) client.Memory {
	t.Helper()
	m, err := f.Client(t, who).Get(t.Context(), id)
	if err != nil {
		t.Fatalf("get %s as %s: %v", id, who, err)
	}
	return m
}

// An idempotency key is the tenant's: a write that reuses another sender's
// key (or its own with another memory) is refused and shown nothing of the
// memory stored under it, while a retry of the same write answers as the
// first did.
func TestIdempotencyKeyOfAnotherWrite(t *testing.T) {
	f := apptest.Start(t)
	const key = "order-7781"
	secret := create(t, f, "finance-bot", client.NewMemory{UserID: "carol", Type: client.TypeSemantic, Sensitivity: client.SensitivityConfidential,
		Content: "Internal: Greenleaf runs at a 7% margin.", IdempotencyKey: key})
	for _, tc := range []struct {
		name, who string
		m         client.NewMemory
	}{
		{"another agent, another user", "support-bot", client.NewMemory{UserID: "bob", Type: client.TypeSemantic, Content: "Bob likes tea.", IdempotencyKey: key}},
		{"another agent, the same memory", "support-bot", client.NewMemory{UserID: "carol", Type: client.TypeSemantic, Content: secret.Content, IdempotencyKey: key}},
		{"the same agent, another memory", "finance-bot", client.NewMemory{UserID: "carol", Type: client.TypeSemantic, Content: "Greenleaf pays in 30 days.", IdempotencyKey: key}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, tc.who, http.MethodPost, "/v1/memories", tc.m)
			if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"idempotency_key_reused"`) || strings.Contains(string(r.Body), "margin") {
				t.Errorf("%d %s, want 422 idempotency_key_reused and nothing of the stored memory", r.Status, r.Body)
			}
		})
	}
	again := create(t, f, "finance-bot", client.NewMemory{UserID: "carol", Type: client.TypeSemantic, Sensitivity: client.SensitivityConfidential,
		Content: "Internal: Greenleaf runs at a 7% margin.", IdempotencyKey: key})
	if again.ID != secret.ID {
		t.Errorf("a retry stored %s, want the first write's %s", again.ID, secret.ID)
	}
	if got := list(t, f, "admin", "user_id=bob"); len(got) != 0 {
		t.Errorf("a refused write stored %d memories about bob", len(got))
	}
}

// A synchronous write honours the Idempotency-Key header as a queued one
// does: a retry stores and reinforces nothing more, and another write under
// the key is refused. In a batch each memory is keyed by its place.
func TestIdempotencyKeyHeaderOnSyncWrites(t *testing.T) {
	f := apptest.Start(t)
	pref := client.NewMemory{UserID: "bob", Type: client.TypeProfile, Kind: "preference", Key: "tea", Content: "Bob drinks green tea in the afternoon."}
	var first client.Memory
	for i := range 3 {
		r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", pref, "Idempotency-Key", "sync-k1")
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("write %d: %d %s", i, r.Status, r.Body)
		}
		var got client.Memory
		r.Decode(t, &got)
		if i == 0 {
			first = got
		} else if got.ID != first.ID {
			t.Errorf("retry %d stored %s, want %s", i, got.ID, first.ID)
		}
	}
	if m := getMemory(t, f, "support-bot", first.ID); m.EvidenceCount != 1 {
		t.Errorf("evidence count after two retries: %d, want 1", m.EvidenceCount)
	}
	other := pref
	other.Content, other.Key = "Bob takes his coffee black.", "coffee"
	r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", other, "Idempotency-Key", "sync-k1")
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"idempotency_key_reused"`) {
		t.Errorf("another write under the key: %d %s, want 422 idempotency_key_reused", r.Status, r.Body)
	}
	batch := map[string]any{"memories": []client.NewMemory{other, {UserID: "bob", Type: client.TypeEpisodic, Content: "Bob called about the pallet order."}}}
	for i := range 2 {
		r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", batch, "Idempotency-Key", "sync-k2")
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("batch %d: %d %s", i, r.Status, r.Body)
		}
	}
	if got := list(t, f, "support-bot", "user_id=bob&limit=500"); len(got) != 3 {
		t.Errorf("bob has %d memories after a batch sent twice, want 3", len(got))
	}
	// One memory under the batch's key is the batch's first: the same
	// memory repeats nothing, another is refused.
	if r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", other, "Idempotency-Key", "sync-k2"); r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Errorf("the batch's first memory alone under its key: %d %s", r.Status, r.Body)
	}
	alone := client.NewMemory{UserID: "bob", Type: client.TypeEpisodic, Content: "Bob asked for a quote on foam inserts."}
	if r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", alone, "Idempotency-Key", "sync-k2"); r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"idempotency_key_reused"`) {
		t.Errorf("another memory alone under a batch's key: %d %s, want 422 idempotency_key_reused", r.Status, r.Body)
	}
	if got := list(t, f, "support-bot", "user_id=bob&limit=500"); len(got) != 3 {
		t.Errorf("bob has %d memories after single writes under the batch's key, want 3", len(got))
	}
	// A header longer than the documented 128 bytes is refused as the header.
	r = f.Do(t, "support-bot", http.MethodPost, "/v1/memories", batch, "Idempotency-Key", strings.Repeat("k", 129))
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "Idempotency-Key: must be UTF-8 of at most 128 bytes") {
		t.Errorf("a batch under a 129-byte key: %d %s, want 400 naming the header and its limit", r.Status, r.Body)
	}
}

// The Idempotency-Key takes the 128 bytes the API documents on every write,
// one memory or a batch, synchronous or queued, and on ingestion: a SHA-512
// in hex keys each, a retry repeats nothing, and a write and an ingestion
// under one key are one request, as under a short key.
func TestIdempotencyKeyOfTheDocumentedLength(t *testing.T) {
	f := apptest.Start(t)
	long := func(tag string) string { return tag + strings.Repeat("f", 128-len(tag)) }
	write := func(path string, body any, key string) apptest.Response {
		t.Helper()
		return f.Do(t, "support-bot", http.MethodPost, path, body, "Idempotency-Key", key)
	}
	one := client.NewMemory{UserID: "bob", Type: client.TypeEpisodic, Content: "Bob ordered 40 pallets of blue crates."}
	var first client.Memory
	for i := range 2 {
		r := write("/v1/memories", one, long("single"))
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("write %d under a 128-byte key: %d %s", i, r.Status, r.Body)
		}
		var got client.Memory
		r.Decode(t, &got)
		if i == 0 {
			first = got
		} else if got.ID != first.ID {
			t.Errorf("retry under a 128-byte key stored %s, want %s", got.ID, first.ID)
		}
	}
	r := write("/v1/memories?async=true", one, long("single"))
	if r.Status != http.StatusAccepted {
		t.Fatalf("queued retry under a 128-byte key: %d %s", r.Status, r.Body)
	}
	var job client.Job
	r.Decode(t, &job)
	if job = waitJob(t, f, "support-bot", job.ID); job.Status != memory.JobDone || len(job.Memories) != 1 || job.Memories[0].ID != first.ID {
		t.Errorf("queued retry under a 128-byte key: %+v, want done with %s", job, first.ID)
	}
	var batch []client.NewMemory
	for i := range 12 {
		batch = append(batch, client.NewMemory{UserID: "carol", Type: client.TypeEpisodic, Content: fmt.Sprintf("Carol returned crate number %d because its lid was cracked.", i)})
	}
	for i := range 2 {
		r := write("/v1/memories", map[string]any{"memories": batch}, long("batch"))
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("batch %d of 12 under a 128-byte key: %d %s", i, r.Status, r.Body)
		}
	}
	if got := list(t, f, "support-bot", "user_id=carol&limit=500"); len(got) != 12 {
		t.Errorf("carol has %d memories after a batch of 12 sent twice, want 12", len(got))
	}
	turns := memory.IngestRequest{UserID: "dave", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "Please remember I prefer LONGMARK straps on every pallet."},
	}}
	var ingested memory.IngestResult
	for i := range 2 {
		r := write("/v1/ingest?sync=true", turns, long("ingest"))
		if r.Status != http.StatusOK {
			t.Fatalf("ingestion %d under a 128-byte key: %d %s", i, r.Status, r.Body)
		}
		var res memory.IngestResult
		r.Decode(t, &res)
		if i == 0 {
			ingested = res
		} else if len(res.Memories) != 1 || len(ingested.Memories) != 1 || res.Memories[0].ID != ingested.Memories[0].ID {
			t.Errorf("retried ingestion under a 128-byte key: %+v, want %+v", res.Memories, ingested.Memories)
		}
	}
	if len(ingested.Memories) != 1 {
		t.Fatalf("ingestion under a 128-byte key wrote %+v, want one memory", ingested.Memories)
	}
	if r = write("/v1/ingest", turns, long("ingest")); r.Status != http.StatusAccepted {
		t.Fatalf("queued retry of the ingestion: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &job)
	if job = waitJob(t, f, "support-bot", job.ID); job.Status != memory.JobDone || len(job.Memories) != 1 || job.Memories[0].ID != ingested.Memories[0].ID {
		t.Errorf("queued retry of the ingestion under a 128-byte key: %+v, want done with %s", job, ingested.Memories[0].ID)
	}
	// Other turns under the single write's key are another request.
	other := memory.IngestRequest{UserID: "bob", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "Please remember I prefer PLUMMARK crates for every shipment."}}}
	if r := write("/v1/ingest?sync=true", other, long("single")); r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"idempotency_key_reused"`) {
		t.Errorf("an ingestion under a write's 128-byte key: %d %s, want 422 idempotency_key_reused", r.Status, r.Body)
	}
	for _, path := range []string{"/v1/memories", "/v1/memories?async=true", "/v1/ingest?sync=true", "/v1/ingest"} {
		body := any(one)
		if strings.HasPrefix(path, "/v1/ingest") {
			body = turns
		}
		if r := write(path, body, strings.Repeat("k", 129)); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "Idempotency-Key: must be UTF-8 of at most 128 bytes") {
			t.Errorf("%s under a 129-byte key: %d %s, want 400 naming the header and its limit", path, r.Status, r.Body)
		}
	}
}

// An Idempotency-Key holds across modes: a write retried through the queue
// after a synchronous one, or the other way round, stores nothing more and
// counts no second sighting; another body under the key is refused or
// fails, and never becomes a second memory.
func TestIdempotencyKeyAcrossModes(t *testing.T) {
	f := apptest.Start(t)
	mem := func(text string) client.NewMemory {
		return client.NewMemory{UserID: "carol", Type: client.TypeEpisodic, Content: text}
	}
	queued := func(m client.NewMemory, key string) client.Job {
		t.Helper()
		r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories?async=true", m, "Idempotency-Key", key)
		if r.Status != http.StatusAccepted {
			t.Fatalf("queued write: %d %s", r.Status, r.Body)
		}
		var j client.Job
		r.Decode(t, &j)
		return waitJob(t, f, "support-bot", j.ID)
	}
	count := func(text string) int {
		n := 0
		for _, m := range list(t, f, "support-bot", "user_id=carol&limit=500") {
			if m.Content == text {
				n++
			}
		}
		return n
	}

	// Synchronous first, then the same write queued.
	first := mem("Carol asked for a sample of the bamboo plates.")
	r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", first, "Idempotency-Key", "x-k1")
	if r.Status != http.StatusCreated {
		t.Fatalf("write: %d %s", r.Status, r.Body)
	}
	var stored client.Memory
	r.Decode(t, &stored)
	if j := queued(first, "x-k1"); j.Status != "done" || len(j.Memories) != 1 || j.Memories[0].ID != stored.ID || j.Memories[0].Outcome != "duplicate" {
		t.Errorf("queued retry of a synchronous write: %+v, want done, a duplicate of %s", j, stored.ID)
	}
	if m := getMemory(t, f, "support-bot", stored.ID); m.EvidenceCount != 1 || count(first.Content) != 1 {
		t.Errorf("after the queued retry: evidence %d, %d copies; want 1 and 1", m.EvidenceCount, count(first.Content))
	}

	// Queued first, then the same write synchronously, then another body.
	second := mem("Carol wants the invoice split by store.")
	j := queued(second, "x-k2")
	if j.Status != "done" || len(j.Memories) != 1 {
		t.Fatalf("queued write: %+v", j)
	}
	r = f.Do(t, "support-bot", http.MethodPost, "/v1/memories", second, "Idempotency-Key", "x-k2")
	var again client.Memory
	r.Decode(t, &again)
	// A replayed synchronous write answers as a first one would.
	if r.Status != http.StatusCreated || again.ID != j.Memories[0].ID {
		t.Errorf("synchronous retry of a queued write: %d %s, want 201 with %s", r.Status, r.Body, j.Memories[0].ID)
	}
	other := mem("Carol will visit the Suzhou plant in May.")
	r = f.Do(t, "support-bot", http.MethodPost, "/v1/memories", other, "Idempotency-Key", "x-k2")
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"idempotency_key_reused"`) {
		t.Errorf("another body under a queued write's key: %d %s, want 422 idempotency_key_reused", r.Status, r.Body)
	}
	if m := getMemory(t, f, "support-bot", j.Memories[0].ID); m.EvidenceCount != 1 || count(second.Content) != 1 || count(other.Content) != 0 {
		t.Errorf("after the retries: evidence %d, %d and %d copies; want 1, 1 and 0", m.EvidenceCount, count(second.Content), count(other.Content))
	}
}

// A batch that writes one slot twice answers the first as superseded, as it
// stands once the batch is stored, and the second as active.
func TestBatchReportsWhatItSuperseded(t *testing.T) {
	f := apptest.Start(t)
	item := func(text string) client.NewMemory {
		return client.NewMemory{UserID: "bob", Type: client.TypeSemantic, Kind: "budget", Key: "snack_budget", Content: text}
	}
	r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", map[string]any{"memories": []client.NewMemory{item("Bob may spend 200 CNY a month on snacks."), item("Bob's snack budget is now 300 CNY a month.")}})
	if r.Status != http.StatusCreated {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	var resp struct {
		Results []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"results"`
	}
	r.Decode(t, &resp)
	if len(resp.Results) != 2 || resp.Results[0].Status != "superseded" || resp.Results[1].Status != "active" {
		t.Fatalf("results: %+v, want superseded then active", resp.Results)
	}
	for _, res := range resp.Results {
		if m := getMemory(t, f, "support-bot", res.ID); m.Status != res.Status {
			t.Errorf("memory %s is %s, its result said %s", res.ID, m.Status, res.Status)
		}
	}
}

// A retry of a write whose memory was deleted since writes nothing: the
// user's "forget that" outlives a client's automatic retry, by the header
// or by the memory's own key.
func TestRetryAfterDeleteIsNotWrittenAgain(t *testing.T) {
	f := apptest.Start(t)
	note := client.NewMemory{UserID: "carol", Type: client.TypeEpisodic, Content: "Carol asked for 12 crates of napkins for the spring fair."}
	keyed := note
	keyed.Content, keyed.IdempotencyKey = "Carol wants the invoice sent to her assistant this month.", "retry-own-key"
	for _, tc := range []struct {
		name   string
		body   client.NewMemory
		header []string
	}{
		{"header", note, []string{"Idempotency-Key", "retry-header"}},
		{"memory's key", keyed, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", tc.body, tc.header...)
			if r.Status != http.StatusCreated {
				t.Fatalf("write: %d %s", r.Status, r.Body)
			}
			var first client.Memory
			r.Decode(t, &first)
			if r := f.Do(t, apptest.Admin, http.MethodDelete, "/v1/memories/"+first.ID, nil); r.Status != http.StatusOK {
				t.Fatalf("delete: %d %s", r.Status, r.Body)
			}
			r = f.Do(t, "support-bot", http.MethodPost, "/v1/memories", tc.body, tc.header...)
			var got client.WriteResult
			r.Decode(t, &got)
			if r.Status != http.StatusOK || got.Outcome != client.OutcomeDeleted || got.ID != "" {
				t.Errorf("retry after the delete: %d %s, want 200 outcome deleted without an id", r.Status, r.Body)
			}
			for _, m := range list(t, f, apptest.Admin, "user_id=carol&limit=500") {
				if m.Content == tc.body.Content {
					t.Errorf("the deleted text is stored again as %s", m.ID)
				}
			}
			// Another writer's key is its own: nothing of its write is lost.
			own := tc.body
			own.Content = "Carol's spring fair stand, by " + tc.name + ", is number 12."
			if r := f.Do(t, "order-bot", http.MethodPost, "/v1/memories", own, tc.header...); r.Status != http.StatusCreated {
				t.Errorf("another agent under the deleted key: %d %s, want 201", r.Status, r.Body)
			}
		})
	}
}

// A synchronous ingestion honours the Idempotency-Key header as a write
// does: a retry of the same turns writes and reinforces nothing more, nor
// brings back what was deleted since, and other turns under the key are
// refused.
func TestSyncIngestHonoursTheIdempotencyKey(t *testing.T) {
	f := apptest.Start(t)
	turns := memory.IngestRequest{UserID: "bob", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "Please remember I prefer FIGMARK straps on every pallet."},
	}}
	ingest := func(req memory.IngestRequest) (apptest.Response, memory.IngestResult) {
		t.Helper()
		r := f.Do(t, "support-bot", http.MethodPost, "/v1/ingest?sync=true", req, "Idempotency-Key", "ing-1")
		var res memory.IngestResult
		if r.Status == http.StatusOK {
			r.Decode(t, &res)
		}
		return r, res
	}
	r, first := ingest(turns)
	if r.Status != http.StatusOK || len(first.Memories) != 1 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	id := first.Memories[0].ID
	if _, again := ingest(turns); len(again.Memories) != 1 || again.Memories[0].ID != id {
		t.Errorf("retry: %+v, want the same memory %s", again.Memories, id)
	}
	if m := getMemory(t, f, apptest.Admin, id); m.EvidenceCount != 1 {
		t.Errorf("evidence count after a retry: %d, want 1", m.EvidenceCount)
	}
	other := memory.IngestRequest{UserID: "bob", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "Please remember I prefer blue crates for every shipment."}}}
	if r, _ := ingest(other); r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"idempotency_key_reused"`) {
		t.Errorf("other turns under the key: %d %s, want 422 idempotency_key_reused", r.Status, r.Body)
	}
	if r := f.Do(t, apptest.Admin, http.MethodDelete, "/v1/memories/"+id, nil); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r, again := ingest(turns); r.Status != http.StatusOK || len(again.Memories) != 0 {
		t.Errorf("retry after the delete: %d %s, want nothing written", r.Status, r.Body)
	}
	// Other turns under the key stay refused after the delete: nothing
	// says "deleted" to a conversation that was never sent.
	if r, _ := ingest(other); r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"idempotency_key_reused"`) {
		t.Errorf("other turns under the key after the delete: %d %s, want 422 idempotency_key_reused", r.Status, r.Body)
	}
	for _, m := range list(t, f, apptest.Admin, "user_id=bob&limit=500") {
		if strings.Contains(m.Content, "FIGMARK") {
			t.Errorf("the deleted text is stored again as %s", m.ID)
		}
	}
}

// A queued ingestion and a synchronous one under one Idempotency-Key are
// one request: the synchronous retry of a queued ingestion finds what the
// job wrote, and after a delete writes it no more; other turns are refused
// in either mode.
func TestQueuedAndSyncIngestShareTheKey(t *testing.T) {
	f := apptest.Start(t)
	turns := memory.IngestRequest{UserID: "bob", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "Please remember I prefer KIWIMARK straps on every pallet."},
	}}
	other := memory.IngestRequest{UserID: "bob", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "Please remember I prefer PLUMMARK crates for every shipment."},
	}}
	sync := func(req memory.IngestRequest, key string) (apptest.Response, memory.IngestResult) {
		t.Helper()
		r := f.Do(t, "support-bot", http.MethodPost, "/v1/ingest?sync=true", req, "Idempotency-Key", key)
		var res memory.IngestResult
		if r.Status == http.StatusOK {
			r.Decode(t, &res)
		}
		return r, res
	}
	queued := func(req memory.IngestRequest, key string) client.Job {
		t.Helper()
		r := f.Do(t, "support-bot", http.MethodPost, "/v1/ingest", req, "Idempotency-Key", key)
		var job client.Job
		if r.Status != http.StatusAccepted {
			t.Fatalf("queued ingest: %d %s", r.Status, r.Body)
		}
		r.Decode(t, &job)
		return waitJob(t, f, "support-bot", job.ID)
	}
	job := queued(turns, "ing-q")
	if job.Status != memory.JobDone || len(job.Memories) != 1 {
		t.Fatalf("queued ingest: %+v", job)
	}
	id := job.Memories[0].ID
	if r, again := sync(turns, "ing-q"); r.Status != http.StatusOK || len(again.Memories) != 1 || again.Memories[0].ID != id {
		t.Errorf("synchronous retry of the queued ingest: %d %s, want memory %s", r.Status, r.Body, id)
	}
	if r, _ := sync(other, "ing-q"); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("other turns, synchronous, under the queued key: %d %s, want 422", r.Status, r.Body)
	}
	if r := f.Do(t, apptest.Admin, http.MethodDelete, "/v1/memories/"+id, nil); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r, again := sync(turns, "ing-q"); r.Status != http.StatusOK || len(again.Memories) != 0 || again.Reason != workingmemory.ReasonDeleted {
		t.Errorf("synchronous retry after the delete: %d %s, want nothing written, and why", r.Status, r.Body)
	}
	// A synchronous ingestion first, then other turns queued under its key:
	// the job fails as the synchronous call would have, and leaves the key
	// to the synchronous call's true retry.
	r, first := sync(turns, "ing-s")
	if r.Status != http.StatusOK || len(first.Memories) != 1 {
		t.Fatalf("synchronous ingest: %d %s", r.Status, r.Body)
	}
	if job := queued(other, "ing-s"); job.Status != memory.JobFailed || job.ErrorCode != "idempotency_key_reused" {
		t.Errorf("other turns queued under a synchronous key: %+v, want failed, idempotency_key_reused", job)
	}
	if job := queued(turns, "ing-s"); job.Status != memory.JobDone || len(job.Memories) != 1 || job.Memories[0].ID != first.Memories[0].ID {
		t.Errorf("the synchronous ingest's true retry, queued after a refused job: %+v, want done with %s", job, first.Memories[0].ID)
	}
	for _, m := range list(t, f, apptest.Admin, "user_id=bob&limit=500") {
		if strings.Contains(m.Content, "PLUMMARK") {
			t.Errorf("the other turns were written as %s", m.ID)
		}
	}
}

// A user's statement that differs from an agent's unconfirmed note only by
// a sign is hers, not a confirmation of the note: the two are kept apart,
// and the note stays a candidate.
func TestASignIsNoRepeat(t *testing.T) {
	f := apptest.Start(t)
	write := func(who, content string) client.Memory {
		t.Helper()
		r := f.Do(t, who, http.MethodPost, "/v1/memories", client.NewMemory{UserID: "carol", Type: client.TypeProfile, Kind: "preference", Content: content})
		var m client.Memory
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("write %q as %s: %d %s", content, who, r.Status, r.Body)
		}
		r.Decode(t, &m)
		return m
	}
	note := write("support-bot", "Carol wants ≥ 3 samples in each box.")
	hers := write("carol", "Carol wants ≤ 3 samples in each box.")
	if hers.ID == note.ID || hers.Outcome != "created" || !strings.Contains(hers.Content, "≤") {
		t.Errorf("carol's statement: %s %s %q, want a memory of its own", hers.ID, hers.Outcome, hers.Content)
	}
	if got := getMemory(t, f, apptest.Admin, note.ID); got.Status != client.StatusCandidate || got.EvidenceCount != 1 {
		t.Errorf("the agent's note: %s, evidence %d; want still a candidate of one", got.Status, got.EvidenceCount)
	}
}

// TestUserWritesNothingAboveTheirCeiling: an end user may not write, nor
// raise by PATCH, a memory about themselves above the tenant's ceiling
// (user_max_sensitivity), where they could neither read nor delete it; the
// refusal names the ceiling. Agents are not bound by it, and a raised
// ceiling lets the user write up to it.
func TestUserWritesNothingAboveTheirCeiling(t *testing.T) {
	f := apptest.Start(t)
	alice := f.Client(t, "alice")
	_, err := alice.Add(t.Context(), client.NewMemory{UserID: "alice", Type: client.TypeProfile,
		Sensitivity: memory.SensitivityRestricted, Content: "My secret wish is a pony."})
	wantAPIError(t, "alice writes a restricted memory", err, http.StatusForbidden, "sensitivity_above_ceiling")
	var e *client.Error
	if errors.As(err, &e) && !strings.Contains(e.Message, "above internal") {
		t.Errorf("refusal %q does not name the ceiling internal", e.Message)
	}
	page, err := f.Client(t, apptest.Admin).List(t.Context(), client.ListOptions{UserID: "alice", Limit: 100})
	if err != nil || slices.ContainsFunc(page.Memories, func(m client.Memory) bool { return strings.Contains(m.Content, "pony") }) {
		t.Errorf("after the refusal the store holds %+v, %v; want no pony", page.Memories, err)
	}

	stamps := write(t, f, "alice", client.NewMemory{UserID: "alice", Type: client.TypeProfile, Content: "I collect stamps from Macau."})
	raised := memory.SensitivityConfidential
	_, err = alice.Update(t.Context(), stamps.ID, 0, client.UpdateRequest{Sensitivity: &raised})
	wantAPIError(t, "alice raises her memory to confidential", err, http.StatusForbidden, "sensitivity_above_ceiling")
	if got, err := alice.Get(t.Context(), stamps.ID); err != nil || got.Version != stamps.Version || got.Sensitivity != memory.SensitivityInternal {
		t.Errorf("alice's memory after the refused PATCH: %+v, %v; want version %d, internal", got, err, stamps.Version)
	}

	if m := write(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeProfile, Kind: "risk",
		Sensitivity: memory.SensitivityRestricted, Content: "Alice's account needs a second check on refunds."}); m.Sensitivity != memory.SensitivityRestricted {
		t.Errorf("support-bot's restricted memory about alice: %+v", m)
	}

	r := f.Do(t, apptest.Admin, http.MethodPatch, "/v1/policy/settings", policyadmin.Settings{UserMaxSensitivity: memory.SensitivityConfidential})
	expectResponse(t, "raise the ceiling", r, http.StatusOK)
	wish := write(t, f, "alice", client.NewMemory{UserID: "alice", Type: client.TypeProfile,
		Sensitivity: memory.SensitivityConfidential, Content: "My secret wish is a pony."})
	if _, err := alice.Get(t.Context(), wish.ID); err != nil {
		t.Errorf("alice reads her confidential memory under the raised ceiling: %v", err)
	}
	if _, err := alice.Delete(t.Context(), wish.ID); err != nil {
		t.Errorf("alice deletes her confidential memory under the raised ceiling: %v", err)
	}
	_, err = alice.Add(t.Context(), client.NewMemory{UserID: "alice", Type: client.TypeProfile,
		Sensitivity: memory.SensitivityRestricted, Content: "My other wish is a castle."})
	wantAPIError(t, "alice writes a restricted memory under the raised ceiling", err, http.StatusForbidden, "sensitivity_above_ceiling")
	if errors.As(err, &e) && !strings.Contains(e.Message, "above confidential") {
		t.Errorf("refusal %q does not name the ceiling confidential", e.Message)
	}
}

// An Idempotency-Key header given empty (or blank) is refused on every
// route that takes it, as an over-long one is, and nothing is written or
// queued: read as no key, it would silently cost the client the retry
// protection it meant to have.
func TestEmptyIdempotencyKeyIsRefused(t *testing.T) {
	f := apptest.Start(t)
	mem := client.NewMemory{UserID: "carol", Type: client.TypeEpisodic, Content: "Carol asked for a quote on foam inserts."}
	turns := client.IngestRequest{UserID: "carol", Turns: []client.Turn{{Role: memory.RoleUser, Content: "My budget is 5000 USD."}}}
	for _, route := range []struct {
		path string
		body any
	}{
		{"/v1/memories", mem},
		{"/v1/memories?async=true", mem},
		{"/v1/ingest", turns},
		{"/v1/ingest?sync=true", turns},
	} {
		for _, key := range []string{"", "   ", "\t"} {
			r := f.Do(t, "support-bot", http.MethodPost, route.path, route.body, "Idempotency-Key", key)
			expectResponse(t, fmt.Sprintf("%s under key %q", route.path, key), r, http.StatusBadRequest, "invalid_argument")
			if !strings.Contains(string(r.Body), "Idempotency-Key") {
				t.Errorf("%s under key %q: %s, want the header named", route.path, key, r.Body)
			}
		}
	}
	if got := list(t, f, "support-bot", "user_id=carol&limit=500"); len(got) != 0 {
		t.Errorf("carol has %d memories after refused writes, want none", len(got))
	}
}
