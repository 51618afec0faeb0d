package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"mneme/client"
	"mneme/internal/apptest"
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
		{"pw", "Bob says pw: " + pass, []string{"password"}},
		{"pass", "his vpn pass: hunter2x!", []string{"password"}},
		{"secret", "Bob says secret: " + pass, []string{"secret"}},
		{"login pair", "login bob / " + pass, []string{"password"}},
		{"credentials pair", "credentials: bob:" + pass, []string{"password"}},
		{"ssn", "Bob's SSN 219-09-9999", []string{"id_number"}},
		{"social security number", "social security number 536-22-1234", []string{"id_number"}},
		{"passport", "passport number E12345678", []string{"id_number"}},
		{"chinese passport", "护照号 E12345678", []string{"id_number"}},
		{"labelled resident id with a wrong check digit", "身份证号 110101199003077777", []string{"cn_id"}},
		{"resident id in fours", "Alice 的身份证号 1101 0519 4912 3100 2X", []string{"cn_id"}},
		{"resident id in fours in english", "Alice's ID number 1101 0519 4912 3100 2X", []string{"cn_id"}},
		{"passport in groups", "Alice's passport number E 1234 5678", []string{"id_number"}},
		{"driver's licence", "Alice's driver's licence number is D123-4567-8901", []string{"id_number"}},
		{"one-time code", "Alice's one-time code is 839201", []string{"password"}},
		{"letter-spaced password", "Alice's p a s s w o r d is hunter2x!", []string{"password"}},
	}
	bot := f.Client(t, "support-bot")
	for _, tc := range rejected {
		t.Run("reject "+tc.name, func(t *testing.T) {
			_, err := bot.Add(t.Context(), client.NewMemory{
				UserID: "alice", Type: client.TypeEpisodic, Content: tc.content,
			})
			var e *client.Error
			if !errors.As(err, &e) || e.Status != http.StatusUnprocessableEntity || e.Code != "guard_rejected" {
				t.Fatalf("error %v, want 422 guard_rejected", err)
			}
			for _, k := range tc.kinds {
				if !strings.Contains(e.Message, k) {
					t.Errorf("message %q does not name %s", e.Message, k)
				}
			}
		})
	}

	// A batch is refused as a whole, naming the item.
	_, err := bot.Add(t.Context(),
		client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Content: "Alice asked about her order status"},
		client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Content: "token: " + secret},
	)
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusUnprocessableEntity || !strings.Contains(e.Message, "memories[1].content") {
		t.Errorf("batch with a secret: %v, want 422 naming memories[1].content", err)
	}

	// Redacted in place: the card everywhere, contact details in episodic
	// memories, health terms.
	red := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeEpisodic, Kind: "ticket",
		Content: "Alice paid with card " + card + ", call her at " + phone + " or write to " + email + "; she has " + illness,
	})
	for _, mask := range []string{"[REDACTED:bank_card]", "[REDACTED:phone]", "[REDACTED:email]", "[REDACTED:health]"} {
		if !strings.Contains(red.Content, mask) {
			t.Errorf("content %q lacks %s", red.Content, mask)
		}
	}
	if want := []string{"bank_card", "email", "health", "phone"}; !slices.Equal(red.Redacted, want) {
		t.Errorf("redacted = %v, want %v", red.Redacted, want)
	}
	stored, _ := json.Marshal(getMemory(t, f, "support-bot", red.ID))
	if strings.Contains(string(stored), phone) || !strings.Contains(string(stored), "[REDACTED:phone]") {
		t.Errorf("stored memory: %s", stored)
	}

	// A contact profile keeps the phone number, as confidential.
	contact := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeProfile, Kind: "contact", Key: "phone", Content: "Alice's mobile is " + phone,
	})
	if !strings.Contains(contact.Content, phone) || contact.Sensitivity != client.SensitivityConfidential {
		t.Errorf("contact profile: %+v, want the number kept as confidential", contact)
	}

	// An update cannot smuggle in what a create may not write.
	_, err = bot.Update(t.Context(), red.ID, 0, client.UpdateRequest{Content: ptrTo("new key " + secret)})
	wantAPIError(t, "update with a secret", err, http.StatusUnprocessableEntity, "guard_rejected")
	patched, err := bot.Update(t.Context(), red.ID, 0, client.UpdateRequest{Content: ptrTo("Alice's card is " + card)})
	if err != nil || strings.Contains(patched.Content, card) {
		t.Errorf("update with a card: %+v, %v; want it masked", patched, err)
	}

	// Nothing rejected or redacted is in the graph or in the log.
	ctx := context.Background()
	for _, raw := range []string{secret, cnID, pass, card, email, illness, "hunter2x!", "219-09-9999", "536-22-1234", "E12345678", "110101199003077777"} {
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

// Fields that name rather than say (a memory's kind and source, an entity's
// kind and aliases) cannot be masked in place: what the guard finds in
// them is refused, as in a key or an entity id.
func TestGuardRefusesSecretsInNamingFields(t *testing.T) {
	f := apptest.Start(t)
	const secret = "password=Hunter2Hunter2"
	base := func() client.NewMemory {
		return client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice orders paper monthly."}
	}
	cases := map[string]func(*client.NewMemory){
		"kind":        func(m *client.NewMemory) { m.Kind = secret },
		"source":      func(m *client.NewMemory) { m.Source = secret },
		"entity kind": func(m *client.NewMemory) { m.Entities = []client.Entity{{ID: "order:so-1", Kind: secret}} },
		"entity aliases": func(m *client.NewMemory) {
			m.Entities = []client.Entity{{ID: "order:so-1", Aliases: []string{"ok", secret}}}
		},
	}
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			m := base()
			set(&m)
			r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", m)
			wantError(t, name, r, http.StatusUnprocessableEntity, "guard_rejected")
		})
	}
	m := base()
	m.Kind, m.Source = "order_note", "crm-import"
	if r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", m); r.Status != http.StatusCreated {
		t.Errorf("plain naming fields: %d %s", r.Status, r.Body)
	}
}
