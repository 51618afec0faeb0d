package app

import (
	"context"

	"mneme/handlers"
	"mneme/memory"
)

// answeredAudit records each failed act under the code the API answers its
// error with (handlers.AuditCode), whichever service recorded it: a request
// refused 503 unavailable because a store stalled under it is audited as
// unavailable, not as the internal error its cancelled work ended with,
// and a refusal of a kind only the API names (a quota, a backdate, a
// policy timeout) under its own code. The trail and the client then name
// one failure the same.
type answeredAudit struct{ trail memory.Auditor }

func (a answeredAudit) Audit(ctx context.Context, e memory.AuditEvent) {
	if e.Cause != nil {
		e.Error = handlers.AuditCode(ctx, e.Cause)
	}
	a.trail.Audit(ctx, e)
}
