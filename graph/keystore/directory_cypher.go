package keystore

// Queries of directory.go.
const (
	cypherEnsureAgent = `MERGE (a:Agent {tenant: $tenant, id: $id})
SET a.team = coalesce($team, a.team)`

	cypherEnsureUser = `MERGE (u:User {tenant: $tenant, id: $id})
ON CREATE SET u.id_fold = $id_fold
SET u.name = coalesce($name, u.name)`
)
