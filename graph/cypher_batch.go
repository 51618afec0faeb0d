package graph

// Writing a batch of memories: after cypherLockBatch, one query writes every
// memory of the batch. Each row runs in its own CALL subquery, and Neo4j
// runs a subquery to completion for one row before the next, each seeing
// what the previous ones wrote: so memories of one batch apply in order, a
// later memory of a slot supersedes an earlier one of the same batch, and a
// repeated idempotency key finds the memory its first use created.
//
// A row is {i, props, idem, user_id, key, supersede, check_stale}: props are
// the stored properties (memoryProps), supersede says whether the memory
// takes over its slot (active, with a key), check_stale whether a head of
// the slot with a later valid_from makes it stale instead.
//
// Outcomes per row: "created"; "duplicate" when its idempotency key is
// stored already (the stored memory is returned); "stale" when the slot's
// head is newer than the memory (the head is returned, nothing is written).
const cypherWriteBatch = `UNWIND $rows AS row
CALL (row) {
  OPTIONAL MATCH (dup:Memory {tenant: $tenant, idem_key: row.idem})
  WITH row, dup
  OPTIONAL MATCH (newer:Memory {tenant: $tenant, user_id: row.user_id, key: row.key})
  WHERE dup IS NULL AND row.check_stale AND newer.status = 'active' AND newer.valid_from > row.props.valid_from
  WITH row, dup, newer ORDER BY newer.valid_from DESC LIMIT 1
  CALL (row, dup, newer) {
    WITH row, dup, newer WHERE dup IS NULL AND newer IS NULL AND row.idem IS NOT NULL
    MERGE (m:Memory {tenant: $tenant, idem_key: row.idem})
    ON CREATE SET m += row.props, m._created = true
    WITH m, m._created IS NOT NULL AS created
    REMOVE m._created
    RETURN m, created
  UNION
    WITH row, dup, newer WHERE dup IS NULL AND newer IS NULL AND row.idem IS NULL
    CREATE (m:Memory {tenant: $tenant, id: row.props.id})
    SET m += row.props
    RETURN m, true AS created
  UNION
    WITH dup, newer WHERE dup IS NOT NULL OR newer IS NOT NULL
    RETURN coalesce(dup, newer) AS m, false AS created
  }
  CALL (row, m, created) {
    WITH row, m, created WHERE created AND row.supersede
    MATCH (o:Memory {tenant: $tenant, user_id: row.user_id, key: row.key})
    WHERE o.status = 'active' AND o.id <> m.id
    SET o.status = 'superseded', o.valid_to = m.valid_from, o.updated_at = m.updated_at
    CREATE (m)-[:SUPERSEDES {at: m.created_at, reason: $reason}]->(o)
    WITH m, max(o.version) AS top
    SET m.version = top + 1
  }
  CALL (row, m, created) {
    WITH row, m, created WHERE created
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
  }
  RETURN m {.*, embedding: CASE WHEN created THEN null ELSE m.embedding END,
    entities: [(m)-[:MENTIONS]->(e) | e {.id, .kind, .name}],
    supersedes: [(m)-[:SUPERSEDES]->(p) | p {.id, .version}]} AS memory,
    CASE WHEN created THEN 'created' WHEN newer IS NOT NULL THEN 'stale' ELSE 'duplicate' END AS outcome
}
RETURN row.i AS i, memory, outcome`

// ddlMemorySlotIdx finds a slot's memories in one seek: stale checks and
// supersession look a slot up for every memory with a key they write.
const ddlMemorySlotIdx = `CREATE INDEX memory_tenant_user_key IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.key)`
