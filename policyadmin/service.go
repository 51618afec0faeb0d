// Package policyadmin is the administration of each tenant's policy: Rego
// revisions (push, check, diff, activate, roll back), sharing grants,
// simulation and replay of drafts against the decision log, and keeping
// every replica's policy engine in step with the stored state (Sync).
//
// It decides nothing itself: the policy engine does, behind the interfaces
// declared here, which graph, policy, journal and policysync implement.
package policyadmin

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"mneme/memory"
)

// Options configures a Service. Every part but Logger and Now is required.
type Options struct {
	// Policies keeps revisions and each tenant's PolicyState.
	Policies PolicyStore
	// Grants keeps sharing grants.
	Grants GrantStore
	// Principals tells whether a grant's grantee is a registered agent,
	// and who the tenant's admins are.
	Principals Directory
	// Engine checks, loads, simulates and replays policies.
	Engine PolicyEngine
	// Authz decides whether a principal may manage its tenant, and takes
	// every tenant's grants at start-up (ReloadGrants).
	Authz Authorizer
	// Bus tells the other replicas about changes.
	Bus RevisionBus
	// Decisions reads the decision log.
	Decisions DecisionLog

	// Audit records grant and policy changes in the audit trail; AuditLog
	// reads the trail back for admins (journal.Audit is both).
	Audit    memory.Auditor
	AuditLog AuditLog

	// Logger defaults to slog.Default.
	Logger *slog.Logger
	// Now returns the current time; defaults to time.Now.
	Now func() time.Time
}

// Service is policy administration for the admins of each tenant, and the
// replica sync every request goes through before anything is decided.
type Service struct {
	policies   PolicyStore
	grants     GrantStore
	principals Directory
	engine     PolicyEngine
	authz      Authorizer
	bus        RevisionBus
	decisions  DecisionLog
	auditor    memory.Auditor
	auditLog   AuditLog
	log        *slog.Logger
	now        func() time.Time

	grantsMu  sync.Mutex // serialises grant reloads into the policy engine
	syncLocks tenantLocks
}

// New returns a Service, or an error naming each required part opts lacks.
func New(opts Options) (*Service, error) {
	var missing []error
	for _, p := range []struct {
		name string
		nil  bool
	}{
		{"Policies", opts.Policies == nil},
		{"Grants", opts.Grants == nil},
		{"Principals", opts.Principals == nil},
		{"Engine", opts.Engine == nil},
		{"Authz", opts.Authz == nil},
		{"Bus", opts.Bus == nil},
		{"Decisions", opts.Decisions == nil},
		{"Audit", opts.Audit == nil},
		{"AuditLog", opts.AuditLog == nil},
	} {
		if p.nil {
			missing = append(missing, errors.New("policyadmin: "+p.name+" is required"))
		}
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	s := &Service{
		policies: opts.Policies, grants: opts.Grants, principals: opts.Principals, engine: opts.Engine, authz: opts.Authz,
		bus: opts.Bus, decisions: opts.Decisions, log: opts.Logger, now: opts.Now,
		auditor: opts.Audit, auditLog: opts.AuditLog,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// manage returns memory.ErrForbidden unless policy lets p administer its
// tenant. A policy error denies, as it does for memories.
func (s *Service) manage(ctx context.Context, p memory.Principal) error {
	return memory.RequireManage(ctx, s.authz, p, s.now().UTC(), s.log)
}
