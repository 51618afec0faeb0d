// Package policysync keeps every memoryd replica deciding with each tenant's
// current policy and grants. Each tenant's revision counters live in a Redis
// hash; a change raises them (never lowers them) and publishes the tenant's
// name on one channel, so that replicas reload ahead of their next request.
// Publishing alone races with a request that arrives first, so each request
// also reads the counters (one HMGET) and a replica that is behind reloads
// before it decides.
package policysync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/redis/go-redis/v9"

	"mneme/policyadmin"
)

// Channel is where changes are announced; a message is a tenant id.
const Channel = "mneme:policy:changes"

func key(tenant string) string { return "mneme:policy:rev:" + tenant }

// announce raises the counters of KEYS[1] to ARGV (epoch, policy, grants)
// where they are higher, the active policy number with its epoch, and
// publishes the tenant on ARGV[4], in one step.
var announce = redis.NewScript(`
local epoch = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '-1')
local grants = tonumber(redis.call('HGET', KEYS[1], 'grants') or '-1')
if tonumber(ARGV[1]) > epoch then
  redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'policy', ARGV[2])
end
if tonumber(ARGV[3]) > grants then
  redis.call('HSET', KEYS[1], 'grants', ARGV[3])
end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
`)

// Bus is the Redis side of replica sync. It implements policyadmin.RevisionBus.
type Bus struct {
	rdb redis.UniversalClient
	log *slog.Logger
}

var _ policyadmin.RevisionBus = (*Bus)(nil)

// New returns a Bus on rdb.
func New(rdb redis.UniversalClient, log *slog.Logger) *Bus {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bus{rdb: rdb, log: log}
}

// Current returns the tenant's announced revisions; false when none were.
func (b *Bus) Current(ctx context.Context, tenant string) (policyadmin.Revisions, bool, error) {
	vals, err := b.rdb.HMGet(ctx, key(tenant), "epoch", "policy", "grants").Result()
	if err != nil {
		return policyadmin.Revisions{}, false, err
	}
	var nums [3]int64
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			return policyadmin.Revisions{}, false, nil
		}
		if nums[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return policyadmin.Revisions{}, false, fmt.Errorf("policysync: %s: %w", key(tenant), err)
		}
	}
	return policyadmin.Revisions{PolicyEpoch: nums[0], Policy: nums[1], Grants: nums[2]}, true, nil
}

// Announce raises the tenant's counters to r and tells every replica.
func (b *Bus) Announce(ctx context.Context, tenant string, r policyadmin.Revisions) error {
	err := announce.Run(ctx, b.rdb, []string{key(tenant)}, r.PolicyEpoch, r.Policy, r.Grants, Channel, tenant).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("policysync: announce %s: %w", tenant, err)
	}
	return nil
}

// Listen calls changed with each announced tenant until ctx ends. The
// subscription reconnects by itself; a change announced while it was down is
// still caught by the per-request check.
func (b *Bus) Listen(ctx context.Context, changed func(ctx context.Context, tenant string)) {
	sub := b.rdb.Subscribe(ctx, Channel)
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			changed(ctx, msg.Payload)
		}
	}
}
