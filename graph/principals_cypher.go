package graph

// Queries of principals.go: API keys, and the agents and users principals
// stand for.
const (
	cypherPutAPIKey = `MERGE (k:APIKey {tenant: $tenant, id: $id})
SET k.kind = $kind, k.principal_id = $principal_id, k.roles = $roles`

	cypherLookupAPIKey = `MATCH (k:APIKey {tenant: $tenant, id: $id})
RETURN k.kind AS kind, k.principal_id AS principal_id, k.roles AS roles`

	cypherEnsureAgent = `MERGE (a:Agent {tenant: $tenant, id: $id})
SET a.team = coalesce($team, a.team)`

	cypherEnsureUser = `MERGE (u:User {tenant: $tenant, id: $id})`
)
