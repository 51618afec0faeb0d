package identity

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// RedisEpochs keeps each tenant's key epoch in Redis, where every replica
// reads it: one GET per request, one INCR per change.
type RedisEpochs struct {
	rdb redis.UniversalClient
}

// NewRedisEpochs returns the epochs kept in rdb.
func NewRedisEpochs(rdb redis.UniversalClient) *RedisEpochs { return &RedisEpochs{rdb: rdb} }

func epochKey(tenant string) string { return "mneme:identity:epoch:" + tenant }

// Epoch returns the tenant's epoch; 0 before its first change.
func (r *RedisEpochs) Epoch(ctx context.Context, tenant string) (int64, error) {
	n, err := r.rdb.Get(ctx, epochKey(tenant)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// Bump raises the tenant's epoch.
func (r *RedisEpochs) Bump(ctx context.Context, tenant string) error {
	return r.rdb.Incr(ctx, epochKey(tenant)).Err()
}
