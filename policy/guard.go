package policy

import (
	"context"
	"fmt"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"mneme/memory"
)

// guardQuery asks rego/guard.rego what to do with each finding of the guard.
const guardQuery = "actions := data.mneme.guard.actions"

var _ memory.GuardPolicy = (*Engine)(nil)

// GuardActions evaluates data.mneme.guard.actions, in the revision the
// tenant decides with, for a write of r whose
// content holds findings of the given kinds, and returns the action per kind:
// memory.GuardReject, GuardRedact or GuardAllow. The caller treats an error,
// a missing kind or an unknown action as a rejection.
func (e *Engine) GuardActions(ctx context.Context, p memory.Principal, r memory.Resource, findings []string, now time.Time) (map[string]string, error) {
	kinds := make([]*ast.Term, len(findings))
	for i, k := range findings {
		kinds[i] = ast.StringTerm(k)
	}
	input := inputValue(p, memory.ActionWrite, r, now).(ast.Object)
	input.Insert(ast.StringTerm("findings"), ast.ArrayTerm(kinds...))
	if r.Tenant != p.Tenant {
		return nil, fmt.Errorf("policy: guard: %s", tenantMismatch)
	}
	b, err := e.eval(ctx, p.Tenant, e.state(p.Tenant).rev.guard, input)
	if err != nil {
		return nil, fmt.Errorf("policy: guard: %w", err)
	}
	obj, ok := b["actions"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("policy: guard: actions is %T, not an object", b["actions"])
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("policy: guard: action of %s is %T, not a string", k, v)
		}
		out[k] = s
	}
	return out, nil
}
