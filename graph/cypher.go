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
// The batch write's state read and dedup search use forms of it fit for
// collect(), memoryMap and memoryMapLean (batch_cypher.go, dedup_cypher.go).

// memoryProjection returns a memory as a map with its entities and the
// versions it supersedes; decodeMemory reads it. Callers bind the memory to m.
const memoryProjection = `m {.*, ` + memoryProjectionLinks

// memoryProjectionLean is memoryProjection without the embedding, for listings.
const memoryProjectionLean = `m {.*, embedding: null, ` + memoryProjectionLinks

// memoryProjectionLinks ends the projections: the memory's entities and the
// versions it supersedes.
const memoryProjectionLinks = `entities: [(m)-[:MENTIONS]->(e) | e {.id, .kind, .name, .aliases}], ` +
	`supersedes: [(m)-[:SUPERSEDES]->(p) | p {.id, .version}]} AS memory`
