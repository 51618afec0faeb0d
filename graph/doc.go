// Package graph is Mneme's system of record on Neo4j and, with the stores
// beside it (its sub-packages), the only code that speaks Cypher. Store, a concrete type, implements the store
// interfaces the memory package declares (memories, search, grants,
// erasure, the vector index), and bootstraps the schema:
// constraints and range, vector and full-text indexes. The stores beside it
// run on the same transaction runner (Store.Runner): keystore keeps tenants,
// principals and API keys, policystore a tenant's policy revisions and
// settings, upkeep serves the janitor and the re-embedder, exportstore reads
// a user's records for a data-subject export; package neo holds the
// plumbing they share.
//
// # Files
//
// Each file holds one area's methods, and <area>_cypher.go beside it holds
// that area's queries: memories.go (reading, listing, replacing, deleting
// and searching memories), batch.go (the batch write: locks, the state read
// under them, the plan's writes), dedup.go (the deduplicated write and its
// search), write.go (reinforcing and confirming memories, near-duplicates,
// the content audit), recall.go (partition size, approximate vector search,
// graph expansion, access counts), erase.go, embeddings.go (the vector
// index), principals.go (agents, users), schema.go (with the one-time
// migrations), grants.go (grant writes take the lock of the tenant's
// policy state, MergePolicyState, as policystore's changes do). cypher.go states
// the rules every query follows and holds the memory projection they share.
// scope.go and filter.go turn a policy scope into a Cypher predicate;
// fulltext.go turns user text into a Lucene query. store.go opens the driver
// and runs transactions through neo.Runner, records.go maps memories to
// properties and records back to values, neo.go names package neo's readers
// (readAll, readOne, count) and its error translation for the package.
//
// # Tenancy
//
// Community Edition has one database, so tenancy is a property: every node
// carries tenant and every query filters on it, with user input only ever
// in parameters. TestCypherIsTenantScoped parses the package and the stores
// beside it and fails when a query touches a labelled node without a tenant
// predicate; the few cross-tenant reads (the policy engine's grants, the
// janitor's tenant list, start-up migrations) are allowlisted there by name.
//
// # Writes and locks
//
// Queries run in managed transactions (Store.read, Store.write, on
// neo.Runner), bounded by the caller's deadline and Options.Timeout and
// retried by the driver on transient errors, so their work must be
// repeatable. A call that must be
// all or nothing runs in one transaction. A write first write-locks what it
// will link to, in one global order: users, sessions, then entities, each
// sorted by id (cypherLockBatch); agents are linked last, in sorted order.
// Every writer of a user's slots holds the user's lock, so what a batch read
// under it (heads, idempotency keys, near-duplicates) cannot change before
// it commits, and concurrent writers queue instead of deadlocking. Replacing
// a version also locks the head it supersedes; an erase of a user, which
// runs in batches, first marks the user's node under its lock, and every
// write that then locks the node finds the mark and is refused until the
// erase is over, while every read leaves the marked user's memories out
// (cypherNotErasing); the erase also leaves a fence that refuses for good
// the user's queued writes accepted before it, and the time it began,
// which refuses for good the writes that began before it (fence_at,
// writefence.ErrUserErased), during the erase or after it. Policy and grant changes
// lock the tenant's PolicyState.
//
// # Errors
//
// Driver errors never leave the package as they are: translate wraps what
// means "the database cannot serve now" (lost connections, a full pool,
// transient errors past the retries, deadlines) as memory.ErrUnavailable and
// a uniqueness violation as memory.ErrConflict; domain errors from the work
// itself (memory.ErrNotFound, memory.InvalidError…) pass through unchanged.
package graph
