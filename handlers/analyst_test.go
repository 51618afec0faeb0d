package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mneme/client"
	"mneme/internal/apptest"
)

// An analyst never writes: every write path answers 403 forbidden, whatever
// the body holds, not a complaint about a field that would make no
// difference.
func TestAnalystsNeverWrite(t *testing.T) {
	f := apptest.Start(t)
	id := write(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice's office moved to Lisbon in May."}).ID
	// An analyst's role reads no profile: whether this one exists is none
	// of its business, and its refusal says nothing of it.
	hidden := write(t, f, "support-bot", client.NewMemory{UserID: "bob", Type: client.TypeProfile, Content: "Bob prefers calls after 6pm."}).ID
	if r := f.Do(t, apptest.Analyst, http.MethodGet, "/v1/memories/"+hidden, nil); r.Status != http.StatusNotFound {
		t.Fatalf("the analyst reads bob's profile: %d %s", r.Status, r.Body)
	}
	turn := map[string]any{"role": "user", "content": "My budget is 300 euros."}
	for _, tc := range []struct {
		name, method, path string
		body               any
		headers            []string
	}{
		{"a memory without agent_id", http.MethodPost, "/v1/memories", map[string]any{"user_id": "alice", "type": "profile", "content": "Alice likes tea."}, nil},
		{"a memory naming an agent", http.MethodPost, "/v1/memories", map[string]any{"user_id": "alice", "agent_id": "support-bot", "type": "profile", "content": "Alice likes tea."}, nil},
		{"a memory without user_id", http.MethodPost, "/v1/memories", map[string]any{"type": "profile", "content": "Alice likes tea."}, nil},
		{"a memory of no type", http.MethodPost, "/v1/memories", map[string]any{"user_id": "alice", "content": "Alice likes tea."}, nil},
		{"an empty memory", http.MethodPost, "/v1/memories", map[string]any{}, nil},
		{"a batch", http.MethodPost, "/v1/memories", map[string]any{"memories": []map[string]any{{"user_id": "alice", "type": "profile", "content": "Alice likes tea."}}}, nil},
		{"an async batch", http.MethodPost, "/v1/memories?async=true", map[string]any{"memories": []map[string]any{{"user_id": "alice", "type": "profile", "content": "Alice likes tea."}}}, nil},
		{"an ingest", http.MethodPost, "/v1/ingest", map[string]any{"user_id": "alice", "turns": []any{turn}}, nil},
		{"an ingest without user_id", http.MethodPost, "/v1/ingest", map[string]any{"turns": []any{turn}}, nil},
		{"an ingest without turns", http.MethodPost, "/v1/ingest?sync=true", map[string]any{"user_id": "alice"}, nil},
		{"a session turn", http.MethodPost, "/v1/sessions/s-ana/turns", map[string]any{"user_id": "alice", "turns": []any{turn}}, nil},
		{"a session turn without user_id", http.MethodPost, "/v1/sessions/s-ana/turns", map[string]any{"turns": []any{turn}}, nil},
		{"a session turn without turns", http.MethodPost, "/v1/sessions/s-ana/turns", map[string]any{"user_id": "alice"}, nil},
		{"a change", http.MethodPatch, "/v1/memories/" + id, map[string]any{"content": "Alice's office moved to Porto."}, nil},
		{"a delete", http.MethodDelete, "/v1/memories/" + id, nil, nil},
		{"a change out of sight", http.MethodPatch, "/v1/memories/" + hidden, map[string]any{"content": "Bob prefers e-mail."}, nil},
		{"a change of nothing", http.MethodPatch, "/v1/memories/" + id, map[string]any{}, nil},
		{"a delete out of sight", http.MethodDelete, "/v1/memories/" + hidden, nil, nil},
		{"a delete of no memory", http.MethodDelete, "/v1/memories/mem_0000000000000000000000ff", nil, nil},
		{"a delete with too long a reason", http.MethodDelete, "/v1/memories/" + id + "?reason=" + strings.Repeat("x", 201), nil, nil},
		{"a confirmation out of sight", http.MethodPost, "/v1/memories/" + hidden + "/confirm", nil, nil},
		// What the route would refuse as malformed is refused for the
		// caller's rights first.
		{"a memory with an unknown field", http.MethodPost, "/v1/memories", []byte(`{"bogus":1}`), nil},
		{"a memory that is no JSON", http.MethodPost, "/v1/memories", []byte(`{"user_id":`), nil},
		{"a memory under a blank Idempotency-Key", http.MethodPost, "/v1/memories", map[string]any{"user_id": "alice", "type": "profile", "content": "Alice likes tea."}, []string{"Idempotency-Key", " "}},
		{"a memory under too long an Idempotency-Key", http.MethodPost, "/v1/memories", map[string]any{"user_id": "alice", "type": "profile", "content": "Alice likes tea."}, []string{"Idempotency-Key", strings.Repeat("k", 129)}},
		{"a memory with a bad async flag", http.MethodPost, "/v1/memories?async=maybe", map[string]any{"user_id": "alice", "type": "profile", "content": "Alice likes tea."}, nil},
		{"a change with a bad If-Match", http.MethodPatch, "/v1/memories/" + id, map[string]any{"content": "Alice's office moved to Porto."}, []string{"If-Match", "soon"}},
		{"a change with an unknown field", http.MethodPatch, "/v1/memories/" + id, []byte(`{"bogus":1}`), nil},
		{"a delete with a body", http.MethodDelete, "/v1/memories/" + id, []byte(`{"bogus":1}`), nil},
		{"a confirmation with a body", http.MethodPost, "/v1/memories/" + id + "/confirm", []byte(`[1,2`), nil},
		{"an ingest with an unknown field", http.MethodPost, "/v1/ingest", []byte(`{"bogus":1}`), nil},
		{"an ingest with a bad sync flag", http.MethodPost, "/v1/ingest?sync=maybe", map[string]any{"user_id": "alice", "turns": []any{turn}}, nil},
		{"an ingest under a blank Idempotency-Key", http.MethodPost, "/v1/ingest", map[string]any{"user_id": "alice", "turns": []any{turn}}, []string{"Idempotency-Key", " "}},
		{"a session turn with an unknown field", http.MethodPost, "/v1/sessions/s-ana/turns", []byte(`{"bogus":1}`), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(t, apptest.Analyst, tc.method, tc.path, tc.body, tc.headers...)
			var e struct{ Code string }
			if r.Decode(t, &e); r.Status != http.StatusForbidden || e.Code != "forbidden" {
				t.Errorf("%d %s, want 403 forbidden", r.Status, r.Body)
			}
		})
	}
}
