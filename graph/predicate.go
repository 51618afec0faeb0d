package graph

import "mneme/memory"

// ScopePredicate is the Cypher predicate of a read scope over the memory
// bound to m, with its parameters (named cN_… or pN): what the stores beside
// graph put in their queries, so that a scope means the same everywhere.
// See scopePredicate.
func ScopePredicate(s memory.Scope) (string, map[string]any) {
	return scopePredicate(s)
}
