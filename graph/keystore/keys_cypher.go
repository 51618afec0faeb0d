package keystore

// Queries of keys.go: tenants, the principals registered in them and
// their API keys. A key is stored under its keyed hash (identity.Hasher);
// keys from before keyed hashes have no hash property and match nothing.

// principalSideNodes gives an agent its Agent node (with its team) and a
// user its User node, which memories link to.
const principalSideNodes = `
FOREACH (_ IN CASE WHEN $kind = 'agent' THEN [1] ELSE [] END |
  MERGE (a:Agent {tenant: $tenant, id: $id}) SET a.team = coalesce($team, a.team))
FOREACH (_ IN CASE WHEN $kind = 'user' THEN [1] ELSE [] END |
  MERGE (u:User {tenant: $tenant, id: $id}) ON CREATE SET u.id_fold = $id_fold SET u.name = coalesce($name, u.name))`

const (
	// cypherTenantInUse finds a tenant that exists, or has principals from
	// before tenants were registered (the demo seed's).
	cypherTenantInUse = `OPTIONAL MATCH (t:Tenant {tenant: $tenant, id: $tenant})
OPTIONAL MATCH (p:Principal {tenant: $tenant})
RETURN count(t) + count(p) AS n`

	cypherCreateTenant = `CREATE (t:Tenant {tenant: $tenant, id: $tenant, created_at: $created_at})`

	cypherCreatePrincipal = `CREATE (p:Principal {tenant: $tenant, kind: $kind, id: $id})
SET p.team = $team, p.roles = $roles, p.name = $name, p.created_at = $created_at` + principalSideNodes

	// cypherEnsurePrincipal gives a user registered without a name the one
	// on the user's node (the seed names users before it stores their keys).
	cypherEnsurePrincipal = `MERGE (p:Principal {tenant: $tenant, kind: $kind, id: $id})
ON CREATE SET p.created_at = $created_at
SET p.team = $team, p.roles = $roles, p.name = coalesce($name, p.name)` + principalSideNodes + `
WITH p
OPTIONAL MATCH (u:User {tenant: $tenant, id: $id}) WHERE $kind = 'user'
SET p.name = coalesce(p.name, u.name)`

	cypherListPrincipals = `MATCH (p:Principal {tenant: $tenant})
RETURN p {.*} AS principal ORDER BY p.kind, p.id`

	// cypherListAdmins returns a tenant's first admins by id.
	cypherListAdmins = `MATCH (p:Principal {tenant: $tenant, kind: 'admin'})
RETURN p {.*} AS principal ORDER BY p.id LIMIT $limit`

	cypherGetPrincipal = `MATCH (p:Principal {tenant: $tenant, kind: $kind, id: $id})
RETURN p {.*} AS principal`

	// cypherTeamAgent finds one agent of the tenant in the team $team.
	cypherTeamAgent = `MATCH (p:Principal {tenant: $tenant, kind: 'agent', team: $team})
RETURN p.id AS id LIMIT 1`

	// cypherChangePrincipal sets the fields a change names ($set_*) and
	// leaves the others; a user's name goes to the user's node and an
	// agent's team to the agent's, as at registration.
	cypherChangePrincipal = `MATCH (p:Principal {tenant: $tenant, kind: $kind, id: $id})
SET p.name = CASE WHEN $set_name THEN $name ELSE p.name END,
  p.team = CASE WHEN $set_team THEN $team ELSE p.team END,
  p.roles = CASE WHEN $set_roles THEN $roles ELSE p.roles END
WITH p
OPTIONAL MATCH (u:User {tenant: $tenant, id: $id}) WHERE $kind = 'user' AND $set_name
SET u.name = $name
WITH p
OPTIONAL MATCH (a:Agent {tenant: $tenant, id: $id}) WHERE $kind = 'agent' AND $set_team
SET a.team = $team
RETURN p {.*} AS principal`

	cypherDeletePrincipal = `MATCH (p:Principal {tenant: $tenant, kind: $kind, id: $id})
OPTIONAL MATCH (k:APIKey {tenant: $tenant, kind: $kind, principal_id: $id})
WITH p, collect(k) AS keys
FOREACH (k IN keys | DELETE k)
DELETE p
RETURN size(keys) AS keys`

	cypherUserName = `MATCH (u:User {tenant: $tenant, id: $id})
RETURN u.name AS name`

	// cypherUserNames lists the tenant's users that have a name.
	cypherUserNames = `MATCH (u:User {tenant: $tenant})
WHERE u.name IS NOT NULL AND u.name <> ''
RETURN u.id AS id, u.name AS name ORDER BY u.id LIMIT $limit`

	// cypherDeleteUser removes a user's registration and keys; a user who
	// has neither removes nothing.
	cypherDeleteUser = `OPTIONAL MATCH (k:APIKey {tenant: $tenant, kind: 'user', principal_id: $id})
WITH collect(k) AS keys
OPTIONAL MATCH (p:Principal {tenant: $tenant, kind: 'user', id: $id})
FOREACH (k IN keys | DELETE k)
DELETE p
RETURN size(keys) AS keys`
)

// Keys.
const (
	// cypherCreateKey creates nothing when the owner is not registered.
	cypherCreateKey = `MATCH (p:Principal {tenant: $tenant, kind: $kind, id: $principal_id})
CREATE (k:APIKey {tenant: $tenant, id: $id})
SET k += $props
RETURN count(k) AS n`

	// cypherDropReplacedKeys clears the way for a seeded key stored again.
	// Keys from before keyed hashes stay: nothing finds or lists them.
	cypherDropReplacedKeys = `MATCH (k:APIKey {tenant: $tenant, hash: $hash})
DELETE k`

	cypherPutKey = `CREATE (k:APIKey {tenant: $tenant, id: $id})
SET k += $props`

	cypherKeyByHash = `MATCH (k:APIKey {tenant: $tenant, hash: $hash})
MATCH (p:Principal {tenant: $tenant, kind: k.kind, id: k.principal_id})
RETURN k {.*, hash: null} AS key, p.roles AS roles, p.team AS team`

	cypherListKeys = `MATCH (k:APIKey {tenant: $tenant})
WHERE k.hash IS NOT NULL
RETURN k {.*, hash: null} AS key ORDER BY k.created_at, k.id`

	cypherGetKey = `MATCH (k:APIKey {tenant: $tenant, id: $id})
WHERE k.hash IS NOT NULL
RETURN k {.*, hash: null} AS key`

	cypherSetKeyExpiry = `MATCH (k:APIKey {tenant: $tenant, id: $id})
WHERE k.hash IS NOT NULL
SET k.expires_at = $at
RETURN k {.*, hash: null} AS key`

	cypherRevokeKey = `MATCH (k:APIKey {tenant: $tenant, id: $id})
WHERE k.hash IS NOT NULL
SET k.revoked_at = coalesce(k.revoked_at, $at)
RETURN k {.*, hash: null} AS key`

	// cypherRotateKey ends the old key's life and creates its successor in
	// one statement; a revoked or already rotated key rotates nothing.
	cypherRotateKey = `MATCH (old:APIKey {tenant: $tenant, id: $old})
WHERE old.hash IS NOT NULL AND old.revoked_at IS NULL AND old.rotated_to IS NULL
SET old.grace_until = $grace_until, old.rotated_to = $id
CREATE (k:APIKey {tenant: $tenant, id: $id})
SET k += $props
RETURN count(k) AS n`

	cypherTouchKeys = `UNWIND $ids AS id
MATCH (k:APIKey {tenant: $tenant, id: id})
SET k.last_used_at = $at`
)

// Queries of users.go: users whose ids differ only by case.
const (
	// cypherUserCaseTwin returns the user of the tenant whose folded id is
	// $id_fold (userids.Fold), the least by id, when there is no user $id:
	// a user the tenant knows is written about as it is.
	cypherUserCaseTwin = `OPTIONAL MATCH (u:User {tenant: $tenant, id: $id})
WITH u WHERE u IS NULL
MATCH (o:User {tenant: $tenant, id_fold: $id_fold})
RETURN o.id AS existing ORDER BY existing LIMIT 1`

	// cypherUsersWithoutFold and cypherSetUserFolds are the one-time
	// migration that gives users stored before folded ids existed theirs
	// (computed in Go). They span every tenant by design and are
	// allowlisted in TestCypherIsTenantScoped.
	cypherUsersWithoutFold = `MATCH (u:User)
WHERE u.id_fold IS NULL
RETURN elementId(u) AS eid, u.id AS id
LIMIT $batch`
	cypherSetUserFolds = `UNWIND $rows AS row
MATCH (u:User)
WHERE elementId(u) = row.eid
SET u.id_fold = row.id_fold`
)
