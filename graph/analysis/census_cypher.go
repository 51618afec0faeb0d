package analysis

const (
	// cypherCensus counts a tenant's nodes and the relationships leaving
	// them.
	cypherCensus = `MATCH (n {tenant: $tenant})
OPTIONAL MATCH (n)-[r]->()
RETURN count(DISTINCT n) AS nodes, count(r) AS rels`

	// cypherStrangers counts the nodes, of any tenant or none, that carry
	// one of $labels.
	cypherStrangers = `MATCH (n) WHERE any(l IN labels(n) WHERE l IN $labels) RETURN count(n) AS n`
)
