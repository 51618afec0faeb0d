package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mneme/internal/apptest"
	"mneme/mcp"
	"mneme/memory"
	"mneme/workingmemory"
)

// bearer adds an API key to every request of the MCP client.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session to the real server with the SDK's client.
func connect(t *testing.T, f *apptest.Fixture, key string) (*sdk.ClientSession, error) {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "mneme-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: f.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{key}}, MaxRetries: -1,
	}, nil)
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

func session(t *testing.T, f *apptest.Fixture, who string) *sdk.ClientSession {
	t.Helper()
	s, err := connect(t, f, f.Keys[who])
	if err != nil {
		t.Fatalf("connect as %s: %v", who, err)
	}
	return s
}

// call calls a tool that must succeed and decodes its structured result.
func call(t *testing.T, s *sdk.ClientSession, tool string, args any, out any) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", tool, text(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: decode %s: %v", tool, raw, err)
	}
}

// refused calls a tool that must fail with the API code want.
func refused(t *testing.T, s *sdk.ClientSession, tool string, args any, want string) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v (want a tool error, not a protocol error)", tool, err)
	}
	if !res.IsError {
		t.Fatalf("%s: succeeded, want tool error %s", tool, want)
	}
	var e mcp.ToolError
	if err := json.Unmarshal([]byte(text(res)), &e); err != nil {
		t.Fatalf("%s: error text %q is not a tool error: %v", tool, text(res), err)
	}
	if e.Code != want || e.Status == 0 || e.Message == "" {
		t.Errorf("%s: tool error %+v, want code %s with a status and message", tool, e, want)
	}
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// property is what a test reads of an input schema's property.
type property struct {
	Type        any      `json:"type"`
	Description string   `json:"description"`
	Minimum     *float64 `json:"minimum"`
	Maximum     *float64 `json:"maximum"`
	MinItems    *int     `json:"minItems"`
	MaxItems    *int     `json:"maxItems"`
}

func TestToolsAreListedWithSchemas(t *testing.T) {
	f := apptest.Start(t)
	s := session(t, f, "support-bot")
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 30 {
			t.Errorf("%s: description %q says too little", tool.Name, tool.Description)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		var in struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(schema, &in); err != nil || in.Type != "object" || len(in.Properties) == 0 {
			t.Errorf("%s: input schema %s is not an object schema with properties", tool.Name, schema)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s: no output schema", tool.Name)
		}
	}
	slices.Sort(names)
	want := []string{"confirm", "forget", "history", "ingest", "list", "recall", "remember"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	// What a tool's arguments may hold and what leaving one out means,
	// as the service has it: an agent plans its calls by the schema.
	props := map[string]map[string]property{}
	for _, tool := range res.Tools {
		var in struct {
			Properties map[string]property `json:"properties"`
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(schema, &in); err != nil {
			t.Fatal(err)
		}
		props[tool.Name] = in.Properties
	}
	for _, tc := range []struct {
		tool, prop string
		lo, hi     float64
		says       string // what the description says leaving it out means
	}{
		{"recall", "k", 0, memory.MaxRecallK, fmt.Sprintf("the default, %d", memory.DefaultRecallK)},
		{"recall", "budget", 0, memory.MaxRecallBudget, "no cap"},
		{"list", "limit", 1, memory.MaxListSize, fmt.Sprintf("left out: %d", memory.DefaultListSize)},
	} {
		p := props[tc.tool][tc.prop]
		if p.Minimum == nil || p.Maximum == nil || *p.Minimum != tc.lo || *p.Maximum != tc.hi {
			t.Errorf("%s.%s: schema range %v to %v, want %v to %v", tc.tool, tc.prop, p.Minimum, p.Maximum, tc.lo, tc.hi)
		}
		if !strings.Contains(p.Description, tc.says) {
			t.Errorf("%s.%s: description %q, want it to say %q", tc.tool, tc.prop, p.Description, tc.says)
		}
	}
	for _, tc := range []struct {
		tool, prop string
		hi         int
	}{{"remember", "memories", memory.MaxBatch}, {"ingest", "turns", workingmemory.MaxIngestTurns}} {
		p := props[tc.tool][tc.prop]
		if p.Type != "array" || p.MinItems == nil || p.MaxItems == nil || *p.MinItems != 1 || *p.MaxItems != tc.hi {
			t.Errorf("%s.%s: schema %+v, want an array of 1 to %d items", tc.tool, tc.prop, p, tc.hi)
		}
	}
	for _, tool := range res.Tools {
		if tool.Name != mcp.ToolRemember {
			continue
		}
		schema, _ := json.Marshal(tool.InputSchema)
		for _, v := range []string{`"required":["memories"]`, `"profile"`, `"restricted"`} {
			if !strings.Contains(string(schema), v) {
				t.Errorf("remember's input schema lacks %s: %s", v, schema)
			}
		}
	}
}

// Each principal is offered the tools its kind may call: an analyst, who
// never writes, only the read-only ones; the others every tool.
func TestToolsAreListedByKind(t *testing.T) {
	f := apptest.Start(t)
	every := []string{"confirm", "forget", "history", "ingest", "list", "recall", "remember"}
	for _, tc := range []struct {
		who  string
		want []string
	}{
		{apptest.Analyst, []string{"history", "list", "recall"}},
		{"support-bot", every},
		{"alice", every},
		{apptest.Admin, every},
	} {
		t.Run(tc.who, func(t *testing.T) {
			res, err := session(t, f, tc.who).ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.want) {
				t.Errorf("tools %v, want %v", names, tc.want)
			}
		})
	}
}

func TestEveryToolAgainstTheRealService(t *testing.T) {
	f := apptest.Start(t)
	bot := session(t, f, "support-bot")

	// remember: two memories in one call.
	var written mcp.RememberOut
	call(t, bot, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"user_id": "alice", "type": "semantic", "kind": "address", "key": "delivery_address",
			"content": "Alice's delivery address is Rua Augusta 12 in Lisbon."},
		{"user_id": "alice", "type": "episodic", "content": "Alice reported that parcel 7731 arrived damaged."},
	}}, &written)
	if len(written.Results) != 2 {
		t.Fatalf("remember: %d results, want 2", len(written.Results))
	}
	for _, r := range written.Results {
		if r.Outcome != memory.OutcomeCreated || r.ID == "" || r.Memory == nil || r.Memory.AgentID != "support-bot" {
			t.Errorf("remember: result %+v, want a created memory written by support-bot", r)
		}
	}
	addr := written.Results[0].ID

	// recall: the context block and the memories with their ids.
	var recalled mcp.RecallOut
	call(t, bot, mcp.ToolRecall, map[string]any{"user_id": "alice", "query": "Where should Alice's delivery go?"}, &recalled)
	if !strings.Contains(recalled.Context, "Rua Augusta") || !strings.HasPrefix(recalled.Context, "<memories>") {
		t.Errorf("recall: context %q lacks the preference", recalled.Context)
	}
	if !slices.ContainsFunc(recalled.Memories, func(m mcp.Recalled) bool { return m.ID == addr && m.Score > 0 }) {
		t.Errorf("recall: memories %+v lack %s", recalled.Memories, addr)
	}

	// A new version of the slot, then list and history.
	call(t, bot, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"user_id": "alice", "type": "semantic", "kind": "address", "key": "delivery_address", "content": "Alice's delivery address is now Praça do Comércio 3 in Lisbon."},
	}}, &written)
	head := written.Results[0].ID
	var page memory.Page
	call(t, bot, mcp.ToolList, map[string]any{"user_id": "alice", "kind": "address", "status": "active"}, &page)
	if len(page.Memories) != 1 || page.Memories[0].ID != head {
		t.Errorf("list: %+v, want only the new version %s active", page.Memories, head)
	}
	var hist mcp.HistoryOut
	call(t, bot, mcp.ToolHistory, map[string]any{"memory_id": head}, &hist)
	if len(hist.Memories) != 2 || hist.Memories[0].ID != head || hist.Memories[1].ID != addr {
		t.Errorf("history: %+v, want %s then %s", hist.Memories, head, addr)
	}

	// ingest: a stated budget becomes a memory written as the caller.
	var ingested memory.IngestResult
	call(t, bot, mcp.ToolIngest, map[string]any{"user_id": "alice", "session_id": "mcp-s1", "turns": []map[string]any{
		{"role": "user", "content": "My budget is 3000 euros for the new laptops."},
		{"role": "assistant", "content": "Noted."},
	}}, &ingested)
	if !slices.ContainsFunc(ingested.Memories, func(m memory.Memory) bool {
		return m.Key == "budget" && m.AgentID == "support-bot" && strings.Contains(m.Content, "3000")
	}) {
		t.Errorf("ingest: %+v, want a budget memory by support-bot", ingested)
	}

	// confirm: an inference waits for its user; the agent may not confirm it.
	call(t, bot, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"user_id": "alice", "type": "profile", "kind": "preference", "content": "Alice seems to prefer morning deliveries.", "source": "inferred"},
	}}, &written)
	guess := written.Results[0]
	if guess.Status != memory.StatusCandidate {
		t.Fatalf("an inference is %q, want candidate", guess.Status)
	}
	refused(t, bot, mcp.ToolConfirm, map[string]any{"memory_id": guess.ID}, "forbidden")
	var confirmed memory.Memory
	call(t, session(t, f, "alice"), mcp.ToolConfirm, map[string]any{"memory_id": guess.ID}, &confirmed)
	if confirmed.Status != memory.StatusActive {
		t.Errorf("confirm: status %q, want active", confirmed.Status)
	}

	// forget: a receipt, and the memory is gone for every tool.
	var receipt memory.Receipt
	call(t, bot, mcp.ToolForget, map[string]any{"memory_id": head}, &receipt)
	if receipt.MemoryID != head || receipt.Counts["graph.memories"] != 2 {
		t.Errorf("forget: receipt %+v", receipt)
	}
	refused(t, bot, mcp.ToolHistory, map[string]any{"memory_id": head}, "not_found")
	refused(t, bot, mcp.ToolForget, map[string]any{"memory_id": head}, "not_found")

	// Bad input is the API's invalid_argument.
	refused(t, bot, mcp.ToolRecall, map[string]any{"user_id": "alice", "query": "x", "k": -1}, "invalid_argument")
	// Arguments the SDK refuses before a tool runs answer in the same shape.
	refused(t, bot, mcp.ToolRecall, map[string]any{"user_id": "alice", "query": "x", "k": "five"}, "invalid_argument")
	refused(t, bot, mcp.ToolHistory, map[string]any{"id": head}, "invalid_argument")
}

func TestPolicyAppliesToEveryCall(t *testing.T) {
	f := apptest.Start(t)
	bot := session(t, f, "support-bot")
	var written mcp.RememberOut
	call(t, bot, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"user_id": "alice", "type": "semantic", "content": "Alice's company is moving to Lisbon in May."},
	}}, &written)
	id := written.Results[0].ID

	// Another user, and an agent without a grant, do not see it at all.
	bob := session(t, f, "bob")
	for _, tool := range []string{mcp.ToolHistory, mcp.ToolForget, mcp.ToolConfirm} {
		refused(t, bob, tool, map[string]any{"memory_id": id}, "not_found")
	}
	orders := session(t, f, "order-bot")
	refused(t, orders, mcp.ToolHistory, map[string]any{"memory_id": id}, "not_found")
	var recalled mcp.RecallOut
	call(t, orders, mcp.ToolRecall, map[string]any{"user_id": "alice", "query": "Where is Alice's company moving?"}, &recalled)
	if len(recalled.Memories) != 0 || strings.Contains(recalled.Context, "Lisbon") {
		t.Errorf("order-bot recalled %+v without a grant", recalled)
	}
	var page memory.Page
	call(t, bob, mcp.ToolList, map[string]any{}, &page)
	if len(page.Memories) != 0 {
		t.Errorf("bob lists %+v, want nothing of alice's", page.Memories)
	}

	// An end user writes as themself only: not as an agent, not about others.
	alice := session(t, f, "alice")
	refused(t, alice, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"user_id": "alice", "agent_id": "support-bot", "type": "profile", "content": "Alice is a platinum member."},
	}}, "forbidden")
	refused(t, alice, mcp.ToolIngest, map[string]any{"user_id": "bob", "turns": []map[string]any{
		{"role": "user", "content": "My budget is 10 euros."},
	}}, "forbidden")
	call(t, alice, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"user_id": "alice", "type": "profile", "kind": "preference", "content": "I like short answers."},
	}}, &written)
	if m := written.Results[0].Memory; m == nil || m.AgentID != "user:alice" {
		t.Errorf("alice's own memory: %+v, want author user:alice", written.Results[0])
	}

	// A backdated fact and shared knowledge are refused as REST refuses
	// them, not as fields the tool does not know.
	refused(t, bot, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"user_id": "alice", "type": "semantic", "content": "Alice moved offices last spring.", "observed_at": time.Now().AddDate(0, -6, 0).Format(time.RFC3339)},
	}}, "backdate_forbidden")
	refused(t, bot, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"type": "procedural", "content": "Refunds above 1000 CNY need a second approval.", "scope": map[string]any{"kind": "tenant"}},
	}}, "forbidden")
	refused(t, bot, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"type": "semantic", "content": "A memory about nobody."},
	}}, "invalid_argument")
	call(t, bot, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"user_id": "alice", "type": "semantic", "content": "Alice called about the Lisbon move a minute ago.", "observed_at": time.Now().Add(-time.Minute).Format(time.RFC3339)},
	}}, &written)
	if written.Results[0].Outcome != memory.OutcomeCreated {
		t.Errorf("a fact observed a minute ago: %+v, want created", written.Results[0])
	}
}

func TestUnauthenticatedCallsAreRefused(t *testing.T) {
	f := apptest.Start(t)
	for name, key := range map[string]string{"no key": "", "a wrong key": "mn_" + f.Tenant + "_notakey0000000000000000"} {
		t.Run(name, func(t *testing.T) {
			if _, err := connect(t, f, key); err == nil {
				t.Fatal("connected without a valid key")
			}
			r := f.Do(t, key, "POST", "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
				"Accept", "application/json, text/event-stream")
			// An HTTP challenge, and a JSON-RPC error an MCP client can read
			// carrying the API's code.
			if got := r.Header.Get("WWW-Authenticate"); r.Status != http.StatusUnauthorized || got != `Bearer realm="mneme"` {
				t.Errorf("tools/list: %d with WWW-Authenticate %q, want 401 with Bearer realm=\"mneme\"", r.Status, got)
			}
			var e struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int
					Message string
					Data    struct{ Code string }
				}
			}
			if err := json.Unmarshal(r.Body, &e); err != nil || e.JSONRPC != "2.0" || string(e.ID) != "null" ||
				e.Error.Code != -32600 || e.Error.Message == "" || e.Error.Data.Code != "unauthenticated" {
				t.Errorf("tools/list: body %s, want a JSON-RPC error -32600 with a null id and data.code unauthenticated", r.Body)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want JSON", ct)
			}
		})
	}
	// The same request with a key is answered.
	r := f.Do(t, "support-bot", "POST", "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		"Accept", "application/json, text/event-stream")
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"remember"`) {
		t.Errorf("tools/list with a key: %d %.300s", r.Status, r.Body)
	}
}

// Requests the SDK refuses before any method runs are answered in JSON-RPC,
// with the HTTP status the refusal calls for and the code that names it,
// under the request's id whenever it could be read (null only when it
// could not: the body is no JSON object, or is refused before its id is
// read), so that a client can tell which of its requests failed.
func TestRefusedRequestsAreJSONRPCErrors(t *testing.T) {
	f := apptest.Start(t)
	accept := []string{"Accept", "application/json, text/event-stream"}
	tests := []struct {
		name    string
		body    string
		headers []string
		code    int
		id      string // the answer's id, as JSON
	}{
		{"malformed JSON", `{"jsonrpc":"2.0",`, accept, -32700, "null"},
		{"an id too large for a number", `{"jsonrpc":"2.0","id":` + strings.Repeat("9", 400) + `,"method":"tools/list"}`, accept, -32600, "null"},
		{"an id past 64 bits", `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`, accept, -32600, "null"},
		{"an id that is no integer", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, accept, -32600, "null"},
		{"an id a float64 cannot hold", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, accept, -32600, "null"},
		{"data after the message", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, accept, -32700, "null"},
		{"garbage after the message", `{"jsonrpc":"2.0","id":1,"method":"ping"}garbage`, accept, -32700, "null"},
		{"an id given twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, accept, -32700, "null"},
		{"an argument given twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list","arguments":{"user_id":"alice","user_id":"bob","limit":2}}}`, accept, -32700, "null"},
		{"a NUL in an argument", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"user_id":"alice","query":"tea\u0000"}}}`, accept, -32600, "null"},
		{"a NUL in the id", `{"jsonrpc":"2.0","id":"a\u0000b","method":"ping"}`, accept, -32600, "null"},
		{"an empty batch", `[]`, accept, -32600, "null"},
		{"bytes that are not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"remember\",\"arguments\":" +
			"{\"memories\":[{\"user_id\":\"alice\",\"type\":\"semantic\",\"content\":\"caf\xe9 au lait\"}]}}}", accept, -32700, "null"},
		{"a batch", " \n[" + `{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, accept, -32600, "null"},
		{"a batch in a protocol version that had them", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, append([]string{"Mcp-Protocol-Version", "2025-03-26"}, accept...), -32600, "null"},
		{"another JSON-RPC version", `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, accept, -32600, "1"},
		{"an unknown method", `{"jsonrpc":"2.0","id":1,"method":"nope"}`, accept, -32601, "1"},
		{"no Accept header", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, -32600, "1"},
		{"a tool call without params", `{"jsonrpc":"2.0","id":42,"method":"tools/call"}`, accept, -32600, "42"},
		{"a resource read without params", `{"jsonrpc":"2.0","id":"r-7","method":"resources/read"}`, accept, -32600, `"r-7"`},
		{"a completion without params", `{"jsonrpc":"2.0","id":-3,"method":"completion/complete"}`, accept, -32600, "-3"},
		{"a log level without params", `{"jsonrpc":"2.0","id":0,"method":"logging/setLevel"}`, accept, -32600, "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, "support-bot", "POST", "/mcp", []byte(tc.body), tc.headers...)
			if r.Status < 400 || r.Status >= 500 {
				t.Errorf("status %d, want a 4xx", r.Status)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want JSON", ct)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(r.Body, &got); err != nil {
				t.Fatalf("body %q is no JSON: %v", r.Body, err)
			}
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Data    struct {
					Code string `json:"code"`
				} `json:"data"`
			}
			_ = json.Unmarshal(got["error"], &e)
			if string(got["jsonrpc"]) != `"2.0"` || string(got["id"]) != tc.id || e.Code != tc.code || e.Message == "" {
				t.Errorf("answer %.300s, want a JSON-RPC 2.0 error %d with a message and the id %s", r.Body, tc.code, tc.id)
			}
			if e.Data.Code != "" {
				t.Errorf("answer %.300s: an endpoint's refusal with the API's code %q", r.Body, e.Data.Code)
			}
		})
	}
}

// A body over the limit is refused as /v1 refuses one, 413 with the API's
// body_too_large, in a JSON-RPC error that carries the code in its data as
// every refusal of the API does, so that a client tells it from the rest.
func TestABodyTooLargeNamesItsCode(t *testing.T) {
	f := apptest.Start(t)
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"recall","arguments":{"user_id":"alice","query":"` +
		strings.Repeat("x", 1<<20) + `"}}}`
	r := f.Do(t, "support-bot", "POST", "/mcp", []byte(body), "Accept", "application/json, text/event-stream")
	var got struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Code string `json:"code"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("body %.300q is no JSON: %v", r.Body, err)
	}
	if r.Status != http.StatusRequestEntityTooLarge || got.JSONRPC != "2.0" || string(got.ID) != "null" || got.Error.Code != -32600 ||
		got.Error.Data.Code != "body_too_large" || !strings.Contains(got.Error.Message, "1048576 bytes") {
		t.Errorf("%d %.300s, want 413 and a JSON-RPC error -32600 with data.code body_too_large and the limit", r.Status, r.Body)
	}
}

// Arguments that do not fit a tool are refused in the caller's terms: the
// argument and what was expected, never the server's Go types.
func TestArgumentErrorsNameTheArgument(t *testing.T) {
	f := apptest.Start(t)
	const rfc3339 = "must be a time in RFC 3339 form, such as 2026-01-31T09:00:00Z"
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"recall", `"notanobject"`, "arguments must be a JSON object"},
		{"recall", `[1,2]`, "arguments must be a JSON object"},
		{"recall", `{"user_id":"alice"}`, "query: is required"},
		{"recall", `{"user_id":"alice","query":"x","k":"five"}`, "k: must be an integer"},
		{"recall", `{"user_id":"alice","query":"x","k":1.0}`, "k: must be an integer"},
		{"recall", `{"user_id":"alice","query":"x","k":100000000000000000000}`, "k: is out of range"},
		{"recall", `{"user_id":"alice","query":"x","types":["gossip"]}`, "types[0]: must be one of episodic, semantic, procedural, profile"},
		{"remember", `5`, "arguments must be a JSON object"},
		{"remember", `{"user_id":"alice","type":"semantic","content":"x"}`, "content: unknown argument (the arguments are memories)"},
		{"remember", `{"memories":[5]}`, "memories[0]: must be an object"},
		{"remember", `{"memories":[{"user_id":"alice","type":"semantic","content":"x","observed_at":"yesterday"}]}`, "memories[0].observed_at: " + rfc3339},
		{"remember", `{"memories":[{"user_id":"alice","type":"semantic","content":"x","importance":"high"}]}`, "memories[0].importance: must be a number"},
		{"remember", `{"memories":[{"user_id":"alice","type":"semantic","content":"x","importance":1e400}]}`, "memories[0].importance: is out of range"},
		{"remember", `{"memories":[{"user_id":"alice","type":"semantic","content":"x","scope":{"kind":"tenant","colour":1}}]}`, "memories[0].scope.colour: unknown field (the fields are id, kind)"},
		{"remember", `{"memories":[{"user_id":"alice","type":"semantic","content":"x","importance":2}]}`, "memories[0].importance: must be between 0 and 1"},
		{"remember", `{"memories":[{"user_id":"alice","type":"semantic","content":"x","importance":0.5},{"user_id":"alice","type":"semantic","content":"y","importance":-1}]}`, "memories[1].importance: must be between 0 and 1"},
		{"remember", `{"memories":[{"user_id":"alice","type":"semantic","content":"x","confidence":1.5}]}`, "memories[0].confidence: must be between 0 and 1"},
		{"remember", `{"memories":[]}`, "memories: must hold between 1 and 100 items"},
		{"remember", `{"memories":null}`, "memories: must be an array"},
		// The service's checks name the one memory as the schema's do.
		{"remember", `{"memories":[{"user_id":"alice","type":"semantic","content":"x","source":"` + strings.Repeat("s", 65) + `"}]}`, "memories[0].source: must be at most 64 bytes"},
		{"remember", `{"memories":[{"user_id":"alice","type":"semantic","content":"x"},{"user_id":"alice","type":"semantic","content":"y","source":"` + strings.Repeat("s", 65) + `"}]}`, "memories[1].source: must be at most 64 bytes"},
		// The ranges the input schemas declare, which are the service's.
		{"recall", `{"user_id":"alice","query":"x","k":51}`, "k: must be between 0 and 50"},
		{"recall", `{"user_id":"alice","query":"x","k":-1}`, "k: must be between 0 and 50"},
		{"recall", `{"user_id":"alice","query":"x","budget":100001}`, "budget: must be between 0 and 100000"},
		{"list", `{"limit":0}`, "limit: must be between 1 and 500"},
		{"list", `{"limit":501}`, "limit: must be between 1 and 500"},
		{"ingest", `{"user_id":"alice","turns":[]}`, "turns: must hold between 1 and 200 items"},
		{"ingest", `true`, "arguments must be a JSON object"},
		{"ingest", `{"user_id":"alice","turns":[{"role":"user","content":"hi","at":"yesterday"}]}`, "turns[0].at: " + rfc3339},
		{"ingest", `{"user_id":"alice","turns":{}}`, "turns: must be an array"},
		{"forget", `"mem_1"`, "arguments must be a JSON object"},
		{"forget", `{"memory_id":["a","b"]}`, "memory_id: must be a string"},
		{"list", `{"limit":1e30}`, "limit: must be an integer"},
		{"history", `{"memory_id":null}`, "memory_id: must be a string"},
		{"confirm", `{"id":"mem_1"}`, "id: unknown argument (the arguments are memory_id)"},
	} {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tc.tool + `","arguments":` + tc.args + `}}`
			r := f.Do(t, "support-bot", "POST", "/mcp", []byte(body), "Accept", "application/json, text/event-stream")
			var answer struct {
				Result struct {
					IsError bool
					Content []struct{ Text string }
				}
			}
			r.Decode(t, &answer)
			var e mcp.ToolError
			if r.Status != http.StatusOK || !answer.Result.IsError || len(answer.Result.Content) != 1 ||
				json.Unmarshal([]byte(answer.Result.Content[0].Text), &e) != nil {
				t.Fatalf("%d %s, want a tool error", r.Status, r.Body)
			}
			if e.Code != "invalid_argument" || e.Status != http.StatusBadRequest || e.Message != tc.want {
				t.Errorf("tool error %+v, want invalid_argument: %s", e, tc.want)
			}
		})
	}
}

// An analyst's tools that write are refused as forbidden whatever their
// arguments hold, as REST refuses them.
func TestAnalystsNeverWrite(t *testing.T) {
	f := apptest.Start(t)
	bot := session(t, f, "support-bot")
	var written mcp.RememberOut
	call(t, bot, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"user_id": "alice", "type": "semantic", "content": "Alice's office moved to Lisbon in May."},
	}}, &written)
	// An analyst's role reads no profile: its refusal says nothing of one.
	var profile mcp.RememberOut
	call(t, bot, mcp.ToolRemember, map[string]any{"memories": []map[string]any{
		{"user_id": "bob", "type": "profile", "content": "Bob prefers calls after 6pm."},
	}}, &profile)
	hidden := profile.Results[0].ID
	ana := session(t, f, apptest.Analyst)
	turns := []map[string]any{{"role": "user", "content": "My budget is 300 euros."}}
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
	}{
		{"remember without agent_id", mcp.ToolRemember, map[string]any{"memories": []map[string]any{{"user_id": "alice", "type": "profile", "content": "Alice likes tea."}}}},
		{"remember naming an agent", mcp.ToolRemember, map[string]any{"memories": []map[string]any{{"user_id": "alice", "agent_id": "support-bot", "type": "profile", "content": "Alice likes tea."}}}},
		{"remember without user_id", mcp.ToolRemember, map[string]any{"memories": []map[string]any{{"type": "profile", "content": "Alice likes tea."}}}},
		{"ingest", mcp.ToolIngest, map[string]any{"user_id": "alice", "turns": turns}},
		{"forget", mcp.ToolForget, map[string]any{"memory_id": written.Results[0].ID}},
		{"forget out of sight", mcp.ToolForget, map[string]any{"memory_id": hidden}},
		{"forget no memory", mcp.ToolForget, map[string]any{"memory_id": "mem_0000000000000000000000ff"}},
		{"confirm out of sight", mcp.ToolConfirm, map[string]any{"memory_id": hidden}},
	} {
		t.Run(tc.name, func(t *testing.T) { refused(t, ana, tc.tool, tc.args, "forbidden") })
	}
}

// A result holds the fields of the protocol version the request speaks:
// the cache hints (ttlMs, cacheScope) that 2026-07-28 gave list results
// are no field of 2025-11-25's, which the server announces to a client
// that initializes with it.
func TestResultsHoldTheFieldsOfTheVersionSpoken(t *testing.T) {
	f := apptest.Start(t)
	post := func(t *testing.T, version, body string, headers ...string) map[string]json.RawMessage {
		t.Helper()
		r := f.Do(t, "support-bot", "POST", "/mcp", []byte(body), append(headers,
			"Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", version)...)
		var answer struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		r.Decode(t, &answer)
		if r.Status != http.StatusOK || answer.Result == nil {
			t.Fatalf("%d %s, want a result", r.Status, r.Body)
		}
		return answer.Result
	}
	init := post(t, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+
		`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if string(init["protocolVersion"]) != `"2025-11-25"` {
		t.Fatalf("initialize announced %s, want 2025-11-25", init["protocolVersion"])
	}
	// The fields of each result in the 2025-11-25 schema.
	for method, fields := range map[string][]string{
		"tools/list":               {"_meta", "nextCursor", "tools"},
		"resources/list":           {"_meta", "nextCursor", "resources"},
		"resources/templates/list": {"_meta", "nextCursor", "resourceTemplates"},
		"prompts/list":             {"_meta", "nextCursor", "prompts"},
	} {
		t.Run(method, func(t *testing.T) {
			res := post(t, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":{}}`)
			for name := range res {
				if !slices.Contains(fields, name) {
					t.Errorf("result field %s is none of 2025-11-25's %v", name, fields)
				}
			}
			if len(res) == 0 {
				t.Errorf("empty result")
			}
		})
	}
	// A request of 2026-07-28 gets them: that version's schema requires them.
	res := post(t, "2026-07-28", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"Mcp-Method", "tools/list")
	if res["ttlMs"] == nil || res["cacheScope"] == nil || res["tools"] == nil {
		t.Errorf("2026-07-28 result %v, want tools with ttlMs and cacheScope", slices.Sorted(maps.Keys(res)))
	}
}
