package graph

// Queries of policies.go: policy revisions and each tenant's policy state,
// whose lock every change of a tenant's policy or grants takes (see
// grants_cypher.go).

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
