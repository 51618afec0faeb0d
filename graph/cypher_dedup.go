package graph

// Query texts of the deduplicated write (WriteDeduped): the locks and the
// state a batch depends on in one query, and the dedup search of a whole
// batch in another. Same rules as cypher.go: constants, parameters only, and
// a tenant predicate on every node.
const (
	// cypherLockAndReadBatch is cypherLockBatch followed by cypherBatchState:
	// one round trip takes the locks and reads under them.
	cypherLockAndReadBatch = cypherLockBatch + "\n" + cypherBatchState

	// cypherSimilarBatch and cypherSimilarBatchScore find, for each probe
	// ({at, user_id, type, vec, fact_text, fact_numbers}) of $probes, the
	// five active or candidate memories of its user and type that could
	// state the same fact (the same normalised text or the same numbers, see
	// memory.FactSignature; memories stored before the signature existed
	// always could) nearest to its vector by exact cosine
	// similarity (mapped back to [-1, 1]), inside the writer's read scope,
	// which lockReadSimilarQuery puts between the two. One list of
	// {at, hits} in all. cypherLockReadSimilar* run them after the locks and
	// the state read, in the same query: the usual write has one scope.
	cypherLockReadSimilarHead = cypherLockBatch + "\n" + cypherBatchStateCalls + `
CALL {
`
	cypherLockReadSimilarTail = `
  RETURN collect({at: probe.at, hits: hits}) AS similar
}
RETURN dups, heads, entities, similar`
	cypherSimilarOnlyHead = `CALL {
`
	cypherSimilarOnlyTail = `
  RETURN collect({at: probe.at, hits: hits}) AS similar
}
RETURN similar`

	cypherSimilarBatch = `UNWIND $probes AS probe
CALL (probe) {
  MATCH (m:Memory {tenant: $tenant, user_id: probe.user_id})
  WHERE m.type = probe.type AND m.status IN ['active', 'candidate']
    AND (m.fact_numbers IS NULL OR m.fact_numbers = probe.fact_numbers OR m.fact_text = probe.fact_text) AND `
	// The embedding is read only in the projection, after the cheap filter:
	// in the WHERE, the planner read it for every memory of the partition.
	cypherSimilarBatchScore = `
  WITH m, CASE WHEN size(m.embedding) = size(probe.vec) THEN 2 * vector.similarity.cosine(m.embedding, probe.vec) - 1 END AS score
  WHERE score IS NOT NULL
  ORDER BY score DESC, m.id
  LIMIT 5
  RETURN collect({memory: ` + memoryMapLean + `, score: score}) AS hits
}`
)

// memoryMapLean is memoryMap without the embedding: a dedup decision needs
// the content and the score, not the vector.
const memoryMapLean = `m {.*, embedding: null, entities: [(m)-[:MENTIONS]->(e) | e {.id, .kind, .name}], ` +
	`supersedes: [(m)-[:SUPERSEDES]->(p) | p {.id, .version}]}`
