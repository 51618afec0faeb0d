package session

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/workingmemory"
)

var quiet = slog.New(slog.DiscardHandler)

// t0 is a day ahead of the wall clock: every Redis-backed test shares one
// due set, and a real expiry worker of another test binary must never find
// these sessions due.
var t0 = time.Now().UTC().Add(24 * time.Hour).Truncate(time.Millisecond)

func owner(tenant string) memory.Principal {
	return memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: "support-bot"}
}

func open(tenant, id, user string) memory.Session {
	return memory.Session{ID: id, Tenant: tenant, UserID: user, AgentID: "support-bot", Owner: owner(tenant)}
}

func turns(texts ...string) []memory.Turn {
	out := make([]memory.Turn, len(texts))
	for i, s := range texts {
		out[i] = memory.Turn{Role: memory.RoleUser, Content: s, At: t0.Add(time.Duration(i) * time.Second)}
	}
	return out
}

// keysOf lists, with SCAN, every Redis key that names the tenant.
func keysOf(t *testing.T, rdb redis.UniversalClient, tenant string) []string {
	t.Helper()
	out, err := testenv.ScanKeys(context.Background(), rdb, "*"+tenant+"*")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAppendGetClaimFinish(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		s := New(Options{Redis: rdb, TTL: time.Hour})

		got, err := s.Append(ctx, open(tenant, "s-1", "alice"), turns("hello", "my budget is 100k"), 0, t0)
		if err != nil {
			t.Fatal(err)
		}
		got, err = s.Append(ctx, open(tenant, "s-1", "alice"), turns("thanks"), 0, t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Turns) != 3 || got.Turns[1].Content != "my budget is 100k" || got.Bytes != len("hello")+len("my budget is 100k")+len("thanks") {
			t.Errorf("session = %+v", got)
		}
		if !got.CreatedAt.Equal(t0) || !got.ExpiresAt.Equal(t0.Add(time.Minute+time.Hour)) || got.Owner.ID != "support-bot" || got.Owner.Kind != memory.KindAgent || got.Owner.Tenant != tenant || got.AgentID != "support-bot" {
			t.Errorf("times/owner = %v %v %+v", got.CreatedAt, got.ExpiresAt, got.Owner)
		}
		// Redis forgets the keys by itself some time after the due time.
		if ttl := rdb.PTTL(ctx, metaKey(tenant, "s-1")).Val(); ttl <= time.Hour || ttl > time.Hour+DefaultGrace {
			t.Errorf("key TTL = %s, want the session TTL plus grace", ttl)
		}

		if _, err := s.Append(ctx, open(tenant, "s-1", "bob"), turns("hi"), 0, t0); !errors.Is(err, memory.ErrSessionTaken) {
			t.Errorf("append for another user: err = %v, want ErrSessionTaken", err)
		}
		if _, err := s.Get(ctx, tenant, "s-none"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("get missing: err = %v", err)
		}
		if _, err := s.Get(ctx, testenv.Tenant(t), "s-1"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("another tenant sees the session: err = %v", err)
		}

		claimed, err := s.Claim(ctx, tenant, "s-1", t0.Add(2*time.Minute))
		if err != nil || len(claimed.Turns) != 3 {
			t.Fatalf("claim = %+v, %v", claimed, err)
		}
		if _, err := s.Claim(ctx, tenant, "s-1", t0.Add(2*time.Minute)); !errors.Is(err, memory.ErrSessionClosing) {
			t.Errorf("second claim: err = %v, want ErrSessionClosing", err)
		}
		if _, err := s.Append(ctx, open(tenant, "s-1", "alice"), turns("more"), 0, t0); !errors.Is(err, memory.ErrSessionClosing) {
			t.Errorf("append while closing: err = %v, want ErrSessionClosing", err)
		}
		if err := s.Finish(ctx, tenant, "s-1"); err != nil {
			t.Fatal(err)
		}
		if keys := keysOf(t, rdb, tenant); len(keys) != 0 {
			t.Errorf("keys left after finish: %v", keys)
		}
		if n := rdb.ZScore(ctx, dueKey(tenant), member(tenant, "s-1")); n.Err() != redis.Nil {
			t.Errorf("still in the due set: %v", n)
		}
	})
}

// A session takes turns from the principal that opened it and from the
// user it is about, and from no one else: another agent's turns would
// become memories written as the opener when it closes.
func TestAppendByAnotherPrincipal(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		s := New(Options{Redis: rdb, TTL: time.Hour})
		as := func(kind, id string) memory.Session {
			sess := open(tenant, "s-1", "alice")
			sess.Owner = memory.Principal{Tenant: tenant, Kind: kind, ID: id}
			return sess
		}
		if _, err := s.Append(ctx, open(tenant, "s-1", "alice"), turns("my dock code is 7731"), 0, t0); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name    string
			sess    memory.Session
			wantErr error
		}{
			{"another agent", as(memory.KindAgent, "order-bot"), memory.ErrSessionTaken},
			{"another user", as(memory.KindUser, "bob"), memory.ErrSessionTaken},
			{"a user of the opener's id", as(memory.KindUser, "support-bot"), memory.ErrSessionTaken},
			{"the user it is about", as(memory.KindUser, "alice"), nil},
			{"the opener", open(tenant, "s-1", "alice"), nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before, err := s.Get(ctx, tenant, "s-1")
				if err != nil {
					t.Fatal(err)
				}
				_, err = s.Append(ctx, tc.sess, turns("and more"), 0, t0)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("append: err = %v, want %v", err, tc.wantErr)
				}
				after, err := s.Get(ctx, tenant, "s-1")
				if err != nil {
					t.Fatal(err)
				}
				want := len(before.Turns)
				if tc.wantErr == nil {
					want++
				}
				if len(after.Turns) != want || after.Owner.ID != "support-bot" {
					t.Errorf("after the append: %d turns, opened by %s; want %d, support-bot", len(after.Turns), after.Owner.ID, want)
				}
			})
		}
	})
}

// The caps refuse an append that would pass them, whole: nothing of it is
// stored and the earlier turns stay.
func TestCapsRefuseAndKeepWhatWasThere(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		s := New(Options{Redis: rdb, MaxTurns: 3, MaxBytes: 1024})
		if _, err := s.Append(ctx, open(tenant, "s-turns", "alice"), turns("a1", "a2"), 0, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, open(tenant, "s-turns", "alice"), turns("a3", "a4"), 0, t0); !errors.Is(err, memory.ErrSessionFull) {
			t.Errorf("fourth turn: err = %v, want ErrSessionFull", err)
		}
		if _, err := s.Append(ctx, open(tenant, "s-turns", "alice"), turns("a3"), 0, t0); err != nil {
			t.Errorf("third turn: %v", err)
		}
		if _, err := s.Append(ctx, open(tenant, "s-bytes", "alice"), turns(strings.Repeat("x", 1000)), 0, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, open(tenant, "s-bytes", "alice"), turns(strings.Repeat("y", 25)), 0, t0); !errors.Is(err, memory.ErrSessionFull) {
			t.Errorf("past the byte cap: err = %v, want ErrSessionFull", err)
		}
		got, err := s.Get(ctx, tenant, "s-bytes")
		if err != nil || len(got.Turns) != 1 || got.Bytes != 1000 {
			t.Errorf("after refusal = %d turns, %d bytes, %v", len(got.Turns), got.Bytes, err)
		}
		if _, err := s.Append(ctx, open(tenant, "s-big", "alice"), turns(strings.Repeat("z", 1025)), 0, t0); !errors.Is(err, memory.ErrSessionFull) {
			t.Errorf("one turn over the cap: err = %v", err)
		}
		if _, err := s.Get(ctx, tenant, "s-big"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("a refused first append opened the session: %v", err)
		}
	})
}

func TestExpirerEndsDueSessionsOnce(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		s := New(Options{Redis: rdb, TTL: time.Second, Lease: time.Minute})
		if _, err := s.Append(ctx, open(tenant, "s-due", "alice"), turns("my budget is 100k"), 0, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, open(tenant, "s-later", "alice"), turns("hi"), time.Hour, t0); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var ended []string
		end := func(_ context.Context, sess memory.Session) error {
			if sess.Tenant != tenant {
				return nil // another test's session: not ours to count
			}
			mu.Lock()
			defer mu.Unlock()
			ended = append(ended, sess.ID+":"+sess.Turns[0].Content)
			return nil
		}
		now := t0.Add(2 * time.Second)
		// Several replicas scan at once; each session ends exactly once.
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := NewExpirer(s, ExpirerOptions{End: end, Logger: quiet, Now: func() time.Time { return now }})
				if _, err := e.RunOnce(ctx); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if len(ended) != 1 || ended[0] != "s-due:my budget is 100k" {
			t.Errorf("ended = %v, want s-due once", ended)
		}
		if _, err := s.Get(ctx, tenant, "s-due"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("ended session still there: %v", err)
		}
		if _, err := s.Get(ctx, tenant, "s-later"); err != nil {
			t.Errorf("the session with an hour left was ended: %v", err)
		}
	})
}

func TestExpirerRetriesAfterTheLease(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		s := New(Options{Redis: rdb, TTL: time.Second, Lease: 10 * time.Second})
		for _, id := range []string{"s-flaky", "s-denied"} {
			if _, err := s.Append(ctx, open(tenant, id, "alice"), turns("remember that the dock closes at 5"), 0, t0); err != nil {
				t.Fatal(err)
			}
		}
		var calls atomic.Int32
		end := func(_ context.Context, sess memory.Session) error {
			if sess.Tenant != tenant {
				return nil
			}
			if sess.ID == "s-denied" {
				return memory.ErrForbidden // retrying cannot help: dropped
			}
			if calls.Add(1) == 1 {
				return memory.ErrUnavailable
			}
			return nil
		}
		now := t0.Add(2 * time.Second)
		e := NewExpirer(s, ExpirerOptions{End: end, Logger: quiet, Now: func() time.Time { return now }})
		if _, err := e.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, tenant, "s-flaky"); err != nil {
			t.Fatalf("a failed end lost the session: %v", err)
		}
		if _, err := s.Get(ctx, tenant, "s-denied"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("a permanently failing session is kept: %v", err)
		}
		if _, err := e.RunOnce(ctx); err != nil || calls.Load() != 1 {
			t.Fatalf("within the lease: calls = %d, %v", calls.Load(), err)
		}
		now = now.Add(11 * time.Second)
		if _, err := e.RunOnce(ctx); err != nil || calls.Load() != 2 {
			t.Fatalf("after the lease: calls = %d, %v", calls.Load(), err)
		}
		if _, err := s.Get(ctx, tenant, "s-flaky"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("ended session still there: %v", err)
		}
	})
}

func TestEraseUser(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		s := New(Options{Redis: rdb})
		var _ memory.Eraser = s
		for _, id := range []string{"s-a1", "s-a2", "s-a3"} {
			if _, err := s.Append(ctx, open(tenant, id, "alice"), turns("Alice's secret plan: budget 100k"), 0, t0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Claim(ctx, tenant, "s-a3", t0); err != nil { // a close in flight is erased too
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, open(tenant, "s-b", "bob"), turns("Bob's turn"), 0, t0); err != nil {
			t.Fatal(err)
		}
		n, err := s.EraseUser(ctx, tenant, "alice")
		if err != nil || n != 3 || s.Place() != "sessions" {
			t.Fatalf("erase = %d, %v (place %q); want 3", n, err, s.Place())
		}
		for _, k := range keysOf(t, rdb, tenant) {
			if strings.Contains(k, "alice") || strings.Contains(k, "s-a") {
				t.Errorf("key left: %s", k)
			}
			if typ := rdb.Type(ctx, k).Val(); typ == "list" {
				for _, v := range rdb.LRange(ctx, k, 0, -1).Val() {
					if strings.Contains(v, "Alice") {
						t.Errorf("Alice's content left in %s", k)
					}
				}
			}
		}
		due := rdb.ZRange(ctx, dueKey(tenant), 0, -1).Val()
		for _, m := range due {
			if strings.HasPrefix(m, tenant+"/s-a") {
				t.Errorf("due set keeps %s", m)
			}
		}
		if _, err := s.Get(ctx, tenant, "s-b"); err != nil {
			t.Errorf("bob's session went too: %v", err)
		}
		if n, err := s.EraseUser(ctx, tenant, "alice"); err != nil || n != 0 {
			t.Errorf("second erase = %d, %v", n, err)
		}
	})
}

// The expirer reads the due sets of listed tenants only: a tenant is listed
// once it has a session and unlisted once it has none left.
func TestExpirerListsTenantsWithSessions(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		s := New(Options{Redis: rdb, TTL: time.Second, Lease: time.Minute})
		listed := func() bool {
			t.Helper()
			ok, err := rdb.SIsMember(ctx, tenantsKey, tenant).Result()
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		// A clock long before every session's due time: the scan ends none.
		e := NewExpirer(s, ExpirerOptions{End: func(context.Context, memory.Session) error { return nil }, Logger: quiet, Batch: 1 << 20, Now: func() time.Time { return t0.Add(-48 * time.Hour) }})
		if _, err := s.Append(ctx, open(tenant, "s-1", "alice"), turns("hello"), 0, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := e.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if !listed() {
			t.Fatal("a tenant with an open session is not listed")
		}
		if err := s.Finish(ctx, tenant, "s-1"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if listed() {
			t.Error("a tenant without sessions is still listed after a scan")
		}
		if _, err := s.Append(ctx, open(tenant, "s-2", "alice"), turns("again"), 0, t0); err != nil {
			t.Fatal(err)
		}
		if !listed() {
			t.Error("a new session does not list its tenant again")
		}
		if err := s.Finish(ctx, tenant, "s-2"); err != nil {
			t.Fatal(err)
		}
		_ = rdb.SRem(ctx, tenantsKey, tenant).Err()
	})
}

// The user speaking in an agent's session keeps the session's TTL, whatever
// TTL the user asks for: a guest cannot end the owner's session early. The
// owner sets it as it likes.
func TestGuestKeepsTheOwnersTTL(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		s := New(Options{Redis: rdb, TTL: time.Hour})
		if _, err := s.Append(ctx, open(tenant, "s-ttl", "alice"), turns("hello"), 10*time.Minute, t0); err != nil {
			t.Fatal(err)
		}
		user := open(tenant, "s-ttl", "alice")
		user.Owner = memory.Principal{Tenant: tenant, Kind: memory.KindUser, ID: "alice"}
		got, err := s.Append(ctx, user, turns("end it now"), time.Second, t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if want := t0.Add(11 * time.Minute); !got.ExpiresAt.Equal(want) {
			t.Errorf("after the user's append: expires %s, want %s", got.ExpiresAt, want)
		}
		got, err = s.Append(ctx, open(tenant, "s-ttl", "alice"), turns("short now"), time.Minute, t0.Add(2*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if want := t0.Add(3 * time.Minute); !got.ExpiresAt.Equal(want) {
			t.Errorf("after the owner's append: expires %s, want %s", got.ExpiresAt, want)
		}
	})
}

// TestAppendRefusesTurnsOutOfOrder: a turn earlier than the session's
// latest by more than the skew is refused, with nothing of its append
// kept; one within the skew is taken. A session from before the latest
// turn time was kept takes any.
func TestAppendRefusesTurnsOutOfOrder(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		s := New(Options{Redis: rdb, TTL: time.Hour})
		at := func(d time.Duration, text string) memory.Turn {
			return memory.Turn{Role: memory.RoleUser, Content: text, At: t0.Add(d)}
		}
		if _, err := s.Append(ctx, open(tenant, "s-ord", "alice"), []memory.Turn{at(0, "first"), at(10*time.Minute, "latest")}, 0, t0); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name  string
			turns []memory.Turn
			index int // of the refused turn; -1: taken
			last  time.Duration
		}{
			{"within the skew", []memory.Turn{at(6*time.Minute, "a little late")}, -1, 0},
			{"before the skew", []memory.Turn{at(4*time.Minute, "too late")}, 0, 10 * time.Minute},
			{"from 1970", []memory.Turn{{Role: memory.RoleUser, Content: "old", At: time.Unix(0, 0).UTC()}}, 0, 10 * time.Minute},
			{"second of two", []memory.Turn{at(11*time.Minute, "later"), at(time.Minute, "too late")}, 1, 11 * time.Minute},
		} {
			t.Run(tt.name, func(t *testing.T) {
				before, err := s.Get(ctx, tenant, "s-ord")
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.Append(ctx, open(tenant, "s-ord", "alice"), tt.turns, 0, t0)
				if tt.index < 0 {
					if err != nil || len(got.Turns) != len(before.Turns)+len(tt.turns) {
						t.Errorf("append = %d turns, %v; want %d, nil", len(got.Turns), err, len(before.Turns)+len(tt.turns))
					}
					return
				}
				var order *workingmemory.TurnOrderError
				if !errors.As(err, &order) || order.Index != tt.index || !order.Last.Equal(t0.Add(tt.last)) {
					t.Fatalf("append = %v, want turns[%d] refused after %v", err, tt.index, t0.Add(tt.last))
				}
				if after, err := s.Get(ctx, tenant, "s-ord"); err != nil || len(after.Turns) != len(before.Turns) {
					t.Errorf("a refused append kept turns: %d, was %d (%v)", len(after.Turns), len(before.Turns), err)
				}
			})
		}
		// A session that keeps no latest turn time takes any turn, and
		// keeps the time from then on.
		if err := rdb.HDel(ctx, metaKey(tenant, "s-ord"), "latest").Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, open(tenant, "s-ord", "alice"), []memory.Turn{at(time.Minute, "older")}, 0, t0); err != nil {
			t.Errorf("append to a session without its latest time: %v", err)
		}
		var order *workingmemory.TurnOrderError
		if _, err := s.Append(ctx, open(tenant, "s-ord", "alice"), []memory.Turn{at(-10*time.Minute, "oldest")}, 0, t0); !errors.As(err, &order) {
			t.Errorf("append after it = %v, want a TurnOrderError", err)
		}
	})
}
