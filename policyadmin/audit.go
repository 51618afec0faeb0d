package policyadmin

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"mneme/memory"
)

// Actions of the audit trail recorded by this package.
const (
	AuditGrantCreate    = "grant.create"
	AuditGrantUpdate    = "grant.update"
	AuditGrantDelete    = "grant.delete"
	AuditGrantPut       = "grant.put" // a grant stored by the system (seed)
	AuditPolicyPush     = "policy.push"
	AuditPolicyActivate = "policy.activate"
	AuditPolicyRollback = "policy.rollback"
	AuditSettingsPut    = "policy.settings"
)

// The audit trail is read here, beside the decision log, rather than by a
// service of its own: it is the same admin-only, per-tenant read of a log
// behind the same manage decision, and the admin API already depends on
// this service.

// AuditTrail returns the tenant's audit events that match q, newest first.
func (s *Service) AuditTrail(ctx context.Context, p memory.Principal, q memory.AuditQuery) ([]memory.AuditEvent, error) {
	if err := s.manage(ctx, p); err != nil {
		return nil, err
	}
	switch {
	case q.Limit < 0 || q.Limit > memory.MaxAuditLimit:
		return nil, memory.Invalid("limit", fmt.Sprintf("must be between 1 and %d", memory.MaxAuditLimit))
	case len(q.Actor) > 200:
		return nil, memory.Invalid("actor", "must be at most 200 bytes")
	case len(q.Action) > 100:
		return nil, memory.Invalid("action", "must be at most 100 bytes")
	}
	if q.Limit == 0 {
		q.Limit = memory.DefaultAuditLimit
	}
	return s.auditLog.Events(ctx, p.Tenant, q)
}

// audit records an act of p, unless memory.Audited says it does not belong
// in the trail (a non-admin refused by policy).
func (s *Service) audit(ctx context.Context, p memory.Principal, action, target string, err error, details map[string]string) {
	if !memory.Audited(p, err) {
		return
	}
	e := memory.NewAuditEvent(ctx, p, action, target, err, auditReason(err))
	e.Time, e.Details = s.now().UTC(), details
	s.auditor.Audit(ctx, e)
}

// auditReason is memory.AuditReason, with a rejected policy's own code and
// the codes the API answers a grant for an unknown agent and a busy check
// with.
func auditReason(err error) string {
	var rejected *PolicyRejectedError
	var busy *CheckBusyError
	switch {
	case errors.As(err, &rejected):
		return rejected.Code
	case errors.As(err, &busy):
		return "policy_check_busy"
	case errors.Is(err, ErrUnknownGrantee), errors.Is(err, ErrUnknownSource):
		return "unknown_principal"
	}
	return memory.AuditReason(err)
}

func grantTarget(id string) string { return "grant:" + id }

func policyTarget(n int64) string { return "policy:" + strconv.FormatInt(n, 10) }

// grantDetails name who a grant shares with and from; ids only.
func grantDetails(g memory.Grant) map[string]string {
	if g.ID == "" {
		return nil
	}
	return map[string]string{"grantee": g.Grantee, "source": g.Source, "max_sensitivity": g.MaxSensitivity}
}
