package metrics_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"mneme/internal/apptest"
	"mneme/memory"
)

// scrape reads /metrics through the real router and parses it.
func scrape(t *testing.T, f *apptest.Fixture) map[string]*dto.MetricFamily {
	t.Helper()
	r := f.Do(t, "", http.MethodGet, "/metrics", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /metrics = %d: %s", r.Status, r.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value sums the samples of a family whose labels include want (counters
// and gauges), or the sample counts of a histogram.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	fam := fams[name]
	if fam == nil {
		return 0
	}
	var sum float64
next:
	for _, m := range fam.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// TestMetricsCountTheWorkload runs a scripted workload against a Mneme of
// its own (its own registry) and checks that the counters moved by exactly
// what the workload did.
func TestMetricsCountTheWorkload(t *testing.T) {
	f := apptest.StartWith(t, nil)
	before := scrape(t, f)

	contents := []string{
		"Alice prefers invoices sent by e-mail in PDF form.",
		"Alice's purchasing budget for Q3 is 40,000 CNY.",
		"Alice ordered 12 ergonomic chairs on order #A-1009.",
	}
	for _, c := range contents {
		r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: c})
		if r.Status != http.StatusCreated {
			t.Fatalf("write %q = %d: %s", c, r.Status, r.Body)
		}
	}
	// One chit-chat (skipped), one secret (refused by the guard), one write
	// about someone else (denied by policy).
	if r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "ok thanks"}); r.Status != http.StatusOK {
		t.Fatalf("chit-chat = %d: %s", r.Status, r.Body)
	}
	if r := f.Do(t, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "her dashboard password: Tr0ub4dor&3"}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("secret = %d: %s", r.Status, r.Body)
	}
	if r := f.Do(t, "bob", http.MethodPost, "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeProfile, Content: "Alice likes spam."}); r.Status != http.StatusForbidden {
		t.Fatalf("bob writing about alice = %d: %s", r.Status, r.Body)
	}
	const recalls = 2
	for range recalls {
		r := f.Do(t, "support-bot", http.MethodPost, "/v1/recall", memory.RecallRequest{UserID: "alice", Query: "What is Alice's purchasing budget?"})
		if r.Status != http.StatusOK {
			t.Fatalf("recall = %d: %s", r.Status, r.Body)
		}
	}
	after := scrape(t, f)

	delta := func(name string, labels map[string]string) float64 {
		return value(after, name, labels) - value(before, name, labels)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mneme_memory_writes_total", map[string]string{"outcome": "created"}, 3},
		{"mneme_memory_writes_total", map[string]string{"outcome": "skipped"}, 1},
		{"mneme_memory_writes_total", map[string]string{"outcome": "rejected_guard"}, 1},
		{"mneme_memory_writes_total", map[string]string{"outcome": "reinforced"}, 0},
		{"mneme_http_requests_total", map[string]string{"route": "/v1/memories", "method": "POST", "status": "201"}, 3},
		{"mneme_http_requests_total", map[string]string{"route": "/v1/memories", "method": "POST", "status": "403"}, 1},
		{"mneme_http_requests_total", map[string]string{"route": "/v1/recall", "status": "200"}, recalls},
		{"mneme_http_request_duration_seconds", map[string]string{"route": "/v1/recall"}, recalls},
		{"mneme_recall_stage_duration_seconds", map[string]string{"stage": "total"}, recalls},
		{"mneme_recall_memories", nil, recalls},
		{"mneme_recall_context_chars", nil, recalls},
		{"mneme_policy_decisions_total", map[string]string{"action": "write", "result": "deny"}, 1},
	} {
		if got := delta(c.name, c.labels); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := delta("mneme_policy_decisions_total", map[string]string{"action": "write", "result": "allow"}); got < 5 {
		t.Errorf("write decisions allowed moved by %v, want at least the 5 writes that passed policy", got)
	}
	if got := value(after, "mneme_queue_depth", nil); got < 0 {
		t.Errorf("queue depth %v", got)
	}
	if _, ok := after["mneme_queue_depth"]; !ok {
		t.Error("mneme_queue_depth is not exported")
	}
	// The history the panel charts is the tenant's own: exactly the
	// workload's created memories and recalls.
	fig := f.App.Metrics.History(f.Tenant).Figures(time.Hour)
	if fig.Writes != 3 || fig.Recalls != int(recalls) || fig.RecallP95 <= 0 || fig.ContextMean <= 0 {
		t.Errorf("history figures %+v, want the workload's 3 writes and %v recalls", fig, recalls)
	}

	// Every metric explains itself, and no label carries a user id, content
	// or a raw path.
	for name, fam := range after {
		if strings.TrimSpace(fam.GetHelp()) == "" {
			t.Errorf("%s has no help text", name)
		}
		for _, m := range fam.Metric {
			for _, l := range m.Label {
				v := l.GetValue()
				if strings.Contains(v, "alice") || strings.Contains(v, "bob") || strings.Contains(v, "Alice") ||
					strings.Contains(v, f.Tenant) || strings.HasPrefix(v, "/v1/memories/m") {
					t.Errorf("%s label %s=%q carries a user, tenant, content or id", name, l.GetName(), v)
				}
			}
		}
	}
}
