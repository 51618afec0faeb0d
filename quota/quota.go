// Package quota holds each tenant to a most number of memories and of
// content characters. It counts from the graph at most once per refresh
// interval and tenant on each replica, and adds what this replica admits
// in between, so that a write costs no extra round trip to Neo4j.
//
// The count is soft: a replica does not see what the others admit until
// its next refresh, nor queued writes until they are applied. A tenant may
// go past a limit by at most what all replicas admit for it within one
// refresh interval (plus its queue's backlog); one replica alone never
// does. Refusing errs the other way: a write counts in full even when
// dedup later folds it into a memory that exists.
package quota

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"mneme/memory"
)

// DefaultRefresh is how old a tenant's count may be.
const DefaultRefresh = 5 * time.Second

// Quota names, as memory.QuotaError reports them.
const (
	Memories = "memories"
	Chars    = "content_chars"
)

// Usage counts what a tenant stores. graph.Store implements it.
type Usage interface {
	TenantUsage(ctx context.Context, tenant string) (memories, chars int64, err error)
}

// Limits are a tenant's quotas; zero is no limit.
type Limits struct {
	Memories int64 // memories in every status and version
	Chars    int64 // characters of their content
}

// On reports whether l limits anything.
func (l Limits) On() bool { return l.Memories > 0 || l.Chars > 0 }

// Options configures a Tracker. Usage is required when Limits are on.
type Options struct {
	Usage   Usage
	Limits  Limits
	Refresh time.Duration // DefaultRefresh when zero
	Now     func() time.Time
	Logger  *slog.Logger
}

// Tracker admits writes against the tenants' quotas. It implements
// memory.Quota.
type Tracker struct {
	usage   Usage
	limits  Limits
	refresh time.Duration
	now     func() time.Time
	log     *slog.Logger
	group   singleflight.Group

	mu      sync.Mutex // guards tenants
	tenants map[string]*count
}

// count is one tenant's usage as this replica knows it.
type count struct {
	mu         sync.Mutex
	loaded     bool
	readAt     time.Time
	memories   int64 // as counted at readAt, plus admitted since
	chars      int64
	refreshing bool
	// admitted while a refresh runs: the count it returns may miss them.
	pendingMemories, pendingChars int64
}

// New returns a Tracker.
func New(opts Options) *Tracker {
	t := &Tracker{
		usage: opts.Usage, limits: opts.Limits, refresh: opts.Refresh, now: opts.Now, log: opts.Logger,
		tenants: map[string]*count{},
	}
	if t.refresh <= 0 {
		t.refresh = DefaultRefresh
	}
	if t.now == nil {
		t.now = time.Now
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	return t
}

// Admit reserves room for memories and chars in tenant, or refuses with a
// *memory.QuotaError when either would pass its limit. An error counting
// the tenant for the first time is returned as it is (the store's outage);
// later ones leave the last count in use.
func (t *Tracker) Admit(ctx context.Context, tenant string, memories, chars int64) error {
	if !t.limits.On() {
		return nil
	}
	c := t.tenant(tenant)
	if err := t.fresh(ctx, tenant, c); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := t.limits.Memories; l > 0 && c.memories+memories > l {
		return &memory.QuotaError{Quota: Memories, Limit: l}
	}
	if l := t.limits.Chars; l > 0 && c.chars+chars > l {
		return &memory.QuotaError{Quota: Chars, Limit: l}
	}
	c.memories += memories
	c.chars += chars
	if c.refreshing {
		c.pendingMemories += memories
		c.pendingChars += chars
	}
	return nil
}

func (t *Tracker) tenant(tenant string) *count {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.tenants[tenant]
	if !ok {
		c = &count{}
		t.tenants[tenant] = c
	}
	return c
}

// fresh makes sure c was counted within the refresh interval. A tenant
// never counted waits for its count; a stale one is recounted by the one
// request that notices, while the others go on with the last count.
func (t *Tracker) fresh(ctx context.Context, tenant string, c *count) error {
	c.mu.Lock()
	loaded, stale := c.loaded, t.now().Sub(c.readAt) >= t.refresh
	if loaded && (!stale || c.refreshing) {
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	_, err, _ := t.group.Do(tenant, func() (any, error) { return nil, t.recount(ctx, tenant, c) })
	if err != nil && loaded {
		t.log.WarnContext(ctx, "quota recount failed; the last count stays in use", "tenant", tenant, "err", err)
		return nil
	}
	return err
}

func (t *Tracker) recount(ctx context.Context, tenant string, c *count) error {
	c.mu.Lock()
	c.refreshing, c.pendingMemories, c.pendingChars = true, 0, 0
	c.mu.Unlock()
	memories, chars, err := t.usage.TenantUsage(ctx, tenant)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshing = false
	if err != nil {
		// Recount after another interval, not on every request.
		if c.loaded {
			c.readAt = t.now()
		}
		return err
	}
	c.loaded, c.readAt = true, t.now()
	c.memories, c.chars = memories+c.pendingMemories, chars+c.pendingChars
	return nil
}
