package extract

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"mneme/memory"
)

// checkExtracted holds for whatever an extractor returns: every memory has
// passed validation (validating again changes nothing) and no two share a
// key or a content.
func checkExtracted(t *testing.T, ms []memory.NewMemory) {
	t.Helper()
	keys, contents := map[string]bool{}, map[string]bool{}
	for i, m := range ms {
		again, ok := validate(m)
		if !ok || !reflect.DeepEqual(again, m) {
			t.Fatalf("memory %d %+v does not pass validation unchanged (%v, %+v)", i, m, ok, again)
		}
		if !utf8.ValidString(m.Content) || m.Content == "" {
			t.Fatalf("memory %d has content %q", i, m.Content)
		}
		if m.Key != "" && keys[m.Key] || contents[m.Content] {
			t.Fatalf("memory %d repeats a key or content: %+v", i, m)
		}
		keys[m.Key], contents[m.Content] = true, true
	}
}

// FuzzRules runs the rule-based extractor on any user turn.
func FuzzRules(f *testing.F) {
	for _, s := range []string{
		"我的预算是15万。I work at Hangzhou Lianhua Trading.", "我喜欢靠窗的座位，不要辣的。",
		"Remember that my daughter's birthday is May 3rd.", "下周三下午三点开会", "budget: $1,500,000.50 or ¥二十万",
		"嗯嗯好的", "I prefer email over phone. No calls after 9pm!", "我住在上海，在阿里巴巴工作", "\x00\xff。。。!!!",
	} {
		f.Add(s)
	}
	r := NewRules(func() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) })
	f.Fuzz(func(t *testing.T, text string) {
		ms, err := r.Extract(context.Background(), []memory.Turn{{Role: memory.RoleUser, Content: text}})
		if err != nil {
			t.Fatal(err)
		}
		checkExtracted(t, ms)
	})
}

// FuzzLLMAnswer feeds any content to the LLM extractor as the model's
// answer: it is kept only as validated memories, with no entity the
// conversation never named, or refused as malformed.
func FuzzLLMAnswer(f *testing.F) {
	for _, s := range []string{
		`{"memories":[{"type":"semantic","kind":"budget","key":"budget","content":"预算15万","importance":0.8,"entities":[{"kind":"org","name":"Hangzhou Lianhua Trading"},{"kind":"org","name":"Invented Corp"}]}]}`,
		`{"memories":[]}`, `{"memories":null}`, `{"memories":[{"type":"x"}]}`, `{"extra":1,"memories":[]}`,
		`{"memories":[{"type":"episodic","kind":"note","key":"","content":"  a  ","importance":2,"entities":null}]}`, `[`, ``,
	} {
		f.Add(s)
	}
	var content atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"choices": []map[string]any{{"message": map[string]string{"role": "assistant", "content": content.Load().(string)}}},
		})
	}))
	defer srv.Close()
	l := NewLLM(LLMConfig{URL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second}, NewRules(nil), slog.New(slog.NewTextHandler(io.Discard, nil)))
	said := strings.ToLower(transcript(conversation))
	f.Fuzz(func(t *testing.T, answer string) {
		content.Store(answer)
		ms, err := l.ask(context.Background(), conversation)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("answer %q: error %v is not a malformed answer", answer, err)
			}
			return
		}
		checkExtracted(t, ms)
		for _, m := range ms {
			for _, e := range m.Entities {
				if e.Kind != "date" && !strings.Contains(said, strings.ToLower(e.Name)) {
					t.Fatalf("entity %q was never said", e.Name)
				}
			}
		}
	})
}
