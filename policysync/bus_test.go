package policysync

import (
	"context"
	"testing"
	"time"

	"mneme/internal/testenv"
	"mneme/policyadmin"

	"github.com/redis/go-redis/v9"
)

func TestAnnounce(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		b := New(rdb, nil)
		tenant := testenv.Tenant(t)
		t.Cleanup(func() { _ = rdb.Del(ctx, key(tenant)).Err() })

		heard := make(chan string, 10)
		lctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			b.Listen(lctx, func(_ context.Context, tenant string) { heard <- tenant })
			close(done)
		}()
		t.Cleanup(func() { stop(); <-done })

		if _, ok, err := b.Current(ctx, tenant); err != nil || ok {
			t.Fatalf("Current of a fresh tenant: ok %v, err %v", ok, err)
		}
		steps := []struct {
			announce, want policyadmin.Revisions
		}{
			{policyadmin.Revisions{Policy: 2, PolicyEpoch: 1, Grants: 0}, policyadmin.Revisions{Policy: 2, PolicyEpoch: 1, Grants: 0}},
			{policyadmin.Revisions{Policy: 0, PolicyEpoch: 2, Grants: 3}, policyadmin.Revisions{Policy: 0, PolicyEpoch: 2, Grants: 3}},
			// A late, older announcement lowers nothing.
			{policyadmin.Revisions{Policy: 2, PolicyEpoch: 1, Grants: 1}, policyadmin.Revisions{Policy: 0, PolicyEpoch: 2, Grants: 3}},
			{policyadmin.Revisions{Policy: 0, PolicyEpoch: 2, Grants: 4}, policyadmin.Revisions{Policy: 0, PolicyEpoch: 2, Grants: 4}},
		}
		// The subscription may take a moment to be in place.
		deadline := time.Now().Add(5 * time.Second)
		for {
			if err := b.Announce(ctx, tenant, steps[0].announce); err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-heard:
				if got != tenant {
					continue
				}
			case <-time.After(50 * time.Millisecond):
				if time.Now().Before(deadline) {
					continue
				}
				t.Fatal("no announcement heard")
			}
			break
		}
		for i, s := range steps {
			if err := b.Announce(ctx, tenant, s.announce); err != nil {
				t.Fatal(err)
			}
			got, ok, err := b.Current(ctx, tenant)
			if err != nil || !ok || got != s.want {
				t.Errorf("step %d: Current = %+v, %v, %v; want %+v", i, got, ok, err, s.want)
			}
		}
	})
}
