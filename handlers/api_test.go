package handlers_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mneme/client"
	"mneme/identity"
	"mneme/internal/apptest"
	"mneme/memory"
)

// create writes one memory as who through the Go client and returns it,
// failing unless it was created.
func create(t *testing.T, f *apptest.Fixture, who string, m client.NewMemory) client.Memory {
	t.Helper()
	w, err := f.Client(t, who).Add(t.Context(), m)
	if err != nil {
		t.Fatalf("create as %s: %v", who, err)
	}
	out := written(t, w)
	if out.Outcome != client.OutcomeCreated {
		t.Fatalf("create as %s: %+v, want one memory created", who, w)
	}
	return out
}

// written is the memory a write of one stored, with the outcome and the
// masked kinds its result reports: a batch answer carries them in results,
// the memories being the stored ones.
func written(t *testing.T, w client.WriteResponse) client.Memory {
	t.Helper()
	if len(w.Results) != 1 || len(w.Memories) != 1 || w.Memories[0].ID != w.Results[0].ID {
		t.Fatalf("write = %+v, want one memory stored", w)
	}
	m := w.Memories[0]
	m.Outcome, m.Redacted = w.Results[0].Outcome, w.Results[0].Redacted
	return m
}

func recall(t *testing.T, f *apptest.Fixture, who string, r client.RecallRequest) client.RecallResult {
	t.Helper()
	out, err := f.Client(t, who).Recall(t.Context(), r)
	if err != nil {
		t.Fatalf("recall as %s: %v", who, err)
	}
	return out
}

// list returns the first page of a listing as who; query holds the filters
// in URL form (user_id=alice&kind=budget&limit=500).
func list(t *testing.T, f *apptest.Fixture, who, query string) []client.Memory {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatalf("list filters %q: %v", query, err)
	}
	o := client.ListOptions{UserID: q.Get("user_id"), Type: q.Get("type"), Kind: q.Get("kind"), Status: q.Get("status")}
	if l := q.Get("limit"); l != "" {
		if o.Limit, err = strconv.Atoi(l); err != nil {
			t.Fatalf("list limit %q: %v", l, err)
		}
	}
	for k := range q {
		if !slices.Contains([]string{"user_id", "type", "kind", "status", "limit"}, k) {
			t.Fatalf("list filter %s is not one of the client's", k)
		}
	}
	page, err := f.Client(t, who).List(t.Context(), o)
	if err != nil {
		t.Fatalf("list as %s: %v", who, err)
	}
	return page.Memories
}

// wantAPIError fails the test unless err is an API error of the status and
// code, with a message and a request id.
func wantAPIError(t *testing.T, step string, err error, status int, code string) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v, want %d %s", step, err, status, code)
		return
	}
	if e.Status != status || e.Code != code || e.Message == "" || e.RequestID == "" {
		t.Errorf("%s: %+v, want %d %s with a message and request id", step, e, status, code)
	}
}

func ids(ms []client.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func recalledIDs(r client.RecallResult) []string {
	out := make([]string, len(r.Memories))
	for i, m := range r.Memories {
		out[i] = m.Memory.ID
	}
	return out
}

func has(list []string, id string) bool {
	for _, x := range list {
		if x == id {
			return true
		}
	}
	return false
}

func TestPreferenceRecalledInNewSession(t *testing.T) {
	f := apptest.Start(t)
	// A preference is trusted once seen in two sessions.
	for _, session := range []string{"s-0", "s-1"} {
		write(t, f, "support-bot", client.NewMemory{
			UserID: "alice", SessionID: session, Type: client.TypeProfile, Kind: "preference", Key: "answer_style",
			Content: "Alice prefers short answers without long explanations.",
		})
	}
	pref := list(t, f, "support-bot", "user_id=alice&kind=preference&status=active")[0]
	create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", SessionID: "s-1", Type: client.TypeEpisodic, Kind: "ticket",
		Content: "Alice asked how to reset the password of her dashboard account.",
	})
	got := recall(t, f, "support-bot", client.RecallRequest{
		UserID: "alice", SessionID: "s-2", Query: "How long should my answers to Alice be? Does she prefer short answers?",
	})
	if len(got.Memories) == 0 || got.Memories[0].Memory.ID != pref.ID {
		t.Fatalf("recall in a new session = %v, want the preference %s first", recalledIDs(got), pref.ID)
	}
	if !strings.Contains(got.Context, "short answers") || !strings.Contains(got.Context, "not instructions") {
		t.Errorf("context block = %q", got.Context)
	}
	if e := got.Memories[0].Explain; len(e.Sources) == 0 || !strings.HasPrefix(e.Policy, "allow") {
		t.Errorf("explain = %+v", e)
	}
}

func TestUsersNeverSeeEachOther(t *testing.T) {
	f := apptest.Start(t)
	a := create(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's purchasing budget is 100k.",
	})
	a2 := create(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's purchasing budget is 150k.",
	})
	mine := create(t, f, "bob", client.NewMemory{
		UserID: "bob", Type: client.TypeProfile, Kind: "preference", Content: "Bob likes detailed answers about budgets.",
	})

	// Alice sees her own; Bob sees only his, whatever ids he names.
	if got := list(t, f, "alice", "user_id=alice"); !has(ids(got), a2.ID) {
		t.Fatalf("alice's own list = %v, want %s", ids(got), a2.ID)
	}
	bob := f.Client(t, "bob")
	for _, id := range []string{a.ID, a2.ID} {
		_, err := bob.Get(t.Context(), id)
		wantAPIError(t, "bob gets "+id, err, http.StatusNotFound, "not_found")
		_, err = bob.History(t.Context(), id)
		wantAPIError(t, "bob reads the history of "+id, err, http.StatusNotFound, "not_found")
		_, err = bob.Delete(t.Context(), id)
		wantAPIError(t, "bob deletes "+id, err, http.StatusNotFound, "not_found")
		_, err = bob.Update(t.Context(), id, 0, client.UpdateRequest{Content: ptrTo("hijacked")})
		wantAPIError(t, "bob updates "+id, err, http.StatusNotFound, "not_found")
	}
	for _, q := range []string{"user_id=alice", "", "user_id=alice&status=superseded"} {
		got := list(t, f, "bob", q)
		for _, m := range got {
			if m.UserID != "bob" {
				t.Errorf("bob list %q returned %s about %s", q, m.ID, m.UserID)
			}
		}
	}
	if got := list(t, f, "bob", ""); !has(ids(got), mine.ID) {
		t.Errorf("bob's own list = %v, want %s", ids(got), mine.ID)
	}
	got := recall(t, f, "bob", client.RecallRequest{UserID: "alice", Query: "What is Alice's purchasing budget?"})
	if len(got.Memories) != 0 {
		t.Errorf("bob recalled alice's memories: %v", recalledIDs(got))
	}
	// Writing about someone else is refused.
	_, err := bob.Add(t.Context(), client.NewMemory{UserID: "alice", Type: client.TypeProfile, Content: "Alice likes spam."})
	wantAPIError(t, "bob writing about alice", err, http.StatusForbidden, "forbidden")
}

func TestBudgetSupersededAndHistoryKept(t *testing.T) {
	f := apptest.Start(t)
	old := create(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's procurement budget is 100k CNY.",
	})
	cur := create(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's procurement budget is 150k CNY.",
	})
	if cur.Version != 2 || cur.Supersedes != old.ID {
		t.Fatalf("new budget = version %d supersedes %q, want 2 and %s", cur.Version, cur.Supersedes, old.ID)
	}
	got := recall(t, f, "order-bot", client.RecallRequest{UserID: "alice", Query: "What is Alice's procurement budget?"})
	if len(got.Memories) == 0 || got.Memories[0].Memory.ID != cur.ID {
		t.Fatalf("recall = %v, want %s (150k) first", recalledIDs(got), cur.ID)
	}
	if has(recalledIDs(got), old.ID) {
		t.Errorf("recall returned the superseded 100k budget")
	}
	hist, err := f.Client(t, "order-bot").History(t.Context(), cur.ID)
	if err != nil || len(hist) != 2 || hist[0].ID != cur.ID || hist[1].ID != old.ID {
		t.Fatalf("history = %v, %v; want [%s %s]", ids(hist), err, cur.ID, old.ID)
	}
	if h := hist[1]; h.Status != client.StatusSuperseded || h.ValidTo == nil || !strings.Contains(h.Content, "100k") {
		t.Errorf("old version = %+v, want superseded 100k with valid_to", h)
	}
}

func TestUpdateWithIfMatch(t *testing.T) {
	f := apptest.Start(t)
	m := create(t, f, "support-bot", client.NewMemory{UserID: "carol", Type: client.TypeProfile, Content: "Carol works in Hangzhou."})
	bot := f.Client(t, "support-bot")
	next, err := bot.Update(t.Context(), m.ID, 1, client.UpdateRequest{Content: ptrTo("Carol works in Suzhou.")})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if next.Version != 2 || next.Supersedes != m.ID {
		t.Errorf("new version = %+v", next)
	}
	// The version is the ETag, which the client does not show.
	if resp := f.Do(t, "support-bot", http.MethodGet, "/v1/memories/"+next.ID, nil); resp.Header.Get("ETag") != `"2"` {
		t.Errorf("etag of the new version = %q, want 2", resp.Header.Get("ETag"))
	}
	// The old id is no longer the head: a stale If-Match conflicts.
	_, err = bot.Update(t.Context(), m.ID, 1, client.UpdateRequest{Content: ptrTo("Carol works in Ningbo.")})
	wantAPIError(t, "stale update", err, http.StatusConflict, "conflict")
	_, err = bot.Update(t.Context(), next.ID, 1, client.UpdateRequest{Content: ptrTo("Carol works in Ningbo.")})
	wantAPIError(t, "update with the old version", err, http.StatusConflict, "conflict")
	// A version that changes nothing is refused, and none is written.
	_, err = bot.Update(t.Context(), next.ID, 0, client.UpdateRequest{})
	wantAPIError(t, "update that changes nothing", err, http.StatusBadRequest, "invalid_argument")
	if head := getMemory(t, f, "support-bot", next.ID); head.Version != 2 || head.Status != memory.StatusActive {
		t.Errorf("after an empty update the head is version %d, %s; want 2, active", head.Version, head.Status)
	}
	// The new version is embedded afresh: recall finds it by meaning.
	got := recall(t, f, "support-bot", client.RecallRequest{UserID: "carol", Query: "Which city does Carol work in? Suzhou?"})
	if len(got.Memories) != 1 || got.Memories[0].Memory.ID != next.ID || got.Memories[0].Explain.VectorSimilarity < 0.25 {
		t.Errorf("recall after update = %+v, want only %s found by vector", got.Memories, next.ID)
	}
}

func TestUnrelatedQuestionRecallsNothing(t *testing.T) {
	f := apptest.Start(t)
	for _, c := range []string{
		"Alice prefers short answers.",
		"Alice's membership expires on 1 March.",
		"Order SO-1001 for 20 office chairs shipped on 3 November.",
		"爱丽丝的采购预算是十五万元。",
	} {
		create(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: c})
	}
	for _, q := range []string{"what's the weather today", "今天天气怎么样", "tell me a joke about penguins"} {
		if got := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: q}); len(got.Memories) != 0 {
			t.Errorf("recall %q = %d memories (%v), want none", q, len(got.Memories), got.Memories[0].Explain)
		}
	}
	if got := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "When does Alice's membership expire?"}); len(got.Memories) == 0 {
		t.Errorf("a related question recalled nothing")
	}
}

func TestSharingGrants(t *testing.T) {
	f := apptest.Start(t)
	order := create(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeEpisodic, Kind: "order_status", Content: "Order SO-2001 for Alice shipped on 5 November.",
	})
	cost := create(t, f, "finance-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "internal_cost", Sensitivity: client.SensitivityConfidential,
		Content: "Internal cost of Alice's order SO-2001 is 38k; margin 12%.",
	})
	canSee := func(who string, m client.Memory) bool {
		t.Helper()
		_, err := f.Client(t, who).Get(t.Context(), m.ID)
		if err != nil && client.Code(err) != "not_found" {
			t.Fatalf("%s gets %s: %v", who, m.ID, err)
		}
		get := err == nil
		listed := has(ids(list(t, f, who, "user_id=alice")), m.ID)
		recalled := has(recalledIDs(recall(t, f, who, client.RecallRequest{UserID: "alice", Query: "order SO-2001 cost shipped", K: 10})), m.ID)
		if get != listed || get != recalled {
			t.Errorf("%s on %s: get=%v list=%v recall=%v disagree", who, m.ID, get, listed, recalled)
		}
		return get
	}
	if canSee("support-bot", order) || canSee("support-bot", cost) {
		t.Fatalf("support-bot sees memories before any grant")
	}

	admin := f.Client(t, "admin")
	grant := func(g client.NewGrant) client.Grant {
		out, err := admin.CreateGrant(t.Context(), g)
		if err != nil || out.ID == "" || out.Grantee != g.Grantee || out.Source != g.Source {
			t.Fatalf("grant = %+v, %v", out, err)
		}
		return out
	}
	orders := grant(client.NewGrant{Grantee: "support-bot", Source: "order-bot", Types: []string{"episodic", "semantic"},
		Kinds: []string{"order_status"}, MaxSensitivity: "internal"})
	if !canSee("support-bot", order) {
		t.Errorf("support-bot cannot read order facts through the grant")
	}
	if canSee("support-bot", cost) {
		t.Errorf("support-bot reads the finance-bot's internal cost")
	}
	// A wide grant still stops at its sensitivity ceiling.
	wide := grant(client.NewGrant{Grantee: "support-bot", Source: "*", Types: memory.Types, MaxSensitivity: "internal"})
	if canSee("support-bot", cost) {
		t.Errorf("confidential cost visible through an internal-only grant")
	}
	finance := grant(client.NewGrant{Grantee: "support-bot", Source: "finance-bot", Types: []string{"semantic"}, MaxSensitivity: "confidential"})
	if !canSee("support-bot", cost) {
		t.Errorf("grant to finance memories did not take effect")
	}
	for _, g := range []client.Grant{finance, wide, orders} {
		if err := admin.DeleteGrant(t.Context(), g.ID); err != nil {
			t.Fatalf("delete grant: %v", err)
		}
	}
	if canSee("support-bot", order) || canSee("support-bot", cost) {
		t.Errorf("support-bot still reads after the grants were removed")
	}
	// A grant names one of the tenant's agents, not itself as source: a
	// mistyped id, a user, or another tenant's agent could never use it.
	other := apptest.Start(t)
	if r := other.Do(t, apptest.Admin, http.MethodPost, "/v1/principals", identity.NewPrincipal{Kind: memory.KindAgent, ID: "globex-bot"}); r.Status != http.StatusCreated {
		t.Fatalf("agent of another tenant: %d %s", r.Status, r.Body)
	}
	for _, grantee := range []string{"suport-bot", "alice", "globex-bot"} {
		_, err := admin.CreateGrant(t.Context(), client.NewGrant{Grantee: grantee, Source: "*", Types: memory.Types, MaxSensitivity: "internal"})
		wantAPIError(t, "grant to "+grantee, err, http.StatusUnprocessableEntity, "unknown_principal")
	}
	_, err := admin.CreateGrant(t.Context(), client.NewGrant{Grantee: "order-bot", Source: "order-bot", Types: memory.Types, MaxSensitivity: "internal"})
	wantAPIError(t, "grant of an agent's own memories", err, http.StatusBadRequest, "invalid_argument")
	// Only admins manage grants.
	_, err = f.Client(t, "support-bot").CreateGrant(t.Context(), client.NewGrant{Grantee: "support-bot", Source: "*", Types: memory.Types, MaxSensitivity: "restricted"})
	wantAPIError(t, "agent creating a grant", err, http.StatusForbidden, "forbidden")
}

func TestOtherTenantIDIsNotFound(t *testing.T) {
	f := apptest.Start(t)
	other := apptest.Start(t)
	m := create(t, other, "order-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Other tenant's secret budget."})
	for _, who := range []string{"order-bot", "admin", "alice"} {
		c := f.Client(t, who)
		_, err := c.Get(t.Context(), m.ID)
		wantAPIError(t, who+" gets a memory of another tenant", err, http.StatusNotFound, "not_found")
		_, err = c.History(t.Context(), m.ID)
		wantAPIError(t, who+" reads a history of another tenant", err, http.StatusNotFound, "not_found")
	}
	// Naming the other tenant in the body does not help. The client has no
	// tenant field, so the forged body goes through its Do.
	err := f.Client(t, "admin").Do(t.Context(), http.MethodPost, "/v1/memories", memory.NewMemory{
		Tenant: other.Tenant, UserID: "alice", AgentID: "order-bot", Type: client.TypeSemantic, Content: "planted",
	}, nil)
	wantAPIError(t, "writing into another tenant", err, http.StatusForbidden, "forbidden")
	if got := list(t, other, "admin", "user_id=alice"); len(got) != 1 {
		t.Errorf("other tenant now has %d memories, want 1", len(got))
	}
}

func TestBadInputWritesNothing(t *testing.T) {
	f := apptest.Start(t)
	valid := `{"user_id":"alice","type":"semantic","content":"fine"}`
	big := fmt.Sprintf(`{"user_id":"alice","type":"semantic","content":%q}`, strings.Repeat("x", 2<<20))
	tests := []struct {
		name     string
		who      string
		body     []byte
		headers  []string
		status   int
		code     string
		creating bool
	}{
		{name: "malformed JSON", who: "support-bot", body: []byte(`{"user_id":"alice",`), status: 400, code: "bad_json"},
		{name: "not an object", who: "support-bot", body: []byte(`[1,2]`), status: 400, code: "bad_json"},
		{name: "unknown field", who: "support-bot", body: []byte(`{"user_id":"alice","type":"semantic","content":"x","colour":"red"}`), status: 400, code: "bad_json"},
		{name: "trailing data", who: "support-bot", body: []byte(valid + `{}`), status: 400, code: "bad_json"},
		{name: "wrong field type", who: "support-bot", body: []byte(`{"user_id":7,"type":"semantic","content":"x"}`), status: 400, code: "bad_json"},
		{name: "invalid UTF-8", who: "support-bot", body: []byte("{\"user_id\":\"alice\",\"type\":\"semantic\",\"content\":\"\xff\xfe\"}"), status: 400, code: "invalid_utf8"},
		{name: "oversized body", who: "support-bot", body: []byte(big), status: 413, code: "body_too_large"},
		{name: "unknown type", who: "support-bot", body: []byte(`{"user_id":"alice","type":"gossip","content":"x"}`), status: 400, code: "invalid_argument"},
		{name: "empty content", who: "support-bot", body: []byte(`{"user_id":"alice","type":"semantic","content":"  "}`), status: 400, code: "invalid_argument"},
		{name: "bad batch item", who: "support-bot", body: []byte(`{"memories":[` + valid + `,{"user_id":"alice","type":"nope","content":"y"}]}`), status: 400, code: "invalid_argument"},
		{name: "empty batch", who: "support-bot", body: []byte(`{"memories":[]}`), status: 400, code: "invalid_argument"},
		{name: "one idempotency key on two memories", who: "support-bot", body: []byte(`{"memories":[{"user_id":"alice","type":"semantic","content":"Alice's van is white.","idempotency_key":"k"},` +
			`{"user_id":"alice","type":"semantic","content":"Alice's van is red.","idempotency_key":"k"}]}`), status: 400, code: "invalid_argument"},
		{name: "wrong content type", who: "support-bot", body: []byte(valid), headers: []string{"Content-Type", "text/plain"}, status: 415, code: "unsupported_media_type"},
		{name: "missing key", who: "", body: []byte(valid), status: 401, code: "unauthenticated"},
		{name: "wrong key", who: "mn_" + f.Tenant + "_0000000000000000", body: []byte(valid), status: 401, code: "unauthenticated"},
		{name: "malformed key", who: "hunter2", body: []byte(valid), status: 401, code: "unauthenticated"},
		{name: "agent writing as another agent", who: "support-bot", body: []byte(`{"user_id":"alice","agent_id":"finance-bot","type":"semantic","content":"x"}`), status: 403, code: "forbidden"},
		{name: "valid control", who: "support-bot", body: []byte(`{"user_id":"bob","type":"semantic","content":"control"}`), status: 201, creating: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.Do(t, tt.who, http.MethodPost, "/v1/memories", tt.body, tt.headers...)
			if resp.Status != tt.status {
				t.Fatalf("status = %d %s, want %d", resp.Status, resp.Body, tt.status)
			}
			if tt.creating {
				return
			}
			var e struct {
				Code, Message string
				RequestID     string `json:"request_id"`
			}
			resp.Decode(t, &e)
			if e.Code != tt.code || e.Message == "" || e.RequestID == "" || e.RequestID != resp.Header.Get("X-Request-ID") {
				t.Errorf("error body = %s, want code %q with message and request id", resp.Body, tt.code)
			}
			// A 401 names the scheme it asks for; no other answer does.
			want := ""
			if tt.status == http.StatusUnauthorized {
				want = `Bearer realm="mneme"`
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != want {
				t.Errorf("WWW-Authenticate %q, want %q", got, want)
			}
		})
	}
	if got := list(t, f, "admin", "user_id=alice"); len(got) != 0 {
		t.Errorf("bad requests wrote %d memories about alice: %v", len(got), ids(got))
	}
	if got := list(t, f, "admin", "user_id=bob"); len(got) != 1 {
		t.Errorf("the control request wrote %d memories, want 1", len(got))
	}
}

func TestAnalystReadsWhatTheRoleAllows(t *testing.T) {
	f := apptest.Start(t)
	rule := create(t, f, "order-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "rule", Content: "Orders above 50k need approval."})
	how := create(t, f, "support-bot", client.NewMemory{UserID: "bob", Type: client.TypeProcedural, Content: "Refunds go through the after-sales desk."})
	pref := create(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeProfile, Content: "Alice prefers short answers."})
	cost := create(t, f, "finance-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Sensitivity: client.SensitivityConfidential, Content: "Internal margin 12%."})

	got := ids(list(t, f, "analyst", ""))
	for _, m := range []client.Memory{rule, how} {
		if !has(got, m.ID) {
			t.Errorf("analyst cannot read %s %s", m.Type, m.ID)
		}
	}
	for _, m := range []client.Memory{pref, cost} {
		if has(got, m.ID) {
			t.Errorf("analyst reads %s (%s, %s)", m.ID, m.Type, m.Sensitivity)
		}
		_, err := f.Client(t, "analyst").Get(t.Context(), m.ID)
		wantAPIError(t, "analyst gets "+m.ID, err, http.StatusNotFound, "not_found")
	}
	_, err := f.Client(t, "analyst").Add(t.Context(), client.NewMemory{UserID: "alice", AgentID: "order-bot", Type: client.TypeSemantic, Content: "x"})
	wantAPIError(t, "analyst write", err, http.StatusForbidden, "forbidden")
}

// Deleting an agent revokes the grants that name it, as grantee or source:
// an agent made later under the same id does not inherit them. Each
// revocation is in the audit trail.
func TestDeletedAgentsGrantsGo(t *testing.T) {
	f := apptest.Start(t)
	order := create(t, f, "order-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "order_status", Content: "Alice's order SO-3001 ships on Friday."})
	admin := f.Client(t, apptest.Admin)
	newAgent := func() {
		r := f.Do(t, apptest.Admin, http.MethodPost, "/v1/principals", identity.NewPrincipal{Kind: memory.KindAgent, ID: "temp-bot", Team: "support"})
		expectResponse(t, "create temp-bot", r, http.StatusCreated)
		key := identity.NewAPIKey(f.Tenant)
		if err := f.App.Identity.PutKey(t.Context(), key, memory.Principal{Tenant: f.Tenant, Kind: memory.KindAgent, ID: "temp-bot", Team: "support"}, ""); err != nil {
			t.Fatal(err)
		}
		f.Keys["temp-bot"] = key
	}
	newAgent()
	for _, g := range []client.NewGrant{
		{Grantee: "temp-bot", Source: "order-bot", Types: []string{"semantic"}, MaxSensitivity: "internal"},
		{Grantee: "support-bot", Source: "temp-bot", Types: []string{"semantic"}, MaxSensitivity: "internal"},
	} {
		if _, err := admin.CreateGrant(t.Context(), g); err != nil {
			t.Fatalf("grant %+v: %v", g, err)
		}
	}
	keep, err := admin.CreateGrant(t.Context(), client.NewGrant{Grantee: "support-bot", Source: "order-bot", Types: []string{"episodic"}, MaxSensitivity: "internal"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Client(t, "temp-bot").Get(t.Context(), order.ID); err != nil {
		t.Fatalf("temp-bot reads through its grant: %v", err)
	}

	r := f.Do(t, apptest.Admin, http.MethodDelete, "/v1/principals/agent/temp-bot", nil)
	expectResponse(t, "delete temp-bot", r, http.StatusNoContent)
	set, err := admin.ListGrants(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Grants) != 1 || set.Grants[0].ID != keep.ID {
		t.Errorf("grants after the agent's deletion: %+v; want only %s", set.Grants, keep.ID)
	}
	newAgent()
	if _, err := f.Client(t, "temp-bot").Get(t.Context(), order.ID); client.Code(err) != "not_found" {
		t.Errorf("an agent made again under the id reads through the old grant: %v", err)
	}
	r = f.Do(t, apptest.Admin, http.MethodGet, "/v1/audit?action=grant.delete", nil)
	expectResponse(t, "audit", r, http.StatusOK)
	var trail struct{ Events []memory.AuditEvent }
	r.Decode(t, &trail)
	if len(trail.Events) != 2 {
		t.Errorf("audited grant deletions: %+v; want the two revoked", trail.Events)
	}
}

// TestRepeatedOrMisleadingHeadersAreRefused: a header that says who calls,
// under which key a write is kept or in which form its body comes is read
// once: given twice (or the key in two headers) it is 400, a body in
// another charset or compressed is 415, and nothing is written.
func TestRepeatedOrMisleadingHeadersAreRefused(t *testing.T) {
	f := apptest.Start(t)
	body := `{"user_id":"bob","type":"semantic","content":"Bob's dock opens at seven."}`
	send := func(method, path string, headers [][2]string) (int, string) {
		t.Helper()
		var rd io.Reader
		if method == http.MethodPost {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, f.URL+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range headers {
			req.Header.Add(h[0], h[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct{ Code string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Code
	}
	bearer := func(who string) [2]string { return [2]string{"Authorization", "Bearer " + f.Keys[who]} }
	json := [2]string{"Content-Type", "application/json"}
	for _, tc := range []struct {
		name, method, path string
		headers            [][2]string
		status             int
		code               string
	}{
		{"two keys, a user's first", "GET", "/v1/whoami", [][2]string{bearer("alice"), bearer("admin")}, 400, "invalid_argument"},
		{"two keys, the admin's first", "GET", "/v1/whoami", [][2]string{bearer("admin"), bearer("alice")}, 400, "invalid_argument"},
		{"a key in both headers", "GET", "/v1/whoami", [][2]string{bearer("alice"), {"X-API-Key", f.Keys["admin"]}}, 400, "invalid_argument"},
		{"two idempotency keys", "POST", "/v1/memories", [][2]string{bearer("support-bot"), json, {"Idempotency-Key", "a"}, {"Idempotency-Key", "b"}}, 400, "invalid_argument"},
		{"two content types", "POST", "/v1/memories", [][2]string{bearer("support-bot"), json, {"Content-Type", "text/plain"}}, 400, "invalid_argument"},
		{"another charset", "POST", "/v1/memories", [][2]string{bearer("support-bot"), {"Content-Type", "application/json; charset=latin-1"}}, 415, "unsupported_media_type"},
		{"a compressed body", "POST", "/v1/memories", [][2]string{bearer("support-bot"), json, {"Content-Encoding", "gzip"}}, 415, "unsupported_media_type"},
		{"one key", "GET", "/v1/whoami", [][2]string{bearer("alice")}, 200, ""},
	} {
		if status, code := send(tc.method, tc.path, tc.headers); status != tc.status || code != tc.code {
			t.Errorf("%s: %s %s = %d %q, want %d %q", tc.name, tc.method, tc.path, status, code, tc.status, tc.code)
		}
	}
	if got := list(t, f, "admin", "user_id=bob"); len(got) != 0 {
		t.Errorf("refused requests wrote %d memories", len(got))
	}
	for _, ct := range []string{"application/json; charset=utf-8", "application/json; charset=UTF-8"} {
		if status, code := send("POST", "/v1/memories", [][2]string{bearer("support-bot"), {"Content-Type", ct}, {"Content-Encoding", "identity"}}); status/100 != 2 {
			t.Errorf("Content-Type %s = %d %q, want it written", ct, status, code)
		}
	}
}
