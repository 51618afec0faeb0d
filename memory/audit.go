package memory

import (
	"context"
	"time"
)

// AuditEvent is one administrative act as the admin audit trail keeps it:
// who did what to which target, when, and how it ended. It never carries a
// secret or memory content: Details holds identifiers and counts only.
type AuditEvent struct {
	Time   time.Time `json:"time"`
	Tenant string    `json:"tenant"`
	// Actor is "kind:id" of the principal, or "system" for work no
	// principal asked for (a scheduled janitor run, a tool).
	Actor string `json:"actor"`
	// Action names the act, e.g. "key.revoke", "grant.create",
	// "policy.activate", "user.erase", "user.export", "janitor.sweep".
	Action string `json:"action"`
	// Target is what the act was about, e.g. "user:alice", "key:k_123".
	Target string `json:"target,omitempty"`
	// Outcome is AuditOK, or AuditFailed with Error saying why.
	Outcome   string            `json:"outcome"`
	Error     string            `json:"error,omitempty"`
	RequestID string            `json:"request_id,omitempty"`
	Details   map[string]string `json:"details,omitempty"`
	// Cause is the error a failed act ended with, for the trail to name it
	// as the API answered it (Error is the recording service's reason,
	// AuditReason); it is never stored.
	Cause error `json:"-"`
}

// Audit outcomes.
const (
	AuditOK     = "ok"
	AuditFailed = "failed"
)

// AuditQuery filters the audit trail; zero values match everything.
type AuditQuery struct {
	// Actor matches "kind:id" exactly.
	Actor string
	// Action matches exactly, or every action under a prefix ending in "."
	// ("key." matches "key.create" and "key.revoke").
	Action string
	Since  time.Time
	Limit  int
}

// Limits of an audit trail read.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// Auditor records administrative acts. Recording must not fail the act it
// records: an implementation logs its own errors.
type Auditor interface {
	Audit(ctx context.Context, e AuditEvent)
}

// Actor names a principal in an audit event.
func Actor(p Principal) string {
	if p.Kind == "" {
		return "system"
	}
	return p.Kind + ":" + p.ID
}
