package leader

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// switchLeader leads while lead is true.
type switchLeader struct {
	lead     atomic.Bool
	released atomic.Int64
}

func (l *switchLeader) Hold(context.Context) (bool, error) { return l.lead.Load(), nil }
func (l *switchLeader) Release(context.Context) error {
	l.released.Add(1)
	return nil
}

// start runs r until the returned stop is called; stop waits for Run.
func start(r *Runner) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	return func() { cancel(); <-done }
}

func TestRunner(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting: %s", what)
			}
		}
	}

	t.Run("runs only while leading", func(t *testing.T) {
		l := &switchLeader{}
		var runs atomic.Int64
		r := NewRunner(RunnerOptions{Name: "t", Every: 10 * time.Millisecond, Renew: 5 * time.Millisecond, Lease: l, Logger: quiet,
			Job: func(context.Context) error { runs.Add(1); return nil }})
		stop := start(r)
		time.Sleep(60 * time.Millisecond)
		if n := runs.Load(); n != 0 {
			t.Fatalf("ran %d times without leading", n)
		}
		l.lead.Store(true)
		waitFor("runs once leading", func() bool { return runs.Load() >= 2 })
		stop()
		n := runs.Load()
		time.Sleep(40 * time.Millisecond)
		if runs.Load() != n || l.released.Load() != 1 {
			t.Errorf("after Run: runs %d → %d, released %d times", n, runs.Load(), l.released.Load())
		}
	})

	t.Run("losing the lock cancels a running job", func(t *testing.T) {
		l := &switchLeader{}
		l.lead.Store(true)
		started, cancelled := make(chan struct{}, 1), make(chan error, 1)
		r := NewRunner(RunnerOptions{Name: "t", Every: time.Millisecond, Renew: 5 * time.Millisecond, Lease: l, Logger: quiet,
			Job: func(ctx context.Context) error {
				select {
				case started <- struct{}{}:
				default:
					return nil
				}
				<-ctx.Done()
				cancelled <- context.Cause(ctx)
				return ctx.Err()
			}})
		defer start(r)()
		<-started
		l.lead.Store(false)
		select {
		case err := <-cancelled:
			if err != errLostLead {
				t.Errorf("cause = %v, want errLostLead", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the job ran on after the lock was lost")
		}
	})

	t.Run("an ended context stops at once and releases", func(t *testing.T) {
		l := &switchLeader{}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := NewRunner(RunnerOptions{Lease: l, Renew: time.Second, Logger: quiet}).Run(ctx); err != nil || l.released.Load() != 1 {
			t.Errorf("Run = %v, released %d times", err, l.released.Load())
		}
	})
}
