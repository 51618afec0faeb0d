package testenv

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestScanKeysCoversEveryNode finds every key written, and on a cluster
// the keys were spread over every master: a SCAN of one node would miss
// some.
func TestScanKeysCoversEveryNode(t *testing.T) {
	EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		prefix := "scantest-" + Tenant(t)
		var want []string
		for i := range 48 {
			k := fmt.Sprintf("%s:{%d}", prefix, i)
			if err := rdb.Set(ctx, k, "x", 0).Err(); err != nil {
				t.Fatal(err)
			}
			want = append(want, k)
		}
		t.Cleanup(func() {
			for _, k := range want {
				_ = rdb.Del(context.Background(), k).Err()
			}
		})
		got, err := ScanKeys(ctx, rdb, prefix+":*")
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("ScanKeys found %d keys, want %d:\n%v", len(got), len(want), got)
		}
		cluster, ok := rdb.(*redis.ClusterClient)
		if !ok {
			return
		}
		var masters, holding atomic.Int64
		err = cluster.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			masters.Add(1)
			keys, _, err := c.Scan(ctx, 0, prefix+":*", 1000).Result()
			if len(keys) > 0 {
				holding.Add(1)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if masters.Load() < 2 || holding.Load() != masters.Load() {
			t.Errorf("%d of %d masters hold keys: the test does not show a scan of every node", holding.Load(), masters.Load())
		}
	})
}
