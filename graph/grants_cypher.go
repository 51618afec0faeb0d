package graph

// Queries of grants.go. Every grant write bumps the tenant's grant revision
// under the lock of its policy state (MergePolicyState), so changes queue and
// replicas can tell they are behind.

// Schema of the policy nodes (package policystore keeps them).
const (
	ddlPolicyStateTenant = `CREATE CONSTRAINT policystate_tenant IF NOT EXISTS FOR (n:PolicyState) REQUIRE n.tenant IS UNIQUE`
	ddlPolicyRevisionID  = `CREATE CONSTRAINT policyrevision_tenant_number IF NOT EXISTS FOR (n:PolicyRevision) REQUIRE (n.tenant, n.number) IS UNIQUE`
)

// MergePolicyState finds or creates the tenant's state as st and locks it:
// every change of policy, settings or grants of a tenant passes here, so
// they queue (package policystore keeps the policy and the settings).
const MergePolicyState = `MERGE (st:PolicyState {tenant: $tenant})
ON CREATE SET st.active = 0, st.epoch = 0, st.grant_revision = 0, st.history = [], st.last_revision = 0
SET st._lock = true
REMOVE st._lock
`

// Grant writes, each bumping the grant revision.
const (
	// The grant is made only if its agents exist, looked for under the
	// policy state's lock, which an agent's deletion takes too to revoke
	// its grants: of the two, the later sees what the earlier did.
	// A grant identical to one the tenant has (same agents, sensitivity
	// and expiry, the same types and kinds in any order) is not made again:
	// the one it has is returned, looked for under the same lock.
	cypherCreateGrant = MergePolicyState + `WITH st
OPTIONAL MATCH (a:Principal {tenant: $tenant, kind: 'agent', id: $grantee})
OPTIONAL MATCH (s:Principal {tenant: $tenant, kind: 'agent', id: $source})
WITH st, a, s WHERE a IS NOT NULL AND ($source = '*' OR s IS NOT NULL)
OPTIONAL MATCH (same:Grant {tenant: $tenant, grantee: $grantee, source: $source, max_sensitivity: $props.max_sensitivity})
WHERE same.id IS NOT NULL AND same.id <> $id
  AND size(same.types) = size($props.types) AND all(t IN $props.types WHERE t IN same.types)
  AND size(coalesce(same.kinds, [])) = size(coalesce($props.kinds, [])) AND all(k IN coalesce($props.kinds, []) WHERE k IN same.kinds)
  AND (same.expires_at = $props.expires_at OR same.expires_at IS NULL AND $props.expires_at IS NULL)
WITH st, head(collect(same {.*})) AS existing
FOREACH (_ IN CASE WHEN existing IS NULL THEN [1] ELSE [] END |
  SET st.grant_revision = st.grant_revision + 1
  CREATE (g:Grant {tenant: $tenant, id: $id})
  SET g += $props)
RETURN existing`

	// The grant is looked for under the policy state's lock, so that of
	// concurrent changes the later ones see what the earlier did (a grant
	// deleted meanwhile is no grant); a missing one changes nothing.
	cypherDeleteGrant = MergePolicyState + `WITH st OPTIONAL MATCH (g:Grant {tenant: $tenant, id: $id})
FOREACH (_ IN CASE WHEN g IS NULL THEN [] ELSE [1] END | SET st.grant_revision = st.grant_revision + 1 DELETE g)
RETURN CASE WHEN g IS NULL THEN 0 ELSE 1 END AS changed`

	cypherUpdateGrant = MergePolicyState + `WITH st OPTIONAL MATCH (g:Grant {tenant: $tenant, id: $id})
FOREACH (_ IN CASE WHEN g IS NULL THEN [] ELSE [1] END | SET st.grant_revision = st.grant_revision + 1, g = $props)
RETURN CASE WHEN g IS NULL THEN 0 ELSE 1 END AS changed`

	cypherPutGrant = MergePolicyState + `SET st.grant_revision = st.grant_revision + 1
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
