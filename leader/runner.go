package leader

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Lease is a lock that lets one replica among many do a job. Lock
// implements it with Redis.
type Lease interface {
	// Hold takes the lock or renews it and reports whether the caller leads.
	Hold(ctx context.Context) (bool, error)
	// Release gives the lock up if the caller holds it.
	Release(ctx context.Context) error
}

// RunnerOptions configures a Runner.
type RunnerOptions struct {
	Name string
	// Every is the time between two runs of the job by the leader.
	Every time.Duration
	// Renew is how often the lock is held or renewed; it must be well under
	// the lock's ttl (a third is usual).
	Renew  time.Duration
	Lease  Lease
	Job    func(ctx context.Context) error
	Logger *slog.Logger
}

// Runner runs a job every interval on whichever replica leads. Its owner
// calls Run, which lasts until ctx ends.
type Runner struct {
	opts RunnerOptions
}

// releaseTimeout bounds giving up the lock when Run ends: an unreachable
// Redis must not hold up a shutdown, and the lock expires by itself anyway.
const releaseTimeout = 5 * time.Second

// NewRunner returns a Runner; Run runs it.
func NewRunner(opts RunnerOptions) *Runner {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Runner{opts: opts}
}

// Run runs the loop until ctx ends; the first run comes one interval after
// the lock is first held. A job running when ctx ends sees its context
// cancelled and Run waits for it; then Run releases the lock so another
// replica can take over at once. It returns nil: a failing job or an
// unreachable lock is logged and tried again, never fatal.
func (r *Runner) Run(ctx context.Context) error {
	r.loop(ctx)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := r.opts.Lease.Release(rctx); err != nil {
		r.opts.Logger.WarnContext(rctx, "releasing the lock", "runner", r.opts.Name, "err", err)
	}
	return nil
}

func (r *Runner) loop(ctx context.Context) {
	log := r.opts.Logger.With("runner", r.opts.Name)
	tick := time.NewTicker(r.opts.Renew)
	defer tick.Stop()
	var next time.Time // when the leader runs the job; zero while it does not lead
	for {
		leads, err := r.opts.Lease.Hold(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "leader lock unavailable", "err", err)
			next = time.Time{}
		case !leads:
			next = time.Time{}
		case next.IsZero():
			log.InfoContext(ctx, "leading", "every", r.opts.Every)
			next = time.Now().Add(r.opts.Every)
		case !time.Now().Before(next):
			if err := r.run(ctx); err != nil && ctx.Err() == nil {
				log.ErrorContext(ctx, "job failed", "err", err)
			}
			next = time.Now().Add(r.opts.Every)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// run runs the job once while renewing the lock; losing the lock mid-job
// (Redis unreachable, or a pause longer than the lock's ttl) cancels the
// job, so that two replicas never sweep at once for long.
func (r *Runner) run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(r.opts.Renew)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if leads, err := r.opts.Lease.Hold(ctx); err != nil || !leads {
					cancel(errLostLead)
					return
				}
			}
		}
	}()
	if err := r.opts.Job(ctx); err != nil {
		if context.Cause(ctx) == errLostLead {
			return errLostLead
		}
		return err
	}
	return nil
}

var errLostLead = errors.New("lost the leader lock during the job")
