package graph

// How the package writes Cypher. Every query lives beside the code that runs
// it, in that file's <area>_cypher.go, as a constant or as a small builder
// (listQuery, recallFilters, expandQuery, scopePredicate, filterPredicate)
// that joins constants with parameter placeholders. User input never
// becomes Cypher text: it travels as parameters. TestCypherIsTenantScoped
// parses the package and fails when a query touches a labelled node without
// a tenant predicate.
//
// The queries are valid Cypher 5 on Neo4j 5.26 LTS and on 2026.x, but for
// the partitioned vector index and its searches, which are Cypher 25
// (2026.x) and have Cypher 5 forms for 5.26 (vectorIndex in schema.go).
//
// This file holds only what every area shares: the projection of a memory
// that decodeMemory reads, returned by reads, listings, recall and writes.
// The batch write's state read and dedup search use a form of it fit for
// collect(), memoryMap (batch_cypher.go).

// memoryProjection returns a memory as a map with its entities and the
// versions it supersedes; decodeMemory reads it. Callers bind the memory to m.
const memoryProjection = `m {.*, ` + memoryProjectionLinks

// memoryProjectionLean is memoryProjection without the embedding, for listings.
const memoryProjectionLean = `m {` + memoryFields + `, ` + memoryProjectionLinks

// MemoryProjectionLean is memoryProjectionLean for the stores of graph's
// subpackages (graph/exportstore), which decode it with MemoryOf.
const MemoryProjectionLean = memoryProjectionLean

// memoryFields are the properties decodeMemory reads but the embedding. A
// projection that leaves the embedding out names them rather than taking
// .* and dropping it: .* reads every property, and decoding the embedding,
// a memory's largest, only to drop it took about 4% of a recall's time in
// Neo4j.
const memoryFields = `.id, .tenant, .user_id, .agent_id, .session_id, .type, .kind, .key, .content, .status, .sensitivity, .importance, .confidence, .source, .scope, .scope_id, .valid_from, .valid_to, .created_at, .updated_at, .version, .idem_key, .evidence_count, .embedding_model, .embedding_dim, .access_count, .last_accessed_at`

// memoryProjectionLinks ends the projections: the memory's entities and the
// versions it supersedes. An entity is the tenant's id, but its kind, name
// and aliases are what the memory's writer called it, kept on the mention:
// words written in a confidential memory, or about an erased user, are no
// one else's to read. (The start-up backfill removes those that earlier
// versions kept on the entity; read here only until it has run.)
const memoryProjectionLinks = `entities: [(m)-[r:MENTIONS]->(e) | {id: e.id, kind: coalesce(r.kind, e.kind), name: coalesce(r.name, e.name), aliases: coalesce(r.aliases, e.aliases)}], ` +
	`supersedes: [(m)-[:SUPERSEDES]->(p) | p {.id, .version}]} AS memory`
