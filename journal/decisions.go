package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/memory"
	"mneme/policyadmin"
)

// Defaults of the decision log.
const (
	// DefaultDecisionCap is how many decisions the log keeps per tenant.
	DefaultDecisionCap = 10000
	// decisionBuffer is how many records may wait for Redis before new
	// ones are dropped (and counted) rather than slow a request down.
	decisionBuffer = 8192
	// decisionBatch is the most records written in one pipeline.
	decisionBatch = 512
)

// DecisionOptions configure a Decisions log.
type DecisionOptions struct {
	// Cap is how many decisions to keep per tenant; DefaultDecisionCap when 0.
	Cap    int
	Logger *slog.Logger
}

// Decisions is the policy decision log: every decision the engine makes, per
// tenant, newest first, capped, in Redis lists. Record is cheap and never
// blocks; Run, owned by whoever built the log, writes records in pipelined
// batches until its context ends. Records hold metadata, never content.
type Decisions struct {
	rdb     redis.UniversalClient
	log     *slog.Logger
	cap     int
	ch      chan policyadmin.DecisionRecord
	dropped atomic.Int64
	// flush asks Run to write what is queued and close the channel sent.
	flush flushRequests
	mu    sync.Mutex
	run   chan struct{} // closed when the current Run returns; nil before any
}

var (
	_ policyadmin.DecisionLog = (*Decisions)(nil)
	_ memory.Eraser           = (*Decisions)(nil)
)

// NewDecisions returns a decision log on rdb. Nothing is written until Run.
func NewDecisions(rdb redis.UniversalClient, opts DecisionOptions) *Decisions {
	d := &Decisions{
		rdb: rdb, log: opts.Logger, cap: opts.Cap,
		ch: make(chan policyadmin.DecisionRecord, decisionBuffer), flush: make(flushRequests),
	}
	if d.cap <= 0 {
		d.cap = DefaultDecisionCap
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	return d
}

func decisionsKey(tenant string) string { return "mneme:decisions:" + tenant }

// Record queues r for the log. When the queue is full the record is dropped
// and counted: the log must never hold a request up.
func (d *Decisions) Record(r policyadmin.DecisionRecord) {
	select {
	case d.ch <- r:
	default:
		d.dropped.Add(1)
	}
}

// Dropped returns how many records were dropped because the queue was full.
func (d *Decisions) Dropped() int64 { return d.dropped.Load() }

// Run writes queued records until ctx ends, then writes what is still
// queued (within a few seconds) and returns.
func (d *Decisions) Run(ctx context.Context) {
	done := make(chan struct{})
	d.mu.Lock()
	d.run = done
	d.mu.Unlock()
	defer close(done)
	batch := make([]policyadmin.DecisionRecord, 0, decisionBatch)
	for {
		select {
		case reply := <-d.flush:
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
			for len(d.ch) > 0 && wctx.Err() == nil {
				batch = d.drain(batch[:0])
				d.write(wctx, batch)
			}
			cancel()
			close(reply)
		case r := <-d.ch:
			// A record taken off the queue is written even when ctx ends
			// meanwhile: select may pick this case after the cancel.
			batch = append(batch[:0], r)
			batch = d.drain(batch)
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
			d.write(wctx, batch)
			cancel()
		case <-ctx.Done():
			flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
			for len(d.ch) > 0 && flush.Err() == nil {
				batch = d.drain(batch[:0])
				d.write(flush, batch)
			}
			cancel()
			return
		}
	}
}

// drain appends whatever is queued, up to a batch.
func (d *Decisions) drain(batch []policyadmin.DecisionRecord) []policyadmin.DecisionRecord {
	for len(batch) < decisionBatch {
		select {
		case r := <-d.ch:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// write pushes a batch in one pipeline: LPUSH per record, one LTRIM per
// tenant.
func (d *Decisions) write(ctx context.Context, batch []policyadmin.DecisionRecord) {
	pipe := d.rdb.Pipeline()
	tenants := map[string]bool{}
	for _, r := range batch {
		raw, err := json.Marshal(r)
		if err != nil {
			continue
		}
		pipe.LPush(ctx, decisionsKey(r.Principal.Tenant), raw)
		tenants[r.Principal.Tenant] = true
	}
	for t := range tenants {
		pipe.LTrim(ctx, decisionsKey(t), 0, int64(d.cap-1))
	}
	if _, err := pipe.Exec(ctx); err != nil && ctx.Err() == nil {
		d.log.WarnContext(ctx, "decision log: write failed", "records", len(batch), "err", err)
	}
}

// Flush returns once every decision queued before the call is written (or
// its write failed and was logged), or when ctx ends. Without a Run it
// writes them itself.
func (d *Decisions) Flush(ctx context.Context) error {
	d.mu.Lock()
	run := d.run
	d.mu.Unlock()
	if run != nil {
		if done, err := d.flush.ask(ctx, run, "decision log"); done || err != nil {
			return err
		}
		// Run has returned: nobody else writes now.
	}
	for len(d.ch) > 0 && ctx.Err() == nil {
		d.write(ctx, d.drain(nil))
	}
	return nil
}

// flushRequests is how a caller asks a writer goroutine to write what is
// queued: it sends a reply channel, which the goroutine closes once done.
type flushRequests chan chan struct{}

// ask sends a flush request and waits for the reply. It reports false
// without an error when stopped closes first: the goroutine has returned.
func (f flushRequests) ask(ctx context.Context, stopped <-chan struct{}, what string) (bool, error) {
	reply := make(chan struct{})
	select {
	case f <- reply:
	case <-stopped:
		return false, nil
	case <-ctx.Done():
		return false, fmt.Errorf("journal: %s flush: %w", what, ctx.Err())
	}
	select {
	case <-reply:
		return true, nil
	case <-ctx.Done():
		return false, fmt.Errorf("journal: %s flush: %w", what, ctx.Err())
	}
}

// Place names the decision log in erase receipts.
func (d *Decisions) Place() string { return "decision_log" }

// EraseUser removes from the tenant's log every decision that names the
// user: taken by them, or about a resource of theirs (the memory ids of
// those records are theirs too). It writes the queued decisions first, so
// none of them lands after the erase, and returns how many it removed.
func (d *Decisions) EraseUser(ctx context.Context, tenant, userID string) (int64, error) {
	if err := d.Flush(ctx); err != nil {
		return 0, err
	}
	key := decisionsKey(tenant)
	raws, err := d.rdb.LRange(ctx, key, 0, -1).Result()
	if err != nil {
		return 0, fmt.Errorf("%w: decision log: %w", memory.ErrUnavailable, err)
	}
	names := map[string]bool{}
	for _, raw := range raws {
		var r policyadmin.DecisionRecord
		if json.Unmarshal([]byte(raw), &r) != nil {
			continue
		}
		if r.Resource.UserID == userID || r.Principal.Kind == memory.KindUser && r.Principal.ID == userID {
			names[raw] = true
		}
	}
	if len(names) == 0 {
		return 0, nil
	}
	// LREM by value: records pushed or trimmed meanwhile do not shift
	// what is removed.
	pipe := d.rdb.Pipeline()
	var rems []*redis.IntCmd
	for raw := range names {
		rems = append(rems, pipe.LRem(ctx, key, 0, raw))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("%w: decision log: erase: %w", memory.ErrUnavailable, err)
	}
	var n int64
	for _, c := range rems {
		n += c.Val()
	}
	return n, nil
}

// Decisions returns the tenant's logged decisions that match q, newest
// first, at most q.Limit (all when 0).
func (d *Decisions) Decisions(ctx context.Context, tenant string, q policyadmin.DecisionQuery) ([]policyadmin.DecisionRecord, error) {
	raws, err := d.rdb.LRange(ctx, decisionsKey(tenant), 0, int64(d.cap-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("%w: decision log: %w", memory.ErrUnavailable, err)
	}
	var out []policyadmin.DecisionRecord
	for _, raw := range raws {
		var r policyadmin.DecisionRecord
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			continue
		}
		if !q.Since.IsZero() && r.Time.Before(q.Since) {
			// Newest first: everything further is older still.
			break
		}
		if !matches(r, q) {
			continue
		}
		out = append(out, r)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

func matches(r policyadmin.DecisionRecord, q policyadmin.DecisionQuery) bool {
	switch {
	case q.Result != "" && r.Result != q.Result:
		return false
	case q.Action != "" && r.Action != q.Action:
		return false
	case q.Principal != "":
		kind, id, ok := strings.Cut(q.Principal, ":")
		if !ok {
			return r.Principal.ID == q.Principal
		}
		return r.Principal.Kind == kind && r.Principal.ID == id
	}
	return true
}
