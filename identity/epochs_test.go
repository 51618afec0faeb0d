package identity

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"mneme/internal/testenv"
)

// TestRedisEpochs starts each tenant at 0 and raises only the tenant bumped.
func TestRedisEpochs(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		a, b := testenv.Tenant(t), testenv.Tenant(t)
		t.Cleanup(func() {
			for _, tenant := range []string{a, b} {
				_ = rdb.Del(context.Background(), epochKey(tenant)).Err()
			}
		})
		e := NewRedisEpochs(rdb)
		for i := 0; i < 2; i++ {
			if err := e.Bump(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := e.Epoch(ctx, a); err != nil || n != 2 {
			t.Errorf("epoch of a = %d, %v; want 2", n, err)
		}
		if n, err := e.Epoch(ctx, b); err != nil || n != 0 {
			t.Errorf("epoch of b = %d, %v; want 0", n, err)
		}
	})
}
