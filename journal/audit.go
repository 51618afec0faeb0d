package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"mneme/memory"
)

// Defaults of the audit trail.
const (
	// DefaultAuditCap is how many events the trail keeps per tenant.
	DefaultAuditCap = 100000
	// DefaultAuditSelfCap is how many of end users' own acts (a user's
	// delete of their memory, as user:self) it keeps per tenant, apart.
	DefaultAuditSelfCap = 10000
	// DefaultAuditRetention is how long an event is kept.
	DefaultAuditRetention = 365 * 24 * time.Hour
)

// AuditOptions configure an Audit trail.
type AuditOptions struct {
	// Cap is how many events to keep per tenant; DefaultAuditCap when 0.
	Cap int64
	// SelfCap is how many of end users' own acts to keep per tenant;
	// DefaultAuditSelfCap when 0.
	SelfCap int64
	// Retention is how long events are kept; DefaultAuditRetention when 0.
	Retention time.Duration
	// Erased tells which users were erased, whom the trail names by their
	// tombstone's hash from then on; none when nil.
	Erased ErasedUsers
	Logger *slog.Logger
	Now    func() time.Time
}

// ErasedUsers tells whether a user of a tenant was erased.
// graph/exportstore.Store implements it.
type ErasedUsers interface {
	UserErased(ctx context.Context, tenant, userID string) (bool, error)
}

// Audit is the admin audit trail: one Redis stream per tenant, apart from
// the decision log and with its own cap and retention. Administrative acts
// are rare, so each event is written as it happens; a write that fails is
// logged and does not fail the act. End users' own acts go to a second
// stream with a cap of its own and are read back merged with the first: a
// user who deletes in a loop must not push the admins' acts out of the
// trail.
type Audit struct {
	rdb     redis.UniversalClient
	log     *slog.Logger
	cap     int64
	selfCap int64
	keep    time.Duration
	erased  ErasedUsers
	now     func() time.Time
}

var _ memory.Auditor = (*Audit)(nil)

// NewAudit returns the audit trail on rdb.
func NewAudit(rdb redis.UniversalClient, opts AuditOptions) *Audit {
	a := &Audit{rdb: rdb, log: opts.Logger, cap: opts.Cap, selfCap: opts.SelfCap, keep: opts.Retention, erased: opts.Erased, now: opts.Now}
	if a.cap <= 0 {
		a.cap = DefaultAuditCap
	}
	if a.selfCap <= 0 {
		a.selfCap = DefaultAuditSelfCap
	}
	if a.keep <= 0 {
		a.keep = DefaultAuditRetention
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	return a
}

func auditKey(tenant string) string { return "mneme:audit:" + tenant }

// selfKey is the stream of the tenant's end users' own acts.
func selfKey(tenant string) string { return "mneme:audit:" + tenant + ":self" }

// selfActor is how the trail names every end user acting on their own
// data, never by id.
const selfActor = "user:self"

// Audit appends e to its tenant's trail, trimming events past the cap and
// older than the retention.
func (a *Audit) Audit(ctx context.Context, e memory.AuditEvent) {
	if e.Time.IsZero() {
		e.Time = a.now().UTC()
	}
	if e.Outcome == "" {
		e.Outcome = memory.AuditOK
	}
	a.pseudonymise(ctx, &e)
	e.Target = bounded(e.Target)
	if len(e.Details) > 0 {
		details := make(map[string]string, len(e.Details))
		for k, v := range e.Details {
			details[k] = bounded(v)
		}
		e.Details = details
	}
	body, err := json.Marshal(e)
	if err != nil {
		a.log.ErrorContext(ctx, "audit event not recorded", "action", e.Action, "err", err)
		return
	}
	// Stream ids are milliseconds first, so the oldest id to keep trims by
	// age; the write stands even when the caller's request ends meanwhile.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	key, keep := auditKey(e.Tenant), a.cap
	if e.Actor == selfActor {
		key, keep = selfKey(e.Tenant), a.selfCap
	}
	oldest := strconv.FormatInt(a.now().Add(-a.keep).UnixMilli(), 10)
	_, err = a.rdb.TxPipelined(wctx, func(p redis.Pipeliner) error {
		p.XAdd(wctx, &redis.XAddArgs{Stream: key, MaxLen: keep, Values: []any{"e", body}})
		p.XTrimMinID(wctx, key, oldest)
		return nil
	})
	if err != nil {
		a.log.ErrorContext(ctx, "audit event not recorded", "action", e.Action, "tenant", e.Tenant, "err", err)
	}
}

// pseudonymise names an erased user in e as their erase did, by their
// tombstone's hash (memory.UserTombstoneID), never by the id it hashed: as
// the target (user:ID) and as a graph query's user filter. When it cannot
// tell, it names them by the hash too.
func (a *Audit) pseudonymise(ctx context.Context, e *memory.AuditEvent) {
	if a.erased == nil || e.Action == memory.AuditUserErase {
		return // the erase names its user so itself
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if id, ok := strings.CutPrefix(e.Target, "user:"); ok && a.wasErased(lctx, e, id) {
		e.Target = memory.UserTombstoneID(e.Tenant, id)
	}
	if id := e.Details[userDetail]; a.wasErased(lctx, e, id) {
		details := maps.Clone(e.Details)
		details[userDetail] = memory.UserTombstoneID(e.Tenant, id)
		e.Details = details
	}
}

// wasErased reports whether the user id, named in e, was erased, and so
// when it cannot tell.
func (a *Audit) wasErased(ctx context.Context, e *memory.AuditEvent, id string) bool {
	if id == "" || id == "self" {
		return false
	}
	erased, err := a.erased.UserErased(ctx, e.Tenant, id)
	if err != nil {
		a.log.WarnContext(ctx, "audit: cannot tell whether a user was erased; naming them by the hash", "action", e.Action, "tenant", e.Tenant, "err", err)
		return true
	}
	return erased
}

// userDetail is the detail that names a user (a graph query's filter).
const userDetail = "user"

// Events returns the tenant's events that match q, newest first: each
// stream's first matches, merged.
func (a *Audit) Events(ctx context.Context, tenant string, q memory.AuditQuery) ([]memory.AuditEvent, error) {
	if q.Limit <= 0 {
		q.Limit = memory.DefaultAuditLimit
	}
	out := []memory.AuditEvent{}
	for _, key := range []string{auditKey(tenant), selfKey(tenant)} {
		if q.Actor != "" && (q.Actor == selfActor) != (key == selfKey(tenant)) {
			continue
		}
		evs, err := a.events(ctx, key, q)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	slices.SortStableFunc(out, func(x, y memory.AuditEvent) int { return y.Time.Compare(x.Time) })
	return out[:min(len(out), q.Limit)], nil
}

// events returns the first q.Limit events of one stream that match q.
func (a *Audit) events(ctx context.Context, key string, q memory.AuditQuery) ([]memory.AuditEvent, error) {
	limit := q.Limit
	start := "-"
	if q.Since.UnixMilli() > 0 { // a stream id is never before 1970
		start = strconv.FormatInt(q.Since.UnixMilli(), 10)
	}
	out := []memory.AuditEvent{}
	end := "+"
	// Read back in pages until the limit is met: filters may skip events.
	for len(out) < limit {
		msgs, err := a.rdb.XRevRangeN(ctx, key, end, start, 512).Result()
		if err != nil {
			return nil, fmt.Errorf("%w: audit trail: %w", memory.ErrUnavailable, err)
		}
		for _, m := range msgs {
			var e memory.AuditEvent
			raw, _ := m.Values["e"].(string)
			if err := json.Unmarshal([]byte(raw), &e); err != nil {
				continue
			}
			if auditMatches(e, q) {
				out = append(out, e)
				if len(out) == limit {
					break
				}
			}
		}
		if len(msgs) < 512 {
			break
		}
		end = "(" + msgs[len(msgs)-1].ID
	}
	return out, nil
}

func auditMatches(e memory.AuditEvent, q memory.AuditQuery) bool {
	switch {
	case q.Actor != "" && e.Actor != q.Actor:
		return false
	case q.Action != "" && strings.HasSuffix(q.Action, "."):
		return strings.HasPrefix(e.Action, q.Action)
	case q.Action != "":
		return e.Action == q.Action
	}
	return true
}

// maxAuditText bounds an event's target and each detail, in characters:
// they hold ids and values from requests, and one request must not write
// kilobytes to the trail, nor line breaks that a reader may take for
// another event.
const maxAuditText = 200

// bounded is s with control characters as spaces, cut to maxAuditText
// characters and marked so.
func bounded(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if utf8.RuneCountInString(s) > maxAuditText {
		s = string([]rune(s)[:maxAuditText]) + "…"
	}
	return s
}
