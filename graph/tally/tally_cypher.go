package tally

// The count reads the tenant's tallies unless they are incomplete (a
// TallyPending says so), with the scope predicate over them: each tally
// holds the user, type, status, sensitivity and sensitivity rank the
// predicate may read. Otherwise it is cypherCountMatch, the scope
// predicate, cypherCountReturn over the memories themselves. The
// existence conditions there name every property of the census index,
// which the planner needs to seek it; the store writes all of them on
// every memory, so they exclude none. Grouping on the index's values and a
// scope over them read no memory at all; a scope on other properties reads
// them for the memories it tests.
const (
	cypherPending = `OPTIONAL MATCH (p:TallyPending {tenant: $tenant})
RETURN p IS NOT NULL AS pending`

	cypherTallyMatch = `MATCH (m:MemoryTally {tenant: $tenant})
WHERE m.n <> 0 AND `
	cypherTallyReturn = `
RETURN m.user_id AS user_id, m.type AS type, m.status AS status, sum(m.n) AS n`

	cypherCountMatch = `MATCH (m:Memory {tenant: $tenant})
USING INDEX m:Memory(tenant, user_id, type, status, sensitivity)
WHERE m.user_id IS NOT NULL AND m.type IS NOT NULL AND m.status IS NOT NULL AND m.sensitivity IS NOT NULL
  AND `
	cypherCountReturn = `
RETURN m.user_id AS user_id, m.type AS type, m.status AS status, count(*) AS n`
)

// Reconciling: every user with memories or tallies, recounted a batch at a
// time under the users' anchors, which every writer locks before it
// touches a tally (graph.TallyUp), so no write interleaves with a recount.
const (
	// cypherMemoryTenants is reconciliation's one cross-tenant read: it
	// names the tenants that hold memories. Allowlisted by name in
	// TestCypherIsTenantScoped.
	cypherMemoryTenants = `MATCH (m:Memory)
RETURN DISTINCT m.tenant AS tenant ORDER BY tenant`

	// cypherPendingTenants names the tenants whose memories predate their
	// tallies; a cross-tenant read of marks only, allowlisted by name in
	// TestCypherIsTenantScoped.
	cypherPendingTenants = `MATCH (p:TallyPending)
RETURN p.tenant AS tenant ORDER BY tenant`

	cypherTallyUsers = `CALL {
  MATCH (m:Memory {tenant: $tenant})
  USING INDEX m:Memory(tenant, user_id)
  WHERE m.user_id IS NOT NULL
  RETURN DISTINCT m.user_id AS user_id
  UNION
  MATCH (t:MemoryTally {tenant: $tenant})
  RETURN DISTINCT t.user_id AS user_id
}
RETURN user_id ORDER BY user_id`

	// The users come sorted, so anchors are locked in the order writers
	// of several users lock them.
	cypherLockAnchors = `UNWIND $users AS u
MERGE (a:TallyAnchor {tenant: $tenant, user_id: u})
SET a._lock = true
REMOVE a._lock`

	cypherRecount = `MATCH (m:Memory {tenant: $tenant})
USING INDEX m:Memory(tenant, user_id, type, status, sensitivity)
WHERE m.user_id IN $users AND m.type IS NOT NULL AND m.status IS NOT NULL AND m.sensitivity IS NOT NULL
RETURN m.user_id AS user_id, m.type AS type, m.status AS status, m.sensitivity AS sensitivity, count(*) AS n`

	cypherUserTallies = `MATCH (t:MemoryTally {tenant: $tenant})
WHERE t.user_id IN $users AND t.n <> 0
RETURN t.user_id AS user_id, t.type AS type, t.status AS status, t.sensitivity AS sensitivity, t.n AS n`

	cypherReplaceTallies = `MATCH (t:MemoryTally {tenant: $tenant})
WHERE t.user_id IN $users
DELETE t
WITH count(*) AS dropped
UNWIND $rows AS r
CREATE (:MemoryTally {tenant: $tenant, user_id: r.user_id, type: r.type, status: r.status,
  sensitivity: r.sensitivity, sens_rank: r.sens_rank, n: r.n})`

	cypherDonePending = `MATCH (p:TallyPending {tenant: $tenant})
DELETE p`
)

// cypherTenantUsage counts a tenant's memories in every status and the
// characters of their content. "m.id IS NOT NULL" lets the planner seek the
// (tenant, id) constraint's index instead of scanning every tenant.
const cypherTenantUsage = `MATCH (m:Memory {tenant: $tenant})
WHERE m.id IS NOT NULL
RETURN count(m) AS memories, coalesce(sum(size(m.content)), 0) AS chars`
