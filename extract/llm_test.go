package extract

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

// chatServer answers chat completions with content, after delay; it
// records the last request it got.
func chatServer(t *testing.T, status int, content string, delay time.Duration, got *chatRequest) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, "wrong path or key", http.StatusUnauthorized)
			return
		}
		if got != nil {
			raw, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(raw, got); err != nil {
				t.Errorf("request body: %v", err)
			}
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"choices": []map[string]any{{"message": map[string]string{"role": "assistant", "content": content}}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

var conversation = []memory.Turn{
	{Role: memory.RoleUser, Content: "我的预算是15万。I work at Hangzhou Lianhua Trading.", At: said},
	{Role: memory.RoleAssistant, Content: "好的，记下了。"},
}

func llm(url string, timeout time.Duration) memory.Extractor {
	return New(LLMConfig{URL: url + "/v1", Model: "test-model", APIKey: "sk-test", Timeout: timeout},
		slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return said })
}

func TestLLMGoodAnswerPassesValidation(t *testing.T) {
	answer := `{"memories":[
	 {"type":"semantic","kind":"budget","key":"Budget","content":"Budget is 150,000 CNY (预算15万)","importance":0.8,
	  "entities":[{"kind":"company","name":"Hangzhou Lianhua Trading"},{"kind":"company","name":"Invented Corp"}]},
	 {"type":"rumour","kind":"gossip","key":"","content":"made up","importance":0.1,"entities":[]},
	 {"type":"profile","kind":"company","key":"company","content":"Works at Hangzhou Lianhua Trading","importance":7,"entities":[]}
	]}`
	var req chatRequest
	srv := chatServer(t, http.StatusOK, answer, 0, &req)
	got, err := llm(srv.URL, time.Second).Extract(context.Background(), conversation)
	if err != nil {
		t.Fatal(err)
	}
	// The unknown type and the importance of 7 fail validation; the entity
	// the conversation never names is dropped; the key is normalised.
	want := []memory.NewMemory{{
		Type: "semantic", Kind: "budget", Key: "budget", Content: "Budget is 150,000 CNY (预算15万)",
		Importance: ptr(0.8), Confidence: ptr(confidenceStated), Source: "conversation",
		Entities: []memory.Entity{{ID: "hangzhou-lianhua-trading", Kind: "company", Name: "Hangzhou Lianhua Trading"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if req.Model != "test-model" || req.ResponseFormat.Type != "json_schema" || !req.ResponseFormat.JSONSchema.Strict ||
		len(req.Messages) != 2 || req.Messages[1].Content != "user: 我的预算是15万。I work at Hangzhou Lianhua Trading.\n" {
		t.Errorf("request = %+v", req)
	}
	var schema map[string]any
	if err := json.Unmarshal(req.ResponseFormat.JSONSchema.Schema, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("schema sent = %s (%v)", req.ResponseFormat.JSONSchema.Schema, err)
	}
}

func TestLLMFallsBackToRules(t *testing.T) {
	rules, err := NewRules(func() time.Time { return said }).Extract(context.Background(), conversation)
	if err != nil || len(rules) != 2 {
		t.Fatalf("rules found %+v, %v; want the budget and the company", summarise(rules), err)
	}
	tests := []struct {
		name    string
		status  int
		content string
		delay   time.Duration
	}{
		{"malformed JSON", http.StatusOK, `{"memories": [ {"type": `, 0},
		{"not the schema", http.StatusOK, `{"facts": ["budget 150k"]}`, 0},
		{"plain prose", http.StatusOK, `The user has a budget of 150k.`, 0},
		{"every memory invalid", http.StatusOK, `{"memories":[{"type":"x","kind":"y","key":"","content":"z","importance":0.5,"entities":[]}]}`, 0},
		{"server error", http.StatusInternalServerError, `{}`, 0},
		{"timeout", http.StatusOK, `{"memories":[]}`, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := chatServer(t, tt.status, tt.content, tt.delay, nil)
			start := time.Now()
			got, err := llm(srv.URL, 200*time.Millisecond).Extract(context.Background(), conversation)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(rules, got); diff != "" {
				t.Errorf("want the rules' answer (-rules +got):\n%s", diff)
			}
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("took %s; the timeout is 200ms", elapsed)
			}
		})
	}
}

// An empty answer from a working model is an answer: the turns held
// nothing, and the rules are not asked to second-guess it.
func TestLLMEmptyAnswerIsAnAnswer(t *testing.T) {
	srv := chatServer(t, http.StatusOK, `{"memories":[]}`, 0, nil)
	got, err := llm(srv.URL, time.Second).Extract(context.Background(), conversation)
	if err != nil || len(got) != 0 {
		t.Fatalf("extract = %+v, %v; want nothing", got, err)
	}
}

func TestNewWithoutURLIsTheRules(t *testing.T) {
	if _, ok := New(LLMConfig{}, nil, nil).(*Rules); !ok {
		t.Fatal("with no LLM configured, New must return the rule extractor")
	}
}

// TestLLMBudgetKeyedByItsPeriod: a budget the model reports under the plain
// budget key is keyed by the period its content names, as the rules key
// it, relative periods read against when the turns were said.
func TestLLMBudgetKeyedByItsPeriod(t *testing.T) {
	answer := `{"memories":[
	 {"type":"semantic","kind":"budget","key":"budget","content":"Q4 procurement budget is 150,000 CNY","importance":0.8,"entities":[]},
	 {"type":"semantic","kind":"budget","key":"budget","content":"下一年一季度预算为9万元 (next year's Q1)","importance":0.8,"entities":[]},
	 {"type":"semantic","kind":"budget","key":"budget","content":"Budget is 100,000 CNY","importance":0.8,"entities":[]}
	]}`
	srv := chatServer(t, http.StatusOK, answer, 0, nil)
	got, err := llm(srv.URL, time.Second).Extract(context.Background(), conversation)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range got {
		keys = append(keys, m.Key)
	}
	if want := []string{"budget_q4", "budget_2027_q1", "budget"}; !cmp.Equal(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
}
