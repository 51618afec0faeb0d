package graph

// Queries of principals.go: the agents and users principals stand for
// (their keys: package keystore).
const (
	cypherEnsureAgent = `MERGE (a:Agent {tenant: $tenant, id: $id})
SET a.team = coalesce($team, a.team)`

	cypherEnsureUser = `MERGE (u:User {tenant: $tenant, id: $id})
ON CREATE SET u.id_fold = $id_fold
SET u.name = coalesce($name, u.name)`

	// ddlUserFold finds the users whose ids differ only by case in one seek.
	ddlUserFold = `CREATE INDEX user_tenant_fold IF NOT EXISTS FOR (n:User) ON (n.tenant, n.id_fold)`
)
