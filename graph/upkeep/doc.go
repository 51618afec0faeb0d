// Package upkeep is the Neo4j store of Mneme's background upkeep: the
// janitor's lifecycle sweep (the tenants to sweep, the metadata its rules
// decide on, the status transitions it applies) and the re-embedder's pages
// of stale vectors. Store implements janitor.Store and reembed.Store over
// the transaction runner it shares with package graph. Each file holds one
// worker's methods, <area>_cypher.go beside it their queries.
package upkeep
