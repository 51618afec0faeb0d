package leader

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"mneme/internal/testenv"

	"github.com/redis/go-redis/v9"
)

// TestTwoRunnersOneLeader runs two replicas' janitor loops on one lock: only
// one runs the job; when it stops, the other takes over.
func TestTwoRunnersOneLeader(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		key := "mneme:test:runner:" + testenv.Tenant(t)
		t.Cleanup(func() { rdb.Del(context.Background(), key) })
		const ttl = 600 * time.Millisecond
		var runs [2]atomic.Int64
		var stops [2]func()
		for i := range stops {
			lock, err := New(rdb, key, ttl)
			if err != nil {
				t.Fatal(err)
			}
			r := NewRunner(RunnerOptions{
				Name: "janitor", Every: 50 * time.Millisecond, Renew: ttl / 6, Lease: lock,
				Job:    func(context.Context) error { runs[i].Add(1); return nil },
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			stops[i] = start(r)
			t.Cleanup(stops[i])
		}
		waitUntil := func(what string, cond func() bool) {
			t.Helper()
			deadline := time.Now().Add(10 * time.Second)
			for !cond() {
				if time.Now().After(deadline) {
					t.Fatalf("gave up waiting: %s (runs %d, %d)", what, runs[0].Load(), runs[1].Load())
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		waitUntil("a leader runs the job three times", func() bool { return runs[0].Load()+runs[1].Load() >= 3 })
		lead := 0
		if runs[1].Load() > 0 {
			lead = 1
		}
		follower := 1 - lead
		if runs[follower].Load() != 0 {
			t.Fatalf("both replicas ran the job: %d and %d", runs[0].Load(), runs[1].Load())
		}
		stops[lead]()
		waitUntil("the other replica takes over", func() bool { return runs[follower].Load() >= 2 })
	})
}
