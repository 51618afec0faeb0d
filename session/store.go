// Package session keeps working memory in Redis: the turns of open
// conversations, each with a sliding TTL and caps on turns and bytes, and
// the worker that turns expired sessions into long-term memories. It
// implements memory.SessionStore and memory.Eraser (place "sessions").
//
// Expiry does not rely on Redis keyspace notifications, which are lost
// when no subscriber listens. Every session has a due time in one sorted
// set; the Expirer reads the due members with ZRANGEBYSCORE and claims each
// with a script that re-checks its score, so among several replicas exactly
// one ends a session, and a claim whose holder died is offered again when
// its lease lapses. The keys themselves carry a Redis TTL of the session's
// TTL plus a grace period, so data is gone even if no worker ever runs.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/memory"
	"mneme/workingmemory"
	"mneme/writefence"
)

// Defaults for Options.
const (
	DefaultTTL      = 30 * time.Minute
	DefaultMaxTurns = 200
	DefaultMaxBytes = 256 << 10
	DefaultLease    = time.Minute
	DefaultGrace    = time.Hour
)

// Options configures a Store.
type Options struct {
	Redis redis.UniversalClient
	// TTL is how long a session lives after its last turn, unless the
	// session asked for its own.
	TTL time.Duration
	// MaxTurns and MaxBytes cap a session; an append past them is refused
	// with memory.ErrSessionFull, so nothing is dropped unseen.
	MaxTurns int
	MaxBytes int
	// Lease is how long a claim (a close in progress) holds a session
	// before the expiry worker may take it again.
	Lease time.Duration
	// Grace is how long the keys outlive their due time, for the worker to
	// end them.
	Grace time.Duration
}

// Store is the Redis-backed memory.SessionStore.
type Store struct {
	rdb  redis.UniversalClient
	opts Options
}

// New returns a Store; zero options take the defaults.
func New(opts Options) *Store {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.MaxTurns <= 0 {
		opts.MaxTurns = DefaultMaxTurns
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	return &Store{rdb: opts.Redis, opts: opts}
}

// Key layout. Every key of a tenant's sessions carries the tenant as its
// Redis Cluster hash tag, so that one slot holds a session's data, the
// tenant's due set and its users' session sets, and each script touches a
// single slot. tenantsKey lists the tenants whose due sets the expirer
// reads; a tenant stays in it once added (tenants are few).
const tenantsKey = "mneme:sessions:tenants"

func member(tenant, id string) string { return tenant + "/" + id }
func tenantTag(tenant string) string  { return "mneme:{" + tenant + "}" }
func metaKey(tenant, id string) string {
	return tenantTag(tenant) + ":session:" + id
}
func turnsKey(tenant, id string) string { return metaKey(tenant, id) + ":turns" }
func dueKey(tenant string) string       { return tenantTag(tenant) + ":sessions:due" }
func userKey(tenant, user string) string {
	return tenantTag(tenant) + ":sessions:user:" + user
}

// Script errors, mapped to domain errors.
const (
	errWrongUser = "WRONGUSER"
	errTaken     = "TAKEN"
	errClosing   = "CLOSING"
	errFull      = "FULL"
	// errOrder is followed by the session's latest turn time, in Unix
	// milliseconds.
	errOrder = "ORDER"
)

var appendScript = redis.NewScript(`
local exists = redis.call('EXISTS', KEYS[1]) == 1
local guest = false
if exists then
  if redis.call('HGET', KEYS[1], 'user') ~= ARGV[1] then return redis.error_reply('WRONGUSER') end
  local kind, id = redis.call('HGET', KEYS[1], 'owner_kind'), redis.call('HGET', KEYS[1], 'owner_id')
  guest = kind ~= ARGV[3] or id ~= ARGV[4]
  if guest and not (ARGV[3] == 'user' and ARGV[4] == ARGV[1]) then return redis.error_reply('TAKEN') end
  if redis.call('HGET', KEYS[1], 'state') ~= 'open' then return redis.error_reply('CLOSING') end
end
local now = tonumber(ARGV[5])
local ttl = tonumber(ARGV[6])
-- The user speaking in an agent's session keeps its TTL: a guest may not
-- end the owner's session early.
if ttl == 0 or guest then ttl = tonumber(redis.call('HGET', KEYS[1], 'ttl') or ARGV[7]) end
local n = redis.call('LLEN', KEYS[2])
local bytes = tonumber(redis.call('HGET', KEYS[1], 'bytes') or '0')
local add = tonumber(ARGV[13])
if n + #ARGV - 16 > tonumber(ARGV[8]) or bytes + add > tonumber(ARGV[9]) then return redis.error_reply('FULL') end
-- Turns come in the order they were said: the earliest new one may be
-- earlier than the session's latest by the skew (ARGV[16]) at most.
local latest = tonumber(redis.call('HGET', KEYS[1], 'latest') or '')
if latest and tonumber(ARGV[14]) < latest - tonumber(ARGV[16]) then return redis.error_reply('ORDER ' .. latest) end
if not latest or tonumber(ARGV[15]) > latest then latest = tonumber(ARGV[15]) end
if not exists then
  redis.call('HSET', KEYS[1], 'user', ARGV[1], 'agent', ARGV[2], 'owner_kind', ARGV[3], 'owner_id', ARGV[4], 'created', now, 'state', 'open')
end
redis.call('HSET', KEYS[1], 'updated', now, 'ttl', ttl, 'bytes', bytes + add, 'latest', latest)
for i = 17, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local keep = ttl + tonumber(ARGV[10])
redis.call('ZADD', KEYS[3], now + ttl, ARGV[11])
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[2], keep)
redis.call('SADD', KEYS[4], ARGV[12])
if redis.call('PTTL', KEYS[4]) < keep then redis.call('PEXPIRE', KEYS[4], keep) end
return 1
`)

// Append implements memory.SessionStore. Turns earlier than the session's
// latest by more than workingmemory.TurnSkew are refused with a
// *workingmemory.TurnOrderError.
func (s *Store) Append(ctx context.Context, sess memory.Session, turns []memory.Turn, ttl time.Duration, now time.Time) (memory.Session, error) {
	args := []any{
		sess.UserID, sess.AgentID, sess.Owner.Kind, sess.Owner.ID, now.UnixMilli(), ttl.Milliseconds(),
		s.opts.TTL.Milliseconds(), s.opts.MaxTurns, s.opts.MaxBytes, s.opts.Grace.Milliseconds(),
		member(sess.Tenant, sess.ID), sess.ID,
	}
	size := 0
	encoded := make([]any, len(turns))
	for i, t := range turns {
		raw, err := json.Marshal(t)
		if err != nil {
			return memory.Session{}, err
		}
		size += len(t.Content)
		encoded[i] = raw
	}
	first, last := span(turns)
	args = append(append(args, size, first, last, workingmemory.TurnSkew.Milliseconds()), encoded...)
	keys := []string{metaKey(sess.Tenant, sess.ID), turnsKey(sess.Tenant, sess.ID), dueKey(sess.Tenant), userKey(sess.Tenant, sess.UserID)}
	if err := appendScript.Run(ctx, s.rdb, keys, args...).Err(); err != nil {
		if latest, ok := strings.CutPrefix(strings.TrimPrefix(err.Error(), "ERR "), errOrder+" "); ok {
			ms, perr := strconv.ParseInt(latest, 10, 64)
			if oerr := workingmemory.CheckTurnOrder(turns, time.UnixMilli(ms)); perr == nil && oerr != nil {
				return memory.Session{}, oerr
			}
		}
		return memory.Session{}, scriptError(err)
	}
	// Listed after its due set holds the session: see prune.
	if err := s.rdb.SAdd(ctx, tenantsKey, sess.Tenant).Err(); err != nil {
		return memory.Session{}, unavailable(err)
	}
	return s.Get(ctx, sess.Tenant, sess.ID)
}

// span is the Unix milliseconds of the earliest and the latest of turns.
func span(turns []memory.Turn) (first, last int64) {
	for i, t := range turns {
		ms := t.At.UnixMilli()
		if i == 0 || ms < first {
			first = ms
		}
		if i == 0 || ms > last {
			last = ms
		}
	}
	return first, last
}

func scriptError(err error) error {
	// Some Redis versions prefix a script's error reply with "ERR ".
	switch strings.TrimPrefix(err.Error(), "ERR ") {
	// A session is about one user and written by its owner: another user's
	// turns would join its memories under its id.
	case errWrongUser, errTaken:
		return memory.ErrSessionTaken
	case errClosing:
		return memory.ErrSessionClosing
	case errFull:
		return memory.ErrSessionFull
	}
	return unavailable(err)
}

// unavailable marks a Redis failure as the store being down.
func unavailable(err error) error {
	return fmt.Errorf("%w: redis: %v", memory.ErrUnavailable, err)
}

// Get implements memory.SessionStore.
func (s *Store) Get(ctx context.Context, tenant, id string) (memory.Session, error) {
	var meta *redis.MapStringStringCmd
	var turns *redis.StringSliceCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		meta = p.HGetAll(ctx, metaKey(tenant, id))
		turns = p.LRange(ctx, turnsKey(tenant, id), 0, -1)
		return nil
	})
	if err != nil {
		return memory.Session{}, unavailable(err)
	}
	return decode(tenant, id, meta.Val(), turns.Val())
}

// Owner returns whom an open (or closing) session is about and who writes
// its memories, found false when no session of that id is open; it reads
// no turns.
func (s *Store) Owner(ctx context.Context, tenant, id string) (userID, agentID string, found bool, err error) {
	v, err := s.rdb.HMGet(ctx, metaKey(tenant, id), "user", "agent").Result()
	if err != nil {
		return "", "", false, unavailable(err)
	}
	userID, _ = v[0].(string)
	agentID, _ = v[1].(string)
	return userID, agentID, userID != "", nil
}

func decode(tenant, id string, h map[string]string, raw []string) (memory.Session, error) {
	if len(h) == 0 || h["user"] == "" {
		return memory.Session{}, memory.ErrNotFound
	}
	ms := func(field string) int64 { n, _ := strconv.ParseInt(h[field], 10, 64); return n }
	sess := memory.Session{
		ID: id, Tenant: tenant, UserID: h["user"], AgentID: h["agent"], Turns: make([]memory.Turn, 0, len(raw)),
		Bytes:     int(ms("bytes")),
		CreatedAt: time.UnixMilli(ms("created")).UTC(), UpdatedAt: time.UnixMilli(ms("updated")).UTC(),
		ExpiresAt: time.UnixMilli(ms("updated") + ms("ttl")).UTC(),
		Owner:     memory.Principal{Tenant: tenant, Kind: h["owner_kind"], ID: h["owner_id"]},
	}
	for _, r := range raw {
		var t memory.Turn
		if err := json.Unmarshal([]byte(r), &t); err != nil {
			return memory.Session{}, fmt.Errorf("session %s: turn: %w", id, err)
		}
		sess.Turns = append(sess.Turns, t)
	}
	return sess, nil
}

// claimScript marks a session closing when it is open (ARGV[3] = "open")
// or due (its score is not after ARGV[1]); it returns 1 when claimed, 0
// when not, and -1 when the session's data is gone. A close (mode open)
// takes over a closing session whose claim lapsed, as the expiry worker
// would: the close that claimed it failed, and this one ends it now.
var claimScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[4])
  return -1
end
local state = redis.call('HGET', KEYS[1], 'state')
local due = redis.call('ZSCORE', KEYS[2], ARGV[4])
local lapsed = due and tonumber(due) <= tonumber(ARGV[1])
if ARGV[3] == 'open' then
  if state ~= 'open' and not lapsed then return 0 end
elseif not lapsed then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'closing')
redis.call('ZADD', KEYS[2], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
local keep = tonumber(ARGV[2]) + tonumber(ARGV[5])
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[3], keep)
return 1
`)

func (s *Store) claim(ctx context.Context, tenant, id, mode string, now time.Time) (int64, error) {
	keys := []string{metaKey(tenant, id), dueKey(tenant), turnsKey(tenant, id)}
	n, err := claimScript.Run(ctx, s.rdb, keys, now.UnixMilli(), s.opts.Lease.Milliseconds(), mode, member(tenant, id), s.opts.Grace.Milliseconds()).Int64()
	if err != nil {
		return 0, unavailable(err)
	}
	return n, nil
}

// Claim implements memory.SessionStore. A session another close or the
// expiry worker is ending now is memory.ErrSessionClosing: it is there, and
// gone once they are done.
func (s *Store) Claim(ctx context.Context, tenant, id string, now time.Time) (memory.Session, error) {
	n, err := s.claim(ctx, tenant, id, "open", now)
	if err != nil {
		return memory.Session{}, err
	}
	switch n {
	case 0:
		return memory.Session{}, memory.ErrSessionClosing
	case -1:
		return memory.Session{}, memory.ErrNotFound
	}
	return s.Get(ctx, tenant, id)
}

// releaseScript opens again a session claimed at ARGV[1] (its due score is
// still that claim's, ARGV[1] + ARGV[2]), due again at its last turn plus
// its TTL; it returns 1 when it did, 0 when the claim is no longer there.
var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'state') ~= 'closing' then return 0 end
local due = redis.call('ZSCORE', KEYS[2], ARGV[3])
if not due or tonumber(due) ~= tonumber(ARGV[1]) + tonumber(ARGV[2]) then return 0 end
local open = tonumber(redis.call('HGET', KEYS[1], 'updated') or ARGV[1]) + tonumber(redis.call('HGET', KEYS[1], 'ttl') or '0')
redis.call('HSET', KEYS[1], 'state', 'open')
redis.call('ZADD', KEYS[2], open, ARGV[3])
local keep = math.max(open - tonumber(ARGV[1]), 0) + tonumber(ARGV[4])
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[3], keep)
return 1
`)

// Release opens again a session that Claim claimed at claimedAt and that
// could not be ended: a close that failed leaves it open, so that the close
// can be retried, and the expiry worker ends it at its usual time. A claim
// taken over since (its lease lapsed) is left to its new holder.
func (s *Store) Release(ctx context.Context, tenant, id string, claimedAt time.Time) error {
	keys := []string{metaKey(tenant, id), dueKey(tenant), turnsKey(tenant, id)}
	err := releaseScript.Run(ctx, s.rdb, keys, claimedAt.UnixMilli(), s.opts.Lease.Milliseconds(), member(tenant, id), s.opts.Grace.Milliseconds()).Err()
	return unavailableOrNil(err)
}

// Finish implements memory.SessionStore.
func (s *Store) Finish(ctx context.Context, tenant, id string) error {
	user, err := s.rdb.HGet(ctx, metaKey(tenant, id), "user").Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return unavailable(err)
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, metaKey(tenant, id), turnsKey(tenant, id))
		p.ZRem(ctx, dueKey(tenant), member(tenant, id))
		if user != "" {
			p.SRem(ctx, userKey(tenant, user), id)
		}
		return nil
	})
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// UserSessions returns the user's open (or closing) sessions with their
// turns, by id; sessions whose data has lapsed are skipped.
func (s *Store) UserSessions(ctx context.Context, tenant, userID string) ([]memory.Session, error) {
	ids, err := s.rdb.SMembers(ctx, userKey(tenant, userID)).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	slices.Sort(ids)
	out := []memory.Session{}
	for _, id := range ids {
		sess, err := s.Get(ctx, tenant, id)
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if sess.UserID == userID {
			out = append(out, sess)
		}
	}
	return out, nil
}

// Place implements memory.Eraser.
func (s *Store) Place() string { return "sessions" }

var eraseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'user') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[2])
return 1
`)

// EraseUser implements memory.Eraser: every session of the user, open or
// closing, is deleted with its turns; it returns how many.
func (s *Store) EraseUser(ctx context.Context, tenant, userID string) (int64, error) {
	ids, err := s.rdb.SMembers(ctx, userKey(tenant, userID)).Result()
	if err != nil {
		return 0, unavailable(err)
	}
	var n int64
	for _, id := range ids {
		keys := []string{metaKey(tenant, id), turnsKey(tenant, id), dueKey(tenant)}
		got, err := eraseScript.Run(ctx, s.rdb, keys, userID, member(tenant, id)).Int64()
		if err != nil {
			return n, unavailable(err)
		}
		n += got
	}
	if err := s.rdb.Del(ctx, userKey(tenant, userID)).Err(); err != nil {
		return n, unavailable(err)
	}
	return n, nil
}

// Expirer ends sessions whose time is up: it claims each due session and
// hands it to End, which turns it into long-term memories. Run it in one
// goroutine per replica; the claims keep replicas from ending a session
// twice.
type Expirer struct {
	store    *Store
	end      func(ctx context.Context, s memory.Session) error
	interval time.Duration
	batch    int64
	log      *slog.Logger
	now      func() time.Time
}

// ExpirerOptions configures an Expirer.
type ExpirerOptions struct {
	// End turns a session into memories; a nil error lets the session go.
	End func(ctx context.Context, s memory.Session) error
	// Interval between scans of the due set (default 5s).
	Interval time.Duration
	// Batch is how many due sessions one scan takes at most (default 100).
	Batch  int
	Logger *slog.Logger
	Now    func() time.Time
}

// NewExpirer returns an Expirer over store.
func NewExpirer(store *Store, opts ExpirerOptions) *Expirer {
	e := &Expirer{store: store, end: opts.End, interval: opts.Interval, batch: int64(opts.Batch), log: opts.Logger, now: opts.Now}
	if e.interval <= 0 {
		e.interval = 5 * time.Second
	}
	if e.batch <= 0 {
		e.batch = 100
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e
}

// Run scans until ctx ends; it returns nil then.
func (e *Expirer) Run(ctx context.Context) error {
	t := time.NewTicker(e.interval)
	defer t.Stop()
	for {
		if _, err := e.RunOnce(ctx); err != nil && ctx.Err() == nil {
			e.log.WarnContext(ctx, "session expiry scan failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RunOnce ends the sessions due now and returns how many it ended.
func (e *Expirer) RunOnce(ctx context.Context) (int, error) {
	now := e.now().UTC()
	tenants, err := e.store.rdb.SMembers(ctx, tenantsKey).Result()
	if err != nil {
		return 0, unavailable(err)
	}
	slices.Sort(tenants)
	// Up to batch due sessions in all, from each tenant's due set in turn.
	var due []string
	for _, tenant := range tenants {
		if len(due) >= int(e.batch) {
			break
		}
		ms, err := e.store.rdb.ZRangeByScore(ctx, dueKey(tenant), &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: e.batch - int64(len(due)),
		}).Result()
		if err != nil {
			return 0, unavailable(err)
		}
		if len(ms) == 0 {
			if err := e.store.prune(ctx, tenant); err != nil {
				return 0, err
			}
		}
		for _, m := range ms {
			if t, id, ok := strings.Cut(m, "/"); !ok || t != tenant || id == "" {
				e.store.rdb.ZRem(ctx, dueKey(tenant), m)
				continue
			}
			due = append(due, m)
		}
	}
	ended := 0
	for _, m := range due {
		tenant, id, _ := strings.Cut(m, "/")
		n, err := e.store.claim(ctx, tenant, id, "due", now)
		if err != nil {
			return ended, err
		}
		if n != 1 {
			continue
		}
		// Its memories are written from the turns read now: should the
		// user be erased before they are, they are refused.
		wctx := writefence.BeginWrite(ctx, e.now())
		sess, err := e.store.Get(ctx, tenant, id)
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			return ended, err
		}
		if err := e.end(wctx, sess); err != nil && !permanent(err) {
			// The claim lapses after the lease and the session is tried again.
			e.log.WarnContext(ctx, "ending an expired session failed; will retry", "tenant", tenant, "session", id, "err", err)
			continue
		} else if err != nil {
			e.log.ErrorContext(ctx, "expired session cannot become memories; dropped", "tenant", tenant, "session", id, "err", err)
		}
		if err := e.store.Finish(ctx, tenant, id); err != nil {
			return ended, err
		}
		ended++
	}
	return ended, nil
}

// prune unlists a tenant whose due set is empty. Append adds to the due
// set before it lists the tenant, and prune looks again after unlisting,
// so a session added meanwhile always leaves its tenant listed.
func (s *Store) prune(ctx context.Context, tenant string) error {
	n, err := s.rdb.ZCard(ctx, dueKey(tenant)).Result()
	if err != nil || n > 0 {
		return unavailableOrNil(err)
	}
	if err := s.rdb.SRem(ctx, tenantsKey, tenant).Err(); err != nil {
		return unavailable(err)
	}
	if n, err = s.rdb.ZCard(ctx, dueKey(tenant)).Result(); err != nil || n == 0 {
		if err != nil {
			// Listed again when unsure: a listed tenant costs one read.
			_ = s.rdb.SAdd(ctx, tenantsKey, tenant).Err()
		}
		return unavailableOrNil(err)
	}
	return unavailableOrNil(s.rdb.SAdd(ctx, tenantsKey, tenant).Err())
}

func unavailableOrNil(err error) error {
	if err == nil {
		return nil
	}
	return unavailable(err)
}

// permanent reports an error that retrying cannot fix.
func permanent(err error) bool {
	var inv *memory.InvalidError
	return errors.Is(err, memory.ErrForbidden) || errors.Is(err, memory.ErrSessionTaken) || errors.As(err, &inv)
}
