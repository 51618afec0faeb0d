package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"mneme/graph/upkeep"
	"mneme/janitor"
	"mneme/leader"
	"mneme/memory"
)

// Lifecycle configures the janitor: its rules and how often the leader runs
// it.
type Lifecycle struct {
	janitor.Config
	// Every is the time between sweeps; 0 turns the periodic janitor off
	// (admins can still sweep through the API).
	Every time.Duration
	// LockTTL is how long the janitor's leader lock outlives a replica that
	// stopped renewing it.
	LockTTL time.Duration
}

func defaultLifecycle() Lifecycle {
	return Lifecycle{Config: janitor.Defaults(), Every: time.Hour, LockTTL: 30 * time.Second}
}

// janitorLockKey names the Redis lock the replicas' janitors compete for.
const janitorLockKey = "mneme:janitor:leader"

// lifecycleFlags binds the janitor's flags and environment variables.
func lifecycleFlags(b *binder, l *Lifecycle) {
	b.bind((*days)(&l.Every), "janitor-every", "MNEME_JANITOR_EVERY", "time between janitor sweeps, 0 = off")
	b.bind((*ttls)(&l.TTL), "ttl", "MNEME_TTL", "memory TTL per type, e.g. episodic=365d,semantic=0")
	b.bind((*days)(&l.ArchiveAfter), "archive-after", "MNEME_ARCHIVE_AFTER", "archive memories unused this long, 0 = never")
	b.bind((*count)(&l.Cap), "user-cap", "MNEME_USER_CAP", "most active memories per user, 0 = no cap")
	b.bind((*days)(&l.LockTTL), "janitor-lock-ttl", "", "how long the janitor's leader lock outlives its holder")
}

func (l Lifecycle) validate() error {
	errs := []error{l.Config.Validate()}
	if l.Every < 0 {
		errs = append(errs, errors.New("-janitor-every (MNEME_JANITOR_EVERY) must not be negative"))
	}
	if l.LockTTL < 3*time.Millisecond {
		errs = append(errs, errors.New("-janitor-lock-ttl must be at least 3ms"))
	}
	return errors.Join(errs...)
}

// days is a duration that also accepts whole days: "90d".
type days time.Duration

func (d *days) String() string { return time.Duration(*d).String() }

func (d *days) Set(s string) error {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			return fmt.Errorf("%q is not a number of days", s)
		}
		*d = days(time.Duration(v) * janitor.Day)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 90d or 36h", s)
	}
	*d = days(v)
	return nil
}

// ttls is a TTL per type: "episodic=365d,semantic=0". Types not named keep
// their TTL.
type ttls map[string]time.Duration

func (t *ttls) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(*t)) {
		parts = append(parts, k+"="+(*t)[k].String())
	}
	return strings.Join(parts, ",")
}

func (t *ttls) Set(s string) error {
	m := maps.Clone(*t)
	if m == nil {
		m = map[string]time.Duration{}
	}
	for _, part := range strings.Split(s, ",") {
		typ, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		var d days
		if !ok || d.Set(v) != nil {
			return fmt.Errorf("%q is not type=duration", part)
		}
		m[typ] = time.Duration(d)
	}
	*t = m
	return nil
}

type count int

func (c *count) String() string { return strconv.Itoa(int(*c)) }

func (c *count) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*c = count(v)
	return nil
}

// buildJanitor builds the janitor and, unless it is off, the runner that
// sweeps every tenant on whichever replica holds the Redis lock; Run runs
// the runner.
func (a *App) buildJanitor(cfg Lifecycle, log *slog.Logger) error {
	sweeps := upkeep.New(a.Store.Runner())
	j, err := janitor.New(janitor.Options{Store: sweeps, Config: cfg.Config, Logger: log})
	if err != nil {
		return err
	}
	a.Janitor = j
	if cfg.Every == 0 {
		return nil
	}
	lock, err := leader.New(a.Redis, janitorLockKey, cfg.LockTTL)
	if err != nil {
		return err
	}
	a.janitorRunner = leader.NewRunner(leader.RunnerOptions{
		Name: "janitor", Every: cfg.Every, Renew: cfg.LockTTL / 3, Lease: lock, Logger: log,
		Job: func(ctx context.Context) error {
			return errors.Join(sweepAll(ctx, sweeps.Tenants, a.Metrics.Sweeper(j), a.Trail, log), a.reconcileTallies(ctx, log, nil))
		},
	})
	return nil
}

// sweepAll is the leader's scheduled janitor run: every tenant, one after
// another, each sweep recorded in its tenant's audit trail as the system's
// (nobody asked for it). A failing tenant does not stop the others; its
// error is returned at the end.
func sweepAll(ctx context.Context, tenants func(context.Context) ([]string, error), j memory.Sweeper, audit memory.Auditor, log *slog.Logger) error {
	ts, err := tenants(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range ts {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := j.Sweep(ctx, t, false)
		e := memory.NewAuditEvent(ctx, memory.Principal{Tenant: t}, memory.AuditJanitorSweep, "tenant:"+t, err, memory.AuditReason(err))
		e.Details = memory.SweepDetails(r, false)
		audit.Audit(ctx, e)
		if err != nil {
			errs = append(errs, fmt.Errorf("tenant %s: %w", t, err))
		}
	}
	log.InfoContext(ctx, "janitor swept", "tenants", len(ts), "failed", len(errs))
	return errors.Join(errs...)
}
