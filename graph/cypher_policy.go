package graph

// Policy revisions, each tenant's policy state, and the grant writes that
// bump the tenant's grant revision in the same transaction.

// Schema of the policy nodes.
const (
	ddlPolicyStateTenant = `CREATE CONSTRAINT policystate_tenant IF NOT EXISTS FOR (n:PolicyState) REQUIRE n.tenant IS UNIQUE`
	ddlPolicyRevisionID  = `CREATE CONSTRAINT policyrevision_tenant_number IF NOT EXISTS FOR (n:PolicyRevision) REQUIRE (n.tenant, n.number) IS UNIQUE`
)

// mergePolicyState finds or creates the tenant's state as st and locks it:
// every change of policy or grants of a tenant passes here, so they queue.
const mergePolicyState = `MERGE (st:PolicyState {tenant: $tenant})
ON CREATE SET st.active = 0, st.epoch = 0, st.grant_revision = 0, st.history = [], st.last_revision = 0
SET st._lock = true
REMOVE st._lock
`

// Policy revisions and state.
const (
	cypherCreatePolicyRevision = mergePolicyState + `SET st.last_revision = st.last_revision + 1
CREATE (r:PolicyRevision {tenant: $tenant, number: st.last_revision})
SET r += $props
RETURN r.number AS number`

	cypherPolicyRevision = `MATCH (r:PolicyRevision {tenant: $tenant, number: $number})
RETURN r {.*} AS rev`

	cypherListPolicyRevisions = `MATCH (r:PolicyRevision {tenant: $tenant})
RETURN r {.tenant, .number, .author, .message, .created_at, .digest} AS rev ORDER BY r.number`

	// History keeps the last 100 activations.
	cypherActivatePolicy = mergePolicyState + `WITH st
OPTIONAL MATCH (r:PolicyRevision {tenant: $tenant, number: $number})
WITH st, r WHERE $number = 0 OR r IS NOT NULL
SET st.active = $number, st.epoch = st.epoch + 1, st.history = (st.history + $number)[-100..],
    st.activated_at = $at, st.activated_by = $by
RETURN st {.*} AS state`

	cypherPolicyState = `MATCH (st:PolicyState {tenant: $tenant})
RETURN st {.*} AS state`
)

// Grant writes, each bumping the grant revision.
const (
	cypherCreateGrant = mergePolicyState + `SET st.grant_revision = st.grant_revision + 1
CREATE (g:Grant {tenant: $tenant, id: $id})
SET g += $props`

	// The grant is matched first so that a missing one changes nothing.
	cypherDeleteGrant = `MATCH (g:Grant {tenant: $tenant, id: $id})
WITH g
` + mergePolicyState + `SET st.grant_revision = st.grant_revision + 1
DELETE g
RETURN count(*) AS changed`

	cypherUpdateGrant = `MATCH (g:Grant {tenant: $tenant, id: $id})
WITH g
` + mergePolicyState + `SET st.grant_revision = st.grant_revision + 1
SET g = $props
RETURN count(*) AS changed`

	cypherPutGrant = mergePolicyState + `SET st.grant_revision = st.grant_revision + 1
MERGE (g:Grant {tenant: $tenant, id: $id})
SET g = $props`
)
