package leader

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/internal/testenv"
)

// TestOneLeaderAndTakeover runs two replicas' locks on one key: one leads,
// the other does not; when the leader stops renewing (it crashed), the other
// takes over once the lock expires, and the old leader's late release does
// not free its successor's lock.
func TestOneLeaderAndTakeover(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		key := "mneme:test:leader:" + testenv.Tenant(t)
		t.Cleanup(func() { rdb.Del(context.Background(), key) })
		const ttl = 300 * time.Millisecond
		a, err := New(rdb, key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(rdb, key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		mustHold := func(l *Lock, name string, want bool) {
			t.Helper()
			got, err := l.Hold(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%s leads = %v, want %v", name, got, want)
			}
		}
		mustHold(a, "a", true)
		mustHold(b, "b", false)
		// a renews past the first ttl: b still may not lead.
		for range 3 {
			time.Sleep(ttl / 3)
			mustHold(a, "a (renewing)", true)
			mustHold(b, "b", false)
		}
		// a stops renewing; after the ttl b takes over and a has lost it.
		time.Sleep(ttl + 100*time.Millisecond)
		mustHold(b, "b after expiry", true)
		mustHold(a, "a after losing the lock", false)
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
		mustHold(b, "b after a's stale release", true)
		// b releases: a leads at once, without waiting for the ttl.
		if err := b.Release(ctx); err != nil {
			t.Fatal(err)
		}
		mustHold(a, "a after b released", true)
		if pttl := rdb.PTTL(ctx, key).Val(); pttl <= 0 || pttl > ttl {
			t.Errorf("lock ttl = %v, want within (0, %v]", pttl, ttl)
		}
	})
}

func TestNewRejectsBadInput(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for _, tc := range []struct {
		name string
		key  string
		ttl  time.Duration
	}{{"no key", "", time.Second}, {"no ttl", "k", 0}} {
		if _, err := New(rdb, tc.key, tc.ttl); err == nil {
			t.Errorf("%s: New accepted it", tc.name)
		}
	}
}
