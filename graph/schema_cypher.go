package graph

// Schema of the memory graph: the constraints and indexes EnsureSchema
// creates (schema.go), the index names recall and re-embedding query, and
// the migrations that fill a property added after data existed. The slot
// and digest indexes sit with the queries that seek them (batch_cypher.go,
// dedup_cypher.go), the policy constraints with the policy queries
// (cypher_policy.go); the schema list in schema.go names them all.

// Schema (DDL). Exempt from the tenant rule: it describes every tenant.
const (
	ddlMemoryID      = `CREATE CONSTRAINT memory_tenant_id IF NOT EXISTS FOR (n:Memory) REQUIRE (n.tenant, n.id) IS UNIQUE`
	ddlUserID        = `CREATE CONSTRAINT user_tenant_id IF NOT EXISTS FOR (n:User) REQUIRE (n.tenant, n.id) IS UNIQUE`
	ddlAgentID       = `CREATE CONSTRAINT agent_tenant_id IF NOT EXISTS FOR (n:Agent) REQUIRE (n.tenant, n.id) IS UNIQUE`
	ddlEntityID      = `CREATE CONSTRAINT entity_tenant_id IF NOT EXISTS FOR (n:Entity) REQUIRE (n.tenant, n.id) IS UNIQUE`
	ddlSessionID     = `CREATE CONSTRAINT session_tenant_id IF NOT EXISTS FOR (n:Session) REQUIRE (n.tenant, n.id) IS UNIQUE`
	ddlTombstoneID   = `CREATE CONSTRAINT tombstone_tenant_id IF NOT EXISTS FOR (n:Tombstone) REQUIRE (n.tenant, n.id) IS UNIQUE`
	ddlDeletedKey    = `CREATE CONSTRAINT deletedkey_tenant_hash IF NOT EXISTS FOR (n:DeletedKey) REQUIRE (n.tenant, n.hash) IS UNIQUE`
	ddlRepeatKey     = `CREATE CONSTRAINT repeatkey_tenant_hash IF NOT EXISTS FOR (n:RepeatKey) REQUIRE (n.tenant, n.hash) IS UNIQUE`
	ddlGrantID       = `CREATE CONSTRAINT grant_tenant_id IF NOT EXISTS FOR (n:Grant) REQUIRE (n.tenant, n.id) IS UNIQUE`
	ddlAPIKeyID      = `CREATE CONSTRAINT apikey_tenant_id IF NOT EXISTS FOR (n:APIKey) REQUIRE (n.tenant, n.id) IS UNIQUE`
	ddlMemoryIdem    = `CREATE CONSTRAINT memory_tenant_idem IF NOT EXISTS FOR (n:Memory) REQUIRE (n.tenant, n.idem_key) IS UNIQUE`
	ddlMemoryUserIdx = `CREATE INDEX memory_tenant_user IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id)`
	ddlMemoryKeyIdx  = `CREATE INDEX memory_tenant_key IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.key)`
	// A user's listing reads these in order, newest first (listQuery).
	ddlMemoryUserCreatedIdx     = `CREATE INDEX memory_tenant_user_created IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.created_at)`
	ddlMemoryUserTypeCreatedIdx = `CREATE INDEX memory_tenant_user_type_created IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.type, n.created_at)`
	// A status, agent or kind filter reads only the memories of that value:
	// a rare one (superseded, archived, an agent that wrote little) fills
	// its page without the user's others.
	ddlMemoryUserStatusCreatedIdx = `CREATE INDEX memory_tenant_user_status_created IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.status, n.created_at)`
	ddlMemoryUserAgentCreatedIdx  = `CREATE INDEX memory_tenant_user_agent_created IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.agent_id, n.created_at)`
	ddlMemoryUserKindCreatedIdx   = `CREATE INDEX memory_tenant_user_kind_created IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.kind, n.created_at)`
	// ddlMemoryCensusIdx holds what counting a tenant's memories by user,
	// type and status needs, and the sensitivity that read policies filter
	// on, so that the count reads the index alone (package census). The
	// store writes all five on every memory, so every memory is in it.
	ddlMemoryCensusIdx = `CREATE INDEX memory_tenant_census IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.type, n.status, n.sensitivity)`
	// ddlMemoryFullTextPartition indexes the content together with the
	// memory's partition (one token naming tenant and user), so that
	// recall's Lucene query finds one user's matches inside the index
	// instead of every tenant's.
	ddlMemoryFullTextPartition = "CREATE FULLTEXT INDEX " + indexFullTextPartition + " IF NOT EXISTS FOR (n:Memory) ON EACH [n.content, n.partition] " +
		"OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk'}}"
	// ddlMemoryVector holds each memory's partition beside its embedding,
	// so that recall's vector search walks one user's neighbours instead of
	// the whole database's (cypherRecallVectorPartition). Filtered vector
	// indexes are Cypher 25, which Neo4j 5.26 lacks: it gets
	// ddlMemoryVectorWhole. The dimension is a parameter: index OPTIONS
	// accept parameters in Cypher 5 and 25.
	ddlMemoryVector = "CYPHER 25 CREATE VECTOR INDEX " + indexVector + " IF NOT EXISTS FOR (n:Memory) ON (n.embedding) WITH [n.partition] " +
		"OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}}"
	ddlMemoryVectorWhole = "CREATE VECTOR INDEX " + indexVectorWhole + " IF NOT EXISTS FOR (n:Memory) ON (n.embedding) " +
		"OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}}"
	ddlShowIndex = `SHOW INDEXES YIELD name, type, options WHERE name = $name RETURN type, options`
	// The names of every index and constraint, which EnsureSchema creates
	// only when missing.
	ddlShowIndexNames      = `SHOW INDEXES YIELD name`
	ddlShowConstraintNames = `SHOW CONSTRAINTS YIELD name`
	ddlAwaitIndexes        = `CALL db.awaitIndexes($seconds)`
	// ddlMakeTokens makes labels, relationship types and property keys
	// (ensureTokens); each procedure leaves an existing name alone.
	ddlMakeTokens = `CALL () { UNWIND $labels AS name CALL db.createLabel(name) }
CALL () { UNWIND $types AS name CALL db.createRelationshipType(name) }
CALL () { UNWIND $properties AS name CALL db.createProperty(name) }`
)

// Index names.
const (
	indexVector = "memory_embedding_partition"
	// indexVectorWhole is the vector index without the partition: Neo4j
	// 5.26's, and on later servers the forerunner of indexVector, which
	// EnsureSchema drops there (every write would pay for both).
	indexVectorWhole = "memory_embedding"
	// indexFullTextPartition is the full-text index recall queries. Its
	// forerunner, memory_content (content alone), is no longer created: no
	// query used it, and every commit of a memory paid for analysing the
	// content into it. Databases that have it may drop it
	// (DROP INDEX memory_content); EnsureSchema leaves that to an operator.
	indexFullTextPartition = "memory_content_partition"
)

// cypherOldPartitions and cypherSetPartitions are the one-time migration
// that gives memories stored before the partition property, or with its
// former value (tenant/user, which the full-text analyser split into words),
// their partition token, computed in Go by partitionOf. They span every
// tenant by design and are allowlisted in TestCypherIsTenantScoped.
const (
	cypherOldPartitions = `MATCH (m:Memory)
WHERE m.partition IS NULL OR m.partition CONTAINS '/'
RETURN elementId(m) AS eid, m.tenant AS tenant, m.user_id AS user_id
LIMIT $batch`
	cypherSetPartitions = `UNWIND $rows AS row
MATCH (m:Memory)
WHERE elementId(m) = row.eid
SET m.partition = row.partition`
)

const (
	// cypherMissingFactSignatures and cypherSetFactSignatures are the
	// one-time migration that gives memories stored before the digests
	// existed their digests (computed in Go, by facts.Signature). They
	// span every tenant by design and are allowlisted in
	// TestCypherIsTenantScoped.
	cypherMissingFactSignatures = `MATCH (m:Memory)
WHERE m.fact_text IS NULL OR m.fact_numbers IS NULL
RETURN elementId(m) AS eid, m.content AS content
LIMIT $batch`
	cypherSetFactSignatures = `UNWIND $rows AS row
MATCH (m:Memory)
WHERE elementId(m) = row.eid
SET m.fact_text = row.fact_text, m.fact_numbers = row.fact_numbers`
)

const (
	// cypherNamedEntities and cypherMoveEntityNames are the one-time
	// migration of entity names to the mentions: an entity's kind and name
	// were set by the first memory that mentioned it, its aliases were every
	// writer's, and all were shown with every memory mentioning it. The kind
	// and name go to the mention of the oldest memory that mentions it, most
	// likely the one that gave them (fewer readers see them than before
	// either way); the aliases, which no one memory gave, are dropped. They
	// span every tenant by design and are allowlisted in
	// TestCypherIsTenantScoped.
	cypherNamedEntities = `MATCH (e:Entity)
WHERE e.name IS NOT NULL OR e.aliases IS NOT NULL OR e.kind IS NOT NULL
RETURN elementId(e) AS eid
LIMIT $batch`
	cypherMoveEntityNames = `UNWIND $rows AS row
MATCH (e:Entity)
WHERE elementId(e) = row.eid
CALL (e) {
  MATCH (m:Memory)-[r:MENTIONS]->(e)
  WITH r ORDER BY m.created_at, m.id LIMIT 1
  SET r.kind = coalesce(r.kind, e.kind), r.name = coalesce(r.name, e.name)
}
REMOVE e.kind, e.name, e.aliases`
)

// Schema of the identity records that package keystore reads and writes:
// tenants, principals and API keys.
const (
	ddlTenantID      = `CREATE CONSTRAINT tenant_tenant_id IF NOT EXISTS FOR (n:Tenant) REQUIRE (n.tenant, n.id) IS UNIQUE`
	ddlPrincipalID   = `CREATE CONSTRAINT principal_tenant_kind_id IF NOT EXISTS FOR (n:Principal) REQUIRE (n.tenant, n.kind, n.id) IS UNIQUE`
	ddlAPIKeyHash    = `CREATE CONSTRAINT apikey_tenant_hash IF NOT EXISTS FOR (n:APIKey) REQUIRE (n.tenant, n.hash) IS UNIQUE`
	ddlAPIKeyOwner   = `CREATE INDEX apikey_tenant_owner IF NOT EXISTS FOR (n:APIKey) ON (n.tenant, n.kind, n.principal_id)`
	ddlPrincipalList = `CREATE INDEX principal_tenant IF NOT EXISTS FOR (n:Principal) ON (n.tenant)`
)

// ddlUserFold finds the users whose ids differ only by case in one seek
// (package keystore writes the folded ids).
const ddlUserFold = `CREATE INDEX user_tenant_fold IF NOT EXISTS FOR (n:User) ON (n.tenant, n.id_fold)`
