package graph

// Queries of principals.go: the agents and users principals stand for
// (their keys: package keystore).
const (
	cypherEnsureAgent = `MERGE (a:Agent {tenant: $tenant, id: $id})
SET a.team = coalesce($team, a.team)`

	cypherEnsureUser = `MERGE (u:User {tenant: $tenant, id: $id})
SET u.name = coalesce($name, u.name)`
)
