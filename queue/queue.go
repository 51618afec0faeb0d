// Package queue is Mneme's write queue on Redis Streams: asynchronous writes
// and ingestion jobs wait here until a worker applies them to the graph.
//
// Jobs are sharded by a hash of (tenant, user) into a fixed number of
// streams. A worker pool leases whole shards, so each shard has one consumer
// at a time and one user's jobs apply in the order they were accepted.
// Entries are acknowledged (and deleted) only after the handler's graph
// commit; a crash before that leaves them pending, and the next owner of the
// shard claims them with XAUTOCLAIM. Handlers make a replay harmless: every
// queued memory carries an idempotency key the graph deduplicates on.
//
// Keys of one shard share a hash tag, so the layout works on Redis Cluster.
package queue

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/memory"
)

// Options configures a Queue.
type Options struct {
	// Prefix starts every key; replicas that share work share it. Default
	// "mneme".
	Prefix string
	// Shards is the number of streams. It must stay the same while entries
	// are queued: a user's shard is hash(tenant, user) mod Shards. Default 8.
	Shards int
	// StatusTTL is how long job statuses and idempotency keys live. Default
	// 24h.
	StatusTTL time.Duration
	Logger    *slog.Logger
	Now       func() time.Time
}

// Queue is the Redis side of the write queue: it enqueues jobs, answers
// status queries and erases a user's queued jobs. Pool consumes it.
type Queue struct {
	rdb    redis.UniversalClient
	prefix string
	shards int
	ttl    time.Duration
	log    *slog.Logger
	now    func() time.Time
}

var (
	_ memory.JobQueue = (*Queue)(nil)
	_ memory.Eraser   = (*Queue)(nil)
	_ memory.Fencer   = (*Queue)(nil)
)

// New returns a Queue on rdb.
func New(rdb redis.UniversalClient, opts Options) *Queue {
	if opts.Prefix == "" {
		opts.Prefix = "mneme"
	}
	if opts.Shards <= 0 {
		opts.Shards = 8
	}
	if opts.StatusTTL <= 0 {
		opts.StatusTTL = 24 * time.Hour
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Queue{rdb: rdb, prefix: opts.Prefix, shards: opts.Shards, ttl: opts.StatusTTL, log: opts.Logger, now: opts.Now}
}

// Shards returns the number of shards.
func (q *Queue) Shards() int { return q.shards }

// shardOf returns the shard of a user.
func (q *Queue) shardOf(tenant, user string) int {
	h := fnv.New32a()
	h.Write([]byte(tenant))
	h.Write([]byte{0})
	h.Write([]byte(user))
	return int(h.Sum32() % uint32(q.shards))
}

// Key names. The braces are a Redis Cluster hash tag: a shard's keys live
// on one node, so the enqueue script may touch them together.
func (q *Queue) tag(shard int) string { return fmt.Sprintf("%s:q{%d}", q.prefix, shard) }

// Stream returns the name of a shard's stream.
func (q *Queue) Stream(shard int) string { return q.tag(shard) + ":stream" }

// DeadStream returns the name of a shard's dead-letter stream.
func (q *Queue) DeadStream(shard int) string { return q.tag(shard) + ":dead" }
func (q *Queue) leaseKey(shard int) string   { return q.tag(shard) + ":owner" }
func (q *Queue) statusKey(shard int, tenant, id string) string {
	return q.tag(shard) + ":job:" + tenant + ":" + id
}

// userKey names a per-user key without spelling the user id out, so that
// Redis holds no readable trace of a user beyond the queued jobs themselves.
func (q *Queue) userKey(shard int, what, tenant, user string, more ...string) string {
	return q.tag(shard) + ":" + what + ":" + digest(append([]string{tenant, user}, more...)...)[:32]
}

// digest is the hex SHA-256 of parts, each ended by a zero byte.
func digest(parts ...string) string {
	h := sha256.New()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
func (q *Queue) idemKey(shard int, tenant, user, key string) string {
	return q.userKey(shard, "idem", tenant, user, key)
}
func (q *Queue) userJobsKey(shard int, tenant, user string) string {
	return q.userKey(shard, "jobs", tenant, user)
}
func (q *Queue) fenceKey(shard int, tenant, user string) string {
	return q.userKey(shard, "fence", tenant, user)
}
func (q *Queue) poolsKey() string { return q.prefix + ":q:pools" }
func (q *Queue) group() string    { return "workers" }

// seqKey holds the last number the shard's sequence gave out (see nextSeq).
func (q *Queue) seqKey(shard int) string { return q.tag(shard) + ":seq" }

// newJobID returns "job_<shard>_<random>": the shard is part of the id so
// that a status lookup finds the shard's keys.
func newJobID(shard int) string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("queue: crypto/rand failed: " + err.Error())
	}
	return "job_" + strconv.Itoa(shard) + "_" + hex.EncodeToString(b[:])
}

// shardOfID reads the shard out of a job id, or -1.
func (q *Queue) shardOfID(id string) int {
	rest, ok := strings.CutPrefix(id, "job_")
	if !ok {
		return -1
	}
	s, rnd, ok := strings.Cut(rest, "_")
	if !ok || len(rnd) != 24 {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n >= q.shards {
		return -1
	}
	return n
}

// nextSeq is the Lua of the shard's sequence, which orders jobs against
// erasures (memory.Fencer): the Redis clock in microseconds, or one more
// than the last number when the clock has not passed it. Seeding it from the
// clock keeps it rising even when Redis lost the key. Numbers stay strings:
// Lua would print a 16-digit number in exponent form.
const nextSeq = `
local function nextseq(key)
  local t = redis.call('TIME')
  local now = t[1] .. string.rep('0', 6 - #t[2]) .. t[2]
  local last = redis.call('GET', key)
  if last and tonumber(last) >= tonumber(now) then
    redis.call('INCR', key)
  else
    redis.call('SET', key, now)
  end
  return redis.call('GET', key)
end
`

// enqueueScript stores a job atomically: its idempotency key with the
// job's fingerprint (unless the key is there: then it returns the earlier
// job's id, or that id after "!" when the fingerprints differ, and stores
// nothing), its status hash, its place in the user's job set and its stream
// entry, with the next number of the shard's sequence. A key stored without
// a fingerprint matches any.
//
// KEYS: idem key, status key, user jobs key, stream, sequence.
// ARGV: job id, ttl ms, job JSON, status fields JSON-free: kind, accepted_at,
// owner JSON; then "1" when the job has an idempotency key, the job's
// fingerprint, and the number of memories it was sent with (0 when it
// depends on what the job extracts). Without a key, KEYS[1] is a name in the shard's slot that is
// never written: a script's keys must all be in one slot on a Redis
// Cluster, "" included.
var enqueueScript = redis.NewScript(nextSeq + `
local idem = ''
if ARGV[7] == '1' then
  idem = KEYS[1]
  local prev = redis.call('GET', idem)
  if prev then
    local id, fp = string.match(prev, '^([^|]*)|(.*)$')
    if not id then return prev end
    if fp ~= ARGV[8] then return '!' .. id end
    return id
  end
  redis.call('SET', idem, ARGV[1] .. '|' .. ARGV[8], 'PX', ARGV[2])
end
redis.call('HSET', KEYS[2], 'status', 'queued', 'kind', ARGV[4], 'accepted_at', ARGV[5], 'owner', ARGV[6], 'idem', idem, 'size', ARGV[9])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
redis.call('XADD', KEYS[4], '*', 'job', ARGV[3], 'seq', nextseq(KEYS[5]))
return ARGV[1]
`)

// freeKeyScript deletes an idempotency key that still names job ARGV[1].
//
// KEYS: idem key. ARGV: job id.
var freeKeyScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. '|' then
  redis.call('DEL', KEYS[1])
end
return 0
`)

// fenceScript takes the next number of the shard's sequence as a user's
// fence, unless the user's fence is higher already, and returns the fence.
//
// KEYS: fence key, sequence. ARGV: ttl ms.
var fenceScript = redis.NewScript(nextSeq + `
local seq = nextseq(KEYS[2])
local cur = redis.call('GET', KEYS[1])
if cur and tonumber(cur) > tonumber(seq) then seq = cur end
redis.call('SET', KEYS[1], seq, 'PX', ARGV[1])
return seq
`)

// Enqueue stores job on its user's shard and returns its status. The job's
// ID is set here. A job whose IdempotencyKey was enqueued before for the
// same tenant and user (within StatusTTL) is not stored again: the earlier
// job's status is returned.
func (q *Queue) Enqueue(ctx context.Context, job memory.Job) (memory.JobStatus, error) {
	if job.Tenant == "" || job.UserID == "" || job.Kind == "" {
		return memory.JobStatus{}, errors.New("queue: a job needs a tenant, a user and a kind")
	}
	shard := q.shardOf(job.Tenant, job.UserID)
	job.ID = newJobID(shard)
	if job.AcceptedAt.IsZero() {
		job.AcceptedAt = q.now().UTC()
	}
	body, err := json.Marshal(job)
	if err != nil {
		return memory.JobStatus{}, fmt.Errorf("queue: encode job: %w", err)
	}
	owner, _ := json.Marshal(job.Principal)
	idem, idempotent, fingerprint := q.tag(shard)+":idem:none", "0", ""
	if job.IdempotencyKey != "" {
		idem, idempotent = q.idemKey(shard, job.Tenant, job.UserID, job.IdempotencyKey), "1"
		sent := job.Sent
		if sent == nil { // a caller with no defaults to keep out
			sent = job.Payload
		}
		fingerprint = digest(job.Kind, job.Principal.Tenant, job.Principal.Kind, job.Principal.ID, string(sent))
	}
	keys := []string{idem, q.statusKey(shard, job.Tenant, job.ID), q.userJobsKey(shard, job.Tenant, job.UserID), q.Stream(shard), q.seqKey(shard)}
	id, err := enqueueScript.Run(ctx, q.rdb, keys,
		job.ID, q.ttl.Milliseconds(), body, job.Kind, job.AcceptedAt.Format(time.RFC3339Nano), owner, idempotent, fingerprint, jobSize(job)).Text()
	if err != nil {
		return memory.JobStatus{}, unavailable("enqueue", err)
	}
	if strings.HasPrefix(id, "!") {
		return memory.JobStatus{}, memory.ErrIdempotencyKeyReused
	}
	return q.Status(ctx, job.Tenant, id)
}

// jobSize is the number of memories a job was sent with, or 0 when that
// is up to what the job extracts (an ingestion).
func jobSize(job memory.Job) int {
	var items []json.RawMessage
	if job.Kind != memory.JobMemories || json.Unmarshal(job.Payload, &items) != nil {
		return 0
	}
	return len(items)
}

// Status returns a job of the tenant, or memory.ErrNotFound.
func (q *Queue) Status(ctx context.Context, tenant, id string) (memory.JobStatus, error) {
	shard := q.shardOfID(id)
	if shard < 0 {
		return memory.JobStatus{}, memory.ErrNotFound
	}
	h, err := q.rdb.HGetAll(ctx, q.statusKey(shard, tenant, id)).Result()
	if err != nil {
		return memory.JobStatus{}, unavailable("job status", err)
	}
	if len(h) == 0 {
		return memory.JobStatus{}, memory.ErrNotFound
	}
	st := memory.JobStatus{ID: id, Kind: h["kind"], Status: h["status"], ErrorCode: h["error_code"], Error: h["error"]}
	st.AcceptedAt, _ = time.Parse(time.RFC3339Nano, h["accepted_at"])
	if t, err := time.Parse(time.RFC3339Nano, h["finished_at"]); err == nil {
		st.FinishedAt = &t
	}
	st.Attempts, _ = strconv.Atoi(h["attempts"])
	_ = json.Unmarshal([]byte(h["owner"]), &st.Owner)
	if m := h["memories"]; m != "" {
		if err := json.Unmarshal([]byte(m), &st.Memories); err != nil {
			return memory.JobStatus{}, fmt.Errorf("queue: job %s: memories: %w", id, err)
		}
	}
	return st, nil
}

// Place names the queue in erase receipts.
func (q *Queue) Place() string { return "queue" }

// FenceUser implements memory.Fencer: workers drop the user's jobs
// numbered at or below the fence it returns, instead of writing them. The
// fence outlives the jobs (StatusTTL); the graph keeps it for good.
func (q *Queue) FenceUser(ctx context.Context, tenant, userID string) (int64, error) {
	shard := q.shardOf(tenant, userID)
	s, err := fenceScript.Run(ctx, q.rdb, []string{q.fenceKey(shard, tenant, userID), q.seqKey(shard)}, q.ttl.Milliseconds()).Text()
	if err != nil {
		return 0, unavailable("erase fence", err)
	}
	fence, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("queue: erase fence %q: %w", s, err)
	}
	return fence, nil
}

// EraseUser removes a user's queued jobs — waiting and dead-lettered — with
// their idempotency keys, and returns how many jobs it removed from the
// streams. A job a worker already holds is not reached here: fence the user
// first (FenceUser) so that it is dropped or refused. Each job's status
// stays, content-free, as done with every memory erased (eraseStatus):
// its sender, told the job was accepted, learns what became of it rather
// than meet a job that never was, and does not send it again.
func (q *Queue) EraseUser(ctx context.Context, tenant, userID string) (int64, error) {
	shard := q.shardOf(tenant, userID)
	var removed int64
	for _, stream := range []string{q.Stream(shard), q.DeadStream(shard)} {
		n, err := q.eraseFrom(ctx, stream, tenant, userID)
		removed += n
		if err != nil {
			return removed, err
		}
	}
	jobsKey := q.userJobsKey(shard, tenant, userID)
	ids, err := q.rdb.SMembers(ctx, jobsKey).Result()
	if err != nil {
		return removed, unavailable("erase job statuses", err)
	}
	for _, id := range ids {
		if err := q.eraseStatus(ctx, q.statusKey(shard, tenant, id), userID); err != nil {
			return removed, err
		}
	}
	if err := q.rdb.Del(ctx, jobsKey).Err(); err != nil {
		return removed, unavailable("erase job set", err)
	}
	return removed, nil
}

// erasedStatusScript turns a job's status into what stays of it once its
// user is erased, and deletes its idempotency key (so that a write sent
// afresh after the erase is a new one): done, every memory erased, no
// error and no key, marked so that a worker finishing the job later
// leaves it so (finishScript). A status gone (expired) stays gone.
//
// KEYS: status key, idempotency key (or a name never written). ARGV:
// memories JSON, finished_at, owner JSON.
var erasedStatusScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('DEL', KEYS[2])
redis.call('HDEL', KEYS[1], 'idem', 'error', 'error_code', 'size')
redis.call('HSET', KEYS[1], 'status', 'done', 'erased', '1', 'memories', ARGV[1], 'finished_at', ARGV[2], 'owner', ARGV[3])
return 1`)

// eraseStatus keeps, of the status of a job about the erased user userID,
// when it was accepted and finished, its kind, attempts and sender, and of
// each memory its id (an id is content-free, as a tombstone keeps it) with
// the outcome erased. A job not yet done has one memory per memory it was
// sent with, one for an ingestion, which extracted none yet. The sender is
// kept as the principal that may read the status, but for the erased user
// sending about themself: their id goes, and only admins see the job.
func (q *Queue) eraseStatus(ctx context.Context, key, userID string) error {
	h, err := q.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return unavailable("erase job status", err)
	}
	if len(h) == 0 || h["erased"] == "1" {
		return nil
	}
	var was []memory.JobMemory
	_ = json.Unmarshal([]byte(h["memories"]), &was)
	if len(was) == 0 {
		n, _ := strconv.Atoi(h["size"])
		was = make([]memory.JobMemory, max(n, 1))
	}
	ms := make([]memory.JobMemory, len(was))
	for i, m := range was {
		ms[i] = memory.JobMemory{ID: m.ID, Outcome: memory.OutcomeErased}
	}
	body, err := json.Marshal(ms)
	if err != nil {
		return fmt.Errorf("queue: erase job status: %w", err)
	}
	finished := h["finished_at"]
	if _, err := time.Parse(time.RFC3339Nano, finished); err != nil {
		finished = q.now().UTC().Format(time.RFC3339Nano)
	}
	var owner memory.Principal
	_ = json.Unmarshal([]byte(h["owner"]), &owner)
	if owner.Kind == memory.KindUser && owner.ID == userID {
		owner = memory.Principal{Tenant: owner.Tenant, Kind: memory.KindUser}
	}
	ownerJSON, _ := json.Marshal(owner)
	idem := cmp.Or(h["idem"], key+":idem:none")
	if err := erasedStatusScript.Run(ctx, q.rdb, []string{key, idem}, body, finished, ownerJSON).Err(); err != nil {
		return unavailable("erase job status", err)
	}
	return nil
}

// eraseFrom deletes the entries of one user from a stream, acknowledging
// those a worker holds.
func (q *Queue) eraseFrom(ctx context.Context, stream, tenant, userID string) (int64, error) {
	var removed int64
	start := "-"
	for {
		entries, err := q.rdb.XRangeN(ctx, stream, start, "+", 500).Result()
		if err != nil {
			return removed, unavailable("erase scan", err)
		}
		var ids []string
		for _, e := range entries {
			job, err := decodeEntry(e)
			if err == nil && job.Tenant == tenant && job.UserID == userID {
				ids = append(ids, e.ID)
			}
		}
		if len(ids) > 0 {
			pipe := q.rdb.TxPipeline()
			pipe.XAck(ctx, stream, q.group(), ids...)
			del := pipe.XDel(ctx, stream, ids...)
			if _, err := pipe.Exec(ctx); err != nil && !isNoGroup(err) {
				return removed, unavailable("erase", err)
			}
			removed += del.Val()
		}
		if len(entries) < 500 {
			return removed, nil
		}
		start = "(" + entries[len(entries)-1].ID
	}
}

// decodeEntry reads the job of a stream entry.
func decodeEntry(e redis.XMessage) (memory.Job, error) {
	raw, _ := e.Values["job"].(string)
	var job memory.Job
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		return memory.Job{}, fmt.Errorf("queue: entry %s: %w", e.ID, err)
	}
	// An entry from before the sequence has none: 0 is below every fence.
	seq, _ := e.Values["seq"].(string)
	job.Seq, _ = strconv.ParseInt(seq, 10, 64)
	return job, nil
}

func isNoGroup(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOGROUP") }

// unavailable wraps a Redis failure as memory.ErrUnavailable.
func unavailable(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: redis %s: %w", memory.ErrUnavailable, what, err)
}
