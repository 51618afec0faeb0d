package handlers_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"mneme/app"
	"mneme/internal/apptest"
	"mneme/memory"
)

// BenchmarkRecallKeyCache measures what the API key cache saves on a whole
// recall over HTTP: two replicas on the same stores and tenant, one looking
// every key up in Neo4j, take the same questions in turn, so load and
// noise fall on both alike. Run it with
//
//	go test -run '^$' -bench BenchmarkRecallKeyCache -benchtime 400x -count 5 ./handlers
func BenchmarkRecallKeyCache(b *testing.B) {
	cached := apptest.Start(b)
	uncached := cached.Replica(b, func(c *app.Config) { c.Identity.NoCache = true })
	questions := []string{
		"what budget did alice give for the order", "Alice 的会员什么时候到期", "which delivery address does she use",
		"how should answers be written for her", "what happened with the damaged items",
	}
	recall := func(f *apptest.Fixture, i int) time.Duration {
		start := time.Now()
		r := f.Do(b, "support-bot", http.MethodPost, "/v1/recall", memory.RecallRequest{UserID: "alice", Query: questions[i%len(questions)]})
		took := time.Since(start)
		if r.Status != http.StatusOK {
			b.Fatalf("recall: %d %s", r.Status, r.Body)
		}
		return took
	}
	facts := []string{
		"Alice's budget for the spring order is 30,000 CNY", "Alice's Gold membership expires on 1 March",
		"Alice wants deliveries to the Pudong warehouse", "Alice prefers short answers without long explanations",
		"Twelve items of Alice's last order arrived damaged", "Alice pays on 30-day terms",
	}
	for i := 0; i < 40; i++ {
		r := cached.Do(b, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{
			UserID: "alice", Type: memory.TypeEpisodic, Kind: "note", Content: fmt.Sprintf("%s (note %d)", facts[i%len(facts)], i),
		})
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			b.Fatalf("write: %d %s", r.Status, r.Body)
		}
	}
	// One warm request each: plans, connections and the first key lookup.
	recall(cached, 0)
	recall(uncached, 0)
	var withCache, without []time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			withCache = append(withCache, recall(cached, i))
			without = append(without, recall(uncached, i))
		} else {
			without = append(without, recall(uncached, i))
			withCache = append(withCache, recall(cached, i))
		}
	}
	q := func(took []time.Duration, p float64) float64 {
		slices.Sort(took)
		return float64(took[int(p*float64(len(took)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(q(withCache, 0.50), "cached-p50-ms")
	b.ReportMetric(q(withCache, 0.95), "cached-p95-ms")
	b.ReportMetric(q(without, 0.50), "uncached-p50-ms")
	b.ReportMetric(q(without, 0.95), "uncached-p95-ms")
	b.ReportMetric(0, "ns/op")
}
