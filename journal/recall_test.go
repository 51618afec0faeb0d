package journal

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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

// The log keeps a question with what the guard finds in it masked.
func TestRecallLogMasksTheQuestion(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		t.Cleanup(func() { delKeys(rdb, recallKey(tenant, "bob")) })
		l := NewRecallLog(rdb, 10, time.Hour)
		q := "How does Bob want to be contacted? his card is 5500005555555559, password=Hunter2!xyz, ID 110101199003074514, " +
			"his other card ٤١١١١١١١١١١١١١١١, mail bоb.smith@example.cоm, 她的身份证号 1101 0519 4912 3100 2X, passport number E 8765 4321, " +
			"one-time code is 839201, driver's licence number D123-4567-8901, p a s s w o r d is wq9Zt!ppa"
		if err := l.Append(ctx, memory.RecallRecord{At: time.Now(), Tenant: tenant, UserID: "bob", Query: q}); err != nil {
			t.Fatal(err)
		}
		got, err := l.RecentRecalls(ctx, tenant, "bob", 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("RecentRecalls: %v, %d", err, len(got))
		}
		for _, secret := range []string{"5500005555555559", "Hunter2!xyz", "110101199003074514", "١١١١١١", "smith@",
			"4912 3100", "8765 4321", "839201", "4567-8901", "wq9Zt!ppa"} {
			if strings.Contains(got[0].Query, secret) {
				t.Errorf("the logged question keeps %q: %s", secret, got[0].Query)
			}
		}
		if !strings.HasPrefix(got[0].Query, "How does Bob want to be contacted?") || !strings.Contains(got[0].Query, "[REDACTED:") {
			t.Errorf("logged question %q, want the words kept and the findings masked", got[0].Query)
		}
	})
}

// touchLog is a Toucher that remembers each update.
type touchLog struct {
	mu    sync.Mutex
	calls map[string][][]string // by tenant, each update's ids
}

func (l *touchLog) TouchMemories(_ context.Context, tenant string, ids []string, _ time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls == nil {
		l.calls = map[string][][]string{}
	}
	l.calls[tenant] = append(l.calls[tenant], slices.Clone(ids))
	return nil
}

func (l *touchLog) snapshot() map[string][][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.calls)
}

// recalled is an answered recall of the given memories.
func recalled(tenant string, ids ...string) memory.RecallRecord {
	rec := memory.RecallRecord{At: time.Now(), Tenant: tenant, UserID: "alice"}
	for _, id := range ids {
		rec.Memories = append(rec.Memories, memory.RecalledMemory{ID: id})
	}
	return rec
}

// The accesses of recalls close together are counted with one update per
// tenant once the delay has passed, at once on Flush (as before an erase),
// and without waiting when very many wait.
func TestRecorderCountsAccessesTogether(t *testing.T) {
	start := func(t *testing.T, delay time.Duration) (*Recorder, *touchLog) {
		touched := &touchLog{}
		r := NewRecorder(RecorderOptions{Touch: touched, TouchDelay: delay})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		return r, touched
	}
	waitFor := func(t *testing.T, touched *touchLog, want map[string][][]string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			got := touched.snapshot()
			if cmp.Equal(want, got, cmpopts.EquateEmpty()) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("updates %v, want %v", got, want)
			}
		}
	}

	t.Run("flush", func(t *testing.T) {
		r, touched := start(t, time.Hour)
		r.Record(recalled("t1", "m1", "m2"))
		r.Record(recalled("t2", "m9"))
		r.Record(recalled("t1", "m2", "m3"))
		time.Sleep(200 * time.Millisecond)
		if got := touched.snapshot(); len(got) != 0 {
			t.Fatalf("updates before the delay: %v, want none", got)
		}
		if err := r.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, touched, map[string][][]string{"t1": {{"m1", "m2", "m2", "m3"}}, "t2": {{"m9"}}})
	})
	t.Run("delay", func(t *testing.T) {
		r, touched := start(t, 50*time.Millisecond)
		r.Record(recalled("t1", "m1"))
		waitFor(t, touched, map[string][][]string{"t1": {{"m1"}}})
		r.Record(recalled("t1", "m2"))
		waitFor(t, touched, map[string][][]string{"t1": {{"m1"}, {"m2"}}})
	})
	t.Run("many waiting", func(t *testing.T) {
		r, touched := start(t, time.Hour)
		ids := make([]string, maxPendingTouches)
		for i := range ids {
			ids[i] = "m" + strconv.Itoa(i)
		}
		r.Record(recalled("t1", ids...))
		waitFor(t, touched, map[string][][]string{"t1": {ids}})
	})
}
