// Package tally is the Neo4j store of package census: it counts a tenant's
// memories by user, type and status under a read scope, the scope's
// predicate (graph.ScopePredicate) in the query, reading one index
// (memory_tenant_census) rather than every memory. It runs on the
// transaction runner it shares with package graph.
package tally
