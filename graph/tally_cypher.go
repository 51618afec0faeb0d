package graph

// Tallies: how many memories each (user, type, status, sensitivity) bucket
// of a tenant holds, kept up to date by every statement that creates a
// memory, changes its status or deletes it, in the same transaction, so
// that the panel's census reads a few thousand tallies instead of every
// memory (package graph/tally). Each change first locks the user's
// TallyAnchor: a reconciliation (tally.Store.Reconcile), which recounts a
// user under the same lock, then never interleaves with a writer of that
// user, even one whose bucket does not exist yet.

// tallyBucket locks the anchor of the memory bound to m and finds or makes
// its bucket as tb. A memory lacking one of the bucket's properties is not
// tallied (the store writes all of them on every memory).
const tallyBucket = `WITH m WHERE m.user_id IS NOT NULL AND m.type IS NOT NULL AND m.status IS NOT NULL AND m.sensitivity IS NOT NULL
MERGE (ta:TallyAnchor {tenant: $tenant, user_id: m.user_id})
SET ta._lock = true
REMOVE ta._lock
MERGE (tb:MemoryTally {tenant: $tenant, user_id: m.user_id, type: m.type, status: m.status, sensitivity: m.sensitivity})
ON CREATE SET tb.n = 0, tb.sens_rank = m.sens_rank`

// TallyUp and TallyDown are bodies of a unit subquery, CALL (m) { … }, that
// count the memory bound to m into or out of its bucket as it is now: up
// after a memory is created or takes its new status, down before it is
// deleted or leaves its old status. Packages beside graph that change
// memories (upkeep, documents) use them too.
const (
	TallyUp   = tallyBucket + "\nSET tb.n = tb.n + 1"
	TallyDown = tallyBucket + "\nSET tb.n = tb.n - 1"
)

// Schema of the tallies.
const (
	ddlTallyKey     = `CREATE CONSTRAINT memory_tally_key IF NOT EXISTS FOR (n:MemoryTally) REQUIRE (n.tenant, n.user_id, n.type, n.status, n.sensitivity) IS UNIQUE`
	ddlTallyAnchor  = `CREATE CONSTRAINT tally_anchor_key IF NOT EXISTS FOR (n:TallyAnchor) REQUIRE (n.tenant, n.user_id) IS UNIQUE`
	ddlTallyPending = `CREATE CONSTRAINT tally_pending_tenant IF NOT EXISTS FOR (n:TallyPending) REQUIRE n.tenant IS UNIQUE`
)

// cypherTallyPending marks every tenant that holds memories as lacking
// tallies: EnsureSchema runs it once, before it creates the tallies'
// schema, on a database whose memories predate them. A tenant's
// reconciliation removes its mark. It spans every tenant by design and is
// allowlisted in TestCypherIsTenantScoped.
const cypherTallyPending = `MATCH (m:Memory)
WITH DISTINCT m.tenant AS tenant
MERGE (:TallyPending {tenant: tenant})`

// cypherEraseUserTallies removes an erased user's tallies and anchor: by then
// every bucket is zero, and the user's id must be left nowhere.
const cypherEraseUserTallies = `OPTIONAL MATCH (t:MemoryTally {tenant: $tenant, user_id: $user_id})
DELETE t
WITH count(*) AS gone
OPTIONAL MATCH (a:TallyAnchor {tenant: $tenant, user_id: $user_id})
DELETE a`

// tallyDownP and tallyUpP are TallyDown and TallyUp for a memory bound to
// p, the version a new one supersedes.
const (
	tallyDownP = "WITH p AS m\n" + TallyDown
	tallyUpP   = "WITH p AS m\n" + TallyUp
)
