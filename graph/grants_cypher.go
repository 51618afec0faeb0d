package graph

// Queries of grants.go. Every grant write bumps the tenant's grant revision
// under the lock of its policy state (mergePolicyState), so changes queue and
// replicas can tell they are behind.
// Grant writes, each bumping the grant revision.
const (
	// The grant is made only if its agents exist, looked for under the
	// policy state's lock, which an agent's deletion takes too to revoke
	// its grants: of the two, the later sees what the earlier did.
	cypherCreateGrant = mergePolicyState + `WITH st
OPTIONAL MATCH (a:Principal {tenant: $tenant, kind: 'agent', id: $grantee})
OPTIONAL MATCH (s:Principal {tenant: $tenant, kind: 'agent', id: $source})
WITH st, a, s WHERE a IS NOT NULL AND ($source = '*' OR s IS NOT NULL)
SET st.grant_revision = st.grant_revision + 1
CREATE (g:Grant {tenant: $tenant, id: $id})
SET g += $props
RETURN 1 AS created`

	// The grant is looked for under the policy state's lock, so that of
	// concurrent changes the later ones see what the earlier did (a grant
	// deleted meanwhile is no grant); a missing one changes nothing.
	cypherDeleteGrant = mergePolicyState + `WITH st OPTIONAL MATCH (g:Grant {tenant: $tenant, id: $id})
FOREACH (_ IN CASE WHEN g IS NULL THEN [] ELSE [1] END | SET st.grant_revision = st.grant_revision + 1 DELETE g)
RETURN CASE WHEN g IS NULL THEN 0 ELSE 1 END AS changed`

	cypherUpdateGrant = mergePolicyState + `WITH st OPTIONAL MATCH (g:Grant {tenant: $tenant, id: $id})
FOREACH (_ IN CASE WHEN g IS NULL THEN [] ELSE [1] END | SET st.grant_revision = st.grant_revision + 1, g = $props)
RETURN CASE WHEN g IS NULL THEN 0 ELSE 1 END AS changed`

	cypherPutGrant = mergePolicyState + `SET st.grant_revision = st.grant_revision + 1
MERGE (g:Grant {tenant: $tenant, id: $id})
SET g = $props`
)

// Grant listings. "g.id IS NOT NULL": see cypherListMatch.
const (
	cypherListGrants = `MATCH (g:Grant {tenant: $tenant})
WHERE g.id IS NOT NULL
RETURN g {.*} AS grant ORDER BY g.created_at, g.id`

	// cypherListAllGrants is the one deliberate cross-tenant read: the policy
	// engine loads every tenant's grants at start-up (ListGrants with tenant
	// ""). It is allowlisted by name in TestCypherIsTenantScoped.
	cypherListAllGrants = `MATCH (g:Grant)
RETURN g {.*} AS grant ORDER BY g.tenant, g.created_at, g.id`
)
