package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// create writes one memory as who and returns it, failing on any other status.
func create(t *testing.T, f *apptest.Fixture, who string, m memory.NewMemory) memory.Memory {
	t.Helper()
	resp := f.Do(t, who, http.MethodPost, "/v1/memories", m)
	if resp.Status != http.StatusCreated {
		t.Fatalf("create as %s: %d %s", who, resp.Status, resp.Body)
	}
	var out memory.Memory
	resp.Decode(t, &out)
	return out
}

func recall(t *testing.T, f *apptest.Fixture, who string, r memory.RecallRequest) memory.RecallResult {
	t.Helper()
	resp := f.Do(t, who, http.MethodPost, "/v1/recall", r)
	if resp.Status != http.StatusOK {
		t.Fatalf("recall as %s: %d %s", who, resp.Status, resp.Body)
	}
	var out memory.RecallResult
	resp.Decode(t, &out)
	return out
}

func list(t *testing.T, f *apptest.Fixture, who, query string) []memory.Memory {
	t.Helper()
	resp := f.Do(t, who, http.MethodGet, "/v1/memories?"+query, nil)
	if resp.Status != http.StatusOK {
		t.Fatalf("list as %s: %d %s", who, resp.Status, resp.Body)
	}
	var page memory.Page
	resp.Decode(t, &page)
	return page.Memories
}

func ids(ms []memory.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func recalledIDs(r memory.RecallResult) []string {
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
		write(t, f, "support-bot", memory.NewMemory{
			UserID: "alice", SessionID: session, Type: memory.TypeProfile, Kind: "preference", Key: "answer_style",
			Content: "Alice prefers short answers without long explanations.",
		})
	}
	pref := list(t, f, "support-bot", "user_id=alice&kind=preference&status=active")[0]
	create(t, f, "support-bot", memory.NewMemory{
		UserID: "alice", SessionID: "s-1", Type: memory.TypeEpisodic, Kind: "ticket",
		Content: "Alice asked how to reset the password of her dashboard account.",
	})
	got := recall(t, f, "support-bot", memory.RecallRequest{
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
	a := create(t, f, "order-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's purchasing budget is 100k.",
	})
	a2 := create(t, f, "order-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's purchasing budget is 150k.",
	})
	mine := create(t, f, "bob", memory.NewMemory{
		UserID: "bob", Type: memory.TypeProfile, Kind: "preference", Content: "Bob likes detailed answers about budgets.",
	})

	// Alice sees her own; Bob sees only his, whatever ids he names.
	if got := list(t, f, "alice", "user_id=alice"); !has(ids(got), a2.ID) {
		t.Fatalf("alice's own list = %v, want %s", ids(got), a2.ID)
	}
	for _, id := range []string{a.ID, a2.ID} {
		for _, path := range []string{"/v1/memories/" + id, "/v1/memories/" + id + "/history"} {
			if resp := f.Do(t, "bob", http.MethodGet, path, nil); resp.Status != http.StatusNotFound {
				t.Errorf("bob GET %s = %d %s, want 404", path, resp.Status, resp.Body)
			}
		}
		if resp := f.Do(t, "bob", http.MethodDelete, "/v1/memories/"+id, nil); resp.Status != http.StatusNotFound {
			t.Errorf("bob DELETE %s = %d, want 404", id, resp.Status)
		}
		if resp := f.Do(t, "bob", http.MethodPatch, "/v1/memories/"+id, map[string]string{"content": "hijacked"}); resp.Status != http.StatusNotFound {
			t.Errorf("bob PATCH %s = %d, want 404", id, resp.Status)
		}
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
	got := recall(t, f, "bob", memory.RecallRequest{UserID: "alice", Query: "What is Alice's purchasing budget?"})
	if len(got.Memories) != 0 {
		t.Errorf("bob recalled alice's memories: %v", recalledIDs(got))
	}
	// Writing about someone else is refused.
	if resp := f.Do(t, "bob", http.MethodPost, "/v1/memories", memory.NewMemory{
		UserID: "alice", Type: memory.TypeProfile, Content: "Alice likes spam.",
	}); resp.Status != http.StatusForbidden {
		t.Errorf("bob writing about alice = %d, want 403", resp.Status)
	}
}

func TestBudgetSupersededAndHistoryKept(t *testing.T) {
	f := apptest.Start(t)
	old := create(t, f, "order-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's procurement budget is 100k CNY.",
	})
	cur := create(t, f, "order-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "Alice's procurement budget is 150k CNY.",
	})
	if cur.Version != 2 || cur.Supersedes != old.ID {
		t.Fatalf("new budget = version %d supersedes %q, want 2 and %s", cur.Version, cur.Supersedes, old.ID)
	}
	got := recall(t, f, "order-bot", memory.RecallRequest{UserID: "alice", Query: "What is Alice's procurement budget?"})
	if len(got.Memories) == 0 || got.Memories[0].Memory.ID != cur.ID {
		t.Fatalf("recall = %v, want %s (150k) first", recalledIDs(got), cur.ID)
	}
	if has(recalledIDs(got), old.ID) {
		t.Errorf("recall returned the superseded 100k budget")
	}
	resp := f.Do(t, "order-bot", http.MethodGet, "/v1/memories/"+cur.ID+"/history", nil)
	var hist struct{ Memories []memory.Memory }
	resp.Decode(t, &hist)
	if len(hist.Memories) != 2 || hist.Memories[0].ID != cur.ID || hist.Memories[1].ID != old.ID {
		t.Fatalf("history = %v, want [%s %s]", ids(hist.Memories), cur.ID, old.ID)
	}
	if h := hist.Memories[1]; h.Status != memory.StatusSuperseded || h.ValidTo == nil || !strings.Contains(h.Content, "100k") {
		t.Errorf("old version = %+v, want superseded 100k with valid_to", h)
	}
}

func TestUpdateWithIfMatch(t *testing.T) {
	f := apptest.Start(t)
	m := create(t, f, "support-bot", memory.NewMemory{UserID: "carol", Type: memory.TypeProfile, Content: "Carol works in Hangzhou."})
	resp := f.Do(t, "support-bot", http.MethodPatch, "/v1/memories/"+m.ID, map[string]string{"content": "Carol works in Suzhou."}, "If-Match", "1")
	if resp.Status != http.StatusOK {
		t.Fatalf("patch = %d %s", resp.Status, resp.Body)
	}
	var next memory.Memory
	resp.Decode(t, &next)
	if next.Version != 2 || next.Supersedes != m.ID || resp.Header.Get("ETag") != `"2"` {
		t.Errorf("new version = %+v etag %q", next, resp.Header.Get("ETag"))
	}
	// The old id is no longer the head: a stale If-Match conflicts.
	if resp := f.Do(t, "support-bot", http.MethodPatch, "/v1/memories/"+m.ID, map[string]string{"content": "Carol works in Ningbo."}, "If-Match", "1"); resp.Status != http.StatusConflict {
		t.Errorf("stale patch = %d %s, want 409", resp.Status, resp.Body)
	}
	if resp := f.Do(t, "support-bot", http.MethodPatch, "/v1/memories/"+next.ID, map[string]string{"content": "Carol works in Ningbo."}, "If-Match", "1"); resp.Status != http.StatusConflict {
		t.Errorf("patch with old version = %d %s, want 409", resp.Status, resp.Body)
	}
	// The new version is embedded afresh: recall finds it by meaning.
	got := recall(t, f, "support-bot", memory.RecallRequest{UserID: "carol", Query: "Which city does Carol work in? Suzhou?"})
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
		create(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: c})
	}
	for _, q := range []string{"what's the weather today", "今天天气怎么样", "tell me a joke about penguins"} {
		if got := recall(t, f, "support-bot", memory.RecallRequest{UserID: "alice", Query: q}); len(got.Memories) != 0 {
			t.Errorf("recall %q = %d memories (%v), want none", q, len(got.Memories), got.Memories[0].Explain)
		}
	}
	if got := recall(t, f, "support-bot", memory.RecallRequest{UserID: "alice", Query: "When does Alice's membership expire?"}); len(got.Memories) == 0 {
		t.Errorf("a related question recalled nothing")
	}
}

func TestSharingGrants(t *testing.T) {
	f := apptest.Start(t)
	order := create(t, f, "order-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeEpisodic, Kind: "order_status", Content: "Order SO-2001 for Alice shipped on 5 November.",
	})
	cost := create(t, f, "finance-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "internal_cost", Sensitivity: memory.SensitivityConfidential,
		Content: "Internal cost of Alice's order SO-2001 is 38k; margin 12%.",
	})
	canSee := func(who string, m memory.Memory) bool {
		t.Helper()
		get := f.Do(t, who, http.MethodGet, "/v1/memories/"+m.ID, nil).Status == http.StatusOK
		listed := has(ids(list(t, f, who, "user_id=alice")), m.ID)
		recalled := has(recalledIDs(recall(t, f, who, memory.RecallRequest{UserID: "alice", Query: "order SO-2001 cost shipped", K: 10})), m.ID)
		if get != listed || get != recalled {
			t.Errorf("%s on %s: get=%v list=%v recall=%v disagree", who, m.ID, get, listed, recalled)
		}
		return get
	}
	if canSee("support-bot", order) || canSee("support-bot", cost) {
		t.Fatalf("support-bot sees memories before any grant")
	}

	grant := func(g policyadmin.NewGrant) memory.Grant {
		resp := f.Do(t, "admin", http.MethodPost, "/v1/grants", g)
		if resp.Status != http.StatusCreated {
			t.Fatalf("grant = %d %s", resp.Status, resp.Body)
		}
		var out memory.Grant
		resp.Decode(t, &out)
		return out
	}
	orders := grant(policyadmin.NewGrant{Grantee: "support-bot", Source: "order-bot", Types: []string{"episodic", "semantic"},
		Kinds: []string{"order_status"}, MaxSensitivity: "internal"})
	if !canSee("support-bot", order) {
		t.Errorf("support-bot cannot read order facts through the grant")
	}
	if canSee("support-bot", cost) {
		t.Errorf("support-bot reads the finance-bot's internal cost")
	}
	// A wide grant still stops at its sensitivity ceiling.
	wide := grant(policyadmin.NewGrant{Grantee: "support-bot", Source: "*", Types: memory.Types, MaxSensitivity: "internal"})
	if canSee("support-bot", cost) {
		t.Errorf("confidential cost visible through an internal-only grant")
	}
	finance := grant(policyadmin.NewGrant{Grantee: "support-bot", Source: "finance-bot", Types: []string{"semantic"}, MaxSensitivity: "confidential"})
	if !canSee("support-bot", cost) {
		t.Errorf("grant to finance memories did not take effect")
	}
	for _, g := range []memory.Grant{finance, wide, orders} {
		if resp := f.Do(t, "admin", http.MethodDelete, "/v1/grants/"+g.ID, nil); resp.Status != http.StatusNoContent {
			t.Fatalf("delete grant = %d %s", resp.Status, resp.Body)
		}
	}
	if canSee("support-bot", order) || canSee("support-bot", cost) {
		t.Errorf("support-bot still reads after the grants were removed")
	}
	// Only admins manage grants.
	if resp := f.Do(t, "support-bot", http.MethodPost, "/v1/grants", policyadmin.NewGrant{Grantee: "support-bot", Source: "*", Types: memory.Types, MaxSensitivity: "restricted"}); resp.Status != http.StatusForbidden {
		t.Errorf("agent creating a grant = %d, want 403", resp.Status)
	}
}

func TestOtherTenantIDIsNotFound(t *testing.T) {
	f := apptest.Start(t)
	other := apptest.Start(t)
	m := create(t, other, "order-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: "Other tenant's secret budget."})
	for _, who := range []string{"order-bot", "admin", "alice"} {
		for _, path := range []string{"/v1/memories/" + m.ID, "/v1/memories/" + m.ID + "/history"} {
			if resp := f.Do(t, who, http.MethodGet, path, nil); resp.Status != http.StatusNotFound {
				t.Errorf("%s GET %s of another tenant = %d, want 404", who, path, resp.Status)
			}
		}
	}
	// Naming the other tenant in the body does not help.
	if resp := f.Do(t, "admin", http.MethodPost, "/v1/memories", memory.NewMemory{
		Tenant: other.Tenant, UserID: "alice", AgentID: "order-bot", Type: memory.TypeSemantic, Content: "planted",
	}); resp.Status != http.StatusForbidden {
		t.Errorf("writing into another tenant = %d, want 403", resp.Status)
	}
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
	rule := create(t, f, "order-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Kind: "rule", Content: "Orders above 50k need approval."})
	how := create(t, f, "support-bot", memory.NewMemory{UserID: "bob", Type: memory.TypeProcedural, Content: "Refunds go through the after-sales desk."})
	pref := create(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeProfile, Content: "Alice prefers short answers."})
	cost := create(t, f, "finance-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Sensitivity: memory.SensitivityConfidential, Content: "Internal margin 12%."})

	got := ids(list(t, f, "analyst", ""))
	for _, m := range []memory.Memory{rule, how} {
		if !has(got, m.ID) {
			t.Errorf("analyst cannot read %s %s", m.Type, m.ID)
		}
	}
	for _, m := range []memory.Memory{pref, cost} {
		if has(got, m.ID) {
			t.Errorf("analyst reads %s (%s, %s)", m.ID, m.Type, m.Sensitivity)
		}
		if resp := f.Do(t, "analyst", http.MethodGet, "/v1/memories/"+m.ID, nil); resp.Status != http.StatusNotFound {
			t.Errorf("analyst GET %s = %d, want 404", m.ID, resp.Status)
		}
	}
	if resp := f.Do(t, "analyst", http.MethodPost, "/v1/memories", memory.NewMemory{UserID: "alice", AgentID: "order-bot", Type: memory.TypeSemantic, Content: "x"}); resp.Status != http.StatusForbidden {
		t.Errorf("analyst write = %d, want 403", resp.Status)
	}
}
