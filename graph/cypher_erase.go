package graph

// cypherUserFences returns the fence of each erased user among $refs, the
// ids of user tombstones (memory.UserTombstoneID): a queued write numbered at
// or below it was accepted before the erase and must not be written.
const cypherUserFences = `UNWIND $refs AS ref
MATCH (t:Tombstone {tenant: $tenant, id: ref})
WHERE t.fence IS NOT NULL
RETURN t.id AS ref, t.fence AS fence`
