package app

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/metrics"
)

// queueProbe reads the write queue's depth, lag and dead letters from Redis
// for the metrics: acknowledged jobs are deleted from their stream, so a
// stream's length is what waits or is being applied, and its first entry's
// id carries the time the oldest of them was queued.
func (a *App) queueProbe(ctx context.Context) (metrics.QueueState, error) {
	var s metrics.QueueState
	if a.QueueWorkers != nil {
		st := a.QueueWorkers.Stats()
		s.Retries, s.DeadLettered = st.Retries.Load(), st.DeadLettered.Load()
	}
	// A stalled Redis would hold the scrape for the collector's whole
	// deadline: /metrics answers at once, the probe down.
	if a.Stalls != nil {
		if err := a.Stalls.Err(); err != nil {
			return s, err
		}
	}
	n := a.Queue.Shards()
	pipe := a.Redis.Pipeline()
	lens := make([]*redis.IntCmd, n)
	dead := make([]*redis.IntCmd, n)
	first := make([]*redis.XMessageSliceCmd, n)
	for i := range n {
		lens[i] = pipe.XLen(ctx, a.Queue.Stream(i))
		dead[i] = pipe.XLen(ctx, a.Queue.DeadStream(i))
		first[i] = pipe.XRangeN(ctx, a.Queue.Stream(i), "-", "+", 1)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return s, err
	}
	now := time.Now()
	for i := range n {
		s.Depth += lens[i].Val()
		s.DeadLetters += dead[i].Val()
		if msgs := first[i].Val(); len(msgs) > 0 {
			if at, ok := streamTime(msgs[0].ID); ok && now.Sub(at) > s.Lag {
				s.Lag = now.Sub(at)
			}
		}
	}
	return s, nil
}

// streamTime is the time in a Redis stream entry id ("<ms>-<seq>").
func streamTime(id string) (time.Time, bool) {
	ms, _, _ := strings.Cut(id, "-")
	v, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(v), true
}
