package graph

// Query texts of the write pipeline beyond plain creation: finding
// near-duplicates, reinforcing and confirming memories, and the content scan
// that proves a value was never stored. Same rules as cypher.go: constants,
// parameters only, and a tenant predicate on every node.
const (
	// cypherCountText counts the node and relationship properties of one
	// tenant that hold needle: a string property containing it, or a list
	// of strings with an element containing it. Slow (it reads every node
	// of the tenant); meant for audits and tests, not requests.
	cypherCountText = `MATCH (n {tenant: $tenant})
UNWIND keys(n) AS k
WITH n, n[k] AS v
WHERE (v IS :: STRING AND v CONTAINS $needle)
   OR (v IS :: LIST<STRING> AND any(x IN v WHERE x CONTAINS $needle))
RETURN count(*) AS hits
UNION ALL
MATCH (n {tenant: $tenant})-[r]->()
UNWIND keys(r) AS k
WITH r, r[k] AS v
WHERE (v IS :: STRING AND v CONTAINS $needle)
   OR (v IS :: LIST<STRING> AND any(x IN v WHERE x CONTAINS $needle))
RETURN count(*) AS hits`
)
