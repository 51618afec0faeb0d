// Package tally is the Neo4j store of package census and of the quotas'
// usage: it counts a tenant's memories by user, type and status under a
// read scope, the scope's predicate (graph.ScopePredicate) in the query.
// It reads the tallies every write keeps (graph.TallyUp), a few per user,
// when the scope reads only what they hold; otherwise one index
// (memory_tenant_census) rather than every memory. Reconcile builds the
// tallies of memories stored before them and mends any drift. It runs on
// the transaction runner it shares with package graph.
package tally
