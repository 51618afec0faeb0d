// Package metrics counts what Mneme does, for Prometheus at /metrics and for
// the panel's charts. It observes through the interfaces the services
// already have: decorators the composition root puts around the decision
// log, the janitor, the graph store and the writer of what conversations
// leave, a Redis hook, and the observer the HTTP handlers and the MCP tools
// call. Labels name routes, stages, outcomes and results:
// never content, user ids or anything else unbounded.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the collectors of one Mneme and the recent history the panel
// charts. Each Metrics has a registry of its own, so that several in one
// process (tests, replicas) never count into each other.
type Metrics struct {
	reg     *prometheus.Registry
	history *histories
	queue   QueueProbe
	now     func() time.Time

	httpRequests *prometheus.CounterVec
	httpLatency  *prometheus.HistogramVec

	recallStages   *prometheus.HistogramVec
	recallMemories prometheus.Histogram
	recallChars    prometheus.Histogram

	writes        *prometheus.CounterVec
	writtenBytes  prometheus.Counter
	deletes       *prometheus.CounterVec
	conversations prometheus.Counter

	decisions       *prometheus.CounterVec
	decisionLatency *prometheus.HistogramVec

	storeErrors *prometheus.CounterVec
	janitor     *prometheus.CounterVec
}

// QueueState is the asynchronous write queue at one moment.
type QueueState struct {
	// Depth counts jobs waiting or being applied; Lag is the age of the
	// oldest of them.
	Depth int64
	Lag   time.Duration
	// DeadLetters counts jobs parked in the dead-letter streams.
	DeadLetters int64
	// Retries and DeadLettered count, since start, this replica's retried
	// and dead-lettered jobs.
	Retries, DeadLettered int64
}

// QueueProbe reads the queue's state; it is called on every scrape.
type QueueProbe func(ctx context.Context) (QueueState, error)

// Options configures New. All fields are optional.
type Options struct {
	// Queue reads the write queue's state; nil exports no queue metrics.
	Queue QueueProbe
	// Now is the clock of the history (default time.Now).
	Now func() time.Time
}

// Latency buckets in seconds: recall aims at tens of milliseconds.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// New returns Metrics with every collector registered.
func New(opts Options) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), queue: opts.Queue, now: opts.Now}
	if m.now == nil {
		m.now = time.Now
	}
	m.history = newHistories(m.now, maxTenantHistories)
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mneme_http_requests_total",
		Help: "HTTP requests answered, by method, route template and status code.",
	}, []string{"method", "route", "status"})
	m.httpLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mneme_http_request_duration_seconds", Buckets: latencyBuckets,
		Help: "Time to answer an HTTP request, by method and route template.",
	}, []string{"method", "route"})
	m.recallStages = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mneme_recall_stage_duration_seconds", Buckets: latencyBuckets,
		Help: "Time each stage of a recall took (scope, embed, candidates, vector, fulltext, graph, seeds, rank, rerank, policy, total).",
	}, []string{"stage"})
	m.recallMemories = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "mneme_recall_memories", Buckets: []float64{0, 1, 2, 3, 5, 8, 13, 21, 34, 55},
		Help: "Memories returned per recall.",
	})
	m.recallChars = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "mneme_recall_context_chars", Buckets: prometheus.ExponentialBuckets(64, 2, 10),
		Help: "Characters of the context block handed over per recall.",
	})
	m.writes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mneme_memory_writes_total",
		Help: "Memories sent to be written, by outcome: created, reinforced, skipped, candidate, superseded, duplicate, stale, rejected_guard.",
	}, []string{"outcome"})
	m.writtenBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mneme_memory_written_bytes_total",
		Help: "Bytes of content and embedding of the memories created: the growth of the store.",
	})
	m.deletes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mneme_memory_deletes_total",
		Help: "Deletions through the API, by what was deleted: a memory, or a user erased with all their memories.",
	}, []string{"what"})
	m.conversations = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mneme_conversations_total",
		Help: "Conversations handed over for extraction (ingest calls and closed sessions).",
	})
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mneme_policy_decisions_total",
		Help: "Policy decisions, by action and result (allow or deny).",
	}, []string{"action", "result"})
	m.decisionLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mneme_policy_decision_duration_seconds", Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .05, .25},
		Help: "Time to evaluate one policy decision, by result.",
	}, []string{"result"})
	m.storeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mneme_store_errors_total",
		Help: "Errors from the stores (neo4j, redis), not counting not-found answers.",
	}, []string{"store"})
	m.janitor = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mneme_janitor_actions_total",
		Help: "Memories the janitor changed, by action: expired, archived_unused, archived_over_cap.",
	}, []string{"action"})
	for _, s := range []string{"neo4j", "redis"} {
		m.storeErrors.WithLabelValues(s)
	}
	for _, o := range writeOutcomes {
		m.writes.WithLabelValues(o)
	}
	m.reg.MustRegister(
		m.httpRequests, m.httpLatency, m.recallStages, m.recallMemories, m.recallChars,
		m.writes, m.writtenBytes, m.deletes, m.conversations, m.decisions, m.decisionLatency,
		m.storeErrors, m.janitor,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if m.queue != nil {
		m.reg.MustRegister(queueCollector{m})
	}
	return m
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is where the collectors are registered, for tests that gather
// them directly.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// History is the recent history of one tenant, which the panel charts.
func (m *Metrics) History(tenant string) *History { return m.history.read(tenant) }

// Queue reads the queue's state now; ok is false when there is no probe.
func (m *Metrics) Queue(ctx context.Context) (s QueueState, ok bool, err error) {
	if m.queue == nil {
		return QueueState{}, false, nil
	}
	s, err = m.queue(ctx)
	return s, true, err
}

// Request counts one answered HTTP request. route is the route template
// ("/v1/memories/:id"), never the path, so ids stay out of the labels; an
// unmatched path counts as "unmatched".
func (m *Metrics) Request(method, route string, status int, took time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	method = knownMethod(method)
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.httpLatency.WithLabelValues(method, route).Observe(took.Seconds())
}

// knownMethod keeps the method label bounded: a client can send any token.
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// queueCollector reads the queue on each scrape.
type queueCollector struct{ m *Metrics }

var (
	queueDepthDesc = prometheus.NewDesc("mneme_queue_depth", "Asynchronous write jobs waiting or being applied.", nil, nil)
	queueLagDesc   = prometheus.NewDesc("mneme_queue_lag_seconds", "Age of the oldest job waiting in the write queue.", nil, nil)
	queueDeadDesc  = prometheus.NewDesc("mneme_queue_dead_letters", "Jobs parked in the dead-letter streams.", nil, nil)
	queueRetryDesc = prometheus.NewDesc("mneme_queue_retries_total", "Jobs this replica retried after a failure.", nil, nil)
	queueDLDesc    = prometheus.NewDesc("mneme_queue_dead_lettered_total", "Jobs this replica moved to a dead-letter stream.", nil, nil)
	queueErrDesc   = prometheus.NewDesc("mneme_queue_probe_up", "1 when the last scrape could read the queue, 0 when it could not.", nil, nil)
)

func (queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueDepthDesc, queueLagDesc, queueDeadDesc, queueRetryDesc, queueDLDesc, queueErrDesc} {
		ch <- d
	}
}

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := c.m.queue(ctx)
	up := 1.0
	if err != nil {
		up = 0
		c.m.StoreError("redis")
	}
	ch <- prometheus.MustNewConstMetric(queueErrDesc, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(queueRetryDesc, prometheus.CounterValue, float64(s.Retries))
	ch <- prometheus.MustNewConstMetric(queueDLDesc, prometheus.CounterValue, float64(s.DeadLettered))
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(s.Depth))
	ch <- prometheus.MustNewConstMetric(queueLagDesc, prometheus.GaugeValue, s.Lag.Seconds())
	ch <- prometheus.MustNewConstMetric(queueDeadDesc, prometheus.GaugeValue, float64(s.DeadLetters))
}
