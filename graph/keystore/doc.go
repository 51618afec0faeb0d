// Package keystore keeps Mneme's identity records in Neo4j: tenants, the
// principals registered in them (agents, users, admins, analysts) and their
// API keys, stored under a keyed hash. Store implements identity.Store over
// the transaction runner it shares with package graph, which declares the
// schema these records rely on (EnsureSchema). keys.go holds the methods,
// keys_cypher.go their queries; every query filters on the tenant.
package keystore
