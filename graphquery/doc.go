// Package graphquery answers analysts' questions about the memory graph —
// neighbourhoods, paths between entities, co-mentions, timelines and
// aggregates — under the same read policy as recall. Every query is narrowed
// in the store by the caller's compiled policy filter, every memory that
// comes back is decided again before it leaves, and every count is summed
// from memories the caller may read, so that no answer reveals, even as a
// number, what the caller cannot see. Queries are bounded in hops, rows and
// time, and each one is recorded in the audit trail.
package graphquery
