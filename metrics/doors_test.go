package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"mneme/app"
	"mneme/client"
	"mneme/internal/apptest"
	"mneme/memory"
)

// door is one way an agent reaches the memory service: the REST API or the
// MCP endpoint.
type door struct {
	name string
	// remember writes ms in one call and returns their ids, or the API
	// code that refused the call.
	remember func(t *testing.T, f *apptest.Fixture, ms ...memory.NewMemory) (ids []string, code string)
	recall   func(t *testing.T, f *apptest.Fixture, user, query string)
	forget   func(t *testing.T, f *apptest.Fixture, id string)
	// ingest hands over a conversation of the user's turns and returns how
	// many memories it stored and how many it refused.
	ingest func(t *testing.T, f *apptest.Fixture, user string, texts ...string) (stored, refused int)
}

const agent = "support-bot"

func userTurns(texts []string) []memory.Turn {
	out := make([]memory.Turn, len(texts))
	for i, text := range texts {
		out[i] = memory.Turn{Role: memory.RoleUser, Content: text}
	}
	return out
}

var rest = door{
	name: "REST",
	remember: func(t *testing.T, f *apptest.Fixture, ms ...memory.NewMemory) ([]string, string) {
		t.Helper()
		r := f.Do(t, agent, http.MethodPost, "/v1/memories", map[string]any{"memories": ms})
		if r.Status >= 400 {
			var e struct{ Code string }
			r.Decode(t, &e)
			return nil, e.Code
		}
		var out struct{ Results []struct{ ID string } }
		r.Decode(t, &out)
		var ids []string
		for _, res := range out.Results {
			ids = append(ids, res.ID)
		}
		return ids, ""
	},
	recall: func(t *testing.T, f *apptest.Fixture, user, query string) {
		t.Helper()
		if r := f.Do(t, agent, http.MethodPost, "/v1/recall", memory.RecallRequest{UserID: user, Query: query}); r.Status != http.StatusOK {
			t.Fatalf("recall = %d: %s", r.Status, r.Body)
		}
	},
	forget: func(t *testing.T, f *apptest.Fixture, id string) {
		t.Helper()
		if r := f.Do(t, agent, http.MethodDelete, "/v1/memories/"+id, nil); r.Status != http.StatusOK {
			t.Fatalf("delete = %d: %s", r.Status, r.Body)
		}
	},
	ingest: func(t *testing.T, f *apptest.Fixture, user string, texts ...string) (int, int) {
		t.Helper()
		r := f.Do(t, agent, http.MethodPost, "/v1/ingest?sync=true", memory.IngestRequest{UserID: user, Turns: userTurns(texts)})
		if r.Status != http.StatusOK {
			t.Fatalf("ingest = %d: %s", r.Status, r.Body)
		}
		var res memory.IngestResult
		r.Decode(t, &res)
		return len(res.Memories), res.Refused
	},
}

// callTool calls an MCP tool as the agent and returns its structured
// result, or the API code of its tool error.
func callTool(t *testing.T, f *apptest.Fixture, tool string, args any, out any) (code string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Do(t, agent, http.MethodPost, "/mcp", body, "Accept", "application/json, text/event-stream")
	var answer struct {
		Result struct {
			IsError           bool `json:"isError"`
			Content           []struct{ Text string }
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
	}
	if r.Status != http.StatusOK {
		t.Fatalf("%s = %d: %s", tool, r.Status, r.Body)
	}
	r.Decode(t, &answer)
	if answer.Result.IsError {
		var e struct{ Code string }
		if len(answer.Result.Content) != 1 || json.Unmarshal([]byte(answer.Result.Content[0].Text), &e) != nil {
			t.Fatalf("%s: %s is no tool error", tool, r.Body)
		}
		return e.Code
	}
	if out != nil {
		if err := json.Unmarshal(answer.Result.StructuredContent, out); err != nil {
			t.Fatalf("%s: decode %s: %v", tool, answer.Result.StructuredContent, err)
		}
	}
	return ""
}

var mcpDoor = door{
	name: "MCP",
	remember: func(t *testing.T, f *apptest.Fixture, ms ...memory.NewMemory) ([]string, string) {
		t.Helper()
		var out struct{ Results []struct{ ID string } }
		if code := callTool(t, f, "remember", map[string]any{"memories": ms}, &out); code != "" {
			return nil, code
		}
		var ids []string
		for _, res := range out.Results {
			ids = append(ids, res.ID)
		}
		return ids, ""
	},
	recall: func(t *testing.T, f *apptest.Fixture, user, query string) {
		t.Helper()
		if code := callTool(t, f, "recall", map[string]any{"user_id": user, "query": query}, nil); code != "" {
			t.Fatalf("recall: %s", code)
		}
	},
	forget: func(t *testing.T, f *apptest.Fixture, id string) {
		t.Helper()
		if code := callTool(t, f, "forget", map[string]any{"memory_id": id}, nil); code != "" {
			t.Fatalf("forget: %s", code)
		}
	},
	ingest: func(t *testing.T, f *apptest.Fixture, user string, texts ...string) (int, int) {
		t.Helper()
		var res memory.IngestResult
		if code := callTool(t, f, "ingest", map[string]any{"user_id": user, "turns": userTurns(texts)}, &res); code != "" {
			t.Fatalf("ingest: %s", code)
		}
		return len(res.Memories), res.Refused
	},
}

// TestEveryDoorCountsTheSame runs one workload through the REST API and
// through MCP: each moves the counters by exactly what it did, the same
// for both. An ingestion counts the memories it writes and, like a write
// refused by the guard, a conversation of which the guard refused part.
func TestEveryDoorCountsTheSame(t *testing.T) {
	f := apptest.StartWith(t, nil)
	for _, d := range []door{rest, mcpDoor} {
		t.Run(d.name, func(t *testing.T) {
			user := map[string]string{"REST": "alice", "MCP": "bob"}[d.name]
			before := scrape(t, f)
			ids, code := d.remember(t, f,
				memory.NewMemory{UserID: user, Type: memory.TypeSemantic, Content: "Prefers invoices by e-mail, sent through " + d.name + "."},
				memory.NewMemory{UserID: user, Type: memory.TypeEpisodic, Content: "Ordered 12 ergonomic chairs by " + d.name + " on order #A-1009."})
			if code != "" || len(ids) != 2 {
				t.Fatalf("remember: %v, %q; want two memories", ids, code)
			}
			if _, code := d.remember(t, f, memory.NewMemory{UserID: user, Type: memory.TypeEpisodic, Content: "her dashboard password: Tr0ub4dor&3"}); code != "guard_rejected" {
				t.Fatalf("remember a password: %q, want guard_rejected", code)
			}
			d.recall(t, f, user, "How does the customer want invoices?")
			d.forget(t, f, ids[1])
			stored, refused := d.ingest(t, f, user, "I prefer to be contacted on WeChat.", "Remember that my ID number is 11010519491231002X.")
			if stored == 0 || refused != 1 {
				t.Fatalf("ingest stored %d and refused %d, want some stored and one refused", stored, refused)
			}
			after := scrape(t, f)
			for _, c := range []struct {
				name   string
				labels map[string]string
				want   float64
			}{
				{"mneme_memory_writes_total", map[string]string{"outcome": "created"}, float64(2 + stored)},
				{"mneme_memory_writes_total", map[string]string{"outcome": "rejected_guard"}, 2},
				{"mneme_memory_writes_total", map[string]string{"outcome": "other"}, 0},
				{"mneme_recall_memories", nil, 1},
				{"mneme_recall_stage_duration_seconds", map[string]string{"stage": "total"}, 1},
				{"mneme_memory_deletes_total", map[string]string{"what": "memory"}, 1},
				{"mneme_conversations_total", nil, 1},
			} {
				if got := value(after, c.name, c.labels) - value(before, c.name, c.labels); got != c.want {
					t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
				}
			}
		})
	}
}

// TestQueuedAndSessionWritesCountOnce: queued writes and ingestions count
// when applied, a queued write the guard refuses when refused, a closed
// session's memories when written; each once.
func TestQueuedAndSessionWritesCountOnce(t *testing.T) {
	f := apptest.StartWith(t, nil)
	c := f.Client(t, agent)
	wait := func(id string) client.Job {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		st, err := c.WaitJob(ctx, id, 100*time.Millisecond)
		if err != nil || st.Status != memory.JobDone {
			t.Fatalf("job %s: %+v, %v", id, st, err)
		}
		return st
	}
	before := scrape(t, f)
	job, err := c.AddAsync(t.Context(), client.NewMemory{UserID: "carol", Type: client.TypeSemantic, Content: "Carol's warehouse is in Ningbo."})
	if err != nil {
		t.Fatal(err)
	}
	wait(job.ID)
	if _, err := c.AddAsync(t.Context(), client.NewMemory{UserID: "carol", Type: client.TypeEpisodic, Content: "her dashboard password: Tr0ub4dor&3"}); client.Code(err) != "guard_rejected" {
		t.Fatalf("a queued password: %v, want guard_rejected", err)
	}
	job, err = c.IngestAsync(t.Context(), client.IngestRequest{UserID: "carol", Turns: []client.Turn{
		{Role: memory.RoleUser, Content: "I prefer to be called in the afternoon."},
		{Role: memory.RoleUser, Content: "Remember that my ID number is 11010519491231002X."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ingested := 0
	for _, m := range wait(job.ID).Memories {
		if m.Outcome == memory.OutcomeCreated {
			ingested++
		}
	}
	if _, err := c.AppendTurns(t.Context(), "metrics-s1", client.AppendRequest{UserID: "carol", Turns: []client.Turn{
		{Role: memory.RoleUser, Content: "My budget is 3000 euros for the new laptops."},
	}}); err != nil {
		t.Fatal(err)
	}
	closed, err := c.CloseSession(t.Context(), "metrics-s1")
	if err != nil {
		t.Fatal(err)
	}
	after := scrape(t, f)
	created := float64(1 + ingested + len(closed.Memories))
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mneme_memory_writes_total", map[string]string{"outcome": "created"}, created},
		{"mneme_memory_writes_total", map[string]string{"outcome": "rejected_guard"}, 2},
		{"mneme_memory_writes_total", map[string]string{"outcome": "other"}, 0},
		{"mneme_conversations_total", nil, 2},
	} {
		if got := value(after, c.name, c.labels) - value(before, c.name, c.labels); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if ingested == 0 || len(closed.Memories) < 2 {
		t.Errorf("the queued ingestion created %d memories and the session %d, want some and at least two", ingested, len(closed.Memories))
	}
}

// TestExpiredSessionsCount: a session the expiry worker closes counts as a
// conversation with the memories it leaves, as one closed by its agent.
// Every Mneme on a Redis ends any tenant's due sessions, so a test process
// sharing it may end one first (and count it in its own metrics): the
// session is then gone uncounted here, and the test tries a new one.
func TestExpiredSessionsCount(t *testing.T) {
	f := apptest.StartWith(t, func(cfg *app.Config) {
		cfg.Sessions.TTL, cfg.Sessions.Scan = time.Second, 100*time.Millisecond
	})
	for attempt := range 3 {
		id := fmt.Sprintf("metrics-expiring-%d", attempt)
		before := scrape(t, f)
		if _, err := f.Client(t, agent).AppendTurns(t.Context(), id, client.AppendRequest{UserID: "carol", Turns: []client.Turn{
			{Role: memory.RoleUser, Content: "My budget is 3000 euros for the new laptops."},
		}}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			// Whether it is gone is read before the counts, which a session
			// this replica ended has moved by then.
			_, err := f.App.Sessions.Get(t.Context(), f.Tenant, id)
			gone := errors.Is(err, memory.ErrNotFound)
			after := scrape(t, f)
			conv := value(after, "mneme_conversations_total", nil) - value(before, "mneme_conversations_total", nil)
			created := value(after, "mneme_memory_writes_total", map[string]string{"outcome": "created"}) -
				value(before, "mneme_memory_writes_total", map[string]string{"outcome": "created"})
			if conv == 1 && created >= 2 {
				return
			}
			if gone && conv == 0 {
				t.Logf("session %s ended by another process on this Redis; trying another", id)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the session expired: %v conversations and %v memories created, want 1 and the budget with the session's record", conv, created)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Fatal("three sessions ended and none counted a conversation here: another process ended them, or this one does not count them")
}
