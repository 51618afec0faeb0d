package policyadmin

import (
	"context"
	"time"

	"mneme/memory"
)

// The parts administration works through. graph, policy, journal and
// policysync implement them; app wires them in.

// PolicyStore keeps policy revisions and each tenant's PolicyState.
type PolicyStore interface {
	// CreatePolicyRevision stores r under the tenant's next number (from 1).
	CreatePolicyRevision(ctx context.Context, r PolicyRevision) (PolicyRevision, error)
	// PolicyRevision returns one stored revision with its modules, or
	// memory.ErrNotFound.
	PolicyRevision(ctx context.Context, tenant string, number int64) (PolicyRevision, error)
	// ListPolicyRevisions returns the stored revisions without modules,
	// oldest first.
	ListPolicyRevisions(ctx context.Context, tenant string) ([]PolicyRevision, error)
	// ActivatePolicy makes number (0: the bundled policy) the tenant's active
	// revision, adds it to the lineage unless it ends with it, and bumps
	// the epoch, or returns memory.ErrNotFound.
	ActivatePolicy(ctx context.Context, tenant string, number int64, by string, at time.Time) (PolicyState, error)
	// RollBackPolicy makes r.To the tenant's active revision with r.Lineage
	// as its lineage, and bumps the epoch, if the epoch is still r.Epoch:
	// otherwise the state changed meanwhile and it returns
	// memory.ErrConflict, changing nothing. A missing revision is
	// memory.ErrNotFound.
	RollBackPolicy(ctx context.Context, r Rollback) (PolicyState, error)
	// PolicyState returns the tenant's state; a tenant nobody changed has
	// the zero state (revision 0, epoch 0, grant revision 0).
	PolicyState(ctx context.Context, tenant string) (PolicyState, error)
	// ChangeSettings sets the settings c gives, leaves the others, and
	// bumps the tenant's grant revision in the same transaction, so
	// replicas reload them; it returns the settings as they were.
	ChangeSettings(ctx context.Context, tenant string, c SettingsChange) (Settings, error)
}

// Rollback is a rollback as the policy store applies it.
type Rollback struct {
	Tenant string
	// To is the revision to activate, the last of Lineage unless it is 0.
	To      int64
	Lineage []int64
	// Epoch is the tenant's epoch the rollback was chosen at.
	Epoch int64
	By    string
	At    time.Time
}

// PolicyEngine is what administration needs from the policy engine beyond
// deciding.
type PolicyEngine interface {
	// CheckPolicy parses, compiles and tests modules of tenant, or returns
	// a *PolicyRejectedError.
	CheckPolicy(ctx context.Context, tenant string, modules []PolicyModule) (PolicyReport, error)
	// BundledPolicy returns revision 0's modules, tests included.
	BundledPolicy() []PolicyModule
	// UsePolicy makes modules (revision number) the tenant's policy as of
	// epoch; an older epoch than the loaded one is ignored.
	UsePolicy(ctx context.Context, tenant string, number, epoch int64, modules []PolicyModule) error
	// UseGrants replaces the tenant's grants as of revision; an older
	// revision than the loaded one is ignored.
	UseGrants(ctx context.Context, tenant string, revision int64, grants []memory.Grant) error
	// UseSettings replaces the tenant's settings as of grant revision; an
	// older revision than the loaded one is ignored.
	UseSettings(ctx context.Context, tenant string, revision int64, s Settings) error
	// Loaded returns what the engine decides with for tenant; false when it
	// has loaded nothing for it yet.
	Loaded(tenant string) (Revisions, bool)
	// Simulate decides in against modules with the tenant's current grants.
	Simulate(ctx context.Context, modules []PolicyModule, in DecisionInput, explain bool) (Simulation, error)
	// Replay decides each record of tenant again against modules with the
	// tenant's current grants and returns the draft's decisions in order.
	Replay(ctx context.Context, tenant string, modules []PolicyModule, records []DecisionRecord) ([]memory.Decision, error)
	// DecideDraft decides each input against modules with the tenant's
	// current grants and settings, under the deadline of a decision: one
	// that fails or outlasts it denies, with a reason saying so.
	DecideDraft(ctx context.Context, tenant string, modules []PolicyModule, inputs []DecisionInput) ([]memory.Decision, error)
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

// GrantStore keeps sharing grants. Every change bumps the tenant's grant
// revision (PolicyState.GrantRevision) in the same transaction.
type GrantStore interface {
	// CreateGrant stores g, or returns the grant identical to it (same
	// agents, types and kinds as sets, sensitivity and expiry) that the
	// tenant has already, with its own id, storing nothing.
	CreateGrant(ctx context.Context, g memory.Grant) (memory.Grant, error)
	ListGrants(ctx context.Context, tenant string) ([]memory.Grant, error)
	DeleteGrant(ctx context.Context, tenant, id string) error
	// UpdateGrant replaces the grant with g's id in one step, or returns
	// memory.ErrNotFound.
	UpdateGrant(ctx context.Context, g memory.Grant) (memory.Grant, error)
	// PutGrant creates g, or replaces the grant with its id, in one step.
	PutGrant(ctx context.Context, g memory.Grant) (memory.Grant, error)
}

// Directory knows a tenant's registered principals (package keystore).
type Directory interface {
	// AgentExists reports whether the tenant has an agent principal id.
	AgentExists(ctx context.Context, tenant, id string) (bool, error)
	// Admins returns up to limit of the tenant's admin principals.
	Admins(ctx context.Context, tenant string, limit int) ([]memory.Principal, error)
}

// Authorizer is what administration needs of the engine that decides for
// memories: the manage decision on a tenant, and every tenant's grants at
// start-up.
type Authorizer interface {
	// Decide evaluates one action on one resource. Any error denies.
	Decide(ctx context.Context, p memory.Principal, action string, r memory.Resource, now time.Time) (memory.Decision, error)
	// SetGrants replaces the grants of every tenant the engine decides with.
	SetGrants(ctx context.Context, grants []memory.Grant) error
}

// AuditLog reads the admin audit trail.
type AuditLog interface {
	Events(ctx context.Context, tenant string, q memory.AuditQuery) ([]memory.AuditEvent, error)
}
