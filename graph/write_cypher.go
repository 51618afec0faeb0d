package graph

// Queries of write.go: finding near-duplicates, reinforcing and confirming
// memories, and the content scan that proves a value was never stored.
const (
	// cypherCountText counts the node and relationship properties of one
	// tenant that hold needle: a string property containing it, or a list
	// of strings with an element containing it. Slow (it reads every node
	// of the tenant); meant for audits and tests, not requests.
	cypherCountText = `MATCH (n {tenant: $tenant})
UNWIND keys(n) AS k
WITH n, n[k] AS v
WHERE (v IS :: STRING AND v CONTAINS $needle)
   OR (v IS :: LIST<STRING> AND any(x IN v WHERE x CONTAINS $needle))
RETURN count(*) AS hits
UNION ALL
MATCH (n {tenant: $tenant})-[r]->()
UNWIND keys(r) AS k
WITH r, r[k] AS v
WHERE (v IS :: STRING AND v CONTAINS $needle)
   OR (v IS :: LIST<STRING> AND any(x IN v WHERE x CONTAINS $needle))
RETURN count(*) AS hits`
)

const (
	// cypherSimilarCandidates and cypherSimilarScore find a user's memories
	// of one type and given statuses nearest to $vec by exact cosine
	// similarity (mapped back to [-1, 1]), inside the writer's read scope,
	// whose predicate SimilarMemories puts between the two.
	cypherSimilarCandidates = `MATCH (m:Memory {tenant: $tenant, user_id: $user_id})
WHERE m.type = $type AND m.status IN $statuses AND m.embedding IS NOT NULL AND size(m.embedding) = size($vec) AND `
	cypherSimilarScore = ` WITH m, 2 * vector.similarity.cosine(m.embedding, $vec) - 1 AS score
RETURN ` + memoryProjection + `, score ORDER BY score DESC, m.id LIMIT $limit`

	// cypherReinforce counts one more observation of an active or candidate
	// memory: evidence up, importance up (at most 1), updated_at now, the
	// session remembered. The sessions start from the memory's own. A
	// candidate observed in $activate_at distinct sessions (0: never)
	// becomes active, valid from now. A replay — $idem already created or
	// reinforced this memory — changes nothing. The SET before the read
	// takes the write lock, so concurrent reinforcements count every
	// observation. A key that reinforces keeps its writer, body and level
	// and the memory on a RepeatKey ($idem_hash, when the write is known):
	// its retry answers with the memory, and another body is refused.
	cypherReinforce = `MATCH (m:Memory {tenant: $tenant, id: $id})
WHERE m.status IN ['active', 'candidate']
SET m._lock = true
REMOVE m._lock
WITH m, m.status AS before, coalesce(m.evidence_sessions, [coalesce(m.session_id, '')]) AS seen,
     $idem IS NOT NULL AND ($idem = m.idem_key OR $idem IN coalesce(m.evidence_keys, [])) AS replay
FOREACH (_ IN CASE WHEN replay THEN [] ELSE [1] END |
  SET m.evidence_count = coalesce(m.evidence_count, 1) + 1,
      m.evidence_sessions = CASE WHEN $session IN seen THEN seen ELSE seen + $session END,
      m.evidence_keys = CASE WHEN $idem IS NULL THEN m.evidence_keys ELSE coalesce(m.evidence_keys, []) + $idem END,
      m.importance = CASE WHEN m.importance + $step > 1.0 THEN 1.0 ELSE m.importance + $step END,
      m.updated_at = $at)
FOREACH (_ IN CASE WHEN replay OR $idem_hash IS NULL THEN [] ELSE [1] END |
  MERGE (k:RepeatKey {tenant: $tenant, hash: $idem_hash})
  ON CREATE SET k.author = $idem_author, k.body = $idem_body, k.sens = $idem_sens, k.memory = m.id)
WITH m, before, NOT replay AND before = 'candidate' AND $activate_at > 0 AND size(m.evidence_sessions) >= $activate_at AS activate
CALL (m, activate) { WITH m, activate WHERE activate ` + TallyDown + ` }
SET m.status = CASE WHEN activate THEN 'active' ELSE before END,
    m.valid_from = CASE WHEN activate THEN $at ELSE m.valid_from END
WITH m, before, activate
CALL (m, activate) { WITH m, activate WHERE activate ` + TallyUp + ` }
RETURN before, m.status AS status, m.key AS key, m.user_id AS user_id`

	// cypherSupersedeSlot, a predicate over m, and cypherSupersedeSlotTail
	// make the new memory the head of its (user, key) slot: every other
	// active memory in the slot that the predicate admits becomes superseded,
	// and the new memory takes the next version number. A memory made
	// active supersedes as its writer's write would (memory.Displaceable):
	// across authors only what the user said or a profile memory by a
	// profile memory, and nothing less sensitive than itself ($levels are
	// the sensitivities, lowest first).
	cypherSupersedeSlot = `MATCH (n:Memory {tenant: $tenant, id: $id})
MATCH (m:Memory {tenant: $tenant, user_id: $user_id, key: $key})
WHERE m.status = 'active' AND m.id <> $id
  AND coalesce(m.scope, 'user') = coalesce(n.scope, 'user') AND coalesce(m.scope_id, '') = coalesce(n.scope_id, '')
  AND (n.agent_id = m.agent_id OR ((m.agent_id = 'user:' + m.user_id OR (n.type = 'profile' AND m.type = 'profile'))
    AND [i IN range(0, size($levels) - 1) WHERE $levels[i] = n.sensitivity][0] <= [i IN range(0, size($levels) - 1) WHERE $levels[i] = m.sensitivity][0]))
  AND `
	cypherSupersedeSlotTail = `
CALL (m) { WITH m ` + TallyDown + ` }
SET n.valid_from = CASE WHEN m.valid_from >= n.valid_from THEN m.valid_from + duration({nanoseconds: 1}) ELSE n.valid_from END
SET m.status = 'superseded', m.valid_to = n.valid_from, m.updated_at = n.updated_at
WITH n, m
CALL (m) { WITH m ` + TallyUp + ` }
CREATE (n)-[:SUPERSEDES {at: n.created_at, reason: $reason}]->(m)
WITH n, max(m.version) AS top
SET n.version = top + 1
RETURN n.version AS version`

	// cypherConfirm makes a candidate active, as its user confirmed it.
	cypherConfirm = `MATCH (m:Memory {tenant: $tenant, id: $id})
SET m._lock = true
REMOVE m._lock
WITH m, m.status AS before, m.status = 'candidate' AS activate
CALL (m, activate) { WITH m, activate WHERE activate ` + TallyDown + ` }
SET m.status = CASE WHEN activate THEN 'active' ELSE before END,
    m.valid_from = CASE WHEN activate THEN $at ELSE m.valid_from END,
    m.updated_at = CASE WHEN activate THEN $at ELSE m.updated_at END
WITH m, before, activate
CALL (m, activate) { WITH m, activate WHERE activate ` + TallyUp + ` }
RETURN before, m.status AS status, m.key AS key, m.user_id AS user_id`
)

// reasonActivated is the reason on the SUPERSEDES edge of a candidate that
// became active and took over its key's slot.
const reasonActivated = "same key, activated"
