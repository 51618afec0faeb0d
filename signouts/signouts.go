// Package signouts remembers the panel sessions that were signed out, in
// Redis, until they would have expired: a sealed session cookie is valid by
// itself, so a copy kept after signing out (or taken) would otherwise open
// the panel on any replica for the rest of its life.
package signouts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/memory"
)

// Store keeps signed-out session ids. Redis holds a digest of each id,
// never the id.
type Store struct {
	rdb    redis.Cmdable
	prefix string
	now    func() time.Time
}

// New returns a Store over rdb whose keys start with prefix ("mneme" when
// empty).
func New(rdb redis.Cmdable, prefix string) *Store {
	if prefix == "" {
		prefix = "mneme"
	}
	return &Store{rdb: rdb, prefix: prefix + ":signout:", now: time.Now}
}

func (s *Store) key(id string) string {
	sum := sha256.Sum256([]byte(id))
	return s.prefix + hex.EncodeToString(sum[:16])
}

// SignOut remembers session id as signed out until it expires. A session
// already expired needs no remembering.
func (s *Store) SignOut(ctx context.Context, id string, expires time.Time) error {
	ttl := expires.Sub(s.now())
	if ttl <= 0 {
		return nil
	}
	if err := s.rdb.Set(ctx, s.key(id), 1, ttl+time.Second).Err(); err != nil {
		return fmt.Errorf("signouts: %w: %w", memory.ErrUnavailable, err)
	}
	return nil
}

// SignedOut reports whether session id was signed out.
func (s *Store) SignedOut(ctx context.Context, id string) (bool, error) {
	n, err := s.rdb.Exists(ctx, s.key(id)).Result()
	if err != nil {
		return false, fmt.Errorf("signouts: %w: %w", memory.ErrUnavailable, err)
	}
	return n > 0, nil
}
