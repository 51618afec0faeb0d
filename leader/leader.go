// Package leader elects one leader among memoryd replicas with a Redis lock:
// SET NX PX to take it, a renewal that only the holder's token can extend,
// and a release that only deletes the lock its caller still holds. A holder
// that stops renewing (a crashed replica) loses the lock when it expires.
package leader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lock is one replica's handle on a named lock. It is safe for concurrent
// use; each Lock has its own token, so two Locks on one key compete even in
// one process.
type Lock struct {
	rdb   redis.UniversalClient
	key   string
	token string
	ttl   time.Duration
}

// New returns a Lock on key that expires ttl after its last renewal.
func New(rdb redis.UniversalClient, key string, ttl time.Duration) (*Lock, error) {
	if rdb == nil || key == "" || ttl < time.Millisecond {
		return nil, errors.New("leader: a client, a key and a ttl of at least 1ms are required")
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("leader: token: %w", err)
	}
	return &Lock{rdb: rdb, key: key, token: hex.EncodeToString(b[:]), ttl: ttl}, nil
}

// TTL is how long the lock outlives its last renewal.
func (l *Lock) TTL() time.Duration { return l.ttl }

// hold takes the lock when it is free and renews it when this Lock holds it,
// in one step: 1 when held afterwards, 0 when another holder has it.
var hold = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`)

// release deletes the lock only when it still carries the caller's token: a
// holder whose lock expired and was taken must not free its successor's.
var release = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// Hold takes the lock or renews it, and reports whether this Lock leads.
func (l *Lock) Hold(ctx context.Context) (bool, error) {
	n, err := hold.Run(ctx, l.rdb, []string{l.key}, l.token, l.ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("leader: hold %s: %w", l.key, err)
	}
	return n == 1, nil
}

// Release gives the lock up if this Lock holds it, so another replica can
// lead at once instead of after the ttl.
func (l *Lock) Release(ctx context.Context) error {
	if err := release.Run(ctx, l.rdb, []string{l.key}, l.token).Err(); err != nil {
		return fmt.Errorf("leader: release %s: %w", l.key, err)
	}
	return nil
}
