package memory

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"
)

// Actions of the audit trail recorded by this package.
const (
	AuditUserErase    = "user.erase"
	AuditMemoryDelete = "memory.delete"
	AuditJanitorSweep = "janitor.sweep"
)

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the request it serves, so
// that the services below the handlers can name the request in what they
// record.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id WithRequestID put on ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// AuditReason is the stable reason an audit event gives for a failed act:
// the code the API answers the same error with. The error's text is never
// kept, as it may quote what a client sent.
func AuditReason(err error) string {
	var inv *InvalidError
	var guarded *GuardError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &guarded):
		return "guard_rejected"
	case errors.As(err, &inv):
		return "invalid_argument"
	}
	for _, r := range auditReasons {
		if errors.Is(err, r.err) {
			return r.code
		}
	}
	return "internal"
}

var auditReasons = []struct {
	err  error
	code string
}{
	{ErrNotConfigured, "not_configured"}, {ErrUnauthenticated, "unauthenticated"}, {ErrNotFound, "not_found"},
	{ErrForbidden, "forbidden"}, {ErrSessionFull, "session_full"}, {ErrSessionClosing, "session_closing"},
	{ErrSessionTaken, "session_taken"}, {ErrIdempotencyKeyReused, "idempotency_key_reused"}, {ErrConflict, "conflict"}, {ErrUnavailable, "unavailable"},
}

// NewAuditEvent is the event of an act p attempted on target, stamped with
// the request id on ctx: done when reason is empty, failed with err for the
// stable reason given (AuditReason) otherwise.
func NewAuditEvent(ctx context.Context, p Principal, action, target string, err error, reason string) AuditEvent {
	e := AuditEvent{
		Tenant: p.Tenant, Actor: Actor(p), Action: action, Target: target,
		Outcome: AuditOK, Error: reason, RequestID: RequestIDFrom(ctx), Cause: err,
	}
	if reason != "" {
		e.Outcome = AuditFailed
	}
	return e
}

// Audited reports whether an act of p that ended with err belongs in the
// audit trail: every act of an admin, and every act of anyone else that
// policy did not refuse (the decision log keeps those refusals).
func Audited(p Principal, err error) bool {
	return p.Kind == KindAdmin || !errors.Is(err, ErrForbidden)
}

// audit records an act of p in the audit trail, unless Audited says it
// does not belong there.
func (s *Service) audit(ctx context.Context, p Principal, action, target string, err error, details map[string]string) {
	if !Audited(p, err) {
		return
	}
	e := NewAuditEvent(ctx, p, action, target, err, AuditReason(err))
	e.Time, e.Details = s.now().UTC(), details
	s.auditor.Audit(ctx, e)
}

// countDetails are a receipt's counts and the reason its tombstones keep,
// as audit details.
func countDetails(counts map[string]int64, reason string) map[string]string {
	out := map[string]string{"reason": reason}
	for k, n := range counts {
		out[k] = strconv.FormatInt(n, 10)
	}
	return out
}

// Decider decides one action of one principal on one resource.
type Decider interface {
	Decide(ctx context.Context, p Principal, action string, r Resource, now time.Time) (Decision, error)
}

// RequireManage returns ErrForbidden unless policy lets p administer its
// tenant (see Require).
func RequireManage(ctx context.Context, d Decider, p Principal, now time.Time, log *slog.Logger) error {
	if p.Tenant == "" {
		return ErrForbidden
	}
	return Require(ctx, d, p, ActionManage, Resource{Tenant: p.Tenant}, now, log)
}

// Require returns nil when policy lets p do action on r. An error denies:
// one wrapping ErrUnavailable (the engine ran out of time) is returned as
// it is, so that the client retries; any other is logged and refused. A
// denial is ErrForbidden, or the decision's Refusal where it has one.
func Require(ctx context.Context, d Decider, p Principal, action string, r Resource, now time.Time, log *slog.Logger) error {
	dec, err := d.Decide(ctx, p, action, r, now)
	switch {
	case errors.Is(err, ErrUnavailable):
		return err
	case err != nil:
		log.WarnContext(ctx, "policy error; denying", "action", action, "err", err)
		return ErrForbidden
	case !dec.Allow:
		return cmp.Or(dec.Refusal, ErrForbidden)
	}
	return nil
}
