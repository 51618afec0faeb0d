package policyadmin

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"mneme/memory"
)

// ErrUnknownGrantee is a grant for an agent the tenant does not have: only
// a registered agent can ever use a grant, so one for a mistyped id, a user
// or an analyst would share nothing, silently.
var ErrUnknownGrantee = errors.New("the grantee is no agent of this tenant: create it first (POST /v1/principals)")

// ErrUnknownSource is a grant that shares the memories of an agent the
// tenant does not have: a mistyped id would share nothing today, and the
// memories of whoever registers that id later.
var ErrUnknownSource = errors.New(`the source is no agent of this tenant: name an agent, or "*" for every author`)

// ErrPolicyChanged is a rollback without a revision that found the
// tenant's policy changed (activated or rolled back) while it was chosen:
// where it would have gone may no longer be where the admin meant.
var ErrPolicyChanged = fmt.Errorf("%w: the tenant's policy changed while the rollback was under way, and nothing was rolled back: read it again (GET /v1/policy) and roll back again if still needed", memory.ErrConflict)

// Policy administration's own errors. Everything else it returns is one of
// memory's shared sentinels (ErrNotFound, ErrForbidden, ErrUnavailable) or a
// *memory.InvalidError, which the handlers already map.

// Stable codes of a rejected policy.
const (
	RejectInvalid          = "policy_invalid"
	RejectParse            = "policy_parse_error"
	RejectForbiddenBuiltin = "policy_forbidden_builtin"
	RejectForeignData      = "policy_foreign_data"
	RejectCompile          = "policy_compile_error"
	RejectTestFailed       = "policy_test_failed"
	// RejectTooSlow is a draft whose evaluation outlasts the engine's
	// budget: retrying cannot help, the draft must change.
	RejectTooSlow = "policy_too_slow"
	// RejectTooMuchMemory is a check that allocated more than its budget.
	RejectTooMuchMemory = "policy_memory_exceeded"
	// RejectEval is a simulated draft whose decision raised an error (a
	// built-in given what it cannot take, a rule with two values): the
	// draft's fault, as a retry would raise it again.
	RejectEval = "policy_eval_error"
	// RejectLocksOutAdmins is a policy under which none of the tenant's
	// admins may manage the tenant: activated, nobody could administer it.
	RejectLocksOutAdmins = "policy_locks_out_admins"
)

// ErrPolicyUntranslatable is an active policy whose read rules cannot be
// turned into a query filter: every read would come back empty, so reads
// and the writes that search what they may read (dedup, supersede) fail
// instead until an admin activates another revision. It comes wrapped
// with memory.ErrUnavailable. To the queue it may last (Lasting): a queued
// job counts its attempts rather than holding its shard until an admin acts.
var ErrPolicyUntranslatable error = untranslatable{}

type untranslatable struct{}

func (untranslatable) Error() string {
	return "the active policy's read rules cannot be turned into a query filter: an admin must activate another revision"
}
func (untranslatable) Lasting() bool { return true }

// ErrPolicyTimeout is a decision of the policy in force that did not end
// within the engine's deadline while its caller still waited: the policy's
// doing, most likely a slow rule on the input at hand, not a backing
// store's. It denies, and comes wrapped with memory.ErrUnavailable, as a
// decision delayed by a busy host would succeed when retried. The engine
// returns it as a *PolicyTimeoutError, which says what may help.
var ErrPolicyTimeout = errors.New("the access policy took too long to decide; retry later")

// PolicyTimeoutError is ErrPolicyTimeout under the policy revision in force
// (0: the bundled policy). Rolling the policy back helps only when an
// admin's revision is in force; under the bundled one, the engine was
// overloaded.
type PolicyTimeoutError struct{ Revision int64 }

func (e *PolicyTimeoutError) Error() string {
	if e.Revision == 0 {
		return "the policy engine is overloaded: the bundled access policy took too long to decide; retry later"
	}
	return fmt.Sprintf("the access policy took too long to decide; retry later, or an admin of the tenant rolls the policy back (POST /v1/policy/rollback; revision %d is in force)", e.Revision)
}

// Is makes a *PolicyTimeoutError match ErrPolicyTimeout.
func (e *PolicyTimeoutError) Is(target error) bool { return target == ErrPolicyTimeout }

// TimeoutMessage is what a client is told of err, which matches
// ErrPolicyTimeout.
func TimeoutMessage(err error) string {
	var t *PolicyTimeoutError
	if errors.As(err, &t) {
		return t.Error()
	}
	return ErrPolicyTimeout.Error()
}

// CeilingError refuses an end user's write that sets a sensitivity above
// the highest the tenant lets its users read about themselves
// (user_max_sensitivity): they could neither read nor delete the memory,
// while the agents that serve them would. It is a memory.ErrForbidden.
type CeilingError struct {
	Sensitivity, Ceiling string
}

func (e *CeilingError) Error() string {
	return fmt.Sprintf("sensitivity %s is above %s, the highest this tenant lets its users read about themselves: "+
		"a memory you could not read back nor delete is not written; send sensitivity %s or lower", e.Sensitivity, e.Ceiling, e.Ceiling)
}

func (e *CeilingError) Unwrap() error { return memory.ErrForbidden }

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

// CheckBusyError is a policy check, simulation or replay refused because
// others ran in this process and did not end in time: they run one at a
// time, as each may use much memory. Own: the tenant's previous one is
// still running or waiting (a tenant has one at a time).
type CheckBusyError struct {
	RetryAfter time.Duration
	Own        bool
}

func (e *CheckBusyError) Error() string {
	if e.Own {
		return "this tenant's previous policy check, simulation or replay is still running: retry after the seconds in Retry-After"
	}
	return "other policy checks, simulations or replays are running: retry after the seconds in Retry-After"
}

// RetryAfterSeconds says when to retry, at least a second.
func (e *CheckBusyError) RetryAfterSeconds() int {
	return max(1, int(e.RetryAfter.Round(time.Second)/time.Second))
}
