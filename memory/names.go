package memory

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// UserNames tells the name a user is known by besides the id ("Ethan
// Zhou"), which agents use to speak of the user in questions; "" when the
// user has none.
type UserNames interface {
	UserName(ctx context.Context, tenant, userID string) (string, error)
}

// Names are remembered for nameTTL, so that recall reads a user's name from
// the store at most once a minute on each replica; a renamed user is known
// by the new name within that time, and an erased user's name leaves this
// replica at once (forget) and the others within it.
const (
	nameTTL      = time.Minute
	maxNamesKept = 10_000
)

// nameCache remembers the names of the users recall served lately.
type nameCache struct {
	src UserNames // nil: users are known by their ids alone
	now func() time.Time
	log *slog.Logger

	mu   sync.Mutex
	kept map[[2]string]keptName
}

type keptName struct {
	name string
	at   time.Time
}

func newNameCache(src UserNames, now func() time.Time, log *slog.Logger) *nameCache {
	return &nameCache{src: src, now: now, log: log, kept: map[[2]string]keptName{}}
}

// of returns the names a question may call the user by: the id, and the
// user's name when the store has one. A store that fails costs the name,
// not the recall.
func (c *nameCache) of(ctx context.Context, tenant, user string) []string {
	if c.src == nil || user == "" {
		return []string{user}
	}
	k := [2]string{tenant, user}
	c.mu.Lock()
	n, ok := c.kept[k]
	c.mu.Unlock()
	if !ok || c.now().Sub(n.at) >= nameTTL {
		name, err := c.src.UserName(ctx, tenant, user)
		if err != nil {
			c.log.WarnContext(ctx, "recall without the user's name", "tenant", tenant, "user_id", user, "err", err)
			return []string{user}
		}
		n = keptName{name: name, at: c.now()}
		c.mu.Lock()
		if len(c.kept) >= maxNamesKept {
			clear(c.kept)
		}
		c.kept[k] = n
		c.mu.Unlock()
	}
	if n.name == "" {
		return []string{user}
	}
	return []string{user, n.name}
}

// forget drops what is remembered of a user.
func (c *nameCache) forget(tenant, user string) {
	c.mu.Lock()
	delete(c.kept, [2]string{tenant, user})
	c.mu.Unlock()
}
