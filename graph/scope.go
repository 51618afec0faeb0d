package graph

import (
	"strconv"
	"strings"

	"mneme/memory"
)

// scopePredicate turns a policy scope into a Cypher predicate over the memory
// bound to m, with its values as parameters: policyPredicate, and the
// memory's user is not being erased (cypherNotErasing), so that a reader
// never sees a user half erased. The query must bind $tenant.
func scopePredicate(s memory.Scope) (string, map[string]any) {
	pred, params := policyPredicate(s)
	return notErasing(pred), params
}

// notErasing adds to a scope predicate that the memory's user is not being
// erased; the false predicate stays false.
func notErasing(pred string) string {
	if pred == "false" {
		return pred
	}
	return "(" + pred + " AND " + cypherNotErasing + ")"
}

// policyPredicate turns a policy scope into a Cypher predicate over the
// memory bound to m, with its values as parameters. The predicate is an OR over the
// clauses, each an AND of its non-empty fields; a clause with no fields
// matches every memory of the tenant. Parameter names are cN_field, so the
// result can be merged with other parameters that do not start with "c".
//
// An empty scope yields "false": callers should not query at all, but if
// they do, nothing matches. A MaxSensitivity that is not a known level yields
// a ceiling below every level, so an unknown ceiling admits nothing.
//
// A scope with a Filter compiled from the policy is that filter's predicate
// (see filterPredicate) and its clauses are ignored.
func policyPredicate(s memory.Scope) (string, map[string]any) {
	if s.Filter != nil {
		return filterPredicate(*s.Filter)
	}
	params := map[string]any{}
	if s.Empty() {
		return "false", params
	}
	ors := make([]string, 0, len(s.Clauses))
	for i, c := range s.Clauses {
		p := "c" + strconv.Itoa(i) + "_"
		var ands []string
		if c.UserID != "" {
			ands = append(ands, "m.user_id = $"+p+"user")
			params[p+"user"] = c.UserID
		}
		if len(c.AgentIDs) > 0 {
			ands = append(ands, "m.agent_id IN $"+p+"agents")
			params[p+"agents"] = c.AgentIDs
		}
		if len(c.Types) > 0 {
			ands = append(ands, "m.type IN $"+p+"types")
			params[p+"types"] = c.Types
		}
		if len(c.Kinds) > 0 {
			ands = append(ands, "m.kind IN $"+p+"kinds")
			params[p+"kinds"] = c.Kinds
		}
		if len(c.Scopes) > 0 {
			ands = append(ands, "coalesce(m.scope, 'user') IN $"+p+"scopes")
			params[p+"scopes"] = c.Scopes
		}
		if len(c.ScopeIDs) > 0 {
			ands = append(ands, "coalesce(m.scope_id, '') IN $"+p+"scope_ids")
			params[p+"scope_ids"] = c.ScopeIDs
		}
		if len(c.Authors) > 0 {
			ands = append(ands, cypherAuthor+" IN $"+p+"authors")
			params[p+"authors"] = c.Authors
		}
		if c.MaxSensitivity != "" {
			ands = append(ands, "m.sens_rank <= $"+p+"rank")
			params[p+"rank"] = memory.SensitivityRank(c.MaxSensitivity) // -1 when unknown: matches nothing
		}
		if len(ands) == 0 {
			ors = append(ors, "true")
			continue
		}
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return "(" + strings.Join(ors, " OR ") + ")", params
}

// sensRank is the rank stored on a memory for fast scope filtering. An
// unknown sensitivity ranks above every level, so only a clause without a
// ceiling can read it: unknown fails closed.
func sensRank(s string) int {
	if r := memory.SensitivityRank(s); r >= 0 {
		return r
	}
	return len(memory.Sensitivities)
}

// ScopePredicate is scopePredicate for the stores beside graph (its
// sub-packages) that bring their own queries over memories bound to m, so
// that every store narrows reads by the same compiled policy filter.
func ScopePredicate(s memory.Scope) (string, map[string]any) {
	return scopePredicate(s)
}

// SensRank is the rank stored on a memory for its sensitivity, for stores
// beside graph that write the rank themselves.
func SensRank(s string) int { return sensRank(s) }
