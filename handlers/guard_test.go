package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
)

// lockedBuffer collects log output written from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type errorResponse struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// TestGuardNeverStoresOrLogsRawValues writes secrets and identifiers through
// the API and then searches the service's whole log and the tenant's whole
// graph for every raw value: rejected ones must be nowhere, redacted ones
// masked, allowed ones kept.
func TestGuardNeverStoresOrLogsRawValues(t *testing.T) {
	logs := &lockedBuffer{}
	f := apptest.StartLogged(t, logs)
	const (
		secret  = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"
		cnID    = "11010519491231002X"
		pass    = "Tr0ub4dor&3"
		card    = "6222 0212 3456 7890 128"
		phone   = "13812345678"
		email   = "alice.wong@example.com"
		illness = "diabetes"
	)
	rejected := []struct {
		name, content string
		kinds         []string
	}{
		{"api key", "Alice's OpenAI key is " + secret + ", keep it handy", []string{"secret"}},
		{"resident id", "Alice's 身份证号 is " + cnID, []string{"cn_id"}},
		{"password", "her dashboard password: " + pass, []string{"password"}},
		{"several", "key " + secret + " and id " + cnID, []string{"cn_id", "secret"}},
	}
	for _, tc := range rejected {
		t.Run("reject "+tc.name, func(t *testing.T) {
			r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{
				UserID: "alice", Type: memory.TypeEpisodic, Content: tc.content,
			})
			var e errorResponse
			r.Decode(t, &e)
			if r.Status != http.StatusUnprocessableEntity || e.Code != "guard_rejected" {
				t.Fatalf("status %d code %q, want 422 guard_rejected: %s", r.Status, e.Code, r.Body)
			}
			for _, k := range tc.kinds {
				if !strings.Contains(e.Message, k) {
					t.Errorf("message %q does not name %s", e.Message, k)
				}
			}
		})
	}

	// A batch is refused as a whole, naming the item.
	r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", map[string]any{"memories": []memory.NewMemory{
		{UserID: "alice", Type: memory.TypeEpisodic, Content: "Alice asked about her order status"},
		{UserID: "alice", Type: memory.TypeEpisodic, Content: "token: " + secret},
	}})
	var e errorResponse
	r.Decode(t, &e)
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(e.Message, "memories[1].content") {
		t.Errorf("batch with a secret: %d %s, want 422 naming memories[1].content", r.Status, r.Body)
	}

	// Redacted in place: the card everywhere, contact details in episodic
	// memories, health terms.
	r = f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{
		UserID: "alice", Type: memory.TypeEpisodic, Kind: "ticket",
		Content: "Alice paid with card " + card + ", call her at " + phone + " or write to " + email + "; she has " + illness,
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("redacted write: %d %s", r.Status, r.Body)
	}
	var red memory.Memory
	r.Decode(t, &red)
	for _, mask := range []string{"[REDACTED:bank_card]", "[REDACTED:phone]", "[REDACTED:email]", "[REDACTED:health]"} {
		if !strings.Contains(red.Content, mask) {
			t.Errorf("content %q lacks %s", red.Content, mask)
		}
	}
	if want := []string{"bank_card", "email", "health", "phone"}; !slices.Equal(red.Redacted, want) {
		t.Errorf("redacted = %v, want %v", red.Redacted, want)
	}
	got := f.Do(t, "support-bot", http.MethodGet, "/v1/memories/"+red.ID, nil)
	if strings.Contains(string(got.Body), phone) || !strings.Contains(string(got.Body), "[REDACTED:phone]") {
		t.Errorf("stored memory: %s", got.Body)
	}

	// A contact profile keeps the phone number, as confidential.
	r = f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{
		UserID: "alice", Type: memory.TypeProfile, Kind: "contact", Key: "phone", Content: "Alice's mobile is " + phone,
	})
	var contact memory.Memory
	r.Decode(t, &contact)
	if r.Status != http.StatusCreated || !strings.Contains(contact.Content, phone) || contact.Sensitivity != memory.SensitivityConfidential {
		t.Errorf("contact profile: %d %+v, want the number kept as confidential", r.Status, contact)
	}

	// An update cannot smuggle in what a create may not write.
	r = f.Do(t, "support-bot", http.MethodPatch, "/v1/memories/"+red.ID, map[string]any{"content": "new key " + secret})
	if r.Decode(t, &e); r.Status != http.StatusUnprocessableEntity || e.Code != "guard_rejected" {
		t.Errorf("patch with a secret: %d %s", r.Status, r.Body)
	}
	r = f.Do(t, "support-bot", http.MethodPatch, "/v1/memories/"+red.ID, map[string]any{"content": "Alice's card is " + card})
	var patched memory.Memory
	if r.Decode(t, &patched); r.Status != http.StatusOK || strings.Contains(patched.Content, card) {
		t.Errorf("patch with a card: %d %s, want it masked", r.Status, r.Body)
	}

	// Nothing rejected or redacted is in the graph or in the log.
	ctx := context.Background()
	for _, raw := range []string{secret, cnID, pass, card, email, illness} {
		n, err := f.App.Store.CountText(ctx, f.Tenant, raw)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("the graph holds %q in %d properties", raw, n)
		}
		if strings.Contains(logs.String(), raw) {
			t.Errorf("the log holds %q", raw)
		}
	}
	// The phone number was allowed once, in the contact profile, and only
	// there; the scan does find what is stored.
	if n, err := f.App.Store.CountText(ctx, f.Tenant, phone); err != nil || n != 1 {
		t.Errorf("the graph holds the allowed phone number %d times (err %v), want 1", n, err)
	}
	if !strings.Contains(logs.String(), "guard_rejected") {
		t.Errorf("the log never recorded a rejection; is it capturing anything?\n%s", logs.String())
	}
}
