package upkeep

// Queries of embeddings.go: re-embedding a tenant's memories.
const (
	cypherCountMemories = `MATCH (m:Memory {tenant: $tenant}) RETURN count(m) AS n`

	// cypherStaleEmbeddings pages by id through the memories whose vector
	// another model (or none, or another size) made.
	cypherStaleEmbeddings = `MATCH (m:Memory {tenant: $tenant})
WHERE m.id > $after
  AND (m.embedding_model IS NULL OR m.embedding_model <> $model
       OR m.embedding_dim IS NULL OR m.embedding_dim <> $dim)
RETURN m.id AS id, m.content AS content
ORDER BY m.id
LIMIT $limit`

	cypherSetEmbeddings = `UNWIND $rows AS row
MATCH (m:Memory {tenant: $tenant, id: row.id})
SET m.embedding = row.embedding, m.embedding_model = $model, m.embedding_dim = size(row.embedding)
RETURN count(m) AS n`
)
