package sessions

const (
	// firstMemory is the earliest memory in session s, or a null m: the
	// owner of a Session node written before owners were recorded.
	firstMemory = `CALL (s) {
  OPTIONAL MATCH (s)<-[:IN_SESSION]-(m:Memory {tenant: $tenant})
  WITH m ORDER BY m.created_at, m.id LIMIT 1
  RETURN m
}`

	// cypherOwner reads the owner of session $id: its own, or its first
	// memory's.
	cypherOwner = `MATCH (s:Session {tenant: $tenant, id: $id})
` + firstMemory + `
WITH s, m WHERE coalesce(s.user_id, m.user_id) IS NOT NULL
RETURN coalesce(s.user_id, m.user_id) AS user_id,
       CASE WHEN s.user_id IS NULL THEN m.agent_id ELSE s.agent_id END AS agent_id`

	// cypherClaim makes ($user_id, $agent_id) the owner of session $id
	// unless it has one (its own or its first memory's), under the node's
	// write lock, so that of two concurrent claims the second reads the
	// first; it returns the owner.
	cypherClaim = `MERGE (s:Session {tenant: $tenant, id: $id})
SET s._lock = true
REMOVE s._lock
WITH s
` + firstMemory + `
WITH s, CASE
  WHEN s.user_id IS NOT NULL THEN [s.user_id, s.agent_id]
  WHEN m IS NOT NULL AND m.user_id IS NOT NULL THEN [m.user_id, m.agent_id]
  ELSE [$user_id, $agent_id] END AS owner
SET s.user_id = owner[0], s.agent_id = owner[1]
RETURN s.user_id AS user_id, s.agent_id AS agent_id`
)
