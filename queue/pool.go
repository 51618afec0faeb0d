package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/memory"
)

// Handler applies jobs of one kind, in order, and returns one result per
// job. An error fails the whole call; the pool then retries the jobs one at
// a time, in order. A result's Err fails that job alone while the others
// stand, so the job is retried after later jobs of its user were applied:
// handlers keep per-job errors for what order cannot change (bad input,
// refusals) and fail the whole call for what may heal (an unavailable
// store).
type Handler func(ctx context.Context, jobs []memory.Job) ([]memory.JobResult, error)

// PoolOptions tunes a Pool.
type PoolOptions struct {
	// Consumer names this pool in the consumer groups and in shard leases;
	// it must be unique per process. Default: host name, pid and a random
	// suffix.
	Consumer string
	// Batch is how many entries a worker reads and hands over at once.
	// Default 256.
	Batch int
	// MaxAttempts is how often a failing job is tried before it goes to the
	// dead-letter stream. Default 5. An unavailable store does not count:
	// the job waits for it; an error that says it may last does (lasting).
	MaxAttempts int
	// Backoff is the first retry's delay; it doubles up to MaxBackoff.
	// Defaults 100ms and 5s.
	Backoff, MaxBackoff time.Duration
	// LeaseTTL is how long a shard lease lives without renewal; a pool
	// renews its leases every third of it. Default 10s.
	LeaseTTL time.Duration
	// Block is how long a worker waits for new entries per read. Default 1s.
	Block time.Duration
	// Drain is how long Run lets the workers finish their batches once its
	// context ends. Default 10s.
	Drain time.Duration
	// Describe says what a failed job's owner is told: a stable code and a
	// message, as the API would answer the same error. The cause itself may
	// name stores and statements; it goes to the dead-letter stream and the
	// log only. Default: code internal, "the job failed".
	Describe func(error) (code, message string)
}

// Pool applies queued jobs: it leases shards (its fair share among the
// pools alive on the same Redis), runs one worker per leased shard, and
// hands jobs to the Handler registered for their kind.
type Pool struct {
	q        *Queue
	opts     PoolOptions
	handlers map[string]Handler

	mu      sync.Mutex
	owned   map[int]*shardWorker
	running bool
	quit    chan struct{}  // closed by Stop: finish the current batch, then leave
	cancel  func()         // hard stop: aborts work in flight
	wg      sync.WaitGroup // the lease loop and every worker

	stats Stats
}

// Stats counts what a pool did since it started.
type Stats struct {
	Jobs, Memories, Retries, DeadLettered, Dropped atomic.Int64
}

type shardWorker struct {
	shard  int
	cancel func()
	done   chan struct{}
}

// NewPool returns a pool over q; register handlers, then Start it.
func NewPool(q *Queue, opts PoolOptions) *Pool {
	if opts.Consumer == "" {
		host, _ := os.Hostname()
		opts.Consumer = fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.IntN(1<<16))
	}
	if opts.Batch <= 0 {
		opts.Batch = 256
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 5
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 100 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 5 * time.Second
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 10 * time.Second
	}
	if opts.Block <= 0 {
		opts.Block = time.Second
	}
	if opts.Drain <= 0 {
		opts.Drain = 10 * time.Second
	}
	if opts.Describe == nil {
		opts.Describe = func(error) (string, string) { return "internal", "the job failed" }
	}
	return &Pool{q: q, opts: opts, handlers: map[string]Handler{}, owned: map[int]*shardWorker{}}
}

// Consumer returns the pool's consumer name.
func (p *Pool) Consumer() string { return p.opts.Consumer }

// Leased returns how many shards the pool works now.
func (p *Pool) Leased() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.owned)
}

// Stats returns the pool's counters.
func (p *Pool) Stats() *Stats { return &p.stats }

// Handle registers the handler of a job kind. Call it before Start.
func (p *Pool) Handle(kind string, h Handler) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handlers[kind] = h
}

// Start begins leasing shards and applying jobs, until Stop.
func (p *Pool) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return errors.New("queue: pool already started")
	}
	for s := range p.q.shards {
		err := p.q.rdb.XGroupCreateMkStream(ctx, p.q.Stream(s), p.q.group(), "0").Err()
		if err != nil && !isBusyGroup(err) {
			return unavailable("create consumer group", err)
		}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.running, p.quit, p.cancel = true, make(chan struct{}), cancel
	p.wg.Add(1)
	go p.leaseLoop(ctx)
	return nil
}

// Run applies jobs until ctx ends, then stops as Stop does, giving the
// workers PoolOptions.Drain to finish their batches. It returns an error when
// the pool could not start or the drain ran out of time (the aborted
// batches stay pending and are replayed by the shards' next owners).
func (p *Pool) Run(ctx context.Context) error {
	if err := p.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.opts.Drain)
	defer cancel()
	if err := p.Stop(drain); err != nil {
		return fmt.Errorf("queue: workers did not finish their batches within %s; they will be replayed: %w", p.opts.Drain, err)
	}
	return nil
}

// Stop stops taking new work, lets each worker finish its batch, releases
// the leases and returns. When ctx ends first, work in flight is aborted:
// its entries stay pending and the next owner of the shard replays them.
func (p *Pool) Stop(ctx context.Context) error {
	p.mu.Lock()
	if !p.running {
		p.mu.Unlock()
		return nil
	}
	p.running = false
	close(p.quit)
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		p.cancel()
		return nil
	case <-ctx.Done():
		p.cancel()
		<-done
		return ctx.Err()
	}
}

func (p *Pool) stopping() bool {
	select {
	case <-p.quit:
		return true
	default:
		return false
	}
}

// renewScript extends a lease if this consumer still holds it.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

// releaseScript drops a lease if this consumer still holds it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// leaseLoop keeps the pool's share of shards: it announces the pool, renews
// its leases, gives up shards beyond its share and takes free ones below it.
func (p *Pool) leaseLoop(ctx context.Context) {
	defer p.wg.Done()
	tick := time.NewTicker(p.opts.LeaseTTL / 3)
	defer tick.Stop()
	for {
		p.rebalance(ctx)
		select {
		case <-p.quit:
			p.releaseAll(ctx)
			return
		case <-tick.C:
		}
	}
}

func (p *Pool) rebalance(ctx context.Context) {
	q, me, ttl := p.q, p.opts.Consumer, p.opts.LeaseTTL
	now := q.now()
	pipe := q.rdb.Pipeline()
	pipe.ZAdd(ctx, q.poolsKey(), redis.Z{Score: float64(now.UnixMilli()), Member: me})
	pipe.ZRemRangeByScore(ctx, q.poolsKey(), "-inf", strconv.FormatInt(now.Add(-ttl).UnixMilli(), 10))
	card := pipe.ZCard(ctx, q.poolsKey())
	if _, err := pipe.Exec(ctx); err != nil {
		q.log.WarnContext(ctx, "queue: announcing the pool failed", "err", err)
		return
	}
	pools := max(int(card.Val()), 1)
	share := (q.shards + pools - 1) / pools

	p.mu.Lock()
	defer p.mu.Unlock()
	for s, w := range p.owned {
		ok, err := renewScript.Run(ctx, q.rdb, []string{q.leaseKey(s)}, me, ttl.Milliseconds()).Int()
		if err != nil || ok == 0 {
			q.log.WarnContext(ctx, "queue: shard lease lost", "shard", s, "err", err)
			w.cancel()
			delete(p.owned, s)
		}
	}
	for s, w := range p.owned {
		if len(p.owned) <= share {
			break
		}
		p.release(ctx, s, w)
	}
	if len(p.owned) >= share || p.stopping() {
		return
	}
	start := rand.IntN(q.shards)
	for i := range q.shards {
		s := (start + i) % q.shards
		if _, mine := p.owned[s]; mine || len(p.owned) >= share {
			continue
		}
		ok, err := q.rdb.SetNX(ctx, q.leaseKey(s), me, ttl).Result()
		if err != nil || !ok {
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		w := &shardWorker{shard: s, cancel: cancel, done: make(chan struct{})}
		p.owned[s] = w
		p.wg.Add(1)
		go p.work(wctx, w)
	}
}

// release stops a worker after its batch and gives its lease back. The
// caller holds p.mu.
func (p *Pool) release(ctx context.Context, s int, w *shardWorker) {
	delete(p.owned, s)
	w.cancel()
	go func() {
		<-w.done
		_ = releaseScript.Run(context.WithoutCancel(ctx), p.q.rdb, []string{p.q.leaseKey(s)}, p.opts.Consumer).Err()
	}()
}

func (p *Pool) releaseAll(ctx context.Context) {
	p.mu.Lock()
	workers := make([]*shardWorker, 0, len(p.owned))
	for s, w := range p.owned {
		workers = append(workers, w)
		delete(p.owned, s)
	}
	p.mu.Unlock()
	for _, w := range workers {
		<-w.done
		_ = releaseScript.Run(context.WithoutCancel(ctx), p.q.rdb, []string{p.q.leaseKey(w.shard)}, p.opts.Consumer).Err()
	}
}

// work applies one leased shard's entries until the lease ends or the pool
// stops. It first claims the entries a previous owner left pending: while
// this pool holds the lease nobody else works the shard, so everything
// pending there is orphaned.
func (p *Pool) work(ctx context.Context, w *shardWorker) {
	defer p.wg.Done()
	defer close(w.done)
	q, me, stream := p.q, p.opts.Consumer, p.q.Stream(w.shard)
	if err := p.claimOrphans(ctx, stream); err != nil {
		q.log.WarnContext(ctx, "queue: claiming pending entries failed", "shard", w.shard, "err", err)
	}
	// Our own pending entries first, then new ones; and now and then our
	// pending ones again, in case acknowledging some of them failed.
	backlog, lastBacklog := true, time.Now()
	for ctx.Err() == nil && !p.stopping() {
		if time.Since(lastBacklog) > 30*time.Second {
			backlog, lastBacklog = true, time.Now()
		}
		id, block := ">", p.opts.Block
		if backlog {
			id, block = "0", -1
		}
		res, err := q.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: q.group(), Consumer: me, Streams: []string{stream, id}, Count: int64(p.opts.Batch), Block: block,
		}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				q.log.WarnContext(ctx, "queue: read failed", "shard", w.shard, "err", err)
				sleep(ctx, p.opts.Backoff)
			}
			continue
		}
		if len(res) == 0 || len(res[0].Messages) == 0 {
			backlog = false
			continue
		}
		p.process(ctx, w.shard, res[0].Messages)
	}
}

// claimOrphans moves every pending entry of the shard to this consumer.
func (p *Pool) claimOrphans(ctx context.Context, stream string) error {
	start := "0-0"
	for {
		_, next, err := p.q.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: stream, Group: p.q.group(), Consumer: p.opts.Consumer, MinIdle: 0, Start: start, Count: 1000,
		}).Result()
		if err != nil {
			return err
		}
		if next == "0-0" {
			return nil
		}
		start = next
	}
}

// entry is one stream entry with its decoded job.
type entry struct {
	id       string
	job      memory.Job
	attempts int
}

// process applies a batch of entries in order and acknowledges each after
// its result is recorded. A write under way finishes even when ctx ends
// (the lease was lost or the pool stops); ctx only cuts retry waits short,
// leaving the entry pending for whoever owns the shard next.
func (p *Pool) process(waitCtx context.Context, shard int, msgs []redis.XMessage) {
	q := p.q
	ctx := context.WithoutCancel(waitCtx)
	var es []entry
	for _, m := range msgs {
		if m.Values == nil { // deleted while pending (erased)
			p.ack(ctx, shard, m.ID)
			continue
		}
		job, err := decodeEntry(m)
		if err != nil {
			p.deadLetter(ctx, shard, entry{id: m.ID}, m.Values, err)
			continue
		}
		es = append(es, entry{id: m.ID, job: job})
	}
	es = p.dropErased(ctx, shard, es)
	// Runs of one kind go to their handler together, in order.
	for from := 0; from < len(es); {
		to := from + 1
		for to < len(es) && es[to].job.Kind == es[from].job.Kind {
			to++
		}
		run := es[from:to]
		p.mark(ctx, shard, run, memory.JobRunning)
		results, err := p.apply(ctx, run)
		if err != nil {
			q.log.WarnContext(ctx, "queue: batch failed; retrying its jobs one by one", "shard", shard, "jobs", len(run), "err", err)
			for _, e := range run {
				if !p.applyOne(ctx, waitCtx, shard, e) {
					return
				}
			}
		} else if !p.finish(ctx, waitCtx, shard, run, results) {
			return
		}
		from = to
	}
}

// apply hands jobs of one kind to their handler.
func (p *Pool) apply(ctx context.Context, es []entry) ([]memory.JobResult, error) {
	p.mu.Lock()
	h := p.handlers[es[0].job.Kind]
	p.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("queue: no handler for jobs of kind %q", es[0].job.Kind)
	}
	jobs := make([]memory.Job, len(es))
	for i, e := range es {
		jobs[i] = e.job
	}
	results, err := h(ctx, jobs)
	if err == nil && len(results) != len(jobs) {
		err = fmt.Errorf("queue: handler of %q returned %d results for %d jobs", es[0].job.Kind, len(results), len(jobs))
	}
	return results, err
}

// finish records the results of a batch: jobs that succeeded are done and
// acknowledged; each failed one is retried on its own. It reports false
// when waiting for a retry was cut short.
func (p *Pool) finish(ctx, waitCtx context.Context, shard int, es []entry, results []memory.JobResult) bool {
	var done []entry
	var doneResults []memory.JobResult
	for i, e := range es {
		if results[i].Err == nil {
			done = append(done, e)
			doneResults = append(doneResults, results[i])
		}
	}
	p.markDone(ctx, shard, done, doneResults)
	for i, e := range es {
		if results[i].Err == nil {
			continue
		}
		e.attempts = 1
		if !p.retryable(e, results[i].Err) {
			p.deadLetter(ctx, shard, e, nil, results[i].Err)
			continue
		}
		p.stats.Retries.Add(1)
		if !sleep(waitCtx, p.backoff(e.attempts)) || !p.applyOne(ctx, waitCtx, shard, e) {
			return false
		}
	}
	return true
}

// applyOne applies a single job until it succeeds, fails for good, or
// exhausts its attempts. It reports false when waiting for a retry was cut
// short: the entry stays pending for the shard's next owner.
func (p *Pool) applyOne(ctx, waitCtx context.Context, shard int, e entry) bool {
	for {
		if p.erased(ctx, shard, e) {
			p.ack(ctx, shard, e.id)
			p.stats.Dropped.Add(1)
			return true
		}
		results, err := p.apply(ctx, []entry{e})
		if err == nil && results[0].Err == nil {
			e.attempts++ // the attempt that succeeded
			p.markDone(ctx, shard, []entry{e}, results)
			return true
		}
		if err == nil {
			err = results[0].Err
		}
		e.attempts++
		if !p.retryable(e, err) {
			p.deadLetter(ctx, shard, e, nil, err)
			return true
		}
		p.stats.Retries.Add(1)
		if p.stopping() || !sleep(waitCtx, p.backoff(e.attempts)) {
			return false
		}
	}
}

// retryable says whether a job that failed with err gets another attempt.
// Bad input and refusals (policy, guard, quota) never heal within a
// retry's backoff; an unavailable store always may.
func (p *Pool) retryable(e entry, err error) bool {
	var inv *memory.InvalidError
	var guarded *memory.GuardError
	var quota *memory.QuotaError
	// A refusal with a code of its own (userids.CaseConflictError) is one.
	var refused interface{ RefusalCode() string }
	switch {
	case errors.As(err, &inv), errors.As(err, &guarded), errors.As(err, &quota), errors.As(err, &refused),
		errors.Is(err, memory.ErrForbidden), errors.Is(err, memory.ErrIdempotencyKeyReused), errors.Is(err, memory.ErrSessionTaken):
		return false
	case errors.Is(err, memory.ErrUnavailable) && !lasting(err):
		return true
	}
	return e.attempts < p.opts.MaxAttempts
}

// lasting reports whether err says it may last past any retry's backoff
// though nothing is down (a user being erased, a policy an admin must
// replace): such a job counts its attempts like any failure and goes to the
// dead-letter stream, rather than holding its shard, which jobs of every
// tenant share, for as long as the condition lasts.
func lasting(err error) bool {
	var l interface{ Lasting() bool }
	return errors.As(err, &l) && l.Lasting()
}

func (p *Pool) backoff(attempt int) time.Duration {
	d := p.opts.Backoff << min(attempt-1, 20)
	return min(d, p.opts.MaxBackoff)
}

// finishScript updates a job's status unless the job's user was erased
// meanwhile (its status gone, or left as erased).
// It runs inside pipelines, so it is sent whole (EVAL): EVALSHA could meet a
// server that has not seen it and fail the pipeline.
// KEYS: status key. ARGV: field, value pairs.
var finishScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('HGET', KEYS[1], 'erased') ~= '1' then
  redis.call('HSET', KEYS[1], unpack(ARGV))
end
return 0`)

// runningScript sets a job's status to ARGV[1] while it is still queued or
// running: a job finished meanwhile keeps its outcome.
var runningScript = redis.NewScript(`
local st = redis.call('HGET', KEYS[1], 'status')
if st == 'queued' or st == 'running' then
  redis.call('HSET', KEYS[1], 'status', ARGV[1])
end
return 0`)

// mark sets the status of jobs not yet finished: running as a worker takes
// them, so that an owner polling a long job (a large import) sees it move.
// A lost update only leaves the job looking queued.
func (p *Pool) mark(ctx context.Context, shard int, es []entry, status string) {
	pipe := p.q.rdb.Pipeline()
	for _, e := range es {
		runningScript.Eval(ctx, pipe, []string{p.q.statusKey(shard, e.job.Tenant, e.job.ID)}, status)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		p.q.log.WarnContext(ctx, "queue: marking jobs running failed", "shard", shard, "err", err)
	}
}

// markDone records finished jobs and then acknowledges their entries.
func (p *Pool) markDone(ctx context.Context, shard int, es []entry, results []memory.JobResult) {
	if len(es) == 0 {
		return
	}
	q := p.q
	now := q.now().UTC().Format(time.RFC3339Nano)
	pipe := q.rdb.Pipeline()
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.id
		ms, _ := json.Marshal(results[i].Memories)
		finishScript.Eval(ctx, pipe, []string{q.statusKey(shard, e.job.Tenant, e.job.ID)},
			"status", memory.JobDone, "memories", string(ms), "finished_at", now, "attempts", max(e.attempts, 1))
		p.stats.Memories.Add(int64(len(results[i].Memories)))
	}
	pipe.XAck(ctx, q.Stream(shard), q.group(), ids...)
	pipe.XDel(ctx, q.Stream(shard), ids...)
	if _, err := pipe.Exec(ctx); err != nil {
		// The graph holds the writes; replaying them later is harmless.
		q.log.WarnContext(ctx, "queue: acknowledging applied jobs failed; they will be replayed", "shard", shard, "err", err)
		return
	}
	p.stats.Jobs.Add(int64(len(es)))
}

// deadLetter moves an entry to the shard's dead-letter stream, marks its job
// failed and acknowledges it.
func (p *Pool) deadLetter(ctx context.Context, shard int, e entry, raw map[string]any, cause error) {
	q := p.q
	if e.job.ID != "" && p.erased(ctx, shard, e) {
		// Its user was erased while the job was retried: keep nothing.
		p.ack(ctx, shard, e.id)
		p.stats.Dropped.Add(1)
		return
	}
	if raw == nil {
		body, _ := json.Marshal(e.job)
		raw = map[string]any{"job": string(body)}
	}
	values := map[string]any{"error": cause.Error(), "attempts": e.attempts, "entry": e.id}
	for k, v := range raw {
		values[k] = v
	}
	pipe := q.rdb.TxPipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: q.DeadStream(shard), Values: values})
	if e.job.IdempotencyKey != "" && errors.Is(cause, memory.ErrIdempotencyKeyReused) {
		// Another write holds the key: this job never owned it, and the
		// true retry of that write must not be answered with this failure.
		freeKeyScript.Eval(ctx, pipe, []string{q.idemKey(shard, e.job.Tenant, e.job.UserID, e.job.IdempotencyKey)}, e.job.ID)
	}
	if e.job.ID != "" {
		code, message := p.opts.Describe(cause)
		finishScript.Eval(ctx, pipe, []string{q.statusKey(shard, e.job.Tenant, e.job.ID)},
			"status", memory.JobFailed, "error_code", code, "error", message, "finished_at", q.now().UTC().Format(time.RFC3339Nano), "attempts", e.attempts)
	}
	pipe.XAck(ctx, q.Stream(shard), q.group(), e.id)
	pipe.XDel(ctx, q.Stream(shard), e.id)
	if _, err := pipe.Exec(ctx); err != nil {
		q.log.WarnContext(ctx, "queue: dead-lettering failed", "shard", shard, "entry", e.id, "err", err)
		return
	}
	p.stats.DeadLettered.Add(1)
	q.log.WarnContext(ctx, "queue: job dead-lettered", "shard", shard, "job", e.job.ID, "attempts", e.attempts, "err", cause)
}

func (p *Pool) ack(ctx context.Context, shard int, id string) {
	pipe := p.q.rdb.Pipeline()
	pipe.XAck(ctx, p.q.Stream(shard), p.q.group(), id)
	pipe.XDel(ctx, p.q.Stream(shard), id)
	_, _ = pipe.Exec(ctx)
}

// dropErased acknowledges, without applying, the jobs of users erased after
// the jobs were accepted (fenced above the jobs' Seq).
func (p *Pool) dropErased(ctx context.Context, shard int, es []entry) []entry {
	if len(es) == 0 {
		return es
	}
	q := p.q
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = q.fenceKey(shard, e.job.Tenant, e.job.UserID)
	}
	fences, err := q.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		q.log.WarnContext(ctx, "queue: reading erase fences failed", "shard", shard, "err", err)
		return es
	}
	kept := es[:0]
	for i, e := range es {
		if s, ok := fences[i].(string); ok {
			if fence, err := strconv.ParseInt(s, 10, 64); err == nil && e.job.Seq <= fence {
				p.ack(ctx, shard, e.id)
				p.stats.Dropped.Add(1)
				continue
			}
		}
		kept = append(kept, e)
	}
	return kept
}

// erased reports whether the job's user was erased after the job was
// accepted. A failed read counts as not erased: the job goes on.
func (p *Pool) erased(ctx context.Context, shard int, e entry) bool {
	s, err := p.q.rdb.Get(ctx, p.q.fenceKey(shard, e.job.Tenant, e.job.UserID)).Result()
	if err != nil {
		return false
	}
	fence, err := strconv.ParseInt(s, 10, 64)
	return err == nil && e.job.Seq <= fence
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func isBusyGroup(err error) bool {
	return err != nil && len(err.Error()) >= 9 && err.Error()[:9] == "BUSYGROUP"
}
