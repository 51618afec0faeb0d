package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"mneme/internal/apptest"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/session"
	"mneme/workingmemory"
)

func appendTurns(t *testing.T, f *apptest.Fixture, who, id string, req memory.AppendRequest) memory.Session {
	t.Helper()
	resp := f.Do(t, who, http.MethodPost, "/v1/sessions/"+id+"/turns", req)
	if resp.Status != http.StatusOK {
		t.Fatalf("append to %s as %s: %d %s", id, who, resp.Status, resp.Body)
	}
	var s memory.Session
	resp.Decode(t, &s)
	return s
}

func userTurns(texts ...string) []memory.Turn {
	out := make([]memory.Turn, len(texts))
	for i, s := range texts {
		out[i] = memory.Turn{Role: memory.RoleUser, Content: s}
	}
	return out
}

// A closed session becomes long-term memory: what the extractor found, and
// an episodic record of the conversation; recall meanwhile shows the open
// session's turns as their own source.
func TestSessionOpenRecallClose(t *testing.T) {
	f := apptest.Start(t)
	const bot = "order-bot"
	appendTurns(t, f, bot, "sess-1", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "Hi, it's Alice again."},
		{Role: memory.RoleAssistant, Content: "Hello Alice, how can I help?"},
	}})
	s := appendTurns(t, f, bot, "sess-1", memory.AppendRequest{UserID: "alice", Turns: userTurns(
		"我们的预算调整为15万。", "Please deliver order SO-1007 to our Hangzhou office before 20 Dec.",
	)})
	if len(s.Turns) != 4 || s.UserID != "alice" || s.AgentID != bot || !s.ExpiresAt.After(time.Now()) {
		t.Fatalf("session = %+v", s)
	}

	// Another user's agent view: bob may not read alice's session.
	if r := f.Do(t, "bob", http.MethodGet, "/v1/sessions/sess-1", nil); r.Status != http.StatusNotFound {
		t.Errorf("bob reads alice's session: %d %s", r.Status, r.Body)
	}
	r := f.Do(t, bot, http.MethodGet, "/v1/sessions/sess-1", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get session: %d %s", r.Status, r.Body)
	}

	got := recall(t, f, bot, memory.RecallRequest{UserID: "alice", SessionID: "sess-1", Query: "what did she just say about the delivery?"})
	if got.Session == nil || got.Session.Source != memory.SourceSession || len(got.Session.Turns) != 4 {
		t.Fatalf("recall session = %+v", got.Session)
	}
	if !strings.Contains(got.Context, "<session>") || !strings.Contains(got.Context, "SO-1007") {
		t.Errorf("context block = %q", got.Context)
	}
	// A session of another user, or none, adds nothing.
	if other := recall(t, f, bot, memory.RecallRequest{UserID: "bob", SessionID: "sess-1", Query: "delivery"}); other.Session != nil {
		t.Errorf("recall for bob shows alice's session")
	}

	r = f.Do(t, bot, http.MethodPost, "/v1/sessions/sess-1/close", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("close: %d %s", r.Status, r.Body)
	}
	var closed memory.CloseResult
	r.Decode(t, &closed)
	kinds := map[string]memory.Memory{}
	for _, m := range closed.Memories {
		kinds[m.Kind] = m
		if m.SessionID != "sess-1" || m.UserID != "alice" || m.AgentID != bot {
			t.Errorf("memory %s: session %q user %q agent %q", m.ID, m.SessionID, m.UserID, m.AgentID)
		}
	}
	budget, record := kinds["budget"], kinds[memory.KindSession]
	if budget.Key != "budget" || !strings.Contains(budget.Content, "150,000") {
		t.Errorf("budget = %+v", budget)
	}
	if record.Type != memory.TypeEpisodic || !strings.Contains(record.Content, "session sess-1, 4 turns") || strings.Contains(record.Content, "150") {
		t.Errorf("session record = %q (%s)", record.Content, record.Type)
	}
	if _, ok := kinds["deadline"]; !ok {
		t.Errorf("the delivery deadline was not kept: %v", closed.Memories)
	}
	if r := f.Do(t, bot, http.MethodGet, "/v1/sessions/sess-1", nil); r.Status != http.StatusNotFound {
		t.Errorf("closed session still readable: %d", r.Status)
	}
	if r := f.Do(t, bot, http.MethodPost, "/v1/sessions/sess-1/close", nil); r.Status != http.StatusNotFound {
		t.Errorf("closing twice: %d %s", r.Status, r.Body)
	}
	eps := list(t, f, bot, "user_id=alice&type=episodic&kind=session")
	if len(eps) != 1 || eps[0].ID != record.ID {
		t.Errorf("episodic records = %v", ids(eps))
	}
}

func TestSessionOfChitChatLeavesNothing(t *testing.T) {
	f := apptest.Start(t)
	appendTurns(t, f, "support-bot", "chat-1", memory.AppendRequest{UserID: "carol", Turns: userTurns("你好", "好的，谢谢", "Thanks, bye!")})
	r := f.Do(t, "support-bot", http.MethodPost, "/v1/sessions/chat-1/close", nil)
	var closed memory.CloseResult
	r.Decode(t, &closed)
	if r.Status != http.StatusOK || len(closed.Memories) != 0 || closed.Reason == "" {
		t.Fatalf("close chit-chat = %d %+v", r.Status, closed)
	}
	if ms := list(t, f, "support-bot", "user_id=carol"); len(ms) != 0 {
		t.Errorf("carol has %d memories", len(ms))
	}
}

// A session nobody closes ends when its TTL runs out: the expiry worker
// turns it into memories. The worker here runs on a clock 25 seconds ahead,
// so that it finds the 20-second session due before any other worker
// sharing this Redis could, and a slow machine cannot make the session due
// before the first look (session/store_test.go covers the due set with a
// one-second TTL, and the keys' own Redis TTL).
func TestSessionExpiryBecomesMemory(t *testing.T) {
	f := apptest.Start(t)
	appendTurns(t, f, "support-bot", "ttl-1", memory.AppendRequest{UserID: "bob", TTLSeconds: 20, Turns: userTurns(
		"Please don't call me after 6 pm, email is better.",
	)})
	ctx := context.Background()
	worker := func(ahead time.Duration) *session.Expirer {
		return session.NewExpirer(f.App.Sessions, session.ExpirerOptions{
			End: func(ctx context.Context, s memory.Session) error {
				_, err := f.App.Working.EndSession(ctx, s)
				return err
			},
			Now: func() time.Time { return time.Now().Add(ahead) },
		})
	}
	// Before the TTL the worker leaves it alone.
	if _, err := worker(0).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if r := f.Do(t, "support-bot", http.MethodGet, "/v1/sessions/ttl-1", nil); r.Status != http.StatusOK {
		t.Fatalf("session gone before its TTL: %d", r.Status)
	}
	if _, err := worker(25 * time.Second).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if r := f.Do(t, "support-bot", http.MethodGet, "/v1/sessions/ttl-1", nil); r.Status != http.StatusNotFound {
		t.Fatalf("session still open after its TTL: %d %s", r.Status, r.Body)
	}
	ms := list(t, f, "support-bot", "user_id=bob")
	var kinds []string
	for _, m := range ms {
		kinds = append(kinds, m.Kind+":"+m.Key)
		if m.SessionID != "ttl-1" || m.AgentID != "support-bot" {
			t.Errorf("memory %+v", m)
		}
	}
	if len(ms) != 2 || !has(kinds, "constraint:contact_channel") || !has(kinds, "session:") {
		t.Errorf("after expiry bob has %v", kinds)
	}
}

func TestSessionCapsAndErrors(t *testing.T) {
	f := apptest.Start(t)
	const bot = "support-bot"
	many := make([]memory.Turn, workingmemory.MaxIngestTurns)
	for i := range many {
		many[i] = memory.Turn{Role: memory.RoleUser, Content: fmt.Sprintf("turn %d", i)}
	}
	appendTurns(t, f, bot, "full-1", memory.AppendRequest{UserID: "alice", Turns: many})
	r := f.Do(t, bot, http.MethodPost, "/v1/sessions/full-1/turns", memory.AppendRequest{UserID: "alice", Turns: userTurns("one more")})
	if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), `"session_full"`) {
		t.Errorf("past the cap: %d %s, want 409 session_full", r.Status, r.Body)
	}
	r = f.Do(t, bot, http.MethodGet, "/v1/sessions/full-1", nil)
	var s memory.Session
	r.Decode(t, &s)
	if len(s.Turns) != workingmemory.MaxIngestTurns || s.Turns[len(s.Turns)-1].Content != "turn 199" {
		t.Errorf("after refusal: %d turns", len(s.Turns))
	}

	tests := []struct {
		name, who, id string
		body          any
		status        int
		code          string
	}{
		{"another user in the session", bot, "full-1", memory.AppendRequest{UserID: "bob", Turns: userTurns("hi")}, 403, "forbidden"},
		{"bob writes for alice", "bob", "b-1", memory.AppendRequest{UserID: "alice", Turns: userTurns("hi")}, 403, "forbidden"},
		{"no turns", bot, "e-1", memory.AppendRequest{UserID: "alice"}, 400, "invalid_argument"},
		{"bad role", bot, "e-1", map[string]any{"user_id": "alice", "turns": []map[string]string{{"role": "narrator", "content": "x"}}}, 400, "invalid_argument"},
		{"bad ttl", bot, "e-1", memory.AppendRequest{UserID: "alice", TTLSeconds: -1, Turns: userTurns("hi")}, 400, "invalid_argument"},
		{"bad id", bot, "bad%20id", memory.AppendRequest{UserID: "alice", Turns: userTurns("hi")}, 400, "invalid_argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, tc.who, http.MethodPost, "/v1/sessions/"+tc.id+"/turns", tc.body)
			if r.Status != tc.status || !strings.Contains(string(r.Body), `"`+tc.code+`"`) {
				t.Errorf("%d %s, want %d %s", r.Status, r.Body, tc.status, tc.code)
			}
		})
	}
}

// Erasing a user reaches working memory: open sessions go with their turns.
func TestEraseUserRemovesSessions(t *testing.T) {
	f := apptest.Start(t)
	secret := "zq" + strings.ReplaceAll(f.Tenant, "-", "") + "plan"
	for _, id := range []string{"erase-1", "erase-2"} {
		appendTurns(t, f, "support-bot", id, memory.AppendRequest{UserID: "carol", Turns: userTurns("My secret project is " + secret)})
	}
	appendTurns(t, f, "support-bot", "keep-1", memory.AppendRequest{UserID: "bob", Turns: userTurns("Bob's turn")})
	r := f.Do(t, "carol", http.MethodDelete, "/v1/users/carol", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("erase: %d %s", r.Status, r.Body)
	}
	var receipt memory.Receipt
	r.Decode(t, &receipt)
	if receipt.Counts[f.App.Sessions.Place()] != 2 {
		t.Errorf("receipt = %v, want 2 sessions", receipt.Counts)
	}
	for _, id := range []string{"erase-1", "erase-2"} {
		if r := f.Do(t, "support-bot", http.MethodGet, "/v1/sessions/"+id, nil); r.Status != http.StatusNotFound {
			t.Errorf("session %s after erase: %d", id, r.Status)
		}
	}
	if r := f.Do(t, "support-bot", http.MethodGet, "/v1/sessions/keep-1", nil); r.Status != http.StatusOK {
		t.Errorf("bob's session after carol's erase: %d", r.Status)
	}
	ctx := context.Background()
	keys, err := testenv.ScanKeys(ctx, f.App.Redis, "*")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(k, "carol") && strings.Contains(k, f.Tenant) {
			t.Errorf("key left: %s", k)
		}
		if f.App.Redis.Type(ctx, k).Val() == "list" {
			for _, v := range f.App.Redis.LRange(ctx, k, 0, -1).Val() {
				if strings.Contains(v, secret) {
					t.Errorf("carol's turn left in %s", k)
				}
			}
		}
	}
}
