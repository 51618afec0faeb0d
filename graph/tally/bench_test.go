package tally

import (
	"context"
	"fmt"
	"testing"
	"time"

	"mneme/internal/testenv"
	"mneme/memory"
)

// EnvBenchMemories and EnvBenchUsers size BenchmarkReconcile (default
// 100,000 memories over 1,000 users).
const (
	EnvBenchMemories = "MNEME_TALLY_BENCH_MEMORIES"
	EnvBenchUsers    = "MNEME_TALLY_BENCH_USERS"
)

// BenchmarkReconcile times one reconciliation of a tenant holding many
// memories, whose tallies are all right (the hourly case), and one count
// of the tenant from its tallies beside one from its memories.
//
//	go test -run '^$' -bench Reconcile -benchtime 5x ./graph/tally/
func BenchmarkReconcile(b *testing.B) {
	n, users := testenv.Count(b, EnvBenchMemories, 100_000), testenv.Count(b, EnvBenchUsers, 1000)
	f, ctx := newFixture(b)
	start := time.Now()
	for i := 0; i < n; i += 1000 {
		ms := make([]memory.Memory, 0, 1000)
		for j := i; j < min(i+1000, n); j++ {
			m := f.mem(fmt.Sprintf("u%d", j%users), memory.Types[j%len(memory.Types)], memory.StatusActive, "")
			if j%7 == 0 {
				m.Status = memory.StatusArchived
			}
			ms = append(ms, m)
		}
		if _, err := f.g.CreateMemories(ctx, ms); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("seeded %d memories over %d users in %s", n, users, time.Since(start).Round(time.Millisecond))
	b.Cleanup(func() {
		// The benchmark's context ends before its cleanups run.
		ctx := context.Background()
		for u := range users {
			if _, err := f.g.EraseUser(ctx, f.tenant, fmt.Sprintf("u%d", u), memory.Tombstone{At: time.Now(), By: "admin:bench"}); err != nil {
				b.Errorf("erase: %v", err)
			}
		}
	})
	all := memory.Scope{Tenant: f.tenant, Filter: &memory.Filter{Op: memory.FilterTrue}}
	b.Run("reconcile", func(b *testing.B) {
		for b.Loop() {
			r, err := f.s.Reconcile(ctx, f.tenant)
			if err != nil || r.Mended != 0 {
				b.Fatalf("Reconcile = %+v, %v; want nothing mended", r, err)
			}
		}
	})
	b.Run("count/tallies", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.s.CountMemories(ctx, all); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("count/memories", func(b *testing.B) {
		f.cypher(b, ctx, markPending)
		defer f.cypher(b, ctx, `MATCH (p:TallyPending {tenant: $tenant}) DELETE p`)
		for b.Loop() {
			if _, err := f.s.CountMemories(ctx, all); err != nil {
				b.Fatal(err)
			}
		}
	})
}
