package policy

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"mneme/memory"
	"mneme/policyadmin"
)

// Slow policies. Every decision of the policy in force runs under the
// engine's deadline (Options.Timeout); one it cuts denies with
// policyadmin.ErrPolicyTimeout. A check refuses a draft whose decision of an
// input it knows outlasts that deadline (checkTiming, and the decision table
// in runDecisionTable), but no finite set of inputs finds a rule that is slow
// on one kind, one id or one size of input only. So at request time a
// tenant whose policy ran out of time lately (hotCooldown) runs at most
// hotSlots evaluations at once; the others wait for a slot within their own
// deadline. Its slow rule then burns that many cores at most, and the other
// tenants keep the rest; its quick decisions wait behind the slow ones
// until its admin rolls the policy back.

// hotCooldown is how long a tenant whose evaluation ran out of time stays
// limited to hotSlots.
const hotCooldown = 30 * time.Second

// hotSlots is how many evaluations of a hot tenant's policy run at once: a
// quarter of the cores, at least one.
func hotSlots() int { return max(1, runtime.GOMAXPROCS(0)/4) }

// hotTenants limits the evaluations of tenants whose policy ran out of
// time. It is safe for concurrent use.
type hotTenants struct {
	slots int
	now   func() time.Time
	mu    sync.Mutex
	hot   map[string]*hotTenant
	// shed counts evaluations that ran out of time waiting for a slot.
	shed atomic.Int64
}

type hotTenant struct {
	until time.Time
	slots chan struct{}
}

func newHotTenants(slots int, now func() time.Time) *hotTenants {
	return &hotTenants{slots: slots, now: now, hot: map[string]*hotTenant{}}
}

// enter returns at once for a tenant that is not hot (for tenant "" and a
// nil h too),
// else when one of its slots is free, or ctx's error when ctx ends first.
// The caller calls release when its evaluation is over.
func (h *hotTenants) enter(ctx context.Context, tenant string) (release func(), err error) {
	if h == nil {
		return func() {}, nil
	}
	h.mu.Lock()
	t := h.hot[tenant]
	if t != nil && !h.now().Before(t.until) {
		t = nil
	}
	h.mu.Unlock()
	if t == nil {
		return func() {}, nil
	}
	select {
	case t.slots <- struct{}{}:
		return func() { <-t.slots }, nil
	case <-ctx.Done():
		h.shed.Add(1)
		return nil, ctx.Err()
	}
}

// ranOut makes tenant hot for hotCooldown from now. The map holds a tenant
// once; tenants are those of authenticated principals.
func (h *hotTenants) ranOut(tenant string) {
	if tenant == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.hot[tenant]
	if t == nil {
		t = &hotTenant{slots: make(chan struct{}, h.slots)}
		h.hot[tenant] = t
	}
	t.until = h.now().Add(hotCooldown)
}

// isHot reports whether tenant is limited now.
func (h *hotTenants) isHot(tenant string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.hot[tenant]
	return t != nil && h.now().Before(t.until)
}

// shed is the error of an evaluation that ran out of time waiting for a
// slot of its hot tenant: the policy's timeout, as its slowness made the
// wait, but no new one, so that the tenant cools once its own decisions are
// quick again however busy the host (a wait that heated it would keep a
// loaded tenant limited for as long as the load lasts).
func (e *Engine) shed(caller context.Context, tenant string, err error) error {
	if caller.Err() != nil {
		return outOfTime(err)
	}
	return fmt.Errorf("%w: %w: %w", memory.ErrUnavailable, e.policyTimeout(tenant), err)
}

// policyTimeout is the ErrPolicyTimeout of tenant's policy in force, which
// tells whether rolling it back may help.
func (e *Engine) policyTimeout(tenant string) error {
	return &policyadmin.PolicyTimeoutError{Revision: e.Revision(tenant).Number}
}

// timedOut turns err, from an evaluation under a deadline derived from
// caller, into the error the caller gets. The caller's own end (its
// request's deadline, a cancel) is only out of time (outOfTime); the
// engine's deadline reached while the caller still waited is the policy's:
// ErrPolicyTimeout, and tenant becomes hot.
func (e *Engine) timedOut(caller context.Context, tenant string, err error) error {
	if caller.Err() != nil || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, policyadmin.ErrPolicyTimeout) {
		return outOfTime(err)
	}
	e.hot.ranOut(tenant)
	return fmt.Errorf("%w: %w: %w", memory.ErrUnavailable, e.policyTimeout(tenant), err)
}

// timedEval evaluates q on input under the engine's deadline, and once more
// when it ran out of time: a busy host may delay a quick decision once, a
// slow policy delays it every time. slow reports two decisions cut by the
// deadline while ctx held.
func (e *Engine) timedEval(ctx context.Context, q rego.PreparedEvalQuery, input ast.Value) (rs rego.ResultSet, slow bool, err error) {
	for range 2 {
		evalCtx, cancel := context.WithTimeout(ctx, e.timeout)
		rs, err = q.Eval(evalCtx, rego.EvalParsedInput(input))
		expired := evalCtx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		if !expired {
			return rs, false, err
		}
	}
	return nil, true, nil
}

// tooSlow is the rejection of a draft whose decisions (or read filters)
// whats outlast the engine's deadline.
func (e *Engine) tooSlow(whats []string) error {
	problems := make([]string, len(whats))
	for i, what := range whats {
		problems[i] = fmt.Sprintf("%s takes longer than the %v a decision may take", what, e.timeout)
	}
	return reject(policyadmin.RejectTooSlow, problems...)
}

// timingProbes are the decisions checkTiming makes of a draft for tenant:
// reading, writing and deleting a memory of every type and sensitivity, the
// principal's own, another agent's, one the user wrote, and shared
// knowledge of the tenant, as every principal of the bundled decision table
// (agents, with and without a team, users, admins, analysts of every role)
// made a principal of tenant.
func timingProbes(cases []decisionCase, tenant string) []policyadmin.DecisionInput {
	var principals []memory.Principal
	seen := map[string]bool{}
	add := func(p memory.Principal) {
		if key := fmt.Sprintf("%+v", p); !seen[key] {
			seen[key] = true
			principals = append(principals, p)
		}
	}
	user := "u1"
	for _, tc := range cases {
		p := tc.Principal
		p.Tenant = tenant
		switch p.Kind {
		case memory.KindAgent:
			add(p)
			p.Team = "support"
			add(p)
		case memory.KindUser:
			user = p.ID
			add(p)
		case memory.KindAdmin, memory.KindAnalyst:
			add(p)
		}
	}
	var out []policyadmin.DecisionInput
	for _, p := range principals {
		authors := []memory.Resource{
			{UserID: user, AgentID: "other-agent", Author: memory.AuthorAgent},
			{UserID: user, AgentID: "user:" + user, Author: memory.AuthorUser},
			{Scope: memory.ScopeTenant},
		}
		if p.Kind == memory.KindAgent {
			authors = append(authors, memory.Resource{UserID: user, AgentID: p.ID, Author: memory.AuthorAgent})
		}
		for _, action := range []string{memory.ActionRead, memory.ActionWrite, memory.ActionDelete} {
			for _, typ := range memory.Types {
				for _, sens := range memory.Sensitivities {
					for _, r := range authors {
						r.Tenant, r.ID, r.Type, r.Kind, r.Sensitivity, r.Status = tenant, "m-timing", typ, "note", sens, memory.StatusActive
						out = append(out, policyadmin.DecisionInput{Principal: p, Action: action, Resource: r})
					}
				}
			}
		}
	}
	return out
}

// maxSlowProbes is how many slow decisions end checkTiming: each took twice
// the deadline, and a few say enough of what is slow.
const maxSlowProbes = 3

// checkTiming makes every decision of timingProbes with rev, against the
// engine's grants and settings of tenant, and refuses rev as too slow when
// one outlasts the engine's deadline, or when all of them outlast the
// check's. Whether a decision allows is the decision table's and the tests'
// business, not this check's.
func (e *Engine) checkTiming(ctx context.Context, tenant string, rev *Revision) error {
	cases, err := decisionTable()
	if err != nil {
		return fmt.Errorf("policy: decision table: %w", err)
	}
	probes := timingProbes(cases, tenant)
	now := time.Now().UTC()
	var slow []string
	for i, in := range probes {
		_, tooSlow, err := e.timedEval(ctx, rev.decide, inputValue(in.Principal, in.Action, in.Resource, now))
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return reject(policyadmin.RejectTooSlow, fmt.Sprintf("the draft made %d of %d representative decisions in the %v a check may take", i, len(probes), checkTimeout))
		case err != nil && ctx.Err() != nil:
			return err
		case tooSlow:
			r := in.Resource
			what := fmt.Sprintf("%s memory about %s by %s", r.Type, r.UserID, r.AgentID)
			if r.Scope != "" {
				what = r.Type + " knowledge of the tenant"
			}
			slow = append(slow, fmt.Sprintf("the decision of %s: %s of a %s %s", describe(in.Principal), in.Action, r.Sensitivity, what))
		}
		if len(slow) == maxSlowProbes {
			break
		}
	}
	if len(slow) > 0 {
		return e.tooSlow(slow)
	}
	return nil
}
