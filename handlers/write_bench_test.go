package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"mneme/internal/apptest"
	"mneme/memory"
)

// BenchmarkSyncWrite measures one synchronous write of one memory, P50 and
// P95 in milliseconds: "api" through HTTP and the whole write pipeline
// (policy, guard, worth, embedding, dedup search, commit); "store" commits
// the same kind of memory straight into the graph store, the same-run
// baseline. Run it with
//
//	go test -run '^$' -bench BenchmarkSyncWrite -benchtime 300x -count 5 ./handlers
func BenchmarkSyncWrite(b *testing.B) {
	f := apptest.Start(b)
	users := []string{"alice", "bob", "carol"}
	// Each run writes new facts: a repeat would be reinforced, not created.
	run := 0
	content := func(i int) string {
		return fmt.Sprintf("Customer asked about order %d-%d and wants delivery to warehouse %d before day %d", run, 10000+i, i%97, i%31)
	}
	report := func(b *testing.B, took []time.Duration) {
		slices.Sort(took)
		q := func(p float64) float64 {
			return float64(took[int(p*float64(len(took)-1))].Microseconds()) / 1000
		}
		b.ReportMetric(q(0.50), "p50-ms")
		b.ReportMetric(q(0.95), "p95-ms")
		b.ReportMetric(0, "ns/op")
	}
	b.Run("api", func(b *testing.B) {
		run++
		took := make([]time.Duration, 0, b.N)
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			r := f.Do(b, "support-bot", http.MethodPost, "/v1/memories", memory.NewMemory{
				UserID: users[i%len(users)], Type: memory.TypeEpisodic, Kind: "ticket", Content: content(i),
			})
			took = append(took, time.Since(start))
			if r.Status != http.StatusCreated {
				b.Fatalf("write: %d %s", r.Status, r.Body)
			}
		}
		report(b, took)
	})
	b.Run("store", func(b *testing.B) {
		ctx := context.Background()
		vecs, err := f.App.Embed.Embed(ctx, []string{content(0)})
		if err != nil {
			b.Fatal(err)
		}
		took := make([]time.Duration, 0, b.N)
		for i := 0; b.Loop(); i++ {
			now := time.Now().UTC()
			m := memory.Memory{
				ID: memory.NewID("mem"), Tenant: f.Tenant, UserID: users[i%len(users)], AgentID: "support-bot",
				Type: memory.TypeEpisodic, Kind: "ticket", Content: content(i), Status: memory.StatusActive,
				Sensitivity: memory.SensitivityInternal, Importance: 0.5, Confidence: 1, ValidFrom: now,
				CreatedAt: now, UpdatedAt: now, Version: 1, EvidenceCount: 1, Embedding: vecs[0],
			}
			start := time.Now()
			if _, err := f.App.Store.CreateMemories(ctx, []memory.Memory{m}); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
		report(b, took)
	})
}
