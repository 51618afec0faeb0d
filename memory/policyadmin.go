package memory

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
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
	// GrantRevision counts changes to the tenant's grants.
	GrantRevision int64 `json:"grant_revision"`
	// History lists the activated revisions, oldest first.
	History     []int64    `json:"history"`
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

// Stable codes of a rejected policy.
const (
	RejectInvalid          = "policy_invalid"
	RejectParse            = "policy_parse_error"
	RejectForbiddenBuiltin = "policy_forbidden_builtin"
	RejectCompile          = "policy_compile_error"
	RejectTestFailed       = "policy_test_failed"
)

// PolicyRejectedError is a policy that may not become a revision or be
// activated, with a stable Code and what was wrong.
type PolicyRejectedError struct {
	Code     string
	Problems []string
}

func (e *PolicyRejectedError) Error() string {
	const show = 8
	ps := e.Problems
	more := ""
	if len(ps) > show {
		more = fmt.Sprintf("; and %d more", len(ps)-show)
		ps = ps[:show]
	}
	return strings.Join(ps, "; ") + more
}

// DecisionRecord is one policy decision as the decision log keeps it: who,
// what, on which memory (metadata only, never content), the outcome and the
// revisions that decided it.
type DecisionRecord struct {
	Time      time.Time `json:"time"`
	Principal Principal `json:"principal"`
	Action    string    `json:"action"`
	Resource  Resource  `json:"resource"`
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
	MaxPolicyMessage     = 500
	DefaultDecisionLimit = 100
	MaxDecisionLimit     = 1000
	DefaultReplayLimit   = 500
	MaxReplayLimit       = 5000
)

// DecisionInput is a decision to simulate.
type DecisionInput struct {
	Principal Principal `json:"principal"`
	Action    string    `json:"action"`
	Resource  Resource  `json:"resource"`
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
}

// PolicyStore keeps policy revisions and each tenant's PolicyState.
type PolicyStore interface {
	// CreatePolicyRevision stores r under the tenant's next number (from 1).
	CreatePolicyRevision(ctx context.Context, r PolicyRevision) (PolicyRevision, error)
	// PolicyRevision returns one stored revision with its modules, or
	// ErrNotFound.
	PolicyRevision(ctx context.Context, tenant string, number int64) (PolicyRevision, error)
	// ListPolicyRevisions returns the stored revisions without modules,
	// oldest first.
	ListPolicyRevisions(ctx context.Context, tenant string) ([]PolicyRevision, error)
	// ActivatePolicy makes number (0: the bundled policy) the tenant's active
	// revision and bumps the epoch, or returns ErrNotFound.
	ActivatePolicy(ctx context.Context, tenant string, number int64, by string, at time.Time) (PolicyState, error)
	// PolicyState returns the tenant's state; a tenant nobody changed has
	// the zero state (revision 0, epoch 0, grant revision 0).
	PolicyState(ctx context.Context, tenant string) (PolicyState, error)
}

// PolicyEngine is what administration needs from the policy engine beyond
// deciding.
type PolicyEngine interface {
	// CheckPolicy parses, compiles and tests modules, or returns a
	// *PolicyRejectedError.
	CheckPolicy(ctx context.Context, modules []PolicyModule) (PolicyReport, error)
	// BundledPolicy returns revision 0's modules, tests included.
	BundledPolicy() []PolicyModule
	// UsePolicy makes modules (revision number) the tenant's policy as of
	// epoch; an older epoch than the loaded one is ignored.
	UsePolicy(ctx context.Context, tenant string, number, epoch int64, modules []PolicyModule) error
	// UseGrants replaces the tenant's grants as of revision; an older
	// revision than the loaded one is ignored.
	UseGrants(ctx context.Context, tenant string, revision int64, grants []Grant) error
	// Loaded returns what the engine decides with for tenant; false when it
	// has loaded nothing for it yet.
	Loaded(tenant string) (Revisions, bool)
	// Simulate decides in against modules with the tenant's current grants.
	Simulate(ctx context.Context, modules []PolicyModule, in DecisionInput, explain bool) (Simulation, error)
	// Replay decides each record again against modules with the tenant's
	// current grants and returns the draft's decisions in order.
	Replay(ctx context.Context, modules []PolicyModule, records []DecisionRecord) ([]Decision, error)
}

// RevisionBus tells every replica about policy and grant changes.
type RevisionBus interface {
	// Current returns the tenant's revisions as last announced; false when
	// none were.
	Current(ctx context.Context, tenant string) (Revisions, bool, error)
	// Announce records r for tenant, never lowering a counter, and
	// notifies every replica.
	Announce(ctx context.Context, tenant string, r Revisions) error
}

// DecisionLog reads the decision log.
type DecisionLog interface {
	Decisions(ctx context.Context, tenant string, q DecisionQuery) ([]DecisionRecord, error)
}

// ErrPolicyAdmin means this service was built without policy administration.
var ErrPolicyAdmin = errors.New("policy administration is not configured")

// PolicyAdmin are the parts behind policy administration and replica sync.
// All are required for the policy methods of Service.
type PolicyAdmin struct {
	Store     PolicyStore
	Engine    PolicyEngine
	Bus       RevisionBus
	Decisions DecisionLog
}

func (a *PolicyAdmin) ready() bool {
	return a != nil && a.Store != nil && a.Engine != nil && a.Bus != nil && a.Decisions != nil
}

// tenantLocks serialises the reloads of one tenant.
type tenantLocks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (l *tenantLocks) lock(tenant string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*sync.Mutex{}
	}
	m := l.locks[tenant]
	if m == nil {
		m = &sync.Mutex{}
		l.locks[tenant] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// NewPolicy is a policy an admin pushes.
type NewPolicy struct {
	Message string         `json:"message"`
	Modules []PolicyModule `json:"modules"`
}

// PushPolicy checks modules and stores them as the tenant's next revision,
// inactive. A policy that fails the check is not stored.
func (s *Service) PushPolicy(ctx context.Context, p Principal, n NewPolicy) (PolicyRevision, PolicyReport, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
		return PolicyRevision{}, PolicyReport{}, err
	}
	if utf8.RuneCountInString(n.Message) > MaxPolicyMessage {
		return PolicyRevision{}, PolicyReport{}, Invalid("message", fmt.Sprintf("must be at most %d characters", MaxPolicyMessage))
	}
	report, err := s.CheckPolicy(ctx, p, n.Modules)
	if err != nil {
		return PolicyRevision{}, PolicyReport{}, err
	}
	rev, err := s.admin.Store.CreatePolicyRevision(ctx, PolicyRevision{
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
func (s *Service) CheckPolicy(ctx context.Context, p Principal, modules []PolicyModule) (PolicyReport, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
		return PolicyReport{}, err
	}
	if err := validModules(modules); err != nil {
		return PolicyReport{}, err
	}
	return s.admin.Engine.CheckPolicy(ctx, modules)
}

func validModules(modules []PolicyModule) error {
	if len(modules) == 0 {
		return &PolicyRejectedError{Code: RejectInvalid, Problems: []string{"modules: at least one Rego module is required"}}
	}
	if len(modules) > MaxPolicyModules {
		return &PolicyRejectedError{Code: RejectInvalid, Problems: []string{fmt.Sprintf("modules: at most %d", MaxPolicyModules)}}
	}
	seen := map[string]bool{}
	var problems []string
	for i, m := range modules {
		switch {
		case m.Name == "" || len(m.Name) > 128 || path.Ext(m.Name) != ".rego" || path.Clean(m.Name) != m.Name ||
			strings.HasPrefix(m.Name, "/") || strings.HasPrefix(m.Name, ".") || strings.Contains(m.Name, ".."):
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

// PolicyStatus returns the tenant's policy state.
func (s *Service) PolicyStatus(ctx context.Context, p Principal) (PolicyState, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
		return PolicyState{}, err
	}
	return s.admin.Store.PolicyState(ctx, p.Tenant)
}

// ListPolicies returns the tenant's revisions, the bundled revision 0 first,
// without modules.
func (s *Service) ListPolicies(ctx context.Context, p Principal) ([]PolicyRevision, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
		return nil, err
	}
	revs, err := s.admin.Store.ListPolicyRevisions(ctx, p.Tenant)
	if err != nil {
		return nil, err
	}
	base := s.bundled(p.Tenant)
	base.Modules = nil
	return append([]PolicyRevision{base}, revs...), nil
}

// Policy returns one revision with its modules.
func (s *Service) Policy(ctx context.Context, p Principal, number int64) (PolicyRevision, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
		return PolicyRevision{}, err
	}
	return s.revision(ctx, p.Tenant, number)
}

func (s *Service) revision(ctx context.Context, tenant string, number int64) (PolicyRevision, error) {
	switch {
	case number < 0:
		return PolicyRevision{}, ErrNotFound
	case number == 0:
		return s.bundled(tenant), nil
	}
	return s.admin.Store.PolicyRevision(ctx, tenant, number)
}

// bundled is revision 0 as the tenant sees it.
func (s *Service) bundled(tenant string) PolicyRevision {
	modules := s.admin.Engine.BundledPolicy()
	return PolicyRevision{
		Tenant: tenant, Number: 0, Author: "mneme", Message: "the bundled policy",
		Digest: PolicyDigest(modules), Modules: modules,
	}
}

// DiffPolicies returns a line diff from revision a to revision b.
func (s *Service) DiffPolicies(ctx context.Context, p Principal, a, b int64) (string, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
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
// replica. Activating an earlier revision is a rollback.
func (s *Service) ActivatePolicy(ctx context.Context, p Principal, number int64) (PolicyState, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
		return PolicyState{}, err
	}
	rev, err := s.revision(ctx, p.Tenant, number)
	if err != nil {
		return PolicyState{}, err
	}
	if number != 0 {
		if _, err := s.admin.Engine.CheckPolicy(ctx, rev.Modules); err != nil {
			return PolicyState{}, err
		}
	}
	st, err := s.admin.Store.ActivatePolicy(ctx, p.Tenant, number, p.Kind+":"+p.ID, s.now().UTC())
	if err != nil {
		return PolicyState{}, err
	}
	return st, s.changed(ctx, p.Tenant)
}

// RollbackPolicy activates the revision that was active before the current
// one, or revision to when to is not nil.
func (s *Service) RollbackPolicy(ctx context.Context, p Principal, to *int64) (PolicyState, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
		return PolicyState{}, err
	}
	if to != nil {
		return s.ActivatePolicy(ctx, p, *to)
	}
	st, err := s.admin.Store.PolicyState(ctx, p.Tenant)
	if err != nil {
		return PolicyState{}, err
	}
	prev := int64(0)
	if n := len(st.History); n >= 2 {
		prev = st.History[n-2]
	} else if n == 0 || st.Active == 0 {
		return PolicyState{}, Invalid("revision", "nothing to roll back: the tenant runs the bundled policy")
	}
	return s.ActivatePolicy(ctx, p, prev)
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
func (s *Service) Simulate(ctx context.Context, p Principal, req SimulateRequest) (Simulation, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
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
		return Simulation{}, Invalid("input", "principal and resource must be of your tenant")
	}
	if in.Now.IsZero() {
		in.Now = s.now().UTC()
	}
	return s.admin.Engine.Simulate(ctx, modules, in, req.Explain)
}

// ReplayRequest replays the recent decision log against a draft.
type ReplayRequest struct {
	Revision *int64         `json:"revision,omitempty"`
	Modules  []PolicyModule `json:"modules,omitempty"`
	// Limit is how many of the most recent decisions to replay.
	Limit int `json:"limit,omitempty"`
}

// Replay decides the tenant's recent logged decisions again against a draft
// (with the current grants and each decision's own time) and reports those
// that would change.
func (s *Service) Replay(ctx context.Context, p Principal, req ReplayRequest) (ReplayReport, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
		return ReplayReport{}, err
	}
	if req.Limit < 0 || req.Limit > MaxReplayLimit {
		return ReplayReport{}, Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxReplayLimit))
	}
	if req.Limit == 0 {
		req.Limit = DefaultReplayLimit
	}
	modules, err := s.draft(ctx, p.Tenant, req.Revision, req.Modules)
	if err != nil {
		return ReplayReport{}, err
	}
	records, err := s.admin.Decisions.Decisions(ctx, p.Tenant, DecisionQuery{Limit: req.Limit})
	if err != nil {
		return ReplayReport{}, err
	}
	decisions, err := s.admin.Engine.Replay(ctx, modules, records)
	if err != nil {
		return ReplayReport{}, err
	}
	report := ReplayReport{Replayed: len(records), Changes: []DecisionChange{}}
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

// draft returns the modules of a stored revision or the inline ones.
func (s *Service) draft(ctx context.Context, tenant string, number *int64, modules []PolicyModule) ([]PolicyModule, error) {
	switch {
	case number != nil && len(modules) > 0:
		return nil, Invalid("revision", "give a revision or modules, not both")
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

// Decisions returns the tenant's logged decisions, newest first.
func (s *Service) Decisions(ctx context.Context, p Principal, q DecisionQuery) ([]DecisionRecord, error) {
	if err := s.policyAdmin(ctx, p); err != nil {
		return nil, err
	}
	switch {
	case q.Limit < 0 || q.Limit > MaxDecisionLimit:
		return nil, Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxDecisionLimit))
	case q.Result != "" && q.Result != ResultAllow && q.Result != ResultDeny:
		return nil, Invalid("result", "must be allow or deny")
	case q.Action != "" && !contains([]string{ActionRead, ActionWrite, ActionDelete, ActionManage}, q.Action):
		return nil, Invalid("action", "must be read, write, delete or manage")
	}
	if q.Limit == 0 {
		q.Limit = DefaultDecisionLimit
	}
	return s.admin.Decisions.Decisions(ctx, p.Tenant, q)
}

func (s *Service) policyAdmin(ctx context.Context, p Principal) error {
	if err := s.manage(ctx, p); err != nil {
		return err
	}
	if !s.admin.ready() {
		return ErrPolicyAdmin
	}
	return nil
}

// Sync makes sure this replica decides for tenant with its current policy
// and grants: one look at the announced revisions, and a reload from the
// store when this replica is behind. It is called once per request before
// anything is decided; an error means the replica cannot know what the
// tenant's policy is, and the request must be denied.
func (s *Service) Sync(ctx context.Context, tenant string) error {
	if !s.admin.ready() {
		return nil
	}
	cur, announced, err := s.admin.Bus.Current(ctx, tenant)
	if err != nil {
		return fmt.Errorf("%w: policy revisions: %w", ErrUnavailable, err)
	}
	loaded, ok := s.admin.Engine.Loaded(tenant)
	if ok && announced && !cur.Behind(loaded) {
		return nil
	}
	if err := s.reload(ctx, tenant, !announced); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// reload loads the tenant's active policy and grants from the store when
// they are newer than what the engine has, and announces them when asked.
func (s *Service) reload(ctx context.Context, tenant string, announce bool) error {
	defer s.syncLocks.lock(tenant)()
	// State first, then what it names: the data read is at least as new as
	// the counters recorded, so a change racing this reload is reloaded again
	// on the next check rather than missed.
	st, err := s.admin.Store.PolicyState(ctx, tenant)
	if err != nil {
		return fmt.Errorf("policy state: %w", err)
	}
	loaded, ok := s.admin.Engine.Loaded(tenant)
	if !ok || st.Epoch > loaded.PolicyEpoch {
		rev, err := s.revision(ctx, tenant, st.Active)
		if err != nil {
			return fmt.Errorf("policy revision %d: %w", st.Active, err)
		}
		if err := s.admin.Engine.UsePolicy(ctx, tenant, st.Active, st.Epoch, rev.Modules); err != nil {
			return err
		}
	}
	if !ok || st.GrantRevision > loaded.Grants {
		grants, err := s.grants.ListGrants(ctx, tenant)
		if err != nil {
			return fmt.Errorf("grants: %w", err)
		}
		if err := s.admin.Engine.UseGrants(ctx, tenant, st.GrantRevision, grants); err != nil {
			return err
		}
	}
	if announce {
		return s.admin.Bus.Announce(ctx, tenant, Revisions{Policy: st.Active, PolicyEpoch: st.Epoch, Grants: st.GrantRevision})
	}
	return nil
}

// changed loads the tenant's new state on this replica and announces it to
// the others, before the change is reported done.
func (s *Service) changed(ctx context.Context, tenant string) error {
	if err := s.reload(ctx, tenant, true); err != nil {
		return fmt.Errorf("%w: the change is stored but not yet in force everywhere: %w", ErrUnavailable, err)
	}
	return nil
}
