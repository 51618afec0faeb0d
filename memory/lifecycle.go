package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
)

// LifecycleConfig tunes the janitor. DefaultLifecycle gives the defaults.
type LifecycleConfig struct {
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

// DefaultLifecycle: episodic memories expire after 365 days, other types
// never; anything unused for 90 days is archived; a user keeps at most 1,000
// active memories; recency halves every 30 days.
func DefaultLifecycle() LifecycleConfig {
	return LifecycleConfig{
		TTL:          map[string]time.Duration{TypeEpisodic: 365 * Day},
		ArchiveAfter: 90 * Day,
		Cap:          1000,
		HalfLife:     30 * Day,
	}
}

// Validate reports a configuration the janitor cannot run with.
func (c LifecycleConfig) Validate() error {
	var errs []error
	for t, d := range c.TTL {
		if !contains(Types, t) {
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
	AccessCount    int64
}

// lastUse is when the memory was last recalled or changed.
func (u Usage) lastUse() time.Time {
	if u.LastAccessedAt.After(u.UpdatedAt) {
		return u.LastAccessedAt
	}
	return u.UpdatedAt
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

// Reasons a janitor changes a memory.
const (
	ReasonTTL    = "ttl"
	ReasonUnused = "unused"
	ReasonCap    = "cap"
)

// Change is one status change the janitor makes, or would make.
type Change struct {
	Tenant   string  `json:"tenant"`
	MemoryID string  `json:"memory_id"`
	UserID   string  `json:"user_id"`
	Type     string  `json:"type"`
	From     string  `json:"from"`
	To       string  `json:"to"`
	Reason   string  `json:"reason"`
	Value    float64 `json:"value,omitempty"` // for the cap: the value it was ranked by
}

// Plan decides what the janitor does with the live memories of one tenant
// at now, in order: expire by TTL; archive the unused; then, per user,
// archive the lowest-valued active memories beyond the cap. A memory gets at
// most one change.
func Plan(cfg LifecycleConfig, tenant string, now time.Time, live []Usage) []Change {
	var out []Change
	active := map[string][]Usage{} // per user, what the cap counts
	for _, u := range live {
		change := func(to, reason string) {
			out = append(out, Change{Tenant: tenant, MemoryID: u.ID, UserID: u.UserID, Type: u.Type, From: u.Status, To: to, Reason: reason})
		}
		switch ttl := cfg.TTL[u.Type]; {
		case ttl > 0 && !u.CreatedAt.IsZero() && now.Sub(u.CreatedAt) >= ttl:
			change(StatusExpired, ReasonTTL)
		case cfg.ArchiveAfter > 0 && now.Sub(u.lastUse()) >= cfg.ArchiveAfter:
			change(StatusArchived, ReasonUnused)
		case u.Status == StatusActive:
			active[u.UserID] = append(active[u.UserID], u)
		}
	}
	if cfg.Cap <= 0 {
		return out
	}
	for _, user := range slices.Sorted(maps.Keys(active)) {
		us := active[user]
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
			out = append(out, Change{Tenant: tenant, MemoryID: u.ID, UserID: u.UserID, Type: u.Type,
				From: u.Status, To: StatusArchived, Reason: ReasonCap, Value: values[u.ID]})
		}
	}
	return out
}

// LifecycleStore is what the janitor needs from the graph.
type LifecycleStore interface {
	// Tenants lists every tenant that has users.
	Tenants(ctx context.Context) ([]string, error)
	// LiveMemories returns the active and candidate memories of a tenant.
	LiveMemories(ctx context.Context, tenant string) ([]Usage, error)
	// Transition moves the memories ids of tenant that are still live to
	// status to, noting reason and at, and returns how many moved.
	Transition(ctx context.Context, tenant string, ids []string, to, reason string, at time.Time) (int64, error)
}

// MaxReportedChanges bounds the changes a report lists; the counts are
// always complete.
const MaxReportedChanges = 1000

// SweepReport is what a janitor run did, or would do in a dry run.
type SweepReport struct {
	DryRun          bool      `json:"dry_run"`
	At              time.Time `json:"at"`
	Tenants         int       `json:"tenants"`
	Scanned         int       `json:"scanned"`
	Expired         int64     `json:"expired"`
	ArchivedUnused  int64     `json:"archived_unused"`
	ArchivedOverCap int64     `json:"archived_over_cap"`
	Changes         []Change  `json:"changes"`
	// ChangesTruncated is true when more changes were made than listed.
	ChangesTruncated bool `json:"changes_truncated"`
}

// JanitorOptions configures a Janitor.
type JanitorOptions struct {
	Store  LifecycleStore
	Config LifecycleConfig
	Logger *slog.Logger
	// Now is the janitor's clock; default time.Now.
	Now func() time.Time
}

// Janitor expires, archives and caps memories by the rules of Plan.
type Janitor struct {
	store LifecycleStore
	cfg   LifecycleConfig
	log   *slog.Logger
	now   func() time.Time
}

// NewJanitor returns a Janitor; Store is required and Config must validate.
func NewJanitor(opts JanitorOptions) (*Janitor, error) {
	if opts.Store == nil {
		return nil, errors.New("memory: the janitor needs a LifecycleStore")
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
func (j *Janitor) Sweep(ctx context.Context, tenant string, dryRun bool) (SweepReport, error) {
	r := SweepReport{DryRun: dryRun, At: j.now().UTC(), Changes: []Change{}}
	err := j.sweep(ctx, tenant, &r)
	return r, err
}

// SweepAll runs the janitor over every tenant, one after another; a failing
// tenant does not stop the others, and its error is returned at the end.
func (j *Janitor) SweepAll(ctx context.Context, dryRun bool) (SweepReport, error) {
	r := SweepReport{DryRun: dryRun, At: j.now().UTC(), Changes: []Change{}}
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

func (j *Janitor) sweep(ctx context.Context, tenant string, r *SweepReport) error {
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
	for _, g := range []group{{StatusExpired, ReasonTTL}, {StatusArchived, ReasonUnused}, {StatusArchived, ReasonCap}} {
		n := int64(len(ids[g]))
		if n > 0 && !r.DryRun {
			if n, err = j.store.Transition(ctx, tenant, ids[g], g.to, g.reason, r.At); err != nil {
				return err
			}
		}
		switch g.reason {
		case ReasonTTL:
			r.Expired += n
		case ReasonUnused:
			r.ArchivedUnused += n
		case ReasonCap:
			r.ArchivedOverCap += n
		}
	}
	room := MaxReportedChanges - len(r.Changes)
	if len(plan) > room {
		plan, r.ChangesTruncated = plan[:room], true
	}
	r.Changes = append(r.Changes, plan...)
	return nil
}

// Sweeper runs the janitor over one tenant. *Janitor implements it.
type Sweeper interface {
	Sweep(ctx context.Context, tenant string, dryRun bool) (SweepReport, error)
}

// Sweep runs the janitor over the principal's tenant now; only admins may.
// dryRun reports what it would do without changing anything. The sweep is
// recorded in the audit trail, a dry run too: it shows what an admin saw.
func (s *Service) Sweep(ctx context.Context, p Principal, dryRun bool) (SweepReport, error) {
	r, err := s.sweep(ctx, p, dryRun)
	s.audit(ctx, p, AuditJanitorSweep, "tenant:"+p.Tenant, err, SweepDetails(r, dryRun))
	return r, err
}

func (s *Service) sweep(ctx context.Context, p Principal, dryRun bool) (SweepReport, error) {
	if err := s.require(ctx, p, ActionManage, Resource{Tenant: p.Tenant}, s.now().UTC()); err != nil {
		return SweepReport{}, err
	}
	return s.janitor.Sweep(ctx, p.Tenant, dryRun)
}

// SweepDetails are the counts of a sweep as audit details.
func SweepDetails(r SweepReport, dryRun bool) map[string]string {
	return map[string]string{
		"dry_run":           strconv.FormatBool(dryRun),
		"scanned":           strconv.Itoa(r.Scanned),
		"expired":           strconv.FormatInt(r.Expired, 10),
		"archived_unused":   strconv.FormatInt(r.ArchivedUnused, 10),
		"archived_over_cap": strconv.FormatInt(r.ArchivedOverCap, 10),
	}
}
