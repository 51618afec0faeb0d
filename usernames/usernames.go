// Package usernames remembers the names users are known by ("Ethan Zhou"),
// read from the store, for recall to take in a question as naming the user.
// Each replica reads a user's name at most once a TTL; a renamed user is
// known by the new name within it, and an erased user's name leaves the
// replica that erased the user at once (Forget) and the others within it.
package usernames

import (
	"context"
	"sync"
	"time"
)

// TTL is how long a name is kept; MaxKept how many names at most.
const (
	TTL     = time.Minute
	MaxKept = 10_000
)

// Source reads the name of a user: graph/keystore.Store.
type Source interface {
	UserName(ctx context.Context, tenant, userID string) (string, error)
}

// Cache implements memory.UserNames over a Source.
type Cache struct {
	src Source
	now func() time.Time

	mu   sync.Mutex
	kept map[[2]string]kept
}

type kept struct {
	name string
	at   time.Time
}

// New returns a Cache reading src; now is the clock (nil: time.Now).
func New(src Source, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{src: src, now: now, kept: map[[2]string]kept{}}
}

// UserName returns the user's name, "" when the user has none, from what
// was read less than TTL ago or else from the source.
func (c *Cache) UserName(ctx context.Context, tenant, user string) (string, error) {
	k := [2]string{tenant, user}
	c.mu.Lock()
	n, ok := c.kept[k]
	c.mu.Unlock()
	if ok && c.now().Sub(n.at) < TTL {
		return n.name, nil
	}
	name, err := c.src.UserName(ctx, tenant, user)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.kept) >= MaxKept {
		clear(c.kept)
	}
	c.kept[k] = kept{name: name, at: c.now()}
	return name, nil
}

// Forget drops what is kept of a user.
func (c *Cache) Forget(tenant, user string) {
	c.mu.Lock()
	delete(c.kept, [2]string{tenant, user})
	c.mu.Unlock()
}
