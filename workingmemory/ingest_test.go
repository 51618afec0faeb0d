package workingmemory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"mneme/memory"
)

// errTest is an error no production code returns.
type errTest string

func (e errTest) Error() string { return string(e) }

type failingExtractor struct{ err error }

func (x failingExtractor) Extract(context.Context, []memory.Turn) ([]memory.NewMemory, error) {
	return nil, x.err
}

// queue records what is enqueued; a repeated idempotency key returns the
// first job, as the queue package does.
type queue struct {
	memory.JobQueue
	jobs []memory.Job
}

func (q *queue) Enqueue(_ context.Context, job memory.Job) (memory.JobStatus, error) {
	for i, j := range q.jobs {
		if job.IdempotencyKey != "" && j.IdempotencyKey == job.IdempotencyKey && j.Tenant == job.Tenant && j.UserID == job.UserID {
			return memory.JobStatus{ID: "job-" + string(rune('a'+i)), Kind: j.Kind, Status: memory.JobQueued, AcceptedAt: j.AcceptedAt}, nil
		}
	}
	q.jobs = append(q.jobs, job)
	return memory.JobStatus{ID: "job-" + string(rune('a'+len(q.jobs)-1)), Kind: job.Kind, Status: memory.JobQueued, AcceptedAt: job.AcceptedAt}, nil
}

// quota refuses everything when full.
type quota struct {
	full  bool
	asked []int64
}

func (q *quota) Admit(_ context.Context, _ string, memories, _ int64) error {
	q.asked = append(q.asked, memories)
	if q.full {
		return &memory.QuotaError{Quota: "memories", Limit: 1}
	}
	return nil
}

// AuthorizeWrites refuses what c.deny says, like policy would.
func (c *creator) AuthorizeWrites(_ context.Context, p memory.Principal, in []memory.NewMemory, at time.Time) error {
	c.authorized = append(c.authorized, authorized{p, len(in), at})
	for _, n := range in {
		if c.deny != nil && c.deny(p, n) {
			return memory.ErrForbidden
		}
	}
	return nil
}

// ApplyMemoryJobs writes each job's memories.
func (c *creator) ApplyMemoryJobs(_ context.Context, jobs []memory.Job) ([]memory.JobResult, error) {
	out := make([]memory.JobResult, len(jobs))
	for i, job := range jobs {
		c.applied = append(c.applied, job)
		var in []memory.NewMemory
		if err := json.Unmarshal(job.Payload, &in); err != nil {
			return nil, err
		}
		for range in {
			out[i].Memories = append(out[i].Memories, memory.JobMemory{ID: memory.NewID("mem"), Outcome: "created"})
		}
	}
	return out, nil
}

func fieldOf(t *testing.T, err error) string {
	t.Helper()
	var inv *memory.InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("err = %v, want an InvalidError", err)
	}
	return inv.Field
}

var budget = []memory.NewMemory{
	// An extractor cannot choose whose memory it is or who wrote it.
	{Tenant: "other", UserID: "bob", AgentID: "billing-bot", Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "Budget 100,000"},
}

func TestIngestValidates(t *testing.T) {
	f := newFixture(t, nil)
	turn := memory.Turn{Role: memory.RoleUser, Content: "my budget is 100k"}
	tests := []struct {
		name  string
		req   memory.IngestRequest
		field string
	}{
		{"no user", memory.IngestRequest{Turns: []memory.Turn{turn}}, "user_id"},
		{"bad session", memory.IngestRequest{UserID: "alice", SessionID: "a b", Turns: []memory.Turn{turn}}, "session_id"},
		{"no turns", memory.IngestRequest{UserID: "alice"}, "turns"},
		{"too many turns", memory.IngestRequest{UserID: "alice", Turns: make([]memory.Turn, MaxIngestTurns+1)}, "turns"},
		{"bad role", memory.IngestRequest{UserID: "alice", Turns: []memory.Turn{turn, {Role: "narrator", Content: "x"}}}, "turns[1].role"},
		{"empty content", memory.IngestRequest{UserID: "alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: " "}}}, "turns[0].content"},
		{"long content", memory.IngestRequest{UserID: "alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: strings.Repeat("x", MaxTurnChars+1)}}}, "turns[0].content"},
		{"content with a NUL", memory.IngestRequest{UserID: "alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "tea \x00 coffee"}}}, "turns[0].content"},
		{"a turn of tomorrow", memory.IngestRequest{UserID: "alice", Turns: []memory.Turn{turn, {Role: memory.RoleUser, Content: "hi", At: time.Now().Add(24 * time.Hour)}}}, "turns[1].at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.Ingest(context.Background(), agentSupport, tt.req, "")
			if got := fieldOf(t, err); got != tt.field {
				t.Errorf("sync: field = %q, want %q", got, tt.field)
			}
			_, err = f.svc.IngestAsync(context.Background(), agentSupport, tt.req, "")
			if got := fieldOf(t, err); got != tt.field {
				t.Errorf("async: field = %q, want %q", got, tt.field)
			}
		})
	}
	if len(f.queue.jobs) != 0 || len(f.created.got) != 0 {
		t.Errorf("invalid ingestions queued %d jobs and wrote %d memories", len(f.queue.jobs), len(f.created.got))
	}
}

// A turn may be dated in the past (history imported from elsewhere) or a
// little ahead (clocks differ), not further.
func TestIngestTurnTimes(t *testing.T) {
	for _, at := range []time.Time{time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC), time.Now().Add(memory.ObservedSkew / 2)} {
		f := newFixture(t, nil)
		r := memory.IngestRequest{UserID: "alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "my budget is 100k", At: at}}}
		if _, err := f.svc.Ingest(context.Background(), agentSupport, r, ""); err != nil {
			t.Errorf("a turn of %s: %v", at, err)
		}
		if _, err := f.svc.AppendTurns(context.Background(), agentSupport, "s-1", memory.AppendRequest{UserID: "alice", Turns: r.Turns}); err != nil {
			t.Errorf("a session turn of %s: %v", at, err)
		}
	}
	f := newFixture(t, nil)
	_, err := f.svc.AppendTurns(context.Background(), agentSupport, "s-1", memory.AppendRequest{UserID: "alice",
		Turns: []memory.Turn{{Role: memory.RoleUser, Content: "hi", At: time.Now().Add(time.Hour)}}})
	if got := fieldOf(t, err); got != "turns[0].at" {
		t.Errorf("a session turn an hour ahead: field %q, want turns[0].at", got)
	}
}

func TestIngestWritesThroughWrite(t *testing.T) {
	f := newFixture(t, budget)
	turns := []memory.Turn{{Role: memory.RoleUser, Content: "my budget is 100k"}}
	res, err := f.svc.Ingest(context.Background(), agentSupport, memory.IngestRequest{UserID: "alice", SessionID: "s-1", Turns: turns}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 1 || res.Reason != "" {
		t.Fatalf("result = %+v", res)
	}
	if len(f.created.as) != 1 || f.created.as[0].ID != "support-bot" {
		t.Errorf("written as %+v, want support-bot", f.created.as)
	}
	n := f.created.got[0]
	if n.Tenant != "" || n.AgentID != "" || n.UserID != "alice" || n.SessionID != "s-1" || n.Key != "budget" {
		t.Errorf("asked to write %+v", n)
	}
}

func TestIngestNothingFound(t *testing.T) {
	f := newFixture(t, nil)
	res, err := f.svc.Ingest(context.Background(), agentSupport, memory.IngestRequest{UserID: "alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "hi"}}}, "")
	if err != nil || len(res.Memories) != 0 || res.Reason != ReasonNothingWorthRemembering || res.Memories == nil {
		t.Fatalf("result = %+v, %v", res, err)
	}
	if len(f.created.as) != 0 {
		t.Errorf("Write called %d times for nothing", len(f.created.as))
	}
}

func TestIngestRefusesImpersonationAndErrors(t *testing.T) {
	req := memory.IngestRequest{UserID: "alice", AgentID: "billing-bot", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "remember the dock closes at 5"}}}
	f := newFixture(t, budget)
	// Refused as forbidden, with a message that names the field.
	namesField := func(err error) bool {
		var field *memory.ForbiddenFieldError
		return errors.Is(err, memory.ErrForbidden) && errors.As(err, &field) && field.Field == "agent_id"
	}
	if _, err := f.svc.Ingest(context.Background(), agentSupport, req, ""); !namesField(err) {
		t.Errorf("sync as another agent: err = %v, want ErrForbidden naming agent_id", err)
	}
	if _, err := f.svc.IngestAsync(context.Background(), agentSupport, req, ""); !namesField(err) {
		t.Errorf("async as another agent: err = %v, want ErrForbidden naming agent_id", err)
	}
	if _, err := f.svc.AppendTurns(context.Background(), agentSupport, "s-other", memory.AppendRequest{UserID: "alice", AgentID: "billing-bot", Turns: req.Turns}); !namesField(err) {
		t.Errorf("turns as another agent: err = %v, want ErrForbidden naming agent_id", err)
	}
	if len(f.created.got) != 0 || len(f.queue.jobs) != 0 {
		t.Errorf("impersonation wrote %d memories, queued %d jobs", len(f.created.got), len(f.queue.jobs))
	}

	req.AgentID = "support-bot"
	f.svc.extract = failingExtractor{errTest("model down")}
	if _, err := f.svc.Ingest(context.Background(), agentSupport, req, ""); !errors.Is(err, errTest("model down")) {
		t.Errorf("extractor error: err = %v", err)
	}
}

func TestIngestAsyncQueuesAfterPolicyAndQuota(t *testing.T) {
	ctx := context.Background()
	req := memory.IngestRequest{UserID: "alice", SessionID: "s-1", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "my budget is 100k"}}}

	f := newFixture(t, budget)
	f.authz.allow = func(p memory.Principal, action string, r memory.Resource) bool {
		return !(action == memory.ActionWrite && r.UserID == "alice")
	}
	if _, err := f.svc.IngestAsync(ctx, agentSupport, req, ""); !errors.Is(err, memory.ErrForbidden) {
		t.Errorf("denied: err = %v, want ErrForbidden", err)
	}
	f.authz.allow = nil
	f.quota.full = true
	var qe *memory.QuotaError
	if _, err := f.svc.IngestAsync(ctx, agentSupport, req, ""); !errors.As(err, &qe) {
		t.Errorf("quota full: err = %v, want a QuotaError", err)
	}
	if len(f.queue.jobs) != 0 {
		t.Fatalf("refused ingestions queued %d jobs", len(f.queue.jobs))
	}
	if _, err := f.svc.IngestAsync(ctx, agentSupport, req, strings.Repeat("k", 129)); fieldOf(t, err) != "Idempotency-Key" {
		t.Errorf("long idempotency key: err = %v", err)
	}

	f.quota.full = false
	first, err := f.svc.IngestAsync(ctx, agentSupport, req, "retry-1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.svc.IngestAsync(ctx, agentSupport, req, "retry-1")
	if err != nil || again.ID != first.ID || len(f.queue.jobs) != 1 {
		t.Fatalf("retry = %+v, %v; first %+v; %d jobs", again, err, first, len(f.queue.jobs))
	}
	job := f.queue.jobs[0]
	if job.Kind != JobIngest || job.Tenant != "acme" || job.UserID != "alice" || job.Principal.ID != "support-bot" || job.AcceptedAt.IsZero() {
		t.Errorf("job = %+v", job)
	}
	var queued memory.IngestRequest
	if err := json.Unmarshal(job.Payload, &queued); err != nil {
		t.Fatal(err)
	}
	// Relative dates read the same on every attempt: turns carry the time
	// the ingestion was accepted.
	if len(queued.Turns) != 1 || !queued.Turns[0].At.Equal(job.AcceptedAt) {
		t.Errorf("queued turns = %+v, accepted %v", queued.Turns, job.AcceptedAt)
	}
	if f.quota.asked[len(f.quota.asked)-1] != 1 {
		t.Errorf("quota asked for %v memories, want room for one", f.quota.asked)
	}
}

func TestApplyIngestJobs(t *testing.T) {
	ctx := context.Background()
	alice := memory.Principal{Tenant: "acme", Kind: memory.KindUser, ID: "alice", Roles: []string{"user"}}
	accepted := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	payload := func(r memory.IngestRequest) []byte {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	turns := []memory.Turn{{Role: memory.RoleUser, Content: "my budget is 100k", At: accepted}}
	job := func(id string, p memory.Principal, userID string, body []byte) memory.Job {
		return memory.Job{ID: id, Kind: JobIngest, Tenant: "acme", UserID: userID, Principal: p, AcceptedAt: accepted, Payload: body}
	}
	jobs := []memory.Job{
		job("ok", agentSupport, "alice", payload(memory.IngestRequest{UserID: "alice", SessionID: "s-1", Turns: turns})),
		// Forged: alice's job names support-bot as the author.
		job("forged", alice, "alice", payload(memory.IngestRequest{UserID: "alice", AgentID: "support-bot", Turns: turns})),
		job("other-user", agentSupport, "alice", payload(memory.IngestRequest{UserID: "bob", Turns: turns})),
		job("garbage", agentSupport, "alice", []byte(`{"turns":`)),
		job("denied", agentBilling, "alice", payload(memory.IngestRequest{UserID: "alice", Turns: turns})),
	}
	f := newFixture(t, budget)
	f.created.deny = func(p memory.Principal, _ memory.NewMemory) bool { return p.ID == "billing-bot" }
	res, err := f.svc.ApplyIngestJobs(ctx, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(jobs) {
		t.Fatalf("%d results for %d jobs", len(res), len(jobs))
	}
	if res[0].Err != nil || len(res[0].Memories) != 1 {
		t.Errorf("ok job = %+v", res[0])
	}
	if !errors.Is(res[1].Err, memory.ErrForbidden) || len(res[1].Memories) != 0 {
		t.Errorf("forged job = %+v, want ErrForbidden", res[1])
	}
	if fieldOf(t, res[2].Err) != "payload" || fieldOf(t, res[3].Err) != "payload" {
		t.Errorf("bad payloads = %v, %v", res[2].Err, res[3].Err)
	}
	if res[4].Err != nil || len(res[4].Memories) == 0 || res[4].Memories[0].Outcome != OutcomeRefused {
		t.Errorf("denied job = %+v, want done with its memories refused", res[4])
	}
	// Only the good job reaches the writer, as a memory job of the same
	// identity, decided as of its acceptance.
	if len(f.created.applied) != 1 {
		t.Fatalf("applied %d jobs, want 1", len(f.created.applied))
	}
	w := f.created.applied[0]
	if w.ID != "ok" || w.Kind != memory.JobMemories || w.Principal.ID != "support-bot" || !w.AcceptedAt.Equal(accepted) {
		t.Errorf("memory job = %+v", w)
	}
	var written []memory.NewMemory
	if err := json.Unmarshal(w.Payload, &written); err != nil {
		t.Fatal(err)
	}
	if len(written) != 1 || written[0].UserID != "alice" || written[0].SessionID != "s-1" || written[0].Tenant != "" || written[0].AgentID != "" {
		t.Errorf("memory job payload = %+v", written)
	}
	for _, a := range f.created.authorized {
		if !a.at.Equal(accepted) {
			t.Errorf("authorized as of %v, want the acceptance %v", a.at, accepted)
		}
	}

	f = newFixture(t, nil)
	res, err = f.svc.ApplyIngestJobs(ctx, jobs[:1])
	if err != nil || res[0].Err != nil || res[0].Memories == nil || len(res[0].Memories) != 0 || len(f.created.applied) != 0 {
		t.Errorf("nothing found: %+v, %v; applied %d", res, err, len(f.created.applied))
	}
}

// TestIngestKeepsWhatPolicyAllows: an end user's turns held a note, which
// users may not write: the rest is written, synchronously or queued, and the
// note left out (counted in the synchronous answer), not the whole
// ingestion refused.
func TestIngestKeepsWhatPolicyAllows(t *testing.T) {
	ctx := context.Background()
	alice := memory.Principal{Tenant: "acme", Kind: memory.KindUser, ID: "alice"}
	found := []memory.NewMemory{
		{Type: memory.TypeSemantic, Kind: "note", Content: "Walrus Logistics is in Dalian"},
		{Type: memory.TypeProfile, Kind: "preference", Key: "contact_channel", Content: "I prefer email"},
	}
	noNotes := func(_ memory.Principal, n memory.NewMemory) bool { return n.Type == memory.TypeSemantic }
	req := memory.IngestRequest{UserID: "alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "My company is Walrus Logistics in Dalian. I prefer email."}}}

	f := newFixture(t, found)
	f.created.deny = noNotes
	res, err := f.svc.Ingest(ctx, alice, req, "")
	if err != nil || len(res.Memories) != 1 || res.Memories[0].Type != memory.TypeProfile || res.Refused != 1 || res.Reason != "" {
		t.Errorf("sync = %+v, %v; want the preference written and the note refused", res, err)
	}

	f = newFixture(t, found)
	f.created.deny = noNotes
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	queued := memory.Job{ID: "j1", Kind: JobIngest, Tenant: "acme", UserID: "alice", Principal: alice, AcceptedAt: time.Now(), Payload: body}
	results, err := f.svc.ApplyIngestJobs(ctx, []memory.Job{queued})
	if err != nil || results[0].Err != nil || len(f.created.applied) != 1 {
		t.Fatalf("queued = %+v, %v; applied %d", results, err, len(f.created.applied))
	}
	var written []memory.NewMemory
	if err := json.Unmarshal(f.created.applied[0].Payload, &written); err != nil || len(written) != 1 || written[0].Type != memory.TypeProfile {
		t.Errorf("queued job wrote %+v (%v), want the preference alone", written, err)
	}

	f = newFixture(t, found)
	f.created.deny = func(memory.Principal, memory.NewMemory) bool { return true }
	results, err = f.svc.ApplyIngestJobs(ctx, []memory.Job{queued})
	if err != nil || results[0].Err != nil || len(results[0].Memories) != len(found) || len(f.created.applied) != 0 {
		t.Fatalf("queued, nothing allowed = %+v, %v; applied %d", results, err, len(f.created.applied))
	}
	for _, m := range results[0].Memories {
		if m.Outcome != OutcomeRefused || m.Reason != ReasonPolicy {
			t.Errorf("queued, nothing allowed: %+v, want refused by policy", m)
		}
	}
}

// TestIngestAsyncSent: what the queue compares under one idempotency key is
// the request as sent, before turns without a time get the time of
// acceptance, so a retry matches and other turns do not.
func TestIngestAsyncSent(t *testing.T) {
	ctx := context.Background()
	req := memory.IngestRequest{UserID: "alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "my budget is 100k"}}}
	f := newFixture(t, budget)
	for i := range 3 {
		r := req
		if i == 2 {
			r.Turns = []memory.Turn{{Role: memory.RoleUser, Content: "my budget is 200k"}}
		}
		if _, err := f.svc.IngestAsync(ctx, agentSupport, r, fmt.Sprintf("k-%d", i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // a later time of acceptance
	}
	j := f.queue.jobs
	if len(j) != 3 || len(j[0].Sent) == 0 || string(j[0].Sent) != string(j[1].Sent) || string(j[2].Sent) == string(j[0].Sent) {
		t.Fatalf("sent %d jobs: want the first two alike, the third not", len(j))
	}
	if string(j[0].Payload) == string(j[1].Payload) {
		t.Error("both attempts were accepted at the same time: the test shows nothing")
	}
}

// Every key of up to MaxIdemKey bytes keys every place of an ingestion
// with a key a memory may have, the same for a place whatever the others,
// and two keys never with the same.
func TestPlaceKeyFitsEveryPlace(t *testing.T) {
	longest := strings.Repeat("f", MaxIdemKey)
	tests := []struct {
		key   string
		place int
		want  string
	}{
		{"k", 0, "k:0"},
		{strings.Repeat("k", MaxIdemKey-2), 0, strings.Repeat("k", MaxIdemKey-2) + ":0"},
		{strings.Repeat("k", MaxIdemKey-2), 10, ""},
		{longest, 0, ""},
		{longest, MaxExtractedPerRun - 1, ""},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		got := PlaceKey(tt.key, tt.place)
		if tt.want != "" && got != tt.want {
			t.Errorf("PlaceKey(%d bytes, %d) = %q, want %q", len(tt.key), tt.place, got, tt.want)
		}
		if len(got) > MaxIdemKey {
			t.Errorf("PlaceKey(%d bytes, %d) = %d bytes, more than a memory's key may be", len(tt.key), tt.place, len(got))
		}
		if other, ok := seen[got]; ok {
			t.Errorf("PlaceKey(%d bytes, %d) = %q, as for %s", len(tt.key), tt.place, got, other)
		}
		seen[got] = fmt.Sprintf("%d bytes, place %d", len(tt.key), tt.place)
	}
	if PlaceKey(longest, 3) == PlaceKey(strings.Repeat("e", MaxIdemKey), 3) {
		t.Error("two long keys key a place the same")
	}
}
