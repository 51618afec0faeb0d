// Package partitions remembers how many memories each partition of the
// graph holds (a user's memories, or the tenant's shared knowledge), so
// that recall can pick its vector path without counting on every call.
package partitions

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Counter counts the memories of one partition, every status: the graph
// store. userID "" is the tenant's shared knowledge.
type Counter interface {
	PartitionSize(ctx context.Context, tenant, userID string) (int, error)
}

// DefaultTTL is how long a size is reused: a partition grows slowly next to
// the difference between an exact scan and an index search.
const DefaultTTL = 30 * time.Second

// maxEntries bounds the cache; when full it starts afresh.
const maxEntries = 100_000

// Sizes is a Counter that reuses each partition's size for a while. It is
// safe for concurrent use.
type Sizes struct {
	count Counter
	ttl   time.Duration
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]entry
}

type entry struct {
	n  int
	at time.Time
}

// Options configure Sizes; Counter is required.
type Options struct {
	Counter Counter
	TTL     time.Duration    // zero: DefaultTTL
	Now     func() time.Time // zero: time.Now
}

// New returns Sizes over opts.Counter.
func New(opts Options) (*Sizes, error) {
	if opts.Counter == nil {
		return nil, errors.New("partitions: Counter is required")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Sizes{count: opts.Counter, ttl: opts.TTL, now: opts.Now, entries: map[string]entry{}}, nil
}

// Forget drops the size of (tenant, userID), so that the next call counts
// it: for a writer that knows it grew the partition by much at once.
func (s *Sizes) Forget(tenant, userID string) {
	s.mu.Lock()
	delete(s.entries, tenant+"\x00"+userID)
	s.mu.Unlock()
}

// PartitionSize returns the size of (tenant, userID), counted at most TTL
// ago. A failed count is not remembered.
func (s *Sizes) PartitionSize(ctx context.Context, tenant, userID string) (int, error) {
	key := tenant + "\x00" + userID
	s.mu.Lock()
	e, ok := s.entries[key]
	s.mu.Unlock()
	if ok && s.now().Sub(e.at) < s.ttl {
		return e.n, nil
	}
	n, err := s.count.PartitionSize(ctx, tenant, userID)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	if len(s.entries) >= maxEntries {
		s.entries = map[string]entry{}
	}
	s.entries[key] = entry{n: n, at: s.now()}
	s.mu.Unlock()
	return n, nil
}
