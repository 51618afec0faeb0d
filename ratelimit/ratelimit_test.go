package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/ratelimit"
)

func TestRetryAfterSeconds(t *testing.T) {
	for _, c := range []struct {
		wait time.Duration
		want int
	}{
		{0, 1}, {time.Microsecond, 1}, {999 * time.Millisecond, 1}, {time.Second, 1},
		{time.Second + time.Microsecond, 2}, {2500 * time.Millisecond, 3}, {time.Minute, 60},
	} {
		if got := (&ratelimit.LimitedError{RetryAfter: c.wait}).RetryAfterSeconds(); got != c.want {
			t.Errorf("RetryAfterSeconds(%s) = %d, want %d", c.wait, got, c.want)
		}
	}
}

func TestBucket(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		l := ratelimit.New(rdb, ratelimit.Options{
			Default: ratelimit.Rate{PerSecond: 2, Burst: 3},
			Kinds:   map[string]ratelimit.Rate{memory.KindAdmin: {}, memory.KindUser: {PerSecond: 0.1, Burst: 1}},
			Prefix:  "mneme-test",
		})

		t.Run("burst then refused with the wait for one token", func(t *testing.T) {
			for i := range 3 {
				if err := l.Allow(ctx, tenant, memory.KindAgent, "key:a"); err != nil {
					t.Fatalf("request %d of the burst: %v", i+1, err)
				}
			}
			err := l.Allow(ctx, tenant, memory.KindAgent, "key:a")
			var limited *ratelimit.LimitedError
			if !errors.As(err, &limited) {
				t.Fatalf("fourth request = %v, want *LimitedError", err)
			}
			// Two tokens a second: the next one is at most half a second away.
			if limited.RetryAfter <= 0 || limited.RetryAfter > 500*time.Millisecond {
				t.Errorf("RetryAfter = %s, want (0, 500ms]", limited.RetryAfter)
			}
			time.Sleep(limited.RetryAfter + 20*time.Millisecond)
			if err := l.Allow(ctx, tenant, memory.KindAgent, "key:a"); err != nil {
				t.Errorf("after RetryAfter: %v", err)
			}
		})
		t.Run("buckets are per caller and per tenant", func(t *testing.T) {
			for range 3 {
				_ = l.Allow(ctx, tenant, memory.KindAgent, "key:b")
			}
			if err := l.Allow(ctx, tenant, memory.KindAgent, "key:c"); err != nil {
				t.Errorf("another caller: %v", err)
			}
			if err := l.Allow(ctx, testenv.Tenant(t), memory.KindAgent, "key:b"); err != nil {
				t.Errorf("same caller name in another tenant: %v", err)
			}
		})
		t.Run("per-kind overrides", func(t *testing.T) {
			for i := range 20 {
				if err := l.Allow(ctx, tenant, memory.KindAdmin, "key:admin"); err != nil {
					t.Fatalf("admin request %d: %v", i+1, err)
				}
			}
			if err := l.Allow(ctx, tenant, memory.KindUser, "key:u"); err != nil {
				t.Fatal(err)
			}
			var limited *ratelimit.LimitedError
			if err := l.Allow(ctx, tenant, memory.KindUser, "key:u"); !errors.As(err, &limited) {
				t.Fatalf("second user request = %v, want *LimitedError", err)
			}
			if s := limited.RetryAfterSeconds(); s < 9 || s > 10 {
				t.Errorf("Retry-After = %ds at 0.1/s, want 9..10", s)
			}
		})
		t.Run("concurrent callers never take more than the bucket holds", func(t *testing.T) {
			other := ratelimit.New(rdb, ratelimit.Options{Default: ratelimit.Rate{PerSecond: 0.01, Burst: 10}, Prefix: "mneme-test"})
			var ok atomic.Int32
			var wg sync.WaitGroup
			for range 50 {
				wg.Go(func() {
					if other.Allow(ctx, tenant, memory.KindAgent, "key:race") == nil {
						ok.Add(1)
					}
				})
			}
			wg.Wait()
			if ok.Load() != 10 {
				t.Errorf("%d of 50 concurrent requests allowed, want the burst of 10", ok.Load())
			}
		})
		t.Run("off", func(t *testing.T) {
			off := ratelimit.New(rdb, ratelimit.Options{})
			for range 100 {
				if err := off.Allow(ctx, tenant, memory.KindAgent, "key:off"); err != nil {
					t.Fatal(err)
				}
			}
		})
	})
}

// TestRedisDown: the limit fails closed.
func TestRedisDown(t *testing.T) {
	testenv.RedisURL(t)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	l := ratelimit.New(rdb, ratelimit.Options{Default: ratelimit.Rate{PerSecond: 1, Burst: 1}})
	if err := l.Allow(context.Background(), "acme", memory.KindAgent, "key:x"); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("Allow with Redis down = %v, want ErrUnavailable", err)
	}
}
