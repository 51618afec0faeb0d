package graph

// Queries of batch.go. Writing a segment of a batch costs two queries,
// however long the segment: cypherLockAndReadBatch takes the locks and reads
// under them what the segment depends on (stored idempotency keys, the active
// heads of its slots), and cypherWriteBatch writes
// it. In between, memory.PlanBatch, called from writeSegment, works out each
// memory's fate in batch order: created, duplicate or stale; its version; the
// heads it supersedes. The locks make that read stable: every writer of a
// user's slots holds the user's lock, so nothing changes them between the
// read and the write. A deduplicated write adds its search
// (dedup_cypher.go), a reinforcement its own queries (write_cypher.go).
//
// Every query is flat, so Neo4j plans it in milliseconds: a single query with
// per-row subqueries took the planner seconds on a cold server.
const (
	// cypherLockBatch takes the nodes a write will link to, in one global
	// order — users, scopes, sessions, entities, each list sorted — before
	// anything else, so concurrent writers queue instead of deadlocking. The
	// write locks last until commit, which also serialises writes to one
	// user's slots. SET then REMOVE locks without a trace. Agents are not
	// locked here: every write of an agent would queue behind every other
	// one, for a whole transaction. A write links its agents last, in
	// sorted order (createRows), after every lock taken here, so the locks
	// that linking takes cannot close a cycle either.
	//
	// A user the write makes gets its folded id ($folds, by id) and the
	// mark _created, which cypherErasingUsers reads and removes in the same
	// query.
	cypherLockBatch = `CALL {
  UNWIND $users AS id
  MERGE (u:User {tenant: $tenant, id: id})
  ON CREATE SET u.id_fold = $folds[id], u._created = true
  SET u._lock = true
  REMOVE u._lock
}
CALL {
  UNWIND $scopes AS sc
  MERGE (s:Scope {tenant: $tenant, kind: sc.kind, id: sc.id})
  SET s._lock = true
  REMOVE s._lock
}
CALL {
  UNWIND $sessions AS id
  MERGE (s:Session {tenant: $tenant, id: id})
  SET s._lock = true
  REMOVE s._lock
}
CALL {
  UNWIND $entities AS ent
  MERGE (e:Entity {tenant: $tenant, id: ent.id})
  SET e._lock = true
  REMOVE e._lock
}`

	// cypherLockAndReadBatch is cypherLockBatch followed by cypherBatchState:
	// one round trip takes the locks and reads under them.
	cypherLockAndReadBatch = cypherLockBatch + "\n" + cypherBatchState

	// cypherErasingUsers returns, read under the users' locks, the users
	// among $users that an erase has marked (cypherBeginUserErase) as
	// erasing, and as erased those whose erase began after the write about
	// them did ($began, by user; writefence.BeginWrite): the write must not
	// commit. The mark lasts while the erase runs and goes with the User
	// node at its end; the time the erase began stays in the user's
	// tombstone ($refs, by user; fence_at, see cypherUserTombstone), so a
	// write that began before the erase is refused whenever it reaches its
	// transaction, rather than store on a new User node what the user asked
	// to be forgotten. A write that began after the erase began is refused
	// while the user is marked, and is a new start once the erase is over.
	// A write that says nothing of its start ($began[id] null) meets the
	// mark only.
	//
	// It returns too, as case_conflict ({id, existing}), the first user the
	// write made (_created) whose folded id another user of the tenant has
	// (userids.Fold), or null: the write must not commit either. A user that existed
	// before is written about by its exact id, whatever others there are.
	cypherErasingUsers = `CALL {
  UNWIND $users AS id
  OPTIONAL MATCH (u:User {tenant: $tenant, id: id})
  OPTIONAL MATCH (t:Tombstone {tenant: $tenant, id: $refs[id]})
  WITH id, u.erasing IS NOT NULL AS marked, coalesce(t.fence_at > $began[id], false) AS before
  RETURN collect(CASE WHEN marked AND NOT before THEN id END) AS erasing,
    collect(CASE WHEN before THEN id END) AS erased
}
CALL {
  UNWIND $users AS id
  MATCH (u:User {tenant: $tenant, id: id}) WHERE u._created
  REMOVE u._created
  WITH u
  MATCH (o:User {tenant: $tenant, id_fold: u.id_fold}) WHERE o.id <> u.id
  WITH u, o ORDER BY u.id, o.id
  RETURN head(collect({id: u.id, existing: o.id})) AS case_conflict
}`

	// cypherLockBatchChecked is cypherLockBatch for writes that read
	// nothing else under the locks.
	cypherLockBatchChecked = cypherLockBatch + "\n" + cypherErasingUsers + `
RETURN erasing, erased, case_conflict`

	// cypherBatchState returns the stored memories holding the batch's
	// idempotency keys, the hashes of those keys whose memory was deleted
	// (see DeletedKeyHash) and of those whose write reinforced a memory
	// (cypherReinforce), and the active memories of its slots ({user_id,
	// key}).
	cypherBatchState = cypherBatchStateCalls + `
RETURN dups, deleted, repeated, heads, erasing, erased, case_conflict`

	cypherBatchStateCalls = cypherErasingUsers + `
CALL {
  UNWIND $idems AS k
  MATCH (m:Memory {tenant: $tenant, idem_key: k})
  RETURN collect(` + memoryMap + `) AS dups
}
CALL {
  UNWIND $deleted_keys AS h
  MATCH (d:DeletedKey {tenant: $tenant, hash: h})
  RETURN collect({hash: h, author: d.author, body: d.body}) AS deleted
}
CALL {
  UNWIND $deleted_keys AS h
  MATCH (d:RepeatKey {tenant: $tenant, hash: h})
  OPTIONAL MATCH (m:Memory {tenant: $tenant, id: d.memory})
  WITH h, d, CASE WHEN m IS NULL THEN null ELSE ` + memoryMap + ` END AS stored
  RETURN collect({hash: h, author: d.author, body: d.body, sens: d.sens, memory: stored}) AS repeated
}
CALL {
  UNWIND $slots AS slot
  MATCH (m:Memory {tenant: $tenant, user_id: slot.user_id, key: slot.key})
  WHERE m.status = 'active' AND coalesce(m.scope, 'user') = slot.scope AND coalesce(m.scope_id, '') = slot.scope_id
  RETURN collect(` + memoryMap + `) AS heads
}`

	// cypherWriteBatch creates the memories of $rows ({props, user_id,
	// scope, entities}): ABOUT their user, or SHARED_IN their scope) with their edges, then applies $supersedes ({id, prev}):
	// prev becomes superseded by id. The aggregation in between finishes
	// every create before the first supersession reads. A version's time is
	// taken when its request came, its place in the chain when it commits:
	// one that came first, or in the same instant, but commits second
	// begins a nanosecond after the head it supersedes did, so that every
	// version holds for an instant at least and as_of finds one version of
	// a key at a time.
	cypherWriteBatch = `UNWIND $rows AS row
CREATE (m:Memory {tenant: $tenant, id: row.props.id})
SET m += row.props, m.written_at = datetime()
WITH m, row
FOREACH (uid IN CASE WHEN row.scope IS NULL THEN [row.user_id] ELSE [] END |
  MERGE (u:User {tenant: $tenant, id: uid})
  CREATE (m)-[:ABOUT]->(u))
FOREACH (sc IN CASE WHEN row.scope IS NULL THEN [] ELSE [row.scope] END |
  MERGE (s:Scope {tenant: $tenant, kind: sc.kind, id: sc.id})
  CREATE (m)-[:SHARED_IN]->(s))
FOREACH (agent IN CASE WHEN row.props.agent_id IS NULL THEN [] ELSE [row.props.agent_id] END |
  MERGE (a:Agent {tenant: $tenant, id: agent})
  CREATE (m)-[:WRITTEN_BY]->(a))
FOREACH (session IN CASE WHEN row.props.session_id IS NULL THEN [] ELSE [row.props.session_id] END |
  MERGE (s:Session {tenant: $tenant, id: session})
  CREATE (m)-[:IN_SESSION]->(s))
FOREACH (ent IN row.entities |
  MERGE (e:Entity {tenant: $tenant, id: ent.id})
  MERGE (m)-[r:MENTIONS]->(e)
  SET r.kind = ent.kind, r.name = ent.name, r.aliases = ent.aliases)
WITH m ORDER BY m.user_id, m.type, m.status, m.sensitivity
CALL (m) { ` + TallyUp + ` }
WITH count(*) AS created
UNWIND $supersedes AS sup
MATCH (n:Memory {tenant: $tenant, id: sup.id})
MATCH (p:Memory {tenant: $tenant, id: sup.prev})
CALL (p) { ` + tallyDownP + ` }
SET n.valid_from = CASE WHEN p.valid_from >= n.valid_from THEN p.valid_from + duration({nanoseconds: 1}) ELSE n.valid_from END
SET p.status = 'superseded', p.valid_to = n.valid_from, p.updated_at = n.updated_at
WITH n, p
CALL (p) { ` + tallyUpP + ` }
CREATE (n)-[:SUPERSEDES {at: n.created_at, reason: $reason}]->(p)`
)

// reasonSameKey is the reason on the SUPERSEDES edge of a memory that took
// over its key's slot.
const reasonSameKey = "same key"

// memoryMap is memoryProjectionLean without its alias, for collect(), and
// without entity aliases: the duplicate or stale memories a batch returns
// in place of new ones carry none, and neither those nor a dedup search's
// candidates need their embedding (the search scores in Cypher).
const memoryMap = `m {` + memoryFields + `, entities: [(m)-[r:MENTIONS]->(e) | {id: e.id, kind: coalesce(r.kind, e.kind), name: coalesce(r.name, e.name)}], ` +
	`supersedes: [(m)-[:SUPERSEDES]->(p) | p {.id, .version}]}`

// ddlMemorySlotIdx finds a slot's memories in one seek: stale checks and
// supersession look a slot up for every memory with a key they write.
const ddlMemorySlotIdx = `CREATE INDEX memory_tenant_user_key IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.key)`
