package exportstore

import "mneme/graph"

// Queries of export.go: everything the graph holds about one user, for a
// data-subject export.
const (
	// cypherExportMemories lists every memory about a user in every status,
	// oldest first, without embeddings (numbers derived from the content).
	cypherExportMemories = `MATCH (m:Memory {tenant: $tenant, user_id: $user_id})
WHERE ` + graph.NotErasing + `
RETURN ` + graph.MemoryProjectionLean + `
ORDER BY m.created_at, m.id`

	// cypherExportTombstones lists the tombstones about a user: those of
	// their erased memories (user_ref) and the user's own (id), both under
	// memory.UserTombstoneID.
	cypherExportTombstones = `MATCH (t:Tombstone {tenant: $tenant})
WHERE t.user_ref = $ref OR t.id = $ref
RETURN t {.id, .kind, .deleted_at, .by, .reason} AS tombstone
ORDER BY t.deleted_at, t.id`

	// cypherUserErased counts the user's own tombstone, there from the
	// start of their erase (memory.UserTombstoneID).
	cypherUserErased = `MATCH (t:Tombstone {tenant: $tenant, id: $id})
WHERE t.kind = 'user'
RETURN count(t) AS n`
)
