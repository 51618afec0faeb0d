package tally

// The count is cypherCountMatch, the scope predicate, cypherCountReturn.
// The existence conditions name every property of the census index, which
// the planner needs to seek it; the store writes all of them on every
// memory, so they exclude none. Grouping on the index's values and a scope
// over them (tenant, user, type, status, sensitivity) read no memory at
// all; a scope on other properties reads them for the memories it tests.
const (
	cypherCountMatch = `MATCH (m:Memory {tenant: $tenant})
USING INDEX m:Memory(tenant, user_id, type, status, sensitivity)
WHERE m.user_id IS NOT NULL AND m.type IS NOT NULL AND m.status IS NOT NULL AND m.sensitivity IS NOT NULL
  AND `
	cypherCountReturn = `
RETURN m.user_id AS user_id, m.type AS type, m.status AS status, count(*) AS n`
)
