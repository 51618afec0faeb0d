package memory

import (
	"context"
	"errors"
	"strconv"
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
	case errors.Is(err, ErrNotConfigured):
		return "not_configured"
	case errors.As(err, &guarded):
		return "guard_rejected"
	case errors.As(err, &inv):
		return "invalid_argument"
	case errors.Is(err, ErrUnauthenticated):
		return "unauthenticated"
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrForbidden):
		return "forbidden"
	case errors.Is(err, ErrSessionFull):
		return "session_full"
	case errors.Is(err, ErrSessionClosing):
		return "session_closing"
	case errors.Is(err, ErrConflict):
		return "conflict"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	default:
		return "internal"
	}
}

// NewAuditEvent is the event of an act p attempted on target that ended
// with err (nil: it succeeded), stamped with the request id on ctx.
// reason turns err into a stable reason; nil means AuditReason.
func NewAuditEvent(ctx context.Context, p Principal, action, target string, err error, reason func(error) string) AuditEvent {
	e := AuditEvent{
		Tenant: p.Tenant, Actor: Actor(p), Action: action, Target: target,
		Outcome: AuditOK, RequestID: RequestIDFrom(ctx),
	}
	if err != nil {
		if reason == nil {
			reason = AuditReason
		}
		e.Outcome, e.Error = AuditFailed, reason(err)
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
	e := NewAuditEvent(ctx, p, action, target, err, nil)
	e.Time, e.Details = s.now().UTC(), details
	s.auditor.Audit(ctx, e)
}

// countDetails are a receipt's or report's counts as audit details.
func countDetails(counts map[string]int64) map[string]string {
	if len(counts) == 0 {
		return nil
	}
	out := make(map[string]string, len(counts))
	for k, n := range counts {
		out[k] = strconv.FormatInt(n, 10)
	}
	return out
}
