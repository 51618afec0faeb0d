// Package janitor runs memory lifecycle rules over a tenant: expiry by TTL
// per type, archiving after long disuse, and a cap of active memories per
// user that archives the lowest-valued first. Plan decides (pure); the
// Janitor applies a plan through its Store, or reports it in a dry run.
package janitor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"time"

	"mneme/memory"
)

// Config tunes the janitor. DefaultLifecycle gives the defaults.
type Config struct {
	// TTL per memory type: a live memory whose created_at is at least this
	// old expires. A type that is absent, or 0, never expires.
	TTL map[string]time.Duration
	// ArchiveAfter archives a live memory unused for this long: neither
	// recalled (last_accessed_at) nor changed (updated_at). 0: never.
	ArchiveAfter time.Duration
	// Cap is the most active memories one user keeps; the lowest-valued
	// beyond it are archived. 0: no cap.
	Cap int
	// HalfLife is the age of last use at which the recency part of a
	// memory's value halves.
	HalfLife time.Duration
}

// Day is 24 hours, the unit of the lifecycle's defaults.
const Day = 24 * time.Hour

// Defaults: episodic memories expire after 365 days, other types
// never; anything unused for 90 days is archived; a user keeps at most 1,000
// active memories; recency halves every 30 days.
func Defaults() Config {
	return Config{
		TTL:          map[string]time.Duration{memory.TypeEpisodic: 365 * Day},
		ArchiveAfter: 90 * Day,
		Cap:          1000,
		HalfLife:     30 * Day,
	}
}

// Validate reports a configuration the janitor cannot run with.
func (c Config) Validate() error {
	var errs []error
	for t, d := range c.TTL {
		if !slices.Contains(memory.Types, t) {
			errs = append(errs, fmt.Errorf("ttl: %q is not a memory type", t))
		}
		if d < 0 {
			errs = append(errs, fmt.Errorf("ttl of %s: %s is negative", t, d))
		}
	}
	if c.ArchiveAfter < 0 {
		errs = append(errs, fmt.Errorf("archive after: %s is negative", c.ArchiveAfter))
	}
	if c.Cap < 0 {
		errs = append(errs, fmt.Errorf("cap: %d is negative", c.Cap))
	}
	if c.HalfLife <= 0 {
		errs = append(errs, errors.New("half-life must be positive"))
	}
	return errors.Join(errs...)
}

// Usage is what the janitor knows of a live (active or candidate) memory:
// metadata only, never content.
type Usage struct {
	ID             string
	UserID         string
	Type           string
	Status         string
	Importance     float64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	LastAccessedAt time.Time // zero: never recalled
	// WrittenAt is when the store took the memory in (zero: before it kept
	// the time); CreatedAt and UpdatedAt are the fact's own time, which an
	// import or a backdated write sets in the past.
	WrittenAt   time.Time
	AccessCount int64
	// Shared marks knowledge shared in the tenant (about no user); ValidTo
	// ends a temporary memory (zero: no end).
	Shared  bool
	ValidTo time.Time
	// SaidByUser marks what the user wrote about themselves.
	SaidByUser bool
}

// lastUse is when the memory was last recalled or changed.
func (u Usage) lastUse() time.Time {
	if u.LastAccessedAt.After(u.UpdatedAt) {
		return u.LastAccessedAt
	}
	return u.UpdatedAt
}

// idleSince is when the memory was last recalled, changed or written into
// the store: history imported today is not unused, however old its facts.
func (u Usage) idleSince() time.Time {
	if u.WrittenAt.After(u.lastUse()) {
		return u.WrittenAt
	}
	return u.lastUse()
}

// Value ranks memories for the cap: 0.5·importance + 0.3·recency +
// 0.2·access, each part in [0, 1]. recency = 2^(−days since last use ÷
// half-life in days); access = min(1, ln(1+access_count) ÷ ln(101)), so 100
// recalls count in full.
func Value(u Usage, now time.Time, halfLife time.Duration) float64 {
	age := max(now.Sub(u.lastUse()), 0)
	recency := math.Exp2(-age.Hours() / halfLife.Hours())
	access := min(1, math.Log1p(float64(max(u.AccessCount, 0)))/math.Log(101))
	return 0.5*u.Importance + 0.3*recency + 0.2*access
}

// Plan decides what the janitor does with the live memories of one tenant
// at now, in order: expire what its valid_to ended; expire by TTL; archive the unused; then, per user,
// archive the lowest-valued active memories beyond the cap. A memory gets at
// most one change. What users wrote about themselves is capped apart from
// what agents wrote about them: a user who writes a thousand notes pushes
// out their own, never an agent's (a credit limit, a risk flag).
func Plan(cfg Config, tenant string, now time.Time, live []Usage) []memory.Change {
	var out []memory.Change
	// What the cap counts, per user, and apart what the user wrote.
	active := map[string][]Usage{}
	for _, u := range live {
		change := func(to, reason string) {
			out = append(out, memory.Change{Tenant: tenant, MemoryID: u.ID, UserID: u.UserID, Type: u.Type, From: u.Status, To: to, Reason: reason})
		}
		switch ttl := cfg.TTL[u.Type]; {
		case !u.ValidTo.IsZero() && !now.Before(u.ValidTo):
			change(memory.StatusExpired, memory.ReasonEnded)
		case u.Shared:
			// The tenant's rules and procedures hold until replaced or
			// ended: neither age nor disuse retires them, and they count
			// under no user's cap.
		case ttl > 0 && !u.CreatedAt.IsZero() && now.Sub(u.CreatedAt) >= ttl:
			change(memory.StatusExpired, memory.ReasonTTL)
		case cfg.ArchiveAfter > 0 && now.Sub(u.idleSince()) >= cfg.ArchiveAfter:
			change(memory.StatusArchived, memory.ReasonUnused)
		case u.Status == memory.StatusActive:
			k := u.UserID
			if u.SaidByUser {
				k += "\x00self"
			}
			active[k] = append(active[k], u)
		}
	}
	if cfg.Cap <= 0 {
		return out
	}
	for _, k := range slices.Sorted(maps.Keys(active)) {
		us := active[k]
		if len(us) <= cfg.Cap {
			continue
		}
		values := make(map[string]float64, len(us))
		for _, u := range us {
			values[u.ID] = Value(u, now, cfg.HalfLife)
		}
		// Lowest value first; ties go to the older last use, then the id,
		// so that a run is reproducible.
		slices.SortFunc(us, func(a, b Usage) int {
			return cmp.Or(cmp.Compare(values[a.ID], values[b.ID]), a.lastUse().Compare(b.lastUse()), cmp.Compare(a.ID, b.ID))
		})
		for _, u := range us[:len(us)-cfg.Cap] {
			out = append(out, memory.Change{Tenant: tenant, MemoryID: u.ID, UserID: u.UserID, Type: u.Type,
				From: u.Status, To: memory.StatusArchived, Reason: memory.ReasonCap, Value: values[u.ID]})
		}
	}
	return out
}

// Store is what the janitor needs from the graph.
type Store interface {
	// Tenants lists every tenant that has users.
	Tenants(ctx context.Context) ([]string, error)
	// LiveMemories returns the active and candidate memories of a tenant.
	LiveMemories(ctx context.Context, tenant string) ([]Usage, error)
	// Transition moves the memories ids of tenant that are still live to
	// status to, noting reason and at, and returns how many moved.
	Transition(ctx context.Context, tenant string, ids []string, to, reason string, at time.Time) (int64, error)
}

// Options configures a Janitor.
type Options struct {
	Store  Store
	Config Config
	Logger *slog.Logger
	// Now is the janitor's clock; default time.Now.
	Now func() time.Time
}

// Janitor expires, archives and caps memories by the rules of Plan.
type Janitor struct {
	store Store
	cfg   Config
	log   *slog.Logger
	now   func() time.Time
}

// New returns a Janitor; Store is required and Config must validate.
func New(opts Options) (*Janitor, error) {
	if opts.Store == nil {
		return nil, errors.New("janitor: a Store is required")
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, fmt.Errorf("lifecycle: %w", err)
	}
	j := &Janitor{store: opts.Store, cfg: opts.Config, log: opts.Logger, now: opts.Now}
	if j.log == nil {
		j.log = slog.Default()
	}
	if j.now == nil {
		j.now = time.Now
	}
	return j, nil
}

// Sweep runs the janitor over one tenant. A dry run changes nothing and
// reports what a run would do.
func (j *Janitor) Sweep(ctx context.Context, tenant string, dryRun bool) (memory.SweepReport, error) {
	r := memory.SweepReport{DryRun: dryRun, At: j.now().UTC(), Changes: []memory.Change{}}
	err := j.sweep(ctx, tenant, &r)
	return r, err
}

// SweepAll runs the janitor over every tenant, one after another; a failing
// tenant does not stop the others, and its error is returned at the end.
func (j *Janitor) SweepAll(ctx context.Context, dryRun bool) (memory.SweepReport, error) {
	r := memory.SweepReport{DryRun: dryRun, At: j.now().UTC(), Changes: []memory.Change{}}
	tenants, err := j.store.Tenants(ctx)
	if err != nil {
		return r, err
	}
	var errs []error
	for _, t := range tenants {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		if err := j.sweep(ctx, t, &r); err != nil {
			errs = append(errs, fmt.Errorf("tenant %s: %w", t, err))
		}
	}
	j.log.InfoContext(ctx, "janitor swept", "dry_run", dryRun, "tenants", r.Tenants, "scanned", r.Scanned,
		"expired", r.Expired, "archived_unused", r.ArchivedUnused, "archived_over_cap", r.ArchivedOverCap)
	return r, errors.Join(errs...)
}

func (j *Janitor) sweep(ctx context.Context, tenant string, r *memory.SweepReport) error {
	live, err := j.store.LiveMemories(ctx, tenant)
	if err != nil {
		return err
	}
	r.Tenants++
	r.Scanned += len(live)
	plan := Plan(j.cfg, tenant, r.At, live)
	// One transition per (status, reason), so the counts are what moved.
	type group struct{ to, reason string }
	ids := map[group][]string{}
	for _, c := range plan {
		g := group{c.To, c.Reason}
		ids[g] = append(ids[g], c.MemoryID)
	}
	for _, g := range []group{{memory.StatusExpired, memory.ReasonEnded}, {memory.StatusExpired, memory.ReasonTTL}, {memory.StatusArchived, memory.ReasonUnused}, {memory.StatusArchived, memory.ReasonCap}} {
		n := int64(len(ids[g]))
		if n > 0 && !r.DryRun {
			if n, err = j.store.Transition(ctx, tenant, ids[g], g.to, g.reason, r.At); err != nil {
				return err
			}
		}
		switch g.reason {
		case memory.ReasonEnded, memory.ReasonTTL:
			r.Expired += n
		case memory.ReasonUnused:
			r.ArchivedUnused += n
		case memory.ReasonCap:
			r.ArchivedOverCap += n
		}
	}
	room := memory.MaxReportedChanges - len(r.Changes)
	if len(plan) > room {
		plan, r.ChangesTruncated = plan[:room], true
	}
	r.Changes = append(r.Changes, plan...)
	return nil
}
