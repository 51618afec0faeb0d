// Package ratelimit limits how often one caller may call: a token bucket
// per caller and tenant kept in Redis, so that every replica draws from the
// same bucket. One Lua script refills and takes atomically, on Redis's
// clock, so replicas whose clocks differ still agree.
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/memory"
)

// Rate is a bucket's shape: PerSecond tokens are added each second, up to
// Burst. A zero PerSecond is no limit.
type Rate struct {
	PerSecond float64
	Burst     int
}

// On reports whether r limits anything.
func (r Rate) On() bool { return r.PerSecond > 0 }

// Options configures a Limiter.
type Options struct {
	// Default applies to every kind of principal without an override.
	Default Rate
	// Kinds overrides Default per principal kind (agent, user, admin,
	// analyst); a zero Rate there turns limiting off for that kind.
	Kinds map[string]Rate
	// Prefix starts every bucket's key; "mneme" by default.
	Prefix string
}

// Limiter takes one token per request from its caller's bucket.
type Limiter struct {
	rdb    redis.Scripter
	opts   Options
	prefix string
}

// New returns a Limiter over rdb.
func New(rdb redis.Scripter, opts Options) *Limiter {
	prefix := opts.Prefix
	if prefix == "" {
		prefix = "mneme"
	}
	return &Limiter{rdb: rdb, opts: opts, prefix: prefix + ":ratelimit:"}
}

// LimitedError is a request refused because its caller's bucket is empty;
// RetryAfter is when the next token will be there.
type LimitedError struct {
	RetryAfter time.Duration
}

func (e *LimitedError) Error() string {
	return fmt.Sprintf("rate limited: next request allowed in %s", e.RetryAfter)
}

// RetryAfterSeconds is RetryAfter for a Retry-After header: whole seconds,
// rounded up, at least 1.
func (e *LimitedError) RetryAfterSeconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

// rate returns the rate for a principal kind.
func (l *Limiter) rate(kind string) Rate {
	if r, ok := l.opts.Kinds[kind]; ok {
		return r
	}
	return l.opts.Default
}

// take refills a bucket by the time elapsed since it was last touched (on
// Redis's clock), takes one token if there is one, and answers {allowed,
// microseconds until the next token}. A bucket left alone long enough to be
// full again expires, so idle callers cost no memory.
//
// KEYS[1] the bucket; ARGV[1] tokens per second; ARGV[2] burst.
var take = redis.NewScript(`
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000000)
end
local allowed = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait = math.ceil((1 - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {allowed, wait}
`)

// Allow takes a token from the bucket of caller (an API key's or a token
// subject's stable name) in tenant, limited at the rate of kind. It
// returns nil when the request may go on, a *LimitedError when it may not,
// and an error wrapping memory.ErrUnavailable when Redis cannot answer:
// the limit fails closed, as the rest of the service does.
func (l *Limiter) Allow(ctx context.Context, tenant, kind, caller string) error {
	r := l.rate(kind)
	if !r.On() {
		return nil
	}
	burst := max(r.Burst, 1)
	key := l.prefix + tenant + ":" + caller
	res, err := take.Run(ctx, l.rdb, []string{key},
		strconv.FormatFloat(r.PerSecond, 'g', -1, 64), burst).Int64Slice()
	if err != nil {
		return fmt.Errorf("%w: rate limit: %w", memory.ErrUnavailable, err)
	}
	if len(res) != 2 {
		return fmt.Errorf("%w: rate limit: unexpected reply %v", memory.ErrUnavailable, res)
	}
	if res[0] == 1 {
		return nil
	}
	return &LimitedError{RetryAfter: time.Duration(res[1]) * time.Microsecond}
}
