package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer is an OpenAI-compatible embeddings endpoint whose behaviour a
// test scripts: answer(call, request) returns a status and a body, or
// status 0 for a well-formed answer of dimension dim.
type fakeServer struct {
	dim    int
	answer func(call int, req embeddingsRequest) (int, string)

	mu       sync.Mutex
	requests []embeddingsRequest
	headers  []http.Header
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	var req embeddingsRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	call := len(f.requests)
	f.requests = append(f.requests, req)
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	status, body := 0, ""
	if f.answer != nil {
		status, body = f.answer(call, req)
	}
	if status == 0 {
		status, body = http.StatusOK, wellFormed(req.Input, f.dim, true)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// wellFormed answers inputs with vectors whose first component identifies
// the input (its length), listed in reverse order when reversed is true, as
// servers may do: the index field says where each belongs.
func wellFormed(inputs []string, dim int, reversed bool) string {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i, in := range inputs {
		v := make([]float32, dim)
		v[0] = float32(len(in))
		data = append(data, item{Object: "embedding", Index: i, Embedding: v})
	}
	if reversed {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	raw, _ := json.Marshal(map[string]any{"object": "list", "data": data, "model": "m"})
	return string(raw)
}

func (f *fakeServer) calls() []embeddingsRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]embeddingsRequest(nil), f.requests...)
}

func startFake(t *testing.T, f *fakeServer) string {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func newTestHTTP(t *testing.T, base string, mod func(*HTTPConfig)) *HTTP {
	t.Helper()
	cfg := HTTPConfig{BaseURL: base, Model: "test-model", Dimension: 4, BatchSize: 3,
		Timeout: 2 * time.Second, Retries: 2, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	h, err := NewHTTP(cfg)
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	return h
}

func TestHTTPBatchesInOrder(t *testing.T) {
	f := &fakeServer{dim: 4}
	h := newTestHTTP(t, startFake(t, f), func(c *HTTPConfig) { c.APIKey = "sk-test" })
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "ggggggg"}
	vecs, err := h.Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		if int(v[0]) != len(texts[i]) || len(v) != 4 {
			t.Errorf("vector %d = %v, want the one for %q", i, v, texts[i])
		}
	}
	calls := f.calls()
	var sizes []int
	for _, c := range calls {
		sizes = append(sizes, len(c.Input))
		if c.Model != "test-model" || c.EncodingFormat != "float" {
			t.Errorf("request = %+v, want model test-model, float encoding", c)
		}
	}
	if fmt.Sprint(sizes) != "[3 3 1]" {
		t.Errorf("batch sizes = %v, want [3 3 1]", sizes)
	}
	if got := f.headers[0].Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestHTTPRetriesTransientFailures(t *testing.T) {
	tests := []struct {
		name      string
		failures  []int // statuses of the first calls; 0 ends the list
		retries   int
		wantErr   string // empty: success
		wantCalls int
	}{
		{name: "429 then success", failures: []int{429}, retries: 2, wantCalls: 2},
		{name: "503 twice then success", failures: []int{503, 502}, retries: 2, wantCalls: 3},
		{name: "gives up after retries", failures: []int{500, 500, 500, 500}, retries: 2, wantErr: "after 3 attempts", wantCalls: 3},
		{name: "no retries configured", failures: []int{503}, retries: -1, wantErr: "503", wantCalls: 1},
		{name: "400 is not retried", failures: []int{400}, retries: 2, wantErr: "400 Bad Request", wantCalls: 1},
		{name: "401 is not retried", failures: []int{401}, retries: 2, wantErr: "401", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeServer{dim: 4, answer: func(call int, _ embeddingsRequest) (int, string) {
				if call < len(tt.failures) {
					return tt.failures[call], `{"error":{"message":"try later"}}`
				}
				return 0, ""
			}}
			h := newTestHTTP(t, startFake(t, f), func(c *HTTPConfig) { c.Retries = tt.retries })
			vecs, err := h.Embed(context.Background(), []string{"x", "yy"})
			if got := len(f.calls()); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
			if tt.wantErr == "" {
				if err != nil || len(vecs) != 2 {
					t.Fatalf("Embed = %d vectors, %v; want 2, nil", len(vecs), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Embed error = %v, want it to mention %q", err, tt.wantErr)
			}
			var se *StatusError
			if !errors.As(err, &se) {
				t.Errorf("error %v is not a *StatusError", err)
			}
		})
	}
}

func TestHTTPRetriesNetworkErrors(t *testing.T) {
	// A server that closes the connection without answering, then recovers.
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		var req embeddingsRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		fmt.Fprint(w, wellFormed(req.Input, 4, false))
	}))
	t.Cleanup(srv.Close)
	h := newTestHTTP(t, srv.URL+"/v1", nil)
	if _, err := h.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("Embed after a dropped connection: %v", err)
	}
	if calls != 2 {
		t.Errorf("%d calls, want 2", calls)
	}
}

func TestHTTPTimeoutIsRetriedThenReported(t *testing.T) {
	release := make(chan struct{})
	f := &fakeServer{dim: 4, answer: func(int, embeddingsRequest) (int, string) {
		select {
		case <-release:
		case <-time.After(2 * time.Second):
		}
		return 0, ""
	}}
	base := startFake(t, f)
	// Cleanups run last first: release the handlers before the server waits
	// for them to finish.
	t.Cleanup(func() { close(release) })
	h := newTestHTTP(t, base, func(c *HTTPConfig) { c.Timeout = 30 * time.Millisecond; c.Retries = 1 })
	start := time.Now()
	_, err := h.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "after 2 attempts") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Embed error = %v, want a deadline after 2 attempts", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %s; the per-request timeout did not apply", d)
	}
}

func TestHTTPRejectsBadAnswers(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"wrong dimension", `{"data":[{"index":0,"embedding":[1,2,3]}]}`, "dimension 3, configured dimension is 4"},
		{"not JSON", `<html>gateway</html>`, "not JSON"},
		{"too few vectors", `{"data":[]}`, "0 embeddings for 1 inputs"},
		{"index out of range", `{"data":[{"index":5,"embedding":[1,2,3,4]}]}`, "out of range"},
		{"strings for floats", `{"data":[{"index":0,"embedding":"AAAA"}]}`, "not JSON of the embeddings format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeServer{dim: 4, answer: func(int, embeddingsRequest) (int, string) { return 200, tt.body }}
			h := newTestHTTP(t, startFake(t, f), nil)
			_, err := h.Embed(context.Background(), []string{"x"})
			if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Embed error = %v, want ErrBadResponse mentioning %q", err, tt.want)
			}
			if n := len(f.calls()); n != 1 {
				t.Errorf("%d calls: a malformed answer must not be retried", n)
			}
		})
	}
}

func TestHTTPHonoursCancellation(t *testing.T) {
	f := &fakeServer{dim: 4, answer: func(int, embeddingsRequest) (int, string) { return 503, "busy" }}
	h := newTestHTTP(t, startFake(t, f), func(c *HTTPConfig) {
		c.Retries = 10
		c.Backoff, c.MaxBackoff = time.Second, time.Second
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := h.Embed(ctx, []string{"x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Embed error = %v, want the caller's deadline", err)
	}
}

func TestNewHTTPValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  HTTPConfig
		want string
	}{
		{"no url", HTTPConfig{Model: "m", Dimension: 4}, "base URL"},
		{"not http", HTTPConfig{BaseURL: "ftp://x/v1", Model: "m", Dimension: 4}, "base URL"},
		{"no model", HTTPConfig{BaseURL: "http://x/v1", Dimension: 4}, "model"},
		{"no dimension", HTTPConfig{BaseURL: "http://x/v1", Model: "m"}, "dimension"},
		{"negative batch", HTTPConfig{BaseURL: "http://x/v1", Model: "m", Dimension: 4, BatchSize: -1}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewHTTP(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewHTTP error = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	h, err := NewHTTP(HTTPConfig{BaseURL: "http://x/v1/", Model: "m", Dimension: 384})
	if err != nil || h.endpoint != "http://x/v1/embeddings" || h.Dimension() != 384 || h.Model() != "m" {
		t.Fatalf("NewHTTP = %+v, %v", h, err)
	}
}

func TestHTTPPrefixesQueriesAndPassages(t *testing.T) {
	f := &fakeServer{dim: 4}
	h := newTestHTTP(t, startFake(t, f), func(c *HTTPConfig) { c.QueryPrefix, c.PassagePrefix = "query: ", "passage: " })
	if _, err := h.Embed(context.Background(), []string{"Alice likes tea", "Bob"}); err != nil {
		t.Fatal(err)
	}
	q, err := h.EmbedQuery(context.Background(), "what does Alice drink")
	if err != nil {
		t.Fatal(err)
	}
	if q[0] != float32(len("query: what does Alice drink")) {
		t.Errorf("query vector %v is not the prefixed question's", q)
	}
	calls := f.calls()
	if len(calls) != 2 || !slices.Equal(calls[0].Input, []string{"passage: Alice likes tea", "passage: Bob"}) ||
		!slices.Equal(calls[1].Input, []string{"query: what does Alice drink"}) {
		t.Errorf("sent %+v, want passages then the query, each with its prefix", calls)
	}
	// Without prefixes, both go as they are.
	g := &fakeServer{dim: 4}
	plain := newTestHTTP(t, startFake(t, g), nil)
	if _, err := plain.EmbedQuery(context.Background(), "tea"); err != nil {
		t.Fatal(err)
	}
	if got := g.calls(); len(got) != 1 || !slices.Equal(got[0].Input, []string{"tea"}) {
		t.Errorf("sent %+v, want the question alone", got)
	}
}
