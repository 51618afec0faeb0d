package journal

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/internal/testenv"
	"mneme/memory"
)

// TestRecallLogCapAndErase keeps the newest recalls per user up to the cap,
// and an erase leaves no key of the user anywhere (every node of a cluster
// is searched), while another user's log stays.
func TestRecallLogCapAndErase(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		t.Cleanup(func() { delKeys(rdb, recallKey(tenant, "alice"), recallKey(tenant, "bob")) })
		l := NewRecallLog(rdb, 2, time.Hour)
		t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		for i, user := range []string{"alice", "alice", "alice", "bob"} {
			rec := memory.RecallRecord{At: t0.Add(time.Duration(i) * time.Minute), Tenant: tenant, UserID: user, Caller: memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: "bot"}}
			if err := l.Append(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
		got, err := l.RecentRecalls(ctx, tenant, "alice", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !got[0].At.Equal(t0.Add(2*time.Minute)) || !got[1].At.Equal(t0.Add(time.Minute)) {
			t.Fatalf("alice's recalls = %+v, want the two newest, newest first", got)
		}
		if n, err := l.EraseUser(ctx, tenant, "alice"); err != nil || n != 2 {
			t.Fatalf("EraseUser = %d, %v; want 2", n, err)
		}
		keys, err := testenv.ScanKeys(ctx, rdb, "*"+tenant+"*")
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0] != recallKey(tenant, "bob") {
			t.Errorf("keys of the tenant after erasing alice: %v, want bob's log only", keys)
		}
	})
}
