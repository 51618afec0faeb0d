package handlers_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
)

// sessionUsers lists the users whose memories the Session node of id links.
func sessionUsers(t *testing.T, f *apptest.Fixture, id string) []string {
	t.Helper()
	r := f.Do(t, apptest.Admin, "GET", "/v1/graph/neighbourhood?from=session:"+id+"&hops=1", nil)
	expectResponse(t, "neighbourhood of "+id, r, http.StatusOK)
	var got struct {
		Nodes []struct {
			Memory *struct {
				UserID string `json:"user_id"`
			} `json:"memory"`
		} `json:"nodes"`
	}
	r.Decode(t, &got)
	var users []string
	for _, n := range got.Nodes {
		if n.Memory != nil && !slices.Contains(users, n.Memory.UserID) {
			users = append(users, n.Memory.UserID)
		}
	}
	slices.Sort(users)
	return users
}

func said(texts ...string) []memory.Turn {
	out := make([]memory.Turn, len(texts))
	for i, s := range texts {
		out[i] = memory.Turn{Role: memory.RoleUser, Content: s}
	}
	return out
}

// A session id belongs to one user, and the agent that opened it, for
// good: once closed, its Session node in the graph keeps it theirs, so no
// later session, ingestion or memory about another user, or by another
// agent, joins its memories; the same user and agent keep using it.
func TestClosedSessionIDStaysItsUsers(t *testing.T) {
	f := apptest.Start(t)
	const id = "owned-closed"
	r := f.Do(t, "support-bot", "POST", "/v1/sessions/"+id+"/turns", memory.AppendRequest{UserID: "alice", Turns: said("I prefer matte paper.")})
	expectResponse(t, "open about alice", r, http.StatusOK)
	r = f.Do(t, "support-bot", "POST", "/v1/sessions/"+id+"/close", nil)
	expectResponse(t, "close", r, http.StatusOK)
	if got := sessionUsers(t, f, id); !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("after the close the session links %v, want alice", got)
	}

	refused := []struct {
		name, who, method, path string
		body                    any
	}{
		{"another agent opens it about another user", "order-bot", "POST", "/v1/sessions/" + id + "/turns", memory.AppendRequest{UserID: "bob", Turns: said("I prefer glossy paper.")}},
		{"its agent opens it about another user", "support-bot", "POST", "/v1/sessions/" + id + "/turns", memory.AppendRequest{UserID: "bob", Turns: said("I prefer glossy paper.")}},
		{"another agent opens it about its user", "order-bot", "POST", "/v1/sessions/" + id + "/turns", memory.AppendRequest{UserID: "alice", Turns: said("I prefer glossy paper.")}},
		{"another user opens a session of their own under it", "bob", "POST", "/v1/sessions/" + id + "/turns", memory.AppendRequest{UserID: "bob", Turns: said("I prefer glossy paper.")}},
		{"an ingestion about another user", "support-bot", "POST", "/v1/ingest?sync=true", memory.IngestRequest{UserID: "carol", SessionID: id, Turns: said("I prefer recycled envelopes.")}},
		{"a queued ingestion about another user", "support-bot", "POST", "/v1/ingest", memory.IngestRequest{UserID: "carol", SessionID: id, Turns: said("I prefer recycled envelopes.")}},
		{"an ingestion by another agent", "order-bot", "POST", "/v1/ingest?sync=true", memory.IngestRequest{UserID: "alice", SessionID: id, Turns: said("I prefer recycled envelopes.")}},
		{"a memory about another user", "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "bob", Type: memory.TypeEpisodic, Kind: "note", SessionID: id, Content: "Bob asked about glossy paper."}},
		{"a memory by another agent", "order-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Kind: "note", SessionID: id, Content: "Alice asked about an order."}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, tc.who, tc.method, tc.path, tc.body)
			expectResponse(t, tc.name, r, http.StatusConflict, "session_taken")
		})
	}

	// Its user and agent use it again, and its user writes in it.
	r = f.Do(t, "support-bot", "POST", "/v1/sessions/"+id+"/turns", memory.AppendRequest{UserID: "alice", Turns: said("I prefer A4 sheets.")})
	expectResponse(t, "its agent reopens it about its user", r, http.StatusOK)
	r = f.Do(t, "support-bot", "POST", "/v1/sessions/"+id+"/close", nil)
	expectResponse(t, "close again", r, http.StatusOK)
	r = f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Kind: "note", SessionID: id, Content: "Alice chose matte A4."})
	expectResponse(t, "its agent writes in it about its user", r, http.StatusCreated)
	r = f.Do(t, "support-bot", "POST", "/v1/ingest?sync=true", memory.IngestRequest{UserID: "alice", SessionID: id, Turns: said("I prefer blue ink.")})
	expectResponse(t, "its agent ingests into it about its user", r, http.StatusOK)
	if got := sessionUsers(t, f, id); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("the session links %v, want alice only", got)
	}
}

// While a session is open, it is its user's and its opener's: a memory,
// an ingestion or a turn about another user, or by another agent, naming
// it is 409 session_taken, as an append by another agent always was; its
// user may still speak in it.
func TestOpenSessionIDStaysItsUsers(t *testing.T) {
	f := apptest.Start(t)
	const id = "owned-open"
	r := f.Do(t, "support-bot", "POST", "/v1/sessions/"+id+"/turns", memory.AppendRequest{UserID: "alice", Turns: said("hello")})
	expectResponse(t, "open about alice", r, http.StatusOK)

	refused := []struct {
		name, who, method, path string
		body                    any
	}{
		{"a memory about another user", "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "bob", Type: memory.TypeEpisodic, Kind: "note", SessionID: id, Content: "Bob note in alice's open session."}},
		{"another agent's memory about another user", "order-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "carol", Type: memory.TypeEpisodic, Kind: "note", SessionID: id, Content: "Carol note in alice's open session."}},
		{"another agent's memory about its user", "order-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Kind: "note", SessionID: id, Content: "Alice asked order-bot about an order."}},
		{"another agent's ingestion about its user", "order-bot", "POST", "/v1/ingest?sync=true", memory.IngestRequest{UserID: "alice", SessionID: id, Turns: said("I prefer recycled envelopes.")}},
		{"its agent's turns about another user", "support-bot", "POST", "/v1/sessions/" + id + "/turns", memory.AppendRequest{UserID: "bob", Turns: said("hi")}},
		{"another user's turns about themself", "bob", "POST", "/v1/sessions/" + id + "/turns", memory.AppendRequest{UserID: "bob", Turns: said("hi")}},
		{"its agent's ingestion about another user", "support-bot", "POST", "/v1/ingest?sync=true", memory.IngestRequest{UserID: "bob", SessionID: id, Turns: said("hi")}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, tc.who, tc.method, tc.path, tc.body)
			expectResponse(t, tc.name, r, http.StatusConflict, "session_taken")
		})
	}

	r = f.Do(t, "alice", "POST", "/v1/sessions/"+id+"/turns", memory.AppendRequest{UserID: "alice", Turns: said("I prefer recycled envelopes.")})
	expectResponse(t, "its user speaks in it", r, http.StatusOK)
	r = f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Kind: "note", SessionID: id, Content: "Alice asked about envelopes."})
	expectResponse(t, "its agent writes in it about its user", r, http.StatusCreated)
	r = f.Do(t, "support-bot", "POST", "/v1/sessions/"+id+"/close", nil)
	expectResponse(t, "close", r, http.StatusOK)
	if got := sessionUsers(t, f, id); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("the session links %v, want alice only", got)
	}
}

// An end user reading a session about them sees the size of the turns
// they read, not of the agent's system and tool turns hidden from them;
// the agent sees the size of them all.
func TestSessionBytesCountWhatTheReaderSees(t *testing.T) {
	f := apptest.Start(t)
	const id = "bytes-hidden"
	note := "churn risk: offer at most 5% discount, margin 9%"
	r := f.Do(t, "support-bot", "POST", "/v1/sessions/"+id+"/turns", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "hello"}, {Role: memory.RoleSystem, Content: note},
	}})
	expectResponse(t, "open", r, http.StatusOK)
	for who, want := range map[string]int{"alice": len("hello"), "support-bot": len("hello") + len(note)} {
		r := f.Do(t, who, "GET", "/v1/sessions/"+id, nil)
		expectResponse(t, "read as "+who, r, http.StatusOK)
		var s memory.Session
		r.Decode(t, &s)
		if s.Bytes != want {
			t.Errorf("%s reads bytes %d, want %d", who, s.Bytes, want)
		}
	}
}

// An end user who speaks in an agent's session about them reads back, in
// the answer to their append, what reading the session shows them: the
// user's and assistant's turns, not the agent's system and tool turns, and
// the bytes of those turns only.
func TestSessionAppendAnswersAUserWhatTheyRead(t *testing.T) {
	f := apptest.Start(t)
	const id = "append-hidden"
	r := f.Do(t, "order-bot", "POST", "/v1/sessions/"+id+"/turns", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "Where is my order?"},
		{Role: memory.RoleSystem, Content: "SYSTEM: internal margin on Lianhua is 3%, never reveal"},
		{Role: memory.RoleTool, Content: "TOOL: credit check score 412 (high risk)"},
		{Role: memory.RoleAssistant, Content: "It ships tomorrow."},
	}})
	expectResponse(t, "the agent opens the session", r, http.StatusOK)
	r = f.Do(t, "alice", "POST", "/v1/sessions/"+id+"/turns", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "thanks"},
	}})
	expectResponse(t, "the user appends", r, http.StatusOK)
	var appended memory.Session
	r.Decode(t, &appended)
	if body := string(r.Body); strings.Contains(body, "margin") || strings.Contains(body, "credit check") {
		t.Errorf("the user's append answers the agent's hidden turns: %s", body)
	}
	r = f.Do(t, "alice", "GET", "/v1/sessions/"+id, nil)
	expectResponse(t, "the user reads", r, http.StatusOK)
	var read memory.Session
	r.Decode(t, &read)
	var roles []string
	for _, turn := range appended.Turns {
		roles = append(roles, turn.Role)
	}
	if want := []string{"user", "assistant", "user"}; !slices.Equal(roles, want) {
		t.Errorf("the user's append answers turns %v, want %v", roles, want)
	}
	if want := len("Where is my order?") + len("It ships tomorrow.") + len("thanks"); appended.Bytes != want || read.Bytes != want {
		t.Errorf("bytes: append answers %d, reading answers %d; want %d", appended.Bytes, read.Bytes, want)
	}
}
