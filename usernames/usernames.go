// Package usernames remembers the names users are known by ("Ethan Zhou"),
// read from the store, for recall to take in a question as naming the user,
// or another of the tenant's users.
// Each replica reads a user's name at most once a TTL; a renamed user is
// known by the new name within it, and an erased user's name leaves the
// replica that erased the user at once (Forget) and the others within it.
package usernames

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"mneme/intent"
)

// TTL is how long a name is kept; MaxKept how many names (and tenants'
// lists) at most.
// MaxNamed is how many named users of a tenant a question is read against:
// in a tenant with more, a question naming another user is not told from
// one about the user, as matching them all would cost every recall.
const (
	TTL      = time.Minute
	MaxKept  = 10_000
	MaxNamed = 5_000
)

// Source reads the name of a user, and the tenant's named users (id to
// name, at most limit of them): graph/keystore.Store.
type Source interface {
	UserName(ctx context.Context, tenant, userID string) (string, error)
	UserNames(ctx context.Context, tenant string, limit int) (map[string]string, error)
}

// Cache implements memory.UserNames over a Source.
type Cache struct {
	src Source
	now func() time.Time

	mu    sync.Mutex
	names map[[2]string]kept[string]
	named map[string]kept[[]intent.Person]
}

type kept[V any] struct {
	v  V
	at time.Time
}

// New returns a Cache reading src; now is the clock (nil: time.Now).
func New(src Source, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{src: src, now: now, names: map[[2]string]kept[string]{}, named: map[string]kept[[]intent.Person]{}}
}

// UserName returns the user's name, "" when the user has none, from what
// was read less than TTL ago or else from the source.
func (c *Cache) UserName(ctx context.Context, tenant, user string) (string, error) {
	return readThrough(c, c.names, [2]string{tenant, user}, func() (string, error) {
		return c.src.UserName(ctx, tenant, user)
	})
}

// Person returns how a question may name user (memory.UserNames): by the
// id and name, and the tenant's named users beside (intent.Person.Others).
func (c *Cache) Person(ctx context.Context, tenant, user string) (intent.Person, error) {
	name, err := c.UserName(ctx, tenant, user)
	if err != nil {
		return intent.Person{ID: user}, err
	}
	users, err := readThrough(c, c.named, tenant, func() ([]intent.Person, error) { return c.users(ctx, tenant) })
	return intent.Person{ID: user, Name: name, Others: users}, err
}

// users reads the tenant's named users; none in a tenant of more than
// MaxNamed.
func (c *Cache) users(ctx context.Context, tenant string) ([]intent.Person, error) {
	m, err := c.src.UserNames(ctx, tenant, MaxNamed+1)
	if err != nil || len(m) > MaxNamed {
		return nil, err
	}
	users := make([]intent.Person, 0, len(m))
	for id, name := range m {
		users = append(users, intent.NewPerson(id, name))
	}
	slices.SortFunc(users, func(a, b intent.Person) int { return strings.Compare(a.ID, b.ID) })
	return users, nil
}

// readThrough returns what m keeps under k if it was read less than TTL
// ago, or else what read gives, which m then keeps (at most MaxKept
// entries).
func readThrough[K comparable, V any](c *Cache, m map[K]kept[V], k K, read func() (V, error)) (V, error) {
	c.mu.Lock()
	e, ok := m[k]
	c.mu.Unlock()
	if ok && c.now().Sub(e.at) < TTL {
		return e.v, nil
	}
	v, err := read()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(m) >= MaxKept {
		clear(m)
	}
	m[k] = kept[V]{v: v, at: c.now()}
	return v, nil
}

// Forget drops what is kept of a user.
func (c *Cache) Forget(tenant, user string) {
	c.mu.Lock()
	delete(c.names, [2]string{tenant, user})
	delete(c.named, tenant)
	c.mu.Unlock()
}
