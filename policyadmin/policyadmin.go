package policyadmin

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mneme/facts"
	"mneme/memory"
)

// Policies are per tenant: each tenant runs one revision of the Rego policy,
// and only its own admins change which. Revision 0 is the policy bundled with
// the binary and the one every tenant runs until an admin activates another.

// PolicyModule is one Rego file of a policy revision. Names ending in
// _test.rego are the revision's own tests.
type PolicyModule struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// PolicyRevision is an immutable version of a tenant's policy.
type PolicyRevision struct {
	Tenant    string    `json:"tenant"`
	Number    int64     `json:"number"`
	Author    string    `json:"author"`
	Message   string    `json:"message"`
	CreatedAt time.Time `json:"created_at"`
	// Digest is "sha256:" and the hex digest of the modules, names included.
	Digest string `json:"digest"`
	// Modules are left out of listings.
	Modules []PolicyModule `json:"modules,omitempty"`
}

// PolicyState is which revision a tenant runs and the counters replicas
// compare to know whether they are behind.
type PolicyState struct {
	Tenant string `json:"tenant"`
	// Active is the revision the tenant runs; 0 is the bundled policy.
	Active int64 `json:"active"`
	// Epoch counts activations (a rollback is one too), so it only grows
	// while Active may go down.
	Epoch int64 `json:"epoch"`
	// GrantRevision counts changes to the tenant's grants and settings.
	GrantRevision int64 `json:"grant_revision"`
	// Settings are the tenant's policy settings, loaded with its grants.
	Settings Settings `json:"settings"`
	// History lists the activated revisions, oldest first.
	History []int64 `json:"history"`
	// Lineage is what a rollback without a revision steps back through:
	// the revisions activated and not since rolled back from, oldest
	// first, the active one last. The bundled policy, revision 0, lies
	// beneath them all; an empty lineage is left out.
	Lineage     []int64    `json:"lineage,omitempty"`
	ActivatedAt *time.Time `json:"activated_at,omitempty"`
	ActivatedBy string     `json:"activated_by,omitempty"`
}

// Revisions is what a replica must have loaded to decide for a tenant.
type Revisions struct {
	Policy      int64 `json:"policy"`
	PolicyEpoch int64 `json:"policy_epoch"`
	Grants      int64 `json:"grants"`
}

// Behind reports whether loaded is older than r in policy or grants.
func (r Revisions) Behind(loaded Revisions) bool {
	return r.PolicyEpoch > loaded.PolicyEpoch || r.Grants > loaded.Grants
}

// PolicyReport says what checking a policy ran.
type PolicyReport struct {
	Digest        string `json:"digest"`
	Modules       int    `json:"modules"`
	OwnTests      int    `json:"own_tests"`
	BundledTests  int    `json:"bundled_tests"`
	DecisionCases int    `json:"decision_cases"`
}

// DecisionRecord is one policy decision as the decision log keeps it: who,
// what, on which memory (metadata only, never content), the outcome and the
// revisions that decided it.
type DecisionRecord struct {
	Time      time.Time        `json:"time"`
	Principal memory.Principal `json:"principal"`
	Action    string           `json:"action"`
	Resource  memory.Resource  `json:"resource"`
	// Result is "allow" or "deny"; an evaluation error denies and sets Error.
	Result         string   `json:"result"`
	Reasons        []string `json:"reasons,omitempty"`
	Error          string   `json:"error,omitempty"`
	PolicyRevision int64    `json:"policy_revision"`
	GrantRevision  int64    `json:"grant_revision"`
	LatencyMicros  int64    `json:"latency_us"`
}

// Decision results.
const (
	ResultAllow = "allow"
	ResultDeny  = "deny"
)

// DecisionQuery filters the decision log; zero values match everything.
// Principal matches "kind:id" or just the id.
type DecisionQuery struct {
	Principal string
	Result    string
	Action    string
	Since     time.Time
	Limit     int
}

// Limits of the policy administration API.
const (
	MaxPolicyModules     = 64
	MaxPolicyModuleBytes = 256 << 10
	// MaxPolicyBytes bounds the Rego of a policy, pushed, tested or sent
	// inline to simulate or replay, all modules together: the bundled
	// policy with its tests is under a tenth of it.
	MaxPolicyBytes       = 512 << 10
	MaxPolicyMessage     = 500
	DefaultDecisionLimit = 100
	MaxDecisionLimit     = 1000
	DefaultReplayLimit   = 500
	MaxReplayLimit       = 5000
	// MaxReasons and MaxReasonChars bound the reasons a decision keeps
	// (explain, simulate, replay and the decision log); beyond MaxReasons,
	// the last says how many more there were.
	MaxReasons     = 16
	MaxReasonChars = 200
)

// DecisionInput is a decision to simulate.
type DecisionInput struct {
	Principal memory.Principal `json:"principal"`
	Action    string           `json:"action"`
	Resource  memory.Resource  `json:"resource"`
	// Now is context.now; zero means the current time.
	Now time.Time `json:"now"`
}

// Simulation is a decision of a draft policy, explained.
type Simulation struct {
	Allow   bool     `json:"allow"`
	Reasons []string `json:"reasons"`
	// Explanation lists the rules OPA entered, left or failed, in order.
	Explanation []string `json:"explanation,omitempty"`
}

// DecisionChange is a logged decision that a draft would decide otherwise.
type DecisionChange struct {
	Decision DecisionRecord `json:"decision"`
	// Result and Reasons are the draft's.
	Result  string   `json:"result"`
	Reasons []string `json:"reasons,omitempty"`
}

// ReplayReport says which logged decisions a draft would change.
type ReplayReport struct {
	Replayed    int              `json:"replayed"`
	AllowToDeny int              `json:"allow_to_deny"`
	DenyToAllow int              `json:"deny_to_allow"`
	Changes     []DecisionChange `json:"changes"`
	// Check is how an inline draft passed the checks of a push; a stored
	// revision passed them when it was pushed.
	Check *PolicyReport `json:"check,omitempty"`
}

// NewPolicy is a policy an admin pushes.
type NewPolicy struct {
	Message string         `json:"message"`
	Modules []PolicyModule `json:"modules"`
}

// PushPolicy checks modules and stores them as the tenant's next revision,
// inactive. A policy that fails the check is not stored.
func (s *Service) PushPolicy(ctx context.Context, p memory.Principal, n NewPolicy) (PolicyRevision, PolicyReport, error) {
	rev, report, err := s.pushPolicy(ctx, p, n)
	target, details := "policy", map[string]string{"modules": strconv.Itoa(len(n.Modules))}
	if err == nil {
		target, details["digest"] = policyTarget(rev.Number), rev.Digest
	}
	s.audit(ctx, p, AuditPolicyPush, target, err, details)
	return rev, report, err
}

func (s *Service) pushPolicy(ctx context.Context, p memory.Principal, n NewPolicy) (PolicyRevision, PolicyReport, error) {
	if err := s.manage(ctx, p); err != nil {
		return PolicyRevision{}, PolicyReport{}, err
	}
	if utf8.RuneCountInString(n.Message) > MaxPolicyMessage {
		return PolicyRevision{}, PolicyReport{}, memory.Invalid("message", fmt.Sprintf("must be at most %d characters", MaxPolicyMessage))
	}
	report, err := s.CheckPolicy(ctx, p, n.Modules)
	if err != nil {
		return PolicyRevision{}, PolicyReport{}, err
	}
	rev, err := s.policies.CreatePolicyRevision(ctx, PolicyRevision{
		Tenant: p.Tenant, Author: p.Kind + ":" + p.ID, Message: n.Message,
		CreatedAt: s.now().UTC(), Digest: report.Digest, Modules: n.Modules,
	})
	if err != nil {
		return PolicyRevision{}, PolicyReport{}, err
	}
	return rev, report, nil
}

// CheckPolicy runs every check of activation on modules without storing
// them: `memctl policy test`.
func (s *Service) CheckPolicy(ctx context.Context, p memory.Principal, modules []PolicyModule) (PolicyReport, error) {
	if err := s.manage(ctx, p); err != nil {
		return PolicyReport{}, err
	}
	if err := validModules(modules); err != nil {
		return PolicyReport{}, err
	}
	return s.checkRevision(ctx, p, modules)
}

func validModules(modules []PolicyModule) error {
	if len(modules) == 0 {
		return &PolicyRejectedError{Code: RejectInvalid, Problems: []string{"modules: at least one Rego module is required"}}
	}
	if len(modules) > MaxPolicyModules {
		return &PolicyRejectedError{Code: RejectInvalid, Problems: []string{fmt.Sprintf("modules: at most %d", MaxPolicyModules)}}
	}
	size := 0
	for _, m := range modules {
		size += len(m.Source)
	}
	if size > MaxPolicyBytes {
		return &PolicyRejectedError{Code: RejectInvalid, Problems: []string{fmt.Sprintf("modules: a policy holds at most %d bytes of Rego in all, this one %d", MaxPolicyBytes, size)}}
	}
	seen := map[string]bool{}
	var problems []string
	for i, m := range modules {
		switch {
		// A module name is shown in listings, diffs and errors: no
		// control or invisible character may change what it shows.
		case m.Name == "" || len(m.Name) > 128 || path.Ext(m.Name) != ".rego" || path.Clean(m.Name) != m.Name ||
			strings.HasPrefix(m.Name, "/") || strings.HasPrefix(m.Name, ".") || strings.Contains(m.Name, "..") ||
			strings.ContainsFunc(m.Name, facts.Invisible) || !utf8.ValidString(m.Name):
			problems = append(problems, fmt.Sprintf("modules[%d].name %q: must be a relative file name ending in .rego", i, m.Name))
		case seen[m.Name]:
			problems = append(problems, fmt.Sprintf("modules[%d].name %q: appears twice", i, m.Name))
		case len(m.Source) > MaxPolicyModuleBytes:
			problems = append(problems, fmt.Sprintf("%s: larger than %d bytes", m.Name, MaxPolicyModuleBytes))
		case !utf8.ValidString(m.Source):
			problems = append(problems, fmt.Sprintf("%s: not valid UTF-8", m.Name))
		}
		seen[m.Name] = true
	}
	if len(problems) > 0 {
		return &PolicyRejectedError{Code: RejectInvalid, Problems: problems}
	}
	return nil
}

// PolicyStatus returns the tenant's policy state. The tenant's admins may
// always read it, whatever its policy decides.
func (s *Service) PolicyStatus(ctx context.Context, p memory.Principal) (PolicyState, error) {
	if err := s.undo(ctx, p); err != nil {
		return PolicyState{}, err
	}
	return s.policies.PolicyState(ctx, p.Tenant)
}

// ListPolicies returns the tenant's revisions, the bundled revision 0 first,
// without modules. The tenant's admins may always list them.
func (s *Service) ListPolicies(ctx context.Context, p memory.Principal) ([]PolicyRevision, error) {
	if err := s.undo(ctx, p); err != nil {
		return nil, err
	}
	revs, err := s.policies.ListPolicyRevisions(ctx, p.Tenant)
	if err != nil {
		return nil, err
	}
	base := s.bundled(p.Tenant)
	base.Modules = nil
	return append([]PolicyRevision{base}, revs...), nil
}

// Policy returns one revision with its modules. The tenant's admins may
// always read it.
func (s *Service) Policy(ctx context.Context, p memory.Principal, number int64) (PolicyRevision, error) {
	if err := s.undo(ctx, p); err != nil {
		return PolicyRevision{}, err
	}
	return s.revision(ctx, p.Tenant, number)
}

// revision returns one revision. A negative number is a mistake of the
// request, not a revision that may exist: invalid, however it was asked for
// (simulate, replay, activate, diff).
func (s *Service) revision(ctx context.Context, tenant string, number int64) (PolicyRevision, error) {
	switch {
	case number < 0:
		return PolicyRevision{}, memory.Invalid("revision", "must be a revision number: 0 or more")
	case number == 0:
		return s.bundled(tenant), nil
	}
	return s.policies.PolicyRevision(ctx, tenant, number)
}

// bundled is revision 0 as the tenant sees it.
func (s *Service) bundled(tenant string) PolicyRevision {
	modules := s.engine.BundledPolicy()
	return PolicyRevision{
		Tenant: tenant, Number: 0, Author: "mneme", Message: "the bundled policy",
		Digest: PolicyDigest(modules), Modules: modules,
	}
}

// DiffPolicies returns a line diff from revision a to revision b. The
// tenant's admins may always read it.
func (s *Service) DiffPolicies(ctx context.Context, p memory.Principal, a, b int64) (string, error) {
	if err := s.undo(ctx, p); err != nil {
		return "", err
	}
	ra, err := s.revision(ctx, p.Tenant, a)
	if err != nil {
		return "", err
	}
	rb, err := s.revision(ctx, p.Tenant, b)
	if err != nil {
		return "", err
	}
	return DiffModules(fmt.Sprintf("r%d", a), ra.Modules, fmt.Sprintf("r%d", b), rb.Modules), nil
}

// ActivatePolicy checks revision number again (the bundled tests may have
// changed since it was pushed) and makes it the tenant's policy on every
// replica. Activating an earlier revision is a rollback, which the tenant's
// admins may always do (mayActivate).
func (s *Service) ActivatePolicy(ctx context.Context, p memory.Principal, number int64) (PolicyState, error) {
	err := s.mayActivate(ctx, p, number)
	st := PolicyState{}
	if err == nil {
		st, err = s.activate(ctx, p, number)
	}
	s.audit(ctx, p, AuditPolicyActivate, policyTarget(number), err, stateDetails(st))
	return st, err
}

// activate is ActivatePolicy once it is allowed.
func (s *Service) activate(ctx context.Context, p memory.Principal, number int64) (PolicyState, error) {
	if err := s.checkActivation(ctx, p, number); err != nil {
		return PolicyState{}, err
	}
	st, err := s.policies.ActivatePolicy(ctx, p.Tenant, number, p.Kind+":"+p.ID, s.now().UTC())
	if err != nil {
		return PolicyState{}, err
	}
	return st, s.changed(ctx, p.Tenant)
}

// checkActivation checks revision number again before it is activated: it
// must exist and, unless it is the bundled policy, pass every check.
func (s *Service) checkActivation(ctx context.Context, p memory.Principal, number int64) error {
	rev, err := s.revision(ctx, p.Tenant, number)
	if err != nil || number == 0 {
		return err
	}
	_, err = s.checkRevision(ctx, p, rev.Modules)
	return err
}

// RollbackPolicy steps the tenant's policy back, or to revision to when to
// is not nil. Without a revision it activates the one that was in force
// before the active one was activated, skipping those rolled back from: each
// rollback goes one step further back along the lineage of activations, down
// to the bundled policy, and never returns to a revision it left. A
// rollback to a revision of the lineage drops those after it from the
// lineage as well; one to any other revision adds it, as an activation does.
// It is one act in the audit trail, policy.rollback, whose target is the
// revision it went back to. The tenant's admins may always roll back,
// whatever the policy in force decides: no revision locks them out of
// undoing it.
func (s *Service) RollbackPolicy(ctx context.Context, p memory.Principal, to *int64) (PolicyState, error) {
	st, target, err := s.rollback(ctx, p, to)
	s.audit(ctx, p, AuditPolicyRollback, target, err, stateDetails(st))
	return st, err
}

// rollback returns the new state and the audit target: the revision rolled
// back to, or "policy" when it was never chosen.
func (s *Service) rollback(ctx context.Context, p memory.Principal, to *int64) (PolicyState, string, error) {
	var err error
	if to != nil {
		err = s.mayActivate(ctx, p, *to)
	} else {
		err = s.undo(ctx, p)
	}
	if err != nil {
		return PolicyState{}, "policy", err
	}
	st, err := s.policies.PolicyState(ctx, p.Tenant)
	if err != nil {
		return PolicyState{}, "policy", err
	}
	var target int64
	var lineage []int64
	if to != nil {
		target, lineage = *to, backTo(st.Lineage, *to)
	} else {
		var ok bool
		if target, lineage, ok = stepBack(st); !ok {
			return PolicyState{}, "policy", memory.Invalid("revision", "nothing to roll back: the tenant runs the bundled policy")
		}
	}
	if err := s.checkActivation(ctx, p, target); err != nil {
		return PolicyState{}, policyTarget(target), err
	}
	next, err := s.policies.RollBackPolicy(ctx, Rollback{
		Tenant: p.Tenant, To: target, Lineage: lineage, Epoch: st.Epoch, By: p.Kind + ":" + p.ID, At: s.now().UTC(),
	})
	if errors.Is(err, memory.ErrConflict) {
		err = ErrPolicyChanged
	}
	if err != nil {
		return PolicyState{}, policyTarget(target), err
	}
	return next, policyTarget(target), s.changed(ctx, p.Tenant)
}

// stepBack returns the revision a rollback without a revision activates and
// the lineage it leaves: the active revision is dropped from the lineage's
// end (as often as it was activated in a row), and the one before it is
// the target, the bundled policy when none is. ok is false when there is
// nothing to roll back: the bundled policy runs and the lineage holds no
// other.
func stepBack(st PolicyState) (target int64, lineage []int64, ok bool) {
	lineage = slices.Clone(st.Lineage)
	for len(lineage) > 0 && lineage[len(lineage)-1] == st.Active {
		lineage = lineage[:len(lineage)-1]
	}
	if len(lineage) == 0 {
		return 0, lineage, st.Active != 0
	}
	return lineage[len(lineage)-1], lineage, true
}

// backTo returns the lineage after a rollback to revision to: cut after its
// last place in lineage, empty for the bundled policy when the lineage
// does not hold it, and otherwise lineage with to added.
func backTo(lineage []int64, to int64) []int64 {
	for i, n := range slices.Backward(lineage) {
		if n == to {
			return slices.Clone(lineage[:i+1])
		}
	}
	if to == 0 {
		return []int64{}
	}
	return append(slices.Clone(lineage), to)
}

// stateDetails are the counters of a state after an activation.
func stateDetails(st PolicyState) map[string]string {
	if st.Tenant == "" && st.Epoch == 0 {
		return nil
	}
	return map[string]string{"active": strconv.FormatInt(st.Active, 10), "epoch": strconv.FormatInt(st.Epoch, 10)}
}

// SimulateRequest decides one input against a draft: a stored revision, or
// modules sent inline.
type SimulateRequest struct {
	Revision *int64         `json:"revision,omitempty"`
	Modules  []PolicyModule `json:"modules,omitempty"`
	Input    DecisionInput  `json:"input"`
	Explain  bool           `json:"explain,omitempty"`
}

// Simulate decides req.Input against the draft with the tenant's current
// grants, without logging or changing anything.
func (s *Service) Simulate(ctx context.Context, p memory.Principal, req SimulateRequest) (Simulation, error) {
	if err := s.manage(ctx, p); err != nil {
		return Simulation{}, err
	}
	modules, err := s.draft(ctx, p.Tenant, req.Revision, req.Modules)
	if err != nil {
		return Simulation{}, err
	}
	in := req.Input
	// The draft decides for this tenant only, whatever the input says.
	if in.Principal.Tenant == "" {
		in.Principal.Tenant = p.Tenant
	}
	if in.Resource.Tenant == "" {
		in.Resource.Tenant = p.Tenant
	}
	if in.Principal.Tenant != p.Tenant || in.Resource.Tenant != p.Tenant {
		return Simulation{}, memory.Invalid("input", "principal and resource must be of your tenant")
	}
	if in.Now.IsZero() {
		in.Now = s.now().UTC()
	}
	return s.engine.Simulate(ctx, modules, in, req.Explain)
}

// ReplayRequest replays the recent decision log against a draft: a stored
// revision, or modules sent inline, which are checked as a push would check
// them and never stored.
type ReplayRequest struct {
	Revision *int64         `json:"revision,omitempty"`
	Modules  []PolicyModule `json:"modules,omitempty"`
	// Limit is how many of the most recent decisions to replay.
	Limit int `json:"limit,omitempty"`
}

// Replay decides the tenant's recent logged decisions again against a draft
// (with the current grants and each decision's own time) and reports those
// that would change. An inline draft must first pass every check a push
// runs (its own tests, the bundled tests and decision table): what replay
// shows is then what activating it would do. Nothing is stored or loaded.
func (s *Service) Replay(ctx context.Context, p memory.Principal, req ReplayRequest) (ReplayReport, error) {
	if err := s.manage(ctx, p); err != nil {
		return ReplayReport{}, err
	}
	if req.Limit < 0 || req.Limit > MaxReplayLimit {
		return ReplayReport{}, memory.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxReplayLimit))
	}
	if req.Limit == 0 {
		req.Limit = DefaultReplayLimit
	}
	modules, err := s.draft(ctx, p.Tenant, req.Revision, req.Modules)
	if err != nil {
		return ReplayReport{}, err
	}
	var check *PolicyReport
	if req.Revision == nil {
		report, err := s.checkRevision(ctx, p, modules)
		if err != nil {
			return ReplayReport{}, err
		}
		check = &report
	}
	records, err := s.decisions.Decisions(ctx, p.Tenant, DecisionQuery{Limit: req.Limit})
	if err != nil {
		return ReplayReport{}, err
	}
	decisions, err := s.engine.Replay(ctx, p.Tenant, modules, records)
	if err != nil {
		return ReplayReport{}, err
	}
	report := ReplayReport{Replayed: len(records), Changes: []DecisionChange{}, Check: check}
	for i, rec := range records {
		result := ResultDeny
		if decisions[i].Allow {
			result = ResultAllow
		}
		if result == rec.Result {
			continue
		}
		if result == ResultAllow {
			report.DenyToAllow++
		} else {
			report.AllowToDeny++
		}
		report.Changes = append(report.Changes, DecisionChange{Decision: rec, Result: result, Reasons: decisions[i].Reasons})
	}
	return report, nil
}

// draft returns the modules of a stored revision or the inline ones, which
// must be valid modules (validModules).
func (s *Service) draft(ctx context.Context, tenant string, number *int64, modules []PolicyModule) ([]PolicyModule, error) {
	switch {
	case number != nil && modules != nil: // "modules": [] is given too
		return nil, memory.Invalid("revision", "give a revision or modules, not both")
	case number != nil:
		rev, err := s.revision(ctx, tenant, *number)
		if err != nil {
			return nil, err
		}
		return rev.Modules, nil
	}
	if err := validModules(modules); err != nil {
		return nil, err
	}
	return modules, nil
}

// loggedActions are the actions decisions are logged for.
var loggedActions = []string{memory.ActionRead, memory.ActionWrite, memory.ActionDelete, memory.ActionManage, memory.ActionConfirm}

// Decisions returns the tenant's logged decisions, newest first.
func (s *Service) Decisions(ctx context.Context, p memory.Principal, q DecisionQuery) ([]DecisionRecord, error) {
	if err := s.manage(ctx, p); err != nil {
		return nil, err
	}
	switch {
	case q.Limit < 0 || q.Limit > MaxDecisionLimit:
		return nil, memory.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxDecisionLimit))
	case q.Result != "" && q.Result != ResultAllow && q.Result != ResultDeny:
		return nil, memory.Invalid("result", "must be allow or deny")
	case q.Action != "" && !slices.Contains(loggedActions, q.Action):
		return nil, memory.Invalid("action", "must be one of "+strings.Join(loggedActions, ", "))
	}
	if q.Limit == 0 {
		q.Limit = DefaultDecisionLimit
	}
	return s.decisions.Decisions(ctx, p.Tenant, q)
}
