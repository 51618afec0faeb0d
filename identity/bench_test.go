package identity_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"mneme/graph"
	"mneme/graph/keystore"
	"mneme/identity"
	"mneme/internal/testenv"
	"mneme/memory"
)

// BenchmarkAuthenticate measures the cost of authentication per request
// against the real Neo4j and Redis: the epoch GET alone when the key is
// cached, and the epoch GET plus the Neo4j lookup when it is not. Each
// reports P50 and P99 next to ns/op.
//
//	go test -run '^$' -bench Authenticate -count 5 ./identity/
func BenchmarkAuthenticate(b *testing.B) {
	driver := testenv.Neo4j(b)
	rdb := testenv.Redis(b)
	store := graph.New(driver, graph.Options{Database: testenv.Neo4jDatabase()})
	if err := store.EnsureSchema(context.Background(), testenv.EmbeddingDimension); err != nil {
		b.Fatal(err)
	}
	hasher, err := identity.NewHasher(testenv.KeySecret())
	if err != nil {
		b.Fatal(err)
	}
	tenant := testenv.Tenant(b)
	key := identity.NewAPIKey(tenant)
	redisEpochs := identity.NewRedisEpochs(rdb)
	for _, tc := range []struct {
		name    string
		noCache bool
		epochs  identity.Epochs
	}{
		{"cached", false, redisEpochs},
		{"uncached", true, redisEpochs},
		// The in-process part alone: parse, HMAC, cache, expiry check.
		{"cached-without-redis", false, fixedEpoch{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			svc, err := identity.New(identity.Options{Store: keystore.New(store.Runner()), Epochs: tc.epochs, Hasher: hasher, NoCache: tc.noCache})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := svc.PutKey(ctx, key, memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: "bench-bot"}, ""); err != nil {
				b.Fatal(err)
			}
			if _, err := svc.Authenticate(ctx, key); err != nil {
				b.Fatal(err)
			}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := svc.Authenticate(ctx, key); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// fixedEpoch is an epoch that never changes, to measure without Redis.
type fixedEpoch struct{}

func (fixedEpoch) Epoch(context.Context, string) (int64, error) { return 1, nil }
func (fixedEpoch) Bump(context.Context, string) error           { return nil }
