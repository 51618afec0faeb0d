package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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
	// DefaultAuditRetention is how long an event is kept.
	DefaultAuditRetention = 365 * 24 * time.Hour
)

// AuditOptions configure an Audit trail.
type AuditOptions struct {
	// Cap is how many events to keep per tenant; DefaultAuditCap when 0.
	Cap int64
	// Retention is how long events are kept; DefaultAuditRetention when 0.
	Retention time.Duration
	Logger    *slog.Logger
	Now       func() time.Time
}

// Audit is the admin audit trail: one Redis stream per tenant, apart from
// the decision log and with its own cap and retention. Administrative acts
// are rare, so each event is written as it happens; a write that fails is
// logged and does not fail the act.
type Audit struct {
	rdb  redis.UniversalClient
	log  *slog.Logger
	cap  int64
	keep time.Duration
	now  func() time.Time
}

var _ memory.Auditor = (*Audit)(nil)

// NewAudit returns the audit trail on rdb.
func NewAudit(rdb redis.UniversalClient, opts AuditOptions) *Audit {
	a := &Audit{rdb: rdb, log: opts.Logger, cap: opts.Cap, keep: opts.Retention, now: opts.Now}
	if a.cap <= 0 {
		a.cap = DefaultAuditCap
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

// Audit appends e to its tenant's trail, trimming events past the cap and
// older than the retention.
func (a *Audit) Audit(ctx context.Context, e memory.AuditEvent) {
	if e.Time.IsZero() {
		e.Time = a.now().UTC()
	}
	if e.Outcome == "" {
		e.Outcome = memory.AuditOK
	}
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
	key := auditKey(e.Tenant)
	oldest := strconv.FormatInt(a.now().Add(-a.keep).UnixMilli(), 10)
	_, err = a.rdb.TxPipelined(wctx, func(p redis.Pipeliner) error {
		p.XAdd(wctx, &redis.XAddArgs{Stream: key, MaxLen: a.cap, Values: []any{"e", body}})
		p.XTrimMinID(wctx, key, oldest)
		return nil
	})
	if err != nil {
		a.log.ErrorContext(ctx, "audit event not recorded", "action", e.Action, "tenant", e.Tenant, "err", err)
	}
}

// Events returns the tenant's events that match q, newest first.
func (a *Audit) Events(ctx context.Context, tenant string, q memory.AuditQuery) ([]memory.AuditEvent, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = memory.DefaultAuditLimit
	}
	start := "-"
	if q.Since.UnixMilli() > 0 { // a stream id is never before 1970
		start = strconv.FormatInt(q.Since.UnixMilli(), 10)
	}
	out := []memory.AuditEvent{}
	end := "+"
	// Read back in pages until the limit is met: filters may skip events.
	for len(out) < limit {
		msgs, err := a.rdb.XRevRangeN(ctx, auditKey(tenant), end, start, 512).Result()
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
