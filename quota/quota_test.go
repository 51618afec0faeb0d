package quota_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mneme/memory"
	"mneme/quota"
)

// usage is a store whose counts the test sets.
type usage struct {
	mu              sync.Mutex
	memories, chars int64
	err             error
	calls           int
}

func (u *usage) TenantUsage(_ context.Context, _ string) (int64, int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls++
	return u.memories, u.chars, u.err
}

func (u *usage) set(memories, chars int64, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.memories, u.chars, u.err = memories, chars, err
}

func TestAdmit(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	var quotaErr *memory.QuotaError

	cases := []struct {
		name            string
		limits          quota.Limits
		stored          [2]int64 // memories, chars
		memories, chars int64
		refused         string // quota refused, "" for admitted
	}{
		{"off", quota.Limits{}, [2]int64{1e9, 1e12}, 100, 1e6, ""},
		{"room", quota.Limits{Memories: 10, Chars: 1000}, [2]int64{5, 500}, 5, 500, ""},
		{"one memory too many", quota.Limits{Memories: 10}, [2]int64{5, 0}, 6, 0, quota.Memories},
		{"a batch counts whole", quota.Limits{Memories: 10}, [2]int64{9, 0}, 2, 10, quota.Memories},
		{"characters", quota.Limits{Memories: 10, Chars: 1000}, [2]int64{1, 990}, 1, 11, quota.Chars},
		{"full, asking for one more", quota.Limits{Memories: 10}, [2]int64{10, 0}, 1, 0, quota.Memories},
		{"already past", quota.Limits{Chars: 10}, [2]int64{0, 50}, 1, 1, quota.Chars},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := &usage{memories: c.stored[0], chars: c.stored[1]}
			tr := quota.New(quota.Options{Usage: u, Limits: c.limits, Now: clock})
			err := tr.Admit(ctx, "acme", c.memories, c.chars)
			if c.refused == "" {
				if err != nil {
					t.Fatalf("Admit = %v, want nil", err)
				}
				return
			}
			if !errors.As(err, &quotaErr) || quotaErr.Quota != c.refused {
				t.Fatalf("Admit = %v, want a %s QuotaError", err, c.refused)
			}
		})
	}

	t.Run("counts once per interval and adds what it admits", func(t *testing.T) {
		u := &usage{memories: 0}
		tr := quota.New(quota.Options{Usage: u, Limits: quota.Limits{Memories: 5}, Refresh: 5 * time.Second, Now: clock})
		for i := range 5 {
			if err := tr.Admit(ctx, "acme", 1, 0); err != nil {
				t.Fatalf("write %d: %v", i+1, err)
			}
		}
		if err := tr.Admit(ctx, "acme", 1, 0); !errors.As(err, &quotaErr) {
			t.Fatalf("sixth write = %v, want refused", err)
		}
		if u.calls != 1 {
			t.Errorf("%d counts within one interval, want 1", u.calls)
		}
		// Memories were deleted meanwhile; the next interval sees it.
		u.set(2, 0, nil)
		now = now.Add(5 * time.Second)
		if err := tr.Admit(ctx, "acme", 3, 0); err != nil {
			t.Fatalf("after recount: %v", err)
		}
		if u.calls != 2 {
			t.Errorf("%d counts after two intervals, want 2", u.calls)
		}
	})

	t.Run("tenants are counted apart", func(t *testing.T) {
		u := &usage{memories: 1}
		tr := quota.New(quota.Options{Usage: u, Limits: quota.Limits{Memories: 2}, Now: clock})
		_ = tr.Admit(ctx, "acme", 1, 0)
		if err := tr.Admit(ctx, "globex", 1, 0); err != nil {
			t.Fatalf("another tenant: %v", err)
		}
	})

	t.Run("store down", func(t *testing.T) {
		u := &usage{err: memory.ErrUnavailable}
		tr := quota.New(quota.Options{Usage: u, Limits: quota.Limits{Memories: 2}, Now: clock})
		if err := tr.Admit(ctx, "acme", 1, 0); !errors.Is(err, memory.ErrUnavailable) {
			t.Fatalf("first count failing = %v, want ErrUnavailable", err)
		}
		u.set(0, 0, nil)
		if err := tr.Admit(ctx, "acme", 1, 0); err != nil {
			t.Fatalf("store back: %v", err)
		}
		// Later failures keep the last count.
		u.set(0, 0, memory.ErrUnavailable)
		now = now.Add(time.Minute)
		if err := tr.Admit(ctx, "acme", 1, 0); err != nil {
			t.Fatalf("recount failing: %v", err)
		}
		if err := tr.Admit(ctx, "acme", 1, 0); !errors.As(err, &quotaErr) {
			t.Fatalf("past the limit on the last count = %v, want refused", err)
		}
	})

	t.Run("one replica admits exactly up to the limit under concurrency", func(t *testing.T) {
		u := &usage{}
		tr := quota.New(quota.Options{Usage: u, Limits: quota.Limits{Memories: 50}, Now: clock})
		var ok atomic.Int32
		var wg sync.WaitGroup
		for range 200 {
			wg.Go(func() {
				if tr.Admit(ctx, "acme", 1, 0) == nil {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 50 {
			t.Errorf("%d admitted, want 50", ok.Load())
		}
	})
}
