package graph

// Queries of embeddings.go: recreating the vector index for another
// dimension, an operator's command rather than a request path. Package
// upkeep reads and writes the vectors themselves.
const (
	ddlDropVectorIndex      = "DROP INDEX " + indexVector + " IF EXISTS"
	ddlDropVectorIndexWhole = "DROP INDEX " + indexVectorWhole + " IF EXISTS"
)
