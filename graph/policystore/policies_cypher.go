package policystore

// Queries of policies.go: policy revisions and each tenant's policy state,
// whose lock (graph.MergePolicyState) every change of a tenant's policy or
// grants takes.

import "mneme/graph"

// Policy revisions and state.
const (
	cypherCreatePolicyRevision = graph.MergePolicyState + `SET st.last_revision = st.last_revision + 1
CREATE (r:PolicyRevision {tenant: $tenant, number: st.last_revision})
SET r += $props
RETURN r.number AS number`

	cypherPolicyRevision = `MATCH (r:PolicyRevision {tenant: $tenant, number: $number})
RETURN r {.*} AS rev`

	cypherListPolicyRevisions = `MATCH (r:PolicyRevision {tenant: $tenant})
RETURN r {.tenant, .number, .author, .message, .created_at, .digest} AS rev ORDER BY r.number`

	// History keeps the last 100 activations, the lineage the last 100
	// revisions a rollback may step back through (policyadmin.PolicyState);
	// a state stored before lineages were kept has its history for one.
	cypherActivatePolicy = graph.MergePolicyState + `WITH st
OPTIONAL MATCH (r:PolicyRevision {tenant: $tenant, number: $number})
WITH st, r, coalesce(st.lineage, st.history) AS lineage WHERE $number = 0 OR r IS NOT NULL
SET st.active = $number, st.epoch = st.epoch + 1, st.history = (st.history + $number)[-100..],
    st.lineage = CASE WHEN size(lineage) > 0 AND lineage[-1] = $number THEN lineage ELSE (lineage + $number)[-100..] END,
    st.activated_at = $at, st.activated_by = $by
RETURN st {.*} AS state`

	// cypherRollBackPolicy changes the state only if its epoch is still the
	// one the rollback was chosen at; found says whether the revision
	// exists, current whether the epoch held.
	cypherRollBackPolicy = graph.MergePolicyState + `WITH st
OPTIONAL MATCH (r:PolicyRevision {tenant: $tenant, number: $number})
WITH st, $number = 0 OR r IS NOT NULL AS found, st.epoch = $epoch AS current
FOREACH (_ IN CASE WHEN found AND current THEN [1] ELSE [] END |
  SET st.active = $number, st.epoch = st.epoch + 1, st.history = (st.history + $number)[-100..],
      st.lineage = $lineage[-100..], st.activated_at = $at, st.activated_by = $by)
RETURN st {.*, found: found, current: current} AS state`

	cypherPolicyState = `MATCH (st:PolicyState {tenant: $tenant})
RETURN st {.*} AS state`
)
