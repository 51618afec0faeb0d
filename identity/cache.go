package identity

import (
	"context"
	"maps"
	"sync"
	"time"
)

// The cache keeps what a key hash resolved to, stamped with the tenant's key
// epoch at the time of the lookup. Every change to a tenant's keys raises
// the epoch in Redis (Service.changed), and every request reads it first,
// so an entry from before a revoke is never used again on any replica. The
// epoch is read before the lookup: a change racing with a lookup leaves an
// entry stamped with the older epoch, which the next request replaces.
const (
	defaultCacheSize = 100_000
	// defaultCacheMaxAge bounds how long an entry lives even at an
	// unchanged epoch: the safety net for a change whose bump was lost.
	defaultCacheMaxAge = time.Minute
	// touchEvery is how often a key's "last used" is written at most.
	touchEvery = time.Minute
)

type cacheEntry struct {
	cred   Credential
	found  bool
	epoch  int64
	loaded time.Time
}

// fresh reports whether an entry may answer at the tenant's current epoch.
func (e cacheEntry) fresh(epoch int64, now time.Time, maxAge time.Duration) bool {
	return e.epoch >= epoch && now.Sub(e.loaded) < maxAge && !now.Before(e.loaded)
}

type keyCache struct {
	mu      sync.RWMutex
	entries map[string]cacheEntry
	max     int
	maxAge  time.Duration
}

func newKeyCache(max int, maxAge time.Duration) *keyCache {
	return &keyCache{entries: map[string]cacheEntry{}, max: max, maxAge: maxAge}
}

// get returns the entry of hash if it is fresh. A nil cache has nothing.
func (c *keyCache) get(hash string, epoch int64, now time.Time) (cacheEntry, bool) {
	if c == nil {
		return cacheEntry{}, false
	}
	c.mu.RLock()
	e, ok := c.entries[hash]
	c.mu.RUnlock()
	if !ok || !e.fresh(epoch, now, c.maxAge) {
		return cacheEntry{}, false
	}
	return e, true
}

func (c *keyCache) put(hash string, e cacheEntry) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		// Unknown keys go first: a flood of made-up keys must not push out
		// the keys in use. A cache full of known keys starts over, and the
		// next requests refill it with those in use.
		maps.DeleteFunc(c.entries, func(_ string, old cacheEntry) bool {
			return !old.found || e.loaded.Sub(old.loaded) >= c.maxAge
		})
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
	}
	c.entries[hash] = e
}

// touch is one "last used" to record.
type touch struct {
	tenant, id string
	at         time.Time
}

// toucher collects "last used" times off the request path: at most one per
// key a minute, dropped when the writer falls behind (it is a hint, not a
// record).
type toucher struct {
	mu   sync.Mutex
	last map[string]time.Time
	ch   chan touch
}

func newToucher() *toucher {
	return &toucher{last: map[string]time.Time{}, ch: make(chan touch, 1024)}
}

func (t *toucher) used(tenant string, k Key, now time.Time) {
	t.mu.Lock()
	last, ok := t.last[k.ID]
	if !ok && k.LastUsedAt != nil {
		last, ok = *k.LastUsedAt, true
	}
	if ok && now.Sub(last) < touchEvery {
		t.mu.Unlock()
		return
	}
	if len(t.last) >= defaultCacheSize {
		clear(t.last)
	}
	t.last[k.ID] = now
	t.mu.Unlock()
	select {
	case t.ch <- touch{tenant: tenant, id: k.ID, at: now}:
	default:
	}
}

// RunTouches writes the keys' "last used" times until ctx ends, a batch at
// a time. App.Run runs it.
func (s *Service) RunTouches(ctx context.Context) error {
	for {
		var first touch
		select {
		case <-ctx.Done():
			return nil
		case first = <-s.touches.ch:
		}
		batch := map[string][]string{first.tenant: {first.id}}
		at := map[string]time.Time{first.tenant: first.at}
	drain:
		for range 256 {
			select {
			case t := <-s.touches.ch:
				batch[t.tenant] = append(batch[t.tenant], t.id)
				at[t.tenant] = t.at
			default:
				break drain
			}
		}
		for tenant, ids := range batch {
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := s.store.TouchKeys(wctx, tenant, ids, at[tenant].UTC()); err != nil {
				s.log.WarnContext(ctx, "key last-used not recorded", "tenant", tenant, "keys", len(ids), "err", err)
			}
			cancel()
		}
	}
}
