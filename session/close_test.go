package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/workingmemory"
)

// flakyMemories keeps what it is given under its idempotency keys, as the
// memory service does, refusing a key reused for other content; its first
// write is stored but answered as a store that did not answer (a commit
// whose answer was lost).
type flakyMemories struct {
	workingmemory.Memories
	writes  int
	keys    map[string]string
	written []memory.NewMemory
}

func (m *flakyMemories) Write(_ context.Context, _ memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error) {
	m.writes++
	for _, n := range in {
		if prev, ok := m.keys[n.IdempotencyKey]; ok && prev != n.Content {
			return nil, memory.ErrIdempotencyKeyReused
		}
	}
	for _, n := range in {
		m.keys[n.IdempotencyKey] = n.Content
	}
	if m.writes == 1 {
		return nil, memory.ErrUnavailable
	}
	m.written = append(m.written, in...)
	out := make([]memory.WriteResult, len(in))
	for i, n := range in {
		out[i] = memory.WriteResult{Memory: &memory.Memory{Content: n.Content}}
	}
	return out, nil
}

type allowAll struct{ memory.Authorizer }

func (allowAll) Decide(context.Context, memory.Principal, string, memory.Resource, time.Time) (memory.Decision, error) {
	return memory.Decision{Allow: true}, nil
}

// findsEachTurn finds one memory in each turn.
type findsEachTurn struct{}

func (findsEachTurn) Extract(_ context.Context, turns []memory.Turn) ([]memory.NewMemory, error) {
	out := make([]memory.NewMemory, len(turns))
	for i, t := range turns {
		out[i] = memory.NewMemory{Type: memory.TypeProfile, Content: "Alice said: " + t.Content}
	}
	return out, nil
}

type noQueue struct{ memory.JobQueue }

// TestAFailedCloseCanBeRetried: a close that fails leaves the session open,
// as GET shows it: turns are taken again, and the close retried at once
// ends it, with them, even though the failed close stored what it found.
func TestAFailedCloseCanBeRetried(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		store := New(Options{Redis: rdb})
		mems := &flakyMemories{keys: map[string]string{}}
		now := t0.Add(10 * time.Second)
		wm, err := workingmemory.New(workingmemory.Options{
			Memories: mems, Sessions: store, Authz: allowAll{}, Extract: findsEachTurn{}, Queue: noQueue{},
			Logger: quiet, Now: func() time.Time { return now },
		})
		if err != nil {
			t.Fatal(err)
		}
		bot := owner(tenant)
		if _, err := store.Append(ctx, open(tenant, "s-retry", "alice"), turns("I prefer parcels in the morning"), 0, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := wm.CloseSession(ctx, bot, "s-retry"); !errors.Is(err, memory.ErrUnavailable) {
			t.Fatalf("first close = %v, want it unavailable", err)
		}
		if _, err := wm.GetSession(ctx, bot, "s-retry"); err != nil {
			t.Fatalf("GET after the failed close = %v, want the session", err)
		}
		later := memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "one more thing", At: now}}}
		if _, err := wm.AppendTurns(ctx, bot, "s-retry", later); err != nil {
			t.Fatalf("append after the failed close = %v, want it taken", err)
		}
		res, err := wm.CloseSession(ctx, bot, "s-retry")
		if err != nil {
			t.Fatalf("retried close = %v, want it to close the session", err)
		}
		if res.SessionID != "s-retry" || len(res.Memories) == 0 || len(mems.written) == 0 {
			t.Errorf("retried close = %+v, wrote %d, want the session's memories", res, len(mems.written))
		}
		if _, err := store.Get(ctx, tenant, "s-retry"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("session after the retried close: %v, want it gone", err)
		}
	})
}

// TestCloseOfAClosingSession: a session another close holds is
// ErrSessionClosing, not ErrNotFound, and a close after that claim lapsed
// takes it over.
func TestCloseOfAClosingSession(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		tenant := testenv.Tenant(t)
		s := New(Options{Redis: rdb, Lease: 10 * time.Second})
		if _, err := s.Append(ctx, open(tenant, "s-held", "alice"), turns("remember the dock closes at 5"), 0, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(ctx, tenant, "s-held", t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(ctx, tenant, "s-held", t0.Add(time.Second)); !errors.Is(err, memory.ErrSessionClosing) {
			t.Errorf("close while another holds it = %v, want ErrSessionClosing", err)
		}
		if _, err := s.Claim(ctx, tenant, "s-held", t0.Add(11*time.Second)); err != nil {
			t.Errorf("close after the claim lapsed = %v, want it claimed", err)
		}
		// The first claim's holder releases too late: the session stays
		// with the close that took it over.
		if err := s.Release(ctx, tenant, "s-held", t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(ctx, tenant, "s-held", t0.Add(12*time.Second)); !errors.Is(err, memory.ErrSessionClosing) {
			t.Errorf("a stale release opened the session again: %v", err)
		}
		if _, err := s.Claim(ctx, tenant, "s-none", t0); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("close of no session = %v, want ErrNotFound", err)
		}
	})
}
