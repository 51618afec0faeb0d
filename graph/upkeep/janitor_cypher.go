package upkeep

import "mneme/graph"

// Cypher of the janitor: the tenants to sweep, the metadata its rules
// decide on, and the status transitions it applies.
const (
	// cypherListTenants is the janitor's one cross-tenant read: it names the
	// tenants to sweep, and reads nothing else. Allowlisted by name in
	// TestCypherIsTenantScoped.
	cypherListTenants = `MATCH (u:User)
RETURN DISTINCT u.tenant AS tenant ORDER BY tenant`

	// cypherActiveUsers names a few users who have active memories of their
	// own, for the warm-up to ask about.
	cypherActiveUsers = `MATCH (m:Memory {tenant: $tenant})
WHERE m.status = 'active' AND coalesce(m.scope, 'user') = 'user'
RETURN DISTINCT m.user_id AS user_id LIMIT $most`

	// cypherLiveMemories returns the metadata the janitor decides on, never
	// content. "m.id IS NOT NULL": see cypherListMatch.
	cypherLiveMemories = `MATCH (m:Memory {tenant: $tenant})
WHERE m.id IS NOT NULL AND m.status IN ['active', 'candidate']
RETURN m.id AS id, m.user_id AS user_id, m.type AS type, m.status AS status, m.importance AS importance,
  m.created_at AS created_at, m.updated_at AS updated_at, m.last_accessed_at AS last_accessed_at, m.written_at AS written_at,
  coalesce(m.access_count, 0) AS access_count, coalesce(m.scope, 'user') <> 'user' AS shared, m.valid_to AS valid_to,
  m.agent_id = 'user:' + m.user_id AS said_by_user`

	// cypherTransition moves memories that are still live; one changed
	// meanwhile (superseded, erased, already archived) is left alone. An
	// expired memory stops being valid; an archived one stays valid but is
	// no longer recalled. A candidate that leaves unconfirmed was never
	// active: never_active keeps as_of from finding it.
	cypherTransition = `MATCH (m:Memory {tenant: $tenant})
WHERE m.id IN $ids AND m.status IN ['active', 'candidate']
WITH m ORDER BY m.user_id
CALL (m) { ` + graph.TallyDown + ` }
SET m.never_active = CASE WHEN m.status = 'candidate' THEN true END, m.status = $to, m.status_reason = $reason, m.status_changed_at = $at,
    m.valid_to = CASE WHEN $to = 'expired' THEN coalesce(m.valid_to, $at) ELSE m.valid_to END
WITH m
CALL (m) { ` + graph.TallyUp + ` }
RETURN count(*) AS n`
)
