// Package analysis is the Neo4j store of analysts' graph queries
// (graphquery.Store): neighbourhoods, shortest paths, co-mentions, timelines
// and counts. Every query binds the memories it reads to m and narrows them
// by the caller's compiled scope predicate (graph.ScopePredicate), the
// pushdown recall uses, so that a policy's new clauses apply here as well.
// Node labels, relationship types and dimensions come from closed tables;
// every value is a parameter. Each file holds one area's methods,
// <area>_cypher.go beside it its queries.
package analysis
