package graph

// Writing a batch of memories costs three queries, however long the batch:
// cypherLockBatch takes the locks, cypherBatchState reads what the batch
// depends on (stored idempotency keys, the active heads of its slots, the
// entities as stored), and cypherWriteBatch writes it. In between, Go works
// out each memory's fate in batch order (writeBatch): created, duplicate or
// stale; its version; the heads it supersedes. The locks make that read
// stable: every writer of a user's slots holds the user's lock, so nothing
// changes them between the read and the write.
//
// Every query is flat, so Neo4j plans it in milliseconds: a single query with
// per-row subqueries took the planner seconds on a cold server.
const (
	// cypherBatchState returns the stored memories holding the batch's
	// idempotency keys, the active memories of its slots ({user_id, key}),
	// and its entities.
	cypherBatchState = cypherBatchStateCalls + `
RETURN dups, heads, entities`

	cypherBatchStateCalls = `CALL {
  UNWIND $idems AS k
  MATCH (m:Memory {tenant: $tenant, idem_key: k})
  RETURN collect(` + memoryMap + `) AS dups
}
CALL {
  UNWIND $slots AS slot
  MATCH (m:Memory {tenant: $tenant, user_id: slot.user_id, key: slot.key})
  WHERE m.status = 'active'
  RETURN collect(` + memoryMap + `) AS heads
}
CALL {
  UNWIND $entity_ids AS id
  MATCH (e:Entity {tenant: $tenant, id: id})
  RETURN collect(e {.id, .kind, .name}) AS entities
}`

	// cypherWriteBatch creates the memories of $rows ({props, user_id,
	// entities}) with their edges, then applies $supersedes ({id, prev}):
	// prev becomes superseded by id. The aggregation in between finishes
	// every create before the first supersession reads.
	cypherWriteBatch = `UNWIND $rows AS row
CREATE (m:Memory {tenant: $tenant, id: row.props.id})
SET m += row.props
WITH m, row
MERGE (u:User {tenant: $tenant, id: row.user_id})
CREATE (m)-[:ABOUT]->(u)
FOREACH (agent IN CASE WHEN row.props.agent_id IS NULL THEN [] ELSE [row.props.agent_id] END |
  MERGE (a:Agent {tenant: $tenant, id: agent})
  CREATE (m)-[:WRITTEN_BY]->(a))
FOREACH (session IN CASE WHEN row.props.session_id IS NULL THEN [] ELSE [row.props.session_id] END |
  MERGE (s:Session {tenant: $tenant, id: session})
  CREATE (m)-[:IN_SESSION]->(s))
FOREACH (ent IN row.entities |
  MERGE (e:Entity {tenant: $tenant, id: ent.id})
  ON CREATE SET e.kind = ent.kind, e.name = ent.name
  MERGE (m)-[:MENTIONS]->(e))
WITH count(*) AS created
UNWIND $supersedes AS sup
MATCH (n:Memory {tenant: $tenant, id: sup.id})
MATCH (p:Memory {tenant: $tenant, id: sup.prev})
SET p.status = 'superseded', p.valid_to = n.valid_from, p.updated_at = n.updated_at
CREATE (n)-[:SUPERSEDES {at: n.created_at, reason: $reason}]->(p)`
)

// memoryMap is memoryProjection without its alias, for collect().
const memoryMap = `m {.*, entities: [(m)-[:MENTIONS]->(e) | e {.id, .kind, .name}], ` +
	`supersedes: [(m)-[:SUPERSEDES]->(p) | p {.id, .version}]}`

// ddlMemorySlotIdx finds a slot's memories in one seek: stale checks and
// supersession look a slot up for every memory with a key they write.
const ddlMemorySlotIdx = `CREATE INDEX memory_tenant_user_key IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.key)`
