package graph

import (
	"strings"

	"mneme/memory"
)

// Queries of memories.go: replacing, reading, listing, deleting and
// searching memories; and the grant listings of grants.go. The batch write
// has its queries in batch_cypher.go, the deduplicated write in
// dedup_cypher.go, reinforcement and confirmation in write_cypher.go.

// Replacing a version (ReplaceMemory), after cypherLockBatch.
const (
	cypherCreateMemory = `CREATE (m:Memory {tenant: $tenant, id: $props.id})
SET m += $props, m.written_at = datetime()
WITH m
CALL (m) { ` + TallyUp + ` }
RETURN m.id AS id`

	// cypherLinkMemory adds the edges of a new version. FOREACH over a zero-
	// or one-element list is Cypher 5's conditional write.
	cypherLinkMemory = `MATCH (m:Memory {tenant: $tenant, id: $id})
FOREACH (uid IN CASE WHEN $scope IS NULL THEN [$user_id] ELSE [] END |
  MERGE (u:User {tenant: $tenant, id: uid})
  CREATE (m)-[:ABOUT]->(u))
FOREACH (sc IN CASE WHEN $scope IS NULL THEN [] ELSE [$scope] END |
  MERGE (s:Scope {tenant: $tenant, kind: sc.kind, id: sc.id})
  CREATE (m)-[:SHARED_IN]->(s))
FOREACH (agent IN CASE WHEN $agent_id IS NULL THEN [] ELSE [$agent_id] END |
  MERGE (a:Agent {tenant: $tenant, id: agent})
  CREATE (m)-[:WRITTEN_BY]->(a))
FOREACH (session IN CASE WHEN $session_id IS NULL THEN [] ELSE [$session_id] END |
  MERGE (s:Session {tenant: $tenant, id: session})
  CREATE (m)-[:IN_SESSION]->(s))
FOREACH (ent IN $entities |
  MERGE (e:Entity {tenant: $tenant, id: ent.id})
  MERGE (m)-[r:MENTIONS]->(e)
  SET r.kind = ent.kind, r.name = ent.name, r.aliases = ent.aliases)`

	// cypherLockHead locks the memory a replacement supersedes and reads what
	// the preconditions need. The SET takes the write lock before the read, so
	// two concurrent replacements of one head serialise and the second sees
	// the first one's result.
	cypherLockHead = `MATCH (p:Memory {tenant: $tenant, id: $id})
SET p._lock = true
REMOVE p._lock
RETURN p.status AS status, p.version AS version, p.user_id AS user_id, p.key AS key`

	// cypherSupersedeHead makes n the head in place of p. A version that
	// raises the sensitivity raises the older versions holding the same
	// text, once case, width, spacing, punctuation and invisible marks are
	// left aside (fact_text, facts.Signature): reclassified, it must not stay
	// readable through them. A candidate superseded before anyone confirmed
	// it is marked never_active: it held at no time, so as_of never finds it.
	cypherSupersedeHead = `MATCH (n:Memory {tenant: $tenant, id: $id})
MATCH (p:Memory {tenant: $tenant, id: $prev_id})
CALL (p) { ` + tallyDownP + ` }
SET p.never_active = CASE WHEN p.status = 'candidate' THEN true END, p.status = 'superseded', p.valid_to = n.valid_from, p.updated_at = n.updated_at
WITH n, p
CALL (p) { ` + tallyUpP + ` }
CREATE (n)-[:SUPERSEDES {at: n.created_at, reason: $reason}]->(p)
WITH n
CALL (n) {
  MATCH (n)-[:SUPERSEDES*1..]->(m:Memory {tenant: $tenant})
  WHERE (m.content = n.content OR m.fact_text = n.fact_text) AND m.sens_rank < n.sens_rank
  CALL (m) { ` + TallyDown + ` }
  SET m.sensitivity = n.sensitivity, m.sens_rank = n.sens_rank
  WITH m
  CALL (m) { ` + TallyUp + ` }
}`
)

// reasonUpdate is the reason on the SUPERSEDES edge of a replacement.
const reasonUpdate = "update"

// Reading memories.
const (
	cypherGetMemory = `MATCH (m:Memory {tenant: $tenant, id: $id})
WHERE ` + cypherNotErasing + `
RETURN ` + memoryProjection

	// cypherHistory walks SUPERSEDES both ways from id: the chain is the
	// connected component, newest version first.
	cypherHistory = `MATCH (:Memory {tenant: $tenant, id: $id})-[:SUPERSEDES*0..]-(m:Memory {tenant: $tenant})
WHERE ` + cypherNotErasing + `
WITH DISTINCT m
ORDER BY m.version DESC, m.created_at DESC, m.id DESC
RETURN ` + memoryProjection

	// The listing query is built by listQuery from these parts and the
	// scope predicate. "m.id IS NOT NULL" is always true; it lets the
	// planner seek the (tenant, id) index instead of scanning every
	// tenant's memories when no user narrows the listing (a composite index
	// needs a predicate on each of its properties).
	cypherListMatch  = `MATCH (m:Memory {tenant: $tenant}) WHERE m.id IS NOT NULL AND `
	cypherListReturn = ` RETURN ` + memoryProjectionLean + ` ORDER BY m.created_at DESC, m.id DESC LIMIT $limit`

	// One user's listing walks an index in its order and stops at the
	// limit, instead of sorting every memory of the user: the (tenant,
	// user, created_at) index, or with a filter on status, agent, kind or
	// type the (tenant, user, <that property>, created_at) one. Ordering by
	// every property of the index, the leading ones fixed by equality, is
	// what lets the planner read it in order; the id breaks ties of
	// created_at in a partial sort. With several filters the rarest kind of
	// value leads: a status, then an agent, then a kind, then a type, since
	// a rare value of those is what would otherwise read the user's every
	// memory to fill a page.
	cypherListUserMatch        = `MATCH (m:Memory {tenant: $tenant}) USING INDEX m:Memory(tenant, user_id, created_at) WHERE m.created_at IS NOT NULL AND `
	cypherListUserStatusMatch  = `MATCH (m:Memory {tenant: $tenant}) USING INDEX m:Memory(tenant, user_id, status, created_at) WHERE m.created_at IS NOT NULL AND `
	cypherListUserTypeMatch    = `MATCH (m:Memory {tenant: $tenant}) USING INDEX m:Memory(tenant, user_id, type, created_at) WHERE m.created_at IS NOT NULL AND `
	cypherListUserAgentMatch   = `MATCH (m:Memory {tenant: $tenant}) USING INDEX m:Memory(tenant, user_id, agent_id, created_at) WHERE m.created_at IS NOT NULL AND `
	cypherListUserKindMatch    = `MATCH (m:Memory {tenant: $tenant}) USING INDEX m:Memory(tenant, user_id, kind, created_at) WHERE m.created_at IS NOT NULL AND `
	cypherListUserOrder        = ` WITH m ORDER BY m.tenant DESC, m.user_id DESC, m.created_at DESC, m.id DESC`
	cypherListUserStatusOrder  = ` WITH m ORDER BY m.tenant DESC, m.user_id DESC, m.status DESC, m.created_at DESC, m.id DESC`
	cypherListUserTypeOrder    = ` WITH m ORDER BY m.tenant DESC, m.user_id DESC, m.type DESC, m.created_at DESC, m.id DESC`
	cypherListUserAgentOrder   = ` WITH m ORDER BY m.tenant DESC, m.user_id DESC, m.agent_id DESC, m.created_at DESC, m.id DESC`
	cypherListUserKindOrder    = ` WITH m ORDER BY m.tenant DESC, m.user_id DESC, m.kind DESC, m.created_at DESC, m.id DESC`
	cypherListUserReturn       = ` LIMIT $limit RETURN ` + memoryProjectionLean
	cypherListUserWindowReturn = ` LIMIT $window WHERE toLower(m.content) CONTAINS $text WITH m LIMIT $limit RETURN ` + memoryProjectionLean

	// A user's text search first reads the newest listWindow memories of
	// the index in order (a common word fills the page there); when they do
	// not fill it, the full-text index names the memories that may contain
	// the text (lucene.ContainsTerms) inside the user's partition, and those are
	// filtered and sorted. The partition and user are checked again on each
	// node, as recall does.
	cypherListFullText = `CALL db.index.fulltext.queryNodes('` + indexFullTextPartition + `', $query) YIELD node
WHERE node.tenant = $tenant
WITH node AS m WHERE `
	cypherListFullTextReturn = ` RETURN ` + memoryProjectionLean + ` ORDER BY m.created_at DESC, m.id DESC LIMIT $limit`

	// cypherVectorIndexSearch is the bare approximate nearest-neighbour query
	// of one user's partition, kept as a baseline for benchmarks: the index
	// search recall makes, without its filters, scope or shared partition.
	cypherVectorIndexSearch = `CYPHER 25
MATCH (m:Memory)
  SEARCH m IN (VECTOR INDEX ` + indexVector + ` FOR $vec WHERE m.partition = $partition LIMIT $k) SCORE AS score
WITH m, score
WHERE m.tenant = $tenant
RETURN ` + memoryProjection + `, score ORDER BY score DESC`
	// cypherVectorIndexSearchWhole is the same where the index knows no
	// partition (Neo4j 5.26): it spans every tenant, hits of other tenants
	// are dropped after the call, so fewer than k may return.
	cypherVectorIndexSearchWhole = `CALL db.index.vector.queryNodes('` + indexVectorWhole + `', $k, $vec) YIELD node, score
WHERE node.tenant = $tenant
WITH node AS m, score
RETURN ` + memoryProjection + `, score ORDER BY score DESC`
)

// Deleting memories.
const (
	// cypherDeleteMemory leaves a content-free tombstone, removes the memory
	// with its edges (a supersession chain through it is cut, not relinked),
	// and returns the ids of the entities it mentioned for orphan cleanup
	// and the idempotency keys that wrote it with its author (see
	// DeletedKeyHash).
	cypherDeleteMemory = `MATCH (m:Memory {tenant: $tenant, id: $id})
WITH m, ` + writtenKeys + ` AS written
CALL (m) { ` + TallyDown + ` }
MERGE (t:Tombstone {tenant: $tenant, id: $id})
SET t.deleted_at = $deleted_at, t.by = $by, t.reason = $reason
WITH m, written, [(m)-[:MENTIONS]->(e) | e.id] AS entity_ids
DETACH DELETE m
RETURN entity_ids, [written] AS written`

	// writtenKeys are the idempotency keys of m, the one that created it and
	// those of the writes that repeated it, with whom it is about and by,
	// and what the one that created it wrote (see deletedBody).
	writtenKeys = `{keys: [k IN [m.idem_key] + coalesce(m.evidence_keys, []) WHERE k IS NOT NULL], user: coalesce(m.user_id, ''), agent: coalesce(m.agent_id, ''),
  created_by: m.idem_key, type: m.type, content: m.content}`

	// cypherRememberDeletedKeys records the hashes of deleted memories'
	// idempotency keys with their author's, so that a retried write does
	// not bring one back.
	cypherRememberDeletedKeys = `UNWIND $rows AS r
MERGE (d:DeletedKey {tenant: $tenant, hash: r.hash})
SET d.author = r.author, d.body = r.body`

	cypherDeleteOrphanEntities = `MATCH (e:Entity {tenant: $tenant})
WHERE e.id IN $ids AND NOT EXISTS { (e)<-[:MENTIONS]-() }
DETACH DELETE e`
)

// listing is how ListMemories answers a query: the first of its queries
// that fills the page, or the last.
type listing struct {
	queries []string
	params  map[string]any
	limit   int
}

// listWindow is how many of a user's newest memories a text search reads
// in order before it asks the full-text index.
const listWindow = 1000

// listQuery builds the listing: the tenant's memories, the scope
// predicate, then one condition per non-empty filter of q.
func listQuery(scope memory.Scope, q memory.ListQuery) listing {
	pred, params := scopePredicate(scope)
	params["tenant"] = scope.Tenant
	limit := clampLimit(q.Limit, defaultListLimit, maxListLimit)
	params["limit"] = limit
	conds := []string{pred}
	add := func(cond, name string, value any) {
		conds = append(conds, cond)
		params[name] = value
	}
	if q.UserID != "" {
		add("m.user_id = $user_id", "user_id", q.UserID)
	}
	if q.Type != "" {
		add("m.type = $type", "type", q.Type)
	}
	if q.Kind != "" {
		add("m.kind = $kind", "kind", q.Kind)
	}
	if q.Status != "" {
		add("m.status = $status", "status", q.Status)
	}
	if !q.From.IsZero() {
		add("m.created_at >= $from", "from", q.From.UTC())
	}
	if !q.To.IsZero() {
		add("m.created_at < $to", "to", q.To.UTC())
	}
	if q.AgentID != "" {
		add("m.agent_id = $agent_id", "agent_id", q.AgentID)
	}
	if q.Shared {
		conds = append(conds, "m.user_id = '' AND coalesce(m.scope, 'user') <> 'user'")
	}
	if q.After != nil {
		// The bound on created_at alone is a range the index seeks.
		add("m.created_at <= $after_at AND (m.created_at < $after_at OR m.id < $after_id)", "after_at", q.After.CreatedAt.UTC())
		params["after_id"] = q.After.ID
	}
	filtered := strings.Join(conds, " AND ")
	if q.Text != "" {
		add("toLower(m.content) CONTAINS $text", "text", strings.ToLower(q.Text))
	}
	where := strings.Join(conds, " AND ")
	if q.UserID == "" {
		return listing{[]string{cypherListMatch + where + cypherListReturn}, params, limit}
	}
	match, order := cypherListUserMatch, cypherListUserOrder
	switch {
	case q.Status != "":
		match, order = cypherListUserStatusMatch, cypherListUserStatusOrder
	case q.AgentID != "":
		match, order = cypherListUserAgentMatch, cypherListUserAgentOrder
	case q.Kind != "":
		match, order = cypherListUserKindMatch, cypherListUserKindOrder
	case q.Type != "":
		match, order = cypherListUserTypeMatch, cypherListUserTypeOrder
	}
	scan := match + where + order + cypherListUserReturn
	if q.Text == "" {
		return listing{[]string{scan}, params, limit}
	}
	window := match + filtered + order + cypherListUserWindowReturn
	params["window"] = listWindow
	terms := containsTerms("content", q.Text)
	if len(terms) == 0 {
		return listing{[]string{window, scan}, params, limit}
	}
	params["query"] = `+partition:"` + escapePhrase(partitionOf(scope.Tenant, q.UserID)) + `" +` + strings.Join(terms, " +")
	return listing{[]string{window, cypherListFullText + where + cypherListFullTextReturn}, params, limit}
}
