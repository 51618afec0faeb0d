package policyadmin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"mneme/memory"
)

// No revision may lock a tenant's admins out of its administration, in two
// ways. A revision is checked with the tenant's real admins, not only the
// decision table's: one under which none of them may manage the tenant is
// refused. And what undoes a revision (reading the policy state and the
// revisions, rolling back, activating an earlier revision) is decided for
// the tenant's own admins by the built-in rule, never by the tenant's
// revision, which a slow or wrong rule may have made deny everything.

// maxAdminsChecked bounds the admins a revision is tried with: one that
// lets any of them manage the tenant passes.
const maxAdminsChecked = 20

// tenantAdmin reports whether p is an admin of its tenant, as its key says:
// the built-in rule of break-glass administration, which evaluates no Rego.
func tenantAdmin(p memory.Principal) bool {
	return p.Tenant != "" && p.Kind == memory.KindAdmin && p.ID != ""
}

// undo lets p read the policy state and revisions: the tenant's admins
// always, anyone else as the tenant's policy decides.
func (s *Service) undo(ctx context.Context, p memory.Principal) error {
	if tenantAdmin(p) {
		return nil
	}
	return s.manage(ctx, p)
}

// mayActivate lets p activate revision number: the tenant's admins always
// when it is an earlier revision (the bundled one, one the tenant ran
// before, or one numbered below the active one), and otherwise as the
// tenant's policy decides.
func (s *Service) mayActivate(ctx context.Context, p memory.Principal, number int64) error {
	if tenantAdmin(p) {
		st, err := s.policies.PolicyState(ctx, p.Tenant)
		if err != nil {
			return err
		}
		if number == 0 || number < st.Active || slices.Contains(st.History, number) {
			return nil
		}
	}
	return s.manage(ctx, p)
}

// checkRevision runs every check of activation on modules: the engine's,
// then whether one of the tenant's admins may still manage it.
func (s *Service) checkRevision(ctx context.Context, p memory.Principal, modules []PolicyModule) (PolicyReport, error) {
	report, err := s.engine.CheckPolicy(ctx, p.Tenant, modules)
	if err != nil {
		return PolicyReport{}, err
	}
	return report, s.checkAdmins(ctx, p, modules)
}

// checkAdmins returns a RejectLocksOutAdmins unless modules let one of the
// tenant's admins (its first maxAdminsChecked by id, and p when it is one)
// manage the tenant, each decided as a request would be.
func (s *Service) checkAdmins(ctx context.Context, p memory.Principal, modules []PolicyModule) error {
	admins, err := s.principals.Admins(ctx, p.Tenant, maxAdminsChecked)
	if err != nil {
		return err
	}
	if tenantAdmin(p) && !slices.ContainsFunc(admins, func(a memory.Principal) bool { return a.ID == p.ID }) {
		admins = append([]memory.Principal{p}, admins...)
	}
	if len(admins) == 0 {
		return nil
	}
	now := s.now().UTC()
	inputs := make([]DecisionInput, len(admins))
	for i, a := range admins {
		a.Tenant, a.Kind = p.Tenant, memory.KindAdmin
		inputs[i] = DecisionInput{Principal: a, Action: memory.ActionManage, Resource: memory.Resource{Tenant: p.Tenant}, Now: now}
	}
	decisions, err := s.engine.DecideDraft(ctx, p.Tenant, modules, inputs)
	if err != nil {
		return err
	}
	var problems []string
	for i, d := range decisions {
		if d.Allow {
			return nil
		}
		why := "denied"
		if len(d.Reasons) > 0 {
			why = strings.Join(d.Reasons, "; ")
		}
		problems = append(problems, fmt.Sprintf("admin %s may not manage the tenant under this policy (%s)", inputs[i].Principal.ID, why))
	}
	problems = append(problems, "a policy must let at least one of the tenant's admins manage it")
	return &PolicyRejectedError{Code: RejectLocksOutAdmins, Problems: problems}
}

// Administers returns nil when p may administer its tenant: its admins
// always, anyone else as the tenant's policy decides (undo). The API asks
// it before it refuses a request to an admin route for what the request
// holds, so that a caller who may not administer the tenant is refused for
// that, whatever it sent, and learns nothing of what the route reads.
func (s *Service) Administers(ctx context.Context, p memory.Principal) error {
	return s.undo(ctx, p)
}
