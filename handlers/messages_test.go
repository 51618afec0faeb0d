package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mneme/internal/apptest"
)

// TestRefusalsSayWhatIsWrong: a user id that is there but is no user id is
// not called missing, and the message says which letters are allowed; k
// is refused with the range the API takes, where 0 means the default.
func TestRefusalsSayWhatIsWrong(t *testing.T) {
	f := apptest.Start(t)
	for _, tc := range []struct {
		body    map[string]any
		want    string
		wantNot string
	}{
		{map[string]any{"user_id": "ali ce", "query": "x"}, "user_id: is missing or not a user id: 1–64 ASCII letters", "is required"},
		{map[string]any{"user_id": "张三", "query": "x"}, "ASCII letters", "is required"},
		{map[string]any{"user_id": "alice", "query": "x", "k": -1}, "k: must be between 0 and 50 (0: the default, 5)", "between 1"},
	} {
		r := f.Do(t, "support-bot", http.MethodPost, "/v1/recall", tc.body)
		expectResponse(t, "recall", r, http.StatusBadRequest, "invalid_argument")
		if !strings.Contains(string(r.Body), tc.want) || strings.Contains(string(r.Body), tc.wantNot) {
			t.Errorf("recall %v: %s, want %q and not %q", tc.body, r.Body, tc.want, tc.wantNot)
		}
	}
	if r := f.Do(t, "support-bot", http.MethodPost, "/v1/recall", map[string]any{"user_id": "alice", "query": "x", "k": 0}); r.Status != http.StatusOK {
		t.Errorf("recall with k 0: %d %s, want 200", r.Status, r.Body)
	}

	// A batch body holds only memories; one that also names a user is
	// told so, not that "memories" is an unknown field.
	r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", map[string]any{"user_id": "bob", "memories": []map[string]any{{"type": "episodic", "content": "Bob called."}}})
	expectResponse(t, "batch with user_id", r, http.StatusBadRequest, "bad_json")
	if !strings.Contains(string(r.Body), `a batch body holds only \"memories\"`) {
		t.Errorf("batch with user_id: %s, want it to say a batch holds only memories", r.Body)
	}
}
