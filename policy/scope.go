package policy

import (
	"slices"

	"mneme/memory"
)

// Ranks returns the rank of each sensitivity level, lowest first:
// public 0, internal 1, confidential 2, restricted 3 (memory.Sensitivities).
// The Rego policy carries the same table as data.mneme.authz.ranks; a test
// keeps the two equal.
func Ranks() map[string]int {
	ranks := make(map[string]int, len(memory.Sensitivities))
	for i, s := range memory.Sensitivities {
		ranks[s] = i
	}
	return ranks
}

// SensitivitiesUpTo returns the levels ranked no higher than ceiling, lowest
// first, or nil when ceiling is unknown. A store should compile a clause's
// max_sensitivity to "sensitivity IN levels" rather than compare ranks, so
// that a memory of unknown sensitivity never matches.
func SensitivitiesUpTo(ceiling string) []string {
	rank := memory.SensitivityRank(ceiling)
	if rank < 0 {
		return nil
	}
	return slices.Clone(memory.Sensitivities[:rank+1])
}

// Matches reports whether the memory with metadata r is in scope s: it belongs
// to s.Tenant and matches s.Filter, or without a filter at least one clause. It is the reference meaning of
// a scope, which the graph store's query predicate must reproduce.
func Matches(s memory.Scope, r memory.Resource) bool {
	if s.Tenant == "" || r.Tenant != s.Tenant {
		return false
	}
	if s.Filter != nil {
		return FilterMatches(*s.Filter, r)
	}
	return slices.ContainsFunc(s.Clauses, func(c memory.Clause) bool { return ClauseMatches(c, r) })
}

// ClauseMatches reports whether r matches every non-empty field of c: user_id
// equal, agent_id in agent_ids, type in types, kind in kinds, sensitivity
// among SensitivitiesUpTo(max_sensitivity), scope in scopes, scope_id in
// scope_ids and author in authors. It ignores the tenant.
func ClauseMatches(c memory.Clause, r memory.Resource) bool {
	switch {
	case c.UserID != "" && r.UserID != c.UserID:
		return false
	case len(c.AgentIDs) > 0 && !slices.Contains(c.AgentIDs, r.AgentID):
		return false
	case len(c.Types) > 0 && !slices.Contains(c.Types, r.Type):
		return false
	case len(c.Kinds) > 0 && !slices.Contains(c.Kinds, r.Kind):
		return false
	case c.MaxSensitivity != "" && !slices.Contains(SensitivitiesUpTo(c.MaxSensitivity), r.Sensitivity):
		return false
	case len(c.Scopes) > 0 && !slices.Contains(c.Scopes, scopeOf(r)):
		return false
	case len(c.ScopeIDs) > 0 && !slices.Contains(c.ScopeIDs, r.ScopeID):
		return false
	case len(c.Authors) > 0 && !slices.Contains(c.Authors, authorOf(r)):
		return false
	}
	return true
}
