package graph

// Queries of dedup.go: the dedup search of a deduplicated write
// (WriteDeduped), run after the locks and state read of batch_cypher.go in
// the same query, or on its own for a segment's further scopes.
const (
	// cypherSimilarBatch and cypherSimilarBatchScore find, for each probe
	// ({at, user_id, type, vec, fact_text, fact_numbers}) of $probes, the
	// five active or candidate memories of its user and type that could
	// state the same fact (the same normalised text or the same numbers, see
	// facts.Signature) nearest to its vector by exact cosine similarity
	// (mapped back to [-1, 1]), inside the writer's read scope, whose
	// predicate (probeGroup.query) goes between the two. They answer one
	// list of {at, hits}. lockAndRead wraps them in cypherLockReadSimilarHead
	// and cypherLockReadSimilarTail, to run after the locks and the state
	// read in the same query, as the usual write has one scope; similarIn
	// wraps a segment's further scopes in cypherSimilarOnlyHead and
	// cypherSimilarOnlyTail.
	//
	// The candidates come from two index seeks, one per digest, so a search
	// reads the user's possible repeats and not the user's whole partition:
	// filtering the partition was most of the database's work for a queued
	// write once users had a few hundred memories. The hints keep the plan
	// on those indexes; EnsureSchema gives every memory its digests
	// (backfillFactSignatures), so none is missed.
	cypherLockReadSimilarHead = cypherLockBatch + "\n" + cypherBatchStateCalls + `
CALL {
`
	cypherLockReadSimilarTail = `
  RETURN collect({at: probe.at, hits: hits}) AS similar
}
RETURN dups, deleted, repeated, heads, erasing, erased, case_conflict, similar`
	cypherSimilarOnlyHead = `CALL {
`
	cypherSimilarOnlyTail = `
  RETURN collect({at: probe.at, hits: hits}) AS similar
}
RETURN similar`

	cypherSimilarBatch = `UNWIND $probes AS probe
CALL (probe) {
  CALL (probe) {
    MATCH (m:Memory {tenant: $tenant, user_id: probe.user_id, fact_text: probe.fact_text})
    USING INDEX m:Memory(tenant, user_id, fact_text)
    RETURN m
    UNION
    MATCH (m:Memory {tenant: $tenant, user_id: probe.user_id, fact_numbers: probe.fact_numbers})
    USING INDEX m:Memory(tenant, user_id, fact_numbers)
    RETURN m
  }
  WITH m WHERE m.type = probe.type AND m.status IN ['active', 'candidate'] AND `
	// The embedding is read only in the projection, after the cheap filter:
	// in the WHERE, the planner read it for every memory of the partition.
	cypherSimilarBatchScore = `
  WITH m, CASE WHEN size(m.embedding) = size(probe.vec) THEN 2 * vector.similarity.cosine(m.embedding, probe.vec) - 1 END AS score
  WHERE score IS NOT NULL
  ORDER BY score DESC, m.id
  LIMIT 5
  RETURN collect({memory: ` + memoryMap + `, score: score}) AS hits
}`
)

// The indexes of the dedup search's seeks, one per digest of
// facts.Signature.
const (
	ddlMemoryFactTextIdx    = `CREATE INDEX memory_tenant_user_fact_text IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.fact_text)`
	ddlMemoryFactNumbersIdx = `CREATE INDEX memory_tenant_user_fact_numbers IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.user_id, n.fact_numbers)`
)
