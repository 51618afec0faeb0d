package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/guard"
	"mneme/memory"
)

// DefaultRecallCap is how many recalls the log keeps per user.
const DefaultRecallCap = 200

// DefaultRecallTTL is how long a user's recall log outlives its last entry.
const DefaultRecallTTL = 30 * 24 * time.Hour

// RecallLog keeps who recalled what about a user: one Redis list per
// (tenant, user), newest first, trimmed to a cap on every append.
type RecallLog struct {
	rdb redis.Cmdable
	cap int
	ttl time.Duration
}

var (
	_ memory.RecallLogReader = (*RecallLog)(nil)
	_ memory.Eraser          = (*RecallLog)(nil)
)

// NewRecallLog returns the recall log on rdb, keeping at most capPerUser
// entries per user (DefaultRecallCap when <= 0) for ttl after the last one
// (DefaultRecallTTL when <= 0).
func NewRecallLog(rdb redis.Cmdable, capPerUser int, ttl time.Duration) *RecallLog {
	if capPerUser <= 0 {
		capPerUser = DefaultRecallCap
	}
	if ttl <= 0 {
		ttl = DefaultRecallTTL
	}
	return &RecallLog{rdb: rdb, cap: capPerUser, ttl: ttl}
}

// recallKey names a user's list. Tenants and user ids never contain '/'.
func recallKey(tenant, userID string) string { return "mneme:recall:" + tenant + "/" + userID }

// Append adds one recall to the front of its user's list and trims the list
// to the cap, in one transaction. The question is kept masked as a memory's
// content is (guard.Masked): agents pass users' own words, and a password or
// a card number typed there must not sit in the log admins read.
func (l *RecallLog) Append(ctx context.Context, rec memory.RecallRecord) error {
	rec.Query = guard.Masked(rec.Query)
	raw, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("journal: encode recall: %w", err)
	}
	key := recallKey(rec.Tenant, rec.UserID)
	_, err = l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, key, raw)
		p.LTrim(ctx, key, 0, int64(l.cap-1))
		p.Expire(ctx, key, l.ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("journal: append recall: %w", err)
	}
	return nil
}

// RecentRecalls returns up to limit recalls about one user, newest first.
func (l *RecallLog) RecentRecalls(ctx context.Context, tenant, userID string, limit int) ([]memory.RecallRecord, error) {
	if limit <= 0 {
		return nil, nil
	}
	raws, err := l.rdb.LRange(ctx, recallKey(tenant, userID), 0, int64(limit-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("journal: read recalls: %w", err)
	}
	out := make([]memory.RecallRecord, 0, len(raws))
	for _, raw := range raws {
		var rec memory.RecallRecord
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			return nil, fmt.Errorf("journal: decode recall: %w", err)
		}
		out = append(out, rec)
	}
	return out, nil
}

// Place names the recall log in erase receipts.
func (l *RecallLog) Place() string { return "recall_log" }

// EraseUser removes the user's recall log and returns how many entries it
// held.
func (l *RecallLog) EraseUser(ctx context.Context, tenant, userID string) (int64, error) {
	key := recallKey(tenant, userID)
	var n *redis.IntCmd
	_, err := l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		n = p.LLen(ctx, key)
		p.Del(ctx, key)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("journal: erase recalls: %w", err)
	}
	return n.Val(), nil
}

// Toucher counts accesses in the system of record; graph.Store implements it.
type Toucher interface {
	TouchMemories(ctx context.Context, tenant string, ids []string, at time.Time) error
}

// RecorderOptions configures a Recorder.
type RecorderOptions struct {
	Log    *RecallLog
	Touch  Toucher
	Logger *slog.Logger
	// Queue is how many recalls may wait (default 1024); beyond it new ones
	// are dropped and counted rather than slowing recall down.
	Queue int
	// Timeout bounds the writes of one batch (default 5s).
	Timeout time.Duration
	// TouchDelay is how long access counts wait to be written together
	// (default DefaultTouchDelay): each write is a Neo4j transaction, which
	// cost a recall at a time a tenth of the database's work for recall.
	TouchDelay time.Duration
}

// DefaultTouchDelay is how long a recall's access counts may trail it.
const DefaultTouchDelay = time.Second

// maxPendingTouches is how many accesses wait at most before they are
// written, however young.
const maxPendingTouches = 5000

// maxRecorderBatch bounds how many queued recalls one pass writes.
const maxRecorderBatch = 64

// Recorder applies answered recalls off the request path: it appends them
// to the recall log and counts the accesses of their memories. Record only
// queues; Run does the work, in its owner's goroutine.
type Recorder struct {
	log     *RecallLog
	touch   Toucher
	logger  *slog.Logger
	timeout time.Duration
	queue   chan memory.RecallRecord

	// Accesses waiting to be counted, by tenant, and when they are due;
	// only Run's goroutine touches them.
	touchDelay time.Duration
	pending    map[string]*touches
	touchDue   <-chan time.Time

	done    chan struct{} // closed when Run returns
	flush   flushRequests
	started atomic.Bool
	dropped atomic.Int64
}

var (
	_ memory.RecallRecorder = (*Recorder)(nil)
	_ memory.Eraser         = (*Recorder)(nil)
)

// NewRecorder returns a Recorder that queues until Run runs.
func NewRecorder(opts RecorderOptions) *Recorder {
	if opts.Queue <= 0 {
		opts.Queue = 1024
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.TouchDelay <= 0 {
		opts.TouchDelay = DefaultTouchDelay
	}
	return &Recorder{
		log: opts.Log, touch: opts.Touch, logger: opts.Logger, timeout: opts.Timeout,
		queue: make(chan memory.RecallRecord, opts.Queue), touchDelay: opts.TouchDelay, pending: map[string]*touches{},
		done: make(chan struct{}), flush: make(flushRequests),
	}
}

// Place names the recall log in erase receipts.
func (r *Recorder) Place() string { return r.log.Place() }

// EraseUser first writes every recall queued so far, so that none of them
// lands after the erase, then removes the user's recall log.
func (r *Recorder) EraseUser(ctx context.Context, tenant, userID string) (int64, error) {
	if err := r.Flush(ctx); err != nil {
		return 0, err
	}
	return r.log.EraseUser(ctx, tenant, userID)
}

// Flush returns once every recall queued before the call is written, or
// at once when the worker is not running.
func (r *Recorder) Flush(ctx context.Context) error {
	if !r.started.Load() {
		return nil
	}
	_, err := r.flush.ask(ctx, r.done, "recorder")
	return err
}

// Record queues a recall; it never blocks. A full queue drops it.
func (r *Recorder) Record(rec memory.RecallRecord) {
	select {
	case r.queue <- rec:
	default:
		if n := r.dropped.Add(1); n&(n-1) == 0 { // log at 1, 2, 4, 8, … drops
			r.logger.Warn("recall recorder queue full; recall not recorded", "dropped", n)
		}
	}
}

// Dropped returns how many recalls a full queue dropped.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// Run writes queued recalls until ctx ends, then writes what is still
// queued (each batch within the write timeout) and returns nil. A Recorder
// runs once: a second Run returns an error at once.
func (r *Recorder) Run(ctx context.Context) error {
	if !r.started.CompareAndSwap(false, true) {
		return errors.New("journal: recorder already ran")
	}
	defer close(r.done)
	// Writes outlive ctx by their timeout: a recall taken off the queue is
	// written even when the owner is shutting down.
	wctx := context.WithoutCancel(ctx)
	for {
		select {
		case rec := <-r.queue:
			r.write(wctx, r.batch(rec))
		case <-r.touchDue:
			r.touchPending(wctx)
		case reply := <-r.flush:
			r.drain(wctx)
			close(reply)
		case <-ctx.Done():
			r.drain(wctx)
			return nil
		}
	}
}

// drain writes whatever is queued now, and every access waiting.
func (r *Recorder) drain(ctx context.Context) {
	for {
		select {
		case rec := <-r.queue:
			r.write(ctx, r.batch(rec))
		default:
			r.touchPending(ctx)
			return
		}
	}
}

// batch returns first and whatever else is queued, up to maxRecorderBatch.
func (r *Recorder) batch(first memory.RecallRecord) []memory.RecallRecord {
	recs := []memory.RecallRecord{first}
	for len(recs) < maxRecorderBatch {
		select {
		case rec := <-r.queue:
			recs = append(recs, rec)
		default:
			return recs
		}
	}
	return recs
}

// touches are the accesses of one tenant's memories waiting to be counted.
type touches struct {
	ids []string
	at  time.Time
}

// write logs every recall of recs and adds their accesses to those waiting;
// the first to wait sets when they are due. Failures are logged: recall has
// answered long ago.
func (r *Recorder) write(ctx context.Context, recs []memory.RecallRecord) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var errs []error
	for _, rec := range recs {
		if r.log != nil {
			errs = append(errs, r.log.Append(ctx, rec))
		}
		if r.touch == nil || len(rec.Memories) == 0 {
			continue
		}
		t := r.pending[rec.Tenant]
		if t == nil {
			t = &touches{}
			r.pending[rec.Tenant] = t
		}
		for _, m := range rec.Memories {
			t.ids = append(t.ids, m.ID)
		}
		if rec.At.After(t.at) {
			t.at = rec.At
		}
	}
	if err := errors.Join(errs...); err != nil {
		r.logger.Warn("recording recalls failed", "recalls", len(recs), "err", err)
	}
	waiting := 0
	for _, t := range r.pending {
		waiting += len(t.ids)
	}
	switch {
	case waiting >= maxPendingTouches:
		r.touchPending(ctx)
	case len(r.pending) > 0 && r.touchDue == nil:
		r.touchDue = time.After(r.touchDelay)
	}
}

// touchPending counts the waiting accesses, with one update per tenant.
func (r *Recorder) touchPending(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var errs []error
	for tenant, t := range r.pending {
		errs = append(errs, r.touch.TouchMemories(ctx, tenant, t.ids, t.at))
	}
	if err := errors.Join(errs...); err != nil {
		r.logger.Warn("counting recalled memories' accesses failed", "tenants", len(r.pending), "err", err)
	}
	clear(r.pending)
	r.touchDue = nil
}
