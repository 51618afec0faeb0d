// Package sessions records in Neo4j who each session id belongs to: the
// user and author on its Session node, set by the first write that links
// memories to it and kept for good (a user's erase removes the node).
// Store implements sessionowners.Ledger over the transaction runner it
// shares with package graph; sessions_cypher.go holds its queries, which
// filter on the tenant.
package sessions
