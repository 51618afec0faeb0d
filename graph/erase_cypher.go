package graph

// Cypher of erasure: memories and users, with what only they linked to;
// the user tombstone and its fence; and the audit of a tenant's nodes.
const (
	// cypherBeginUserErase marks a user as being erased, on the User node
	// that every write about the user locks first (cypherLockBatch) and
	// then finds marked (cypherErasingUsers), and that every read of the
	// user's memories finds marked too (cypherNotErasing). MERGE, so that a
	// write creating the user's first memory is refused as well; a node the
	// erase created is marked _unseen, for cypherEraseUserNode not to count
	// it.
	//
	// The node also keeps the counts of what this erase removed
	// (cypherTallyErase); a new erase of the user counts from zero.
	cypherBeginUserErase = `MERGE (u:User {tenant: $tenant, id: $user_id})
ON CREATE SET u._unseen = true
SET u.erasing = true, u._erased_memories = 0, u._erased_entities = 0, u._erased_sessions = 0`

	// cypherTallyErase adds a batch's counts to those of its erase and
	// returns the sums.
	cypherTallyErase = `MATCH (u:User {tenant: $tenant, id: $user_id})
SET u._erased_memories = coalesce(u._erased_memories, 0) + $memories,
  u._erased_entities = coalesce(u._erased_entities, 0) + $entities,
  u._erased_sessions = coalesce(u._erased_sessions, 0) + $sessions
RETURN u._erased_memories AS memories, u._erased_entities AS entities, u._erased_sessions AS sessions`

	// cypherLockErasingUser write-locks a user's node for one batch of an
	// erase, so that two erases of one user take turns, and says whether the
	// user is still marked as being erased.
	cypherLockErasingUser = `MATCH (u:User {tenant: $tenant, id: $user_id})
SET u._lock = true
REMOVE u._lock
RETURN u.erasing IS NOT NULL AS erasing`

	// cypherEraseMemories leaves a content-free tombstone per memory, filed
	// under the hashed ref of its user when known (for a data-subject
	// export; see memory.UserTombstoneID), removes
	// the memories with their edges (embeddings are properties, they go with
	// the nodes) and returns what they linked to, for orphan cleanup. It
	// first takes each memory's lock and looks again: of two erases of one
	// memory at once, the second then finds it gone and counts nothing,
	// where it counted it out of its tally a second time.
	// cypherNewerVersions locks the memories an erase was asked for, then
	// counts the versions that supersede them and are neither among them
	// nor kept.
	cypherNewerVersions = `MATCH (m:Memory {tenant: $tenant}) WHERE m.id IN $ids
SET m._lock = true REMOVE m._lock
WITH collect(m) AS locked
RETURN COUNT { MATCH (n:Memory {tenant: $tenant})-[:SUPERSEDES]->(o) WHERE o IN locked AND NOT n.id IN $ids AND NOT n.id IN $kept } AS n`

	// cypherEraseTargets reads the memories an erase was asked for, with
	// the nodes they link to, which the erase locks first.
	cypherEraseTargets = `MATCH (m:Memory {tenant: $tenant}) WHERE m.id IN $ids RETURN ` + memoryProjectionLean

	cypherEraseMemories = `MATCH (m:Memory {tenant: $tenant}) WHERE m.id IN $ids
WITH m, m.id AS id SET m._erasing = true
WITH m WHERE EXISTS { MATCH (:Memory {tenant: $tenant, id: id}) }
WITH m, ` + writtenKeys + ` AS written
CALL (m) { ` + TallyDown + ` }
MERGE (t:Tombstone {tenant: $tenant, id: m.id})
SET t.deleted_at = $deleted_at, t.by = $by, t.reason = $reason, t.user_ref = $user_ref
WITH m, written, [(m)-[:MENTIONS]->(e) | e.id] AS entity_ids, [(m)-[:IN_SESSION]->(s) | s.id] AS session_ids
DETACH DELETE m
WITH count(*) AS memories, collect(entity_ids) AS es, collect(session_ids) AS ss, collect(written) AS written
RETURN memories,
  reduce(acc = [], x IN es | acc + x) AS entity_ids,
  reduce(acc = [], x IN ss | acc + x) AS session_ids,
  written`

	// cypherUserMemoryIDs lists up to $limit memories about a user, in any
	// status: the next batch of an erase.
	cypherUserMemoryIDs = `MATCH (m:Memory {tenant: $tenant, user_id: $user_id})
RETURN m.id AS id
LIMIT $limit`

	// cypherEraseOrphanEntities removes the entities among $ids that no memory
	// mentions any more; an entity another memory still names stays.
	cypherEraseOrphanEntities = `MATCH (e:Entity {tenant: $tenant})
WHERE e.id IN $ids AND NOT EXISTS { (e)<-[:MENTIONS]-() }
DETACH DELETE e
RETURN count(*) AS n`

	// cypherEraseOrphanSessions removes the sessions among $ids that no memory
	// is in any more, and any session recorded as the user's own.
	cypherEraseOrphanSessions = `MATCH (s:Session {tenant: $tenant})
WHERE (s.id IN $ids AND NOT EXISTS { (s)<-[:IN_SESSION]-() })
   OR ($user_id IS NOT NULL AND s.user_id = $user_id)
DETACH DELETE s
RETURN count(*) AS n`

	// cypherEraseUserNode deletes the User node and counts it if it existed
	// before the erase marked it.
	cypherEraseUserNode = `MATCH (u:User {tenant: $tenant, id: $user_id})
WITH u, u._unseen IS NULL AS existed
DETACH DELETE u
RETURN count(CASE WHEN existed THEN 1 END) AS n`

	// cypherEraseUserAuthor deletes the Agent node a user wrote their own
	// memories as ("user:" + id, see memory.Service), when no memory is
	// linked to it any more: its id names the user.
	cypherEraseUserAuthor = `MATCH (a:Agent {tenant: $tenant, id: $author})
WHERE NOT EXISTS { (a)--() }
DELETE a
RETURN count(*) AS n`

	// cypherUserTombstone records that a user is being erased, under a hash
	// of the user's id (memory.UserTombstoneID), with the highest fence of
	// its erasures (memory.Fencer), and, as fence_at, when the latest of
	// them began in the graph ($now): a write about the user that began
	// before it is refused for good (cypherErasingUsers). A call that
	// finishes an erase cut short, or runs beside one under way (erasing
	// set), continues that erase and keeps its start. The tombstone stays
	// as long as the graph, so no write is too slow for it. erasing stays
	// until the erase is complete (cypherUserTombstoneComplete): an audit
	// can tell an erase cut short from a finished one.
	cypherUserTombstone = `MERGE (t:Tombstone {tenant: $tenant, id: $id})
WITH t, t.erasing IS NOT NULL AND t.fence_at IS NOT NULL AS continued
SET t.deleted_at = $deleted_at, t.by = $by, t.reason = $reason, t.kind = 'user', t.erasing = true,
  t.fence = CASE WHEN t.fence IS NULL OR t.fence < $fence THEN $fence ELSE t.fence END,
  t.fence_at = CASE WHEN continued OR t.fence_at > $now THEN t.fence_at ELSE $now END`

	// cypherUserTombstoneComplete marks a user's tombstone as the record of
	// a finished erase.
	cypherUserTombstoneComplete = `MATCH (t:Tombstone {tenant: $tenant, id: $id})
REMOVE t.erasing`

	// cypherNotErasing holds for the memory bound to m unless its user is
	// being erased (cypherBeginUserErase): between the transactions of an
	// erase the user is half erased, which no read may show. Shared
	// knowledge is about no user and passes. It runs for every candidate
	// row of a read, so it seeks the user through the (tenant, id)
	// constraint: a third of the cost of walking the memory's edges to it.
	cypherNotErasing = `NOT EXISTS { MATCH (eu:User {tenant: $tenant, id: m.user_id}) WHERE eu.erasing }`
	// NotErasing is cypherNotErasing for graph's subpackages.
	NotErasing = cypherNotErasing

	// cypherTenantNodes returns every property of every node of a tenant: an
	// audit that an erase left nothing behind. Embeddings are left out, they
	// are numbers; their presence is reported.
	cypherTenantNodes = `MATCH (n {tenant: $tenant})
RETURN labels(n) AS labels, n {.*, embedding: null} AS props, n.embedding IS NOT NULL AS embedded`
)

// cypherUserFences returns the fence of each erased user among $refs, the
// ids of user tombstones (memory.UserTombstoneID): a queued write numbered at
// or below it was accepted before the erase and must not be written.
const cypherUserFences = `UNWIND $refs AS ref
MATCH (t:Tombstone {tenant: $tenant, id: ref})
WHERE t.fence IS NOT NULL
RETURN t.id AS ref, t.fence AS fence`
