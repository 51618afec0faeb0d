// Package stall watches the stores Mneme cannot answer without and says
// when one has stalled: it takes connections and answers nothing, as a
// process stopped with SIGSTOP or a machine that froze does. A store that
// refuses at once is down, not stalled; its callers fail fast by
// themselves. A stalled one holds every call until the caller's deadline,
// so the watcher pings each store on its own and, while one stalls, Guard
// answers the requests under way rather than let them wait.
package stall

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// DefaultInterval is how often each store is pinged.
const DefaultInterval = 500 * time.Millisecond

// Store is one store to watch: a name for errors and logs, and a ping that
// returns once the store has answered or refused, or once ctx ends.
type Store struct {
	Name string
	Ping func(ctx context.Context) error
	// Answered, when set, is when the store last answered one of its other
	// callers (zero: never). A store busy enough to leave a ping waiting
	// while it answers them is slow, not stalled: it is stalled once it has
	// answered nothing, the ping included, for the timeout.
	Answered func() time.Time
}

// Options configures a Watcher.
type Options struct {
	// Stores are watched each on its own; at least one is required.
	Stores []Store
	// Timeout is how long a ping may go unanswered before its store is
	// stalled; it must be positive.
	Timeout time.Duration
	// Interval is the time between the end of one ping and the start of
	// the next (DefaultInterval when zero).
	Interval time.Duration
	// Logger notes each stall's start and end; slog.Default when nil.
	Logger *slog.Logger
}

// Error is the error of a stall: the store that stopped answering, and
// since when.
type Error struct {
	Store string
	Since time.Time
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s stalled: no answer to a ping sent at %s", e.Store, e.Since.Format("15:04:05.000"))
}

// Watcher pings its stores while Run runs and knows which have stalled.
type Watcher struct {
	stores   []Store
	timeout  time.Duration
	interval time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	stalled []*Error // by store, nil while the store answers
	// begins is closed when the next stall begins: when a store stalls
	// while none is stalled. A new one is made when the last stall ends.
	begins chan struct{}
}

// New returns a Watcher over opts.Stores; Run starts the pinging.
func New(opts Options) (*Watcher, error) {
	if len(opts.Stores) == 0 {
		return nil, fmt.Errorf("stall: no store to watch")
	}
	for _, s := range opts.Stores {
		if s.Name == "" || s.Ping == nil {
			return nil, fmt.Errorf("stall: a store needs a name and a ping")
		}
	}
	if opts.Timeout <= 0 {
		return nil, fmt.Errorf("stall: timeout %s must be positive", opts.Timeout)
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Watcher{
		stores: opts.Stores, timeout: opts.Timeout, interval: opts.Interval, log: opts.Logger,
		stalled: make([]*Error, len(opts.Stores)), begins: make(chan struct{}),
	}, nil
}

// Err returns the stall of the first stalled store, as an *Error, or nil
// when every store answers.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errLocked()
}

func (w *Watcher) errLocked() error {
	for _, e := range w.stalled {
		if e != nil {
			return e
		}
	}
	return nil
}

// next returns a channel closed when the next stall begins (closed already
// while one lasts).
func (w *Watcher) next() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.begins
}

// Run pings every store until ctx ends, then returns nil once the pings
// under way have returned.
func (w *Watcher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for i := range w.stores {
		wg.Go(func() { w.watch(ctx, i) })
	}
	wg.Wait()
	return nil
}

// watch pings store i, one ping at a time, until ctx ends. A ping
// unanswered after the timeout stalls the store, unless the store answered
// another caller within the timeout (Store.Answered): then it stalls once
// it has answered nothing for the timeout. The stall ends when a ping
// succeeds, or fails before the timeout (the store refuses: it is down, not
// stalled). A ping that fails after the timeout, at its own deadline, ends
// nothing. Each ping has its own context, which ends at twice the timeout
// so that a ping never holds the next one back for long.
func (w *Watcher) watch(ctx context.Context, i int) {
	s := w.stores[i]
	for {
		start := time.Now()
		pctx, cancel := context.WithTimeout(ctx, 2*w.timeout)
		done := make(chan error, 1)
		go func() { done <- s.Ping(pctx) }()
		timer := time.NewTimer(w.timeout)
		var err error
	wait:
		for {
			select {
			case err = <-done:
				break wait
			case <-timer.C:
				if d := untilSilent(s, w.timeout); d > 0 {
					timer.Reset(d)
					continue
				}
				w.set(i, &Error{Store: s.Name, Since: start})
				err = <-done
				break wait
			}
		}
		timer.Stop()
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err == nil || time.Since(start) < w.timeout {
			w.set(i, nil)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(w.interval):
		}
	}
}

// untilSilent is how long until s will have answered none of its callers
// for timeout; 0 when it has not, or when it does not say (Store.Answered).
func untilSilent(s Store, timeout time.Duration) time.Duration {
	if s.Answered == nil {
		return 0
	}
	last := s.Answered()
	if last.IsZero() {
		return 0
	}
	return max(time.Until(last.Add(timeout)), 0)
}

// set records store i's stall, or its end when e is nil.
func (w *Watcher) set(i int, e *Error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	was := w.stalled[i]
	if (was == nil) == (e == nil) {
		return
	}
	before := w.errLocked() != nil
	w.stalled[i] = e
	after := w.errLocked() != nil
	switch {
	case e != nil:
		w.log.Warn("store stalled: requests are refused with 503 until it answers", "store", e.Store, "timeout", w.timeout)
	default:
		w.log.Info("store answers again", "store", was.Store, "stalled_for", time.Since(was.Since).Round(time.Millisecond))
	}
	switch {
	case !before && after:
		close(w.begins)
	case before && !after:
		w.begins = make(chan struct{})
	}
}
