package tracing_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"
	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"mneme/app"
	"mneme/handlers"
	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/tracing"
)

// otlpCollector receives OTLP/HTTP trace exports and keeps the spans.
type otlpCollector struct {
	mu    sync.Mutex
	spans map[string][]string // trace id → span names
	names map[string]bool
}

func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/traces" {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	var req collector.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				id := hex.EncodeToString(s.TraceId)
				c.spans[id] = append(c.spans[id], s.Name)
				c.names[s.Name] = true
			}
		}
	}
	out, _ := proto.Marshal(&collector.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// TestRecallIsTracedAndExported runs memoryd with an OTLP endpoint, makes a
// write and a recall under a caller's trace, and checks that the collector
// received the request's span and its stages in that trace.
func TestRecallIsTracedAndExported(t *testing.T) {
	col := &otlpCollector{spans: map[string][]string{}, names: map[string]bool{}}
	srv := httptest.NewServer(col)
	defer srv.Close()
	f := apptest.StartWith(t, func(c *app.Config) { c.Server.OTLPEndpoint = srv.URL })

	if r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: "Alice's budget for chairs is 8,000 CNY."}); r.Status != http.StatusCreated {
		t.Fatalf("write = %d: %s", r.Status, r.Body)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	if r := f.Do(t, "support-bot", http.MethodPost, "/v1/recall", memory.RecallRequest{UserID: "alice", Query: "chair budget"},
		"traceparent", "00-"+traceID+"-00f067aa0ba902b7-01"); r.Status != http.StatusOK {
		t.Fatalf("recall = %d: %s", r.Status, r.Body)
	}
	// Shutdown exports what the batcher holds.
	if err := f.App.Tracing.Shutdown(context.Background()); err != nil {
		t.Fatalf("flush traces: %v", err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	got := strings.Join(col.spans[traceID], ",")
	for _, want := range []string{"POST /v1/recall", "policy.scope", "embed", "recall.fulltext", "recall.vector"} {
		if !strings.Contains(","+got+",", ","+want+",") {
			t.Errorf("the recall's trace lacks %q: %s", want, got)
		}
	}
	for _, want := range []string{"POST /v1/memories", "write.commit", "policy.decide"} {
		if !col.names[want] {
			t.Errorf("no %q span was exported", want)
		}
	}
}

// TestLogLinesCarryTheTraceID: a line logged in a traced request names its
// request and its trace.
func TestLogLinesCarryTheTraceID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(handlers.LogHandler(slog.NewTextHandler(&buf, nil)))
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(memory.WithRequestID(context.Background(), "req-1"),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	log.InfoContext(ctx, "hello")
	if line := buf.String(); !strings.Contains(line, "request_id=req-1") || !strings.Contains(line, "trace_id=4bf92f3577b34da6a3ce929d0e0e4736") {
		t.Errorf("log line %q lacks the request or trace id", line)
	}
}

func TestEndpointMustBeAURL(t *testing.T) {
	for _, e := range []string{"collector:4318", "ftp://x", "http://"} {
		if tracing.CheckEndpoint(e) == nil {
			t.Errorf("CheckEndpoint(%q) accepted it", e)
		}
	}
	if err := tracing.CheckEndpoint("http://127.0.0.1:4318"); err != nil {
		t.Error(err)
	}
}
