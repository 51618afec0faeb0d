package graph

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"mneme/facts"
	"mneme/memory"
)

// Recall's Cypher: the partition count that picks the vector path, the
// vector-index search, graph expansion and the access-count update. Every
// query is built from these constants, the scope predicate and parameters.

const (
	// cypherPartitionSize counts one user's memories, every status: it is
	// what an exact vector scan walks through. The (tenant, user_id) index
	// answers it without touching the memories.
	cypherPartitionSize = `MATCH (m:Memory {tenant: $tenant, user_id: $user_id})
RETURN count(m) AS n`

	// cypherRecallVector is the exact cosine scan of each of the search's
	// partitions; recallFilters (without the erase check per memory)
	// follows the WHERE, then cypherRecallRanked, the scope predicate and
	// cypherRecallPartitionTop. A partition whose user is being erased is
	// dropped before the scan, once, rather than checked on each of its
	// memories.
	cypherRecallVector = `UNWIND [uid IN $user_ids WHERE NOT EXISTS { MATCH (eu:User {tenant: $tenant, id: uid}) WHERE eu.erasing }] AS uid
CALL (uid) {
MATCH (m:Memory {tenant: $tenant, user_id: uid})
WHERE m.embedding IS NOT NULL AND size(m.embedding) = size($vec) AND `

	// cypherRecallPartitionTop keeps the limit of each partition's nearest:
	// a user's memories and the shared knowledge searched together come back
	// as they would searched one after the other.
	cypherRecallPartitionTop = ` RETURN m, score ORDER BY score DESC, m.id LIMIT $limit }
RETURN ` + memoryProjectionAsked + `, score ORDER BY score DESC, m.id`

	// cypherRecallVectorPartition asks the vector index for $fetch
	// neighbours in each of the search's partitions: the index holds the
	// partition, so the search walks no other user's memories. The tenant
	// and user are still checked on each node; recallFilters follows. The
	// score is (1 + cos) / 2 like vector.similarity.cosine.
	cypherRecallVectorPartition = `CYPHER 25
UNWIND $partitions AS part
CALL (part) {
  MATCH (m:Memory)
    SEARCH m IN (VECTOR INDEX ` + indexVector + ` FOR $vec WHERE m.partition = part LIMIT $fetch) SCORE AS score
  RETURN m, score
}
WITH m, score
WHERE m.tenant = $tenant AND m.user_id IN $user_ids AND `

	// cypherRecallVectorWhole is the same search where the vector index
	// knows no partition (Neo4j 5.26): $fetch neighbours of the whole
	// database, of which those of this tenant and user are kept.
	cypherRecallVectorWhole = `CALL db.index.vector.queryNodes('` + indexVectorWhole + `', $fetch, $vec) YIELD node, score
WHERE node.tenant = $tenant
WITH node AS m, score
WHERE m.user_id IN $user_ids AND `

	// The Lucene query names the partition, so the index returns only the
	// user's matches; the tenant and user are still checked on each node.
	// A node that matched the partition alone scores 0 (the clause has no
	// weight): its words were all stop words or syntax, so it is no hit.
	cypherRecallFullText = `CALL db.index.fulltext.queryNodes('` + indexFullTextPartition + `', $query, {limit: $fetch}) YIELD node, score
WHERE node.tenant = $tenant AND score > 0
WITH node AS m, score
WHERE m.user_id IN $user_ids AND `

	// recallCosine maps the [0, 1] similarity back to plain cosine.
	cypherRecallCosine = ` WITH m, 2 * score - 1 AS score`
	cypherRecallExact  = ` WITH m, 2 * vector.similarity.cosine(m.embedding, $vec) - 1 AS score`

	// cypherRecallRanked orders an exact scan's memories, nearest first,
	// before the scope predicate that follows it. Neo4j cannot move the
	// predicate below a LIMIT, and it reads the ordered rows one by one until
	// the search's limit has passed, so the predicate is tested on the
	// nearest few memories rather than on the whole partition. The limit is
	// far above what a partition scanned exactly holds.
	cypherRecallRanked = ` ORDER BY score DESC, m.id LIMIT 1000000 WITH m, score WHERE `

	// Graph expansion: the parts are joined by UNION inside one CALL, each
	// returning (found, hop, via, path). Every expansion runs every part, so
	// that it is one statement for Neo4j to plan; a part the request does
	// not ask for walks an empty list ($named_users, $hop1_users,
	// $hop2_users, $seeds, $sessions) and costs nothing. Entities named in the question are
	// looked for among the entities the user's own memories mention, so the
	// match never scans the tenant's whole entity set; they are found once,
	// as the list named, before the parts. An entity matches when a name or
	// alias that a memory the caller may read gives it appears in the
	// question (the scope predicate over m follows the head): ASCII names as
	// whole words of the padded, normalised question, other names anywhere
	// in it. A name only an unreadable memory gives must not answer. The
	// names are matched first, so that the scope is tested only on the few
	// mentions whose name the question holds.
	cypherExpandNamedHead = `CALL {
  UNWIND $named_users AS uid
  MATCH (um:Memory {tenant: $tenant, user_id: uid})-[r:MENTIONS]->(e:Entity {tenant: $tenant})
  USING INDEX um:Memory(tenant, user_id)
  WITH um, e, [coalesce(r.name, e.name)] + coalesce(r.aliases, e.aliases, []) AS names
  WHERE any(n IN names WHERE size(n) >= 2 AND (
    $padded CONTAINS (' ' + toLower(n) + ' ') OR (NOT n =~ '[ -~]*' AND $text CONTAINS toLower(n))))
  WITH um AS m, e
  WHERE `
	cypherExpandNamed = `
  WITH DISTINCT e LIMIT $named_limit
  RETURN collect(e) AS named
}
CALL (named) {
`

	// The hops walk from the user's memories to the named entities, never
	// the other way: a named entity may be a hub of the whole tenant (a
	// product every customer orders), whose mentions outnumber the user's
	// memories a hundredfold. The index hint keeps the planner on that side.
	cypherExpandNamedHop1 = `UNWIND $hop1_users AS uid
MATCH (found:Memory {tenant: $tenant, user_id: uid})-[:MENTIONS]->(e)
USING INDEX found:Memory(tenant, user_id)
WHERE e IN named
RETURN found, 1 AS hop, 'entity' AS via, ['query', 'Entity:' + e.id, 'Memory:' + found.id] AS path`

	// The second hop skips hub entities (a company every memory of the user
	// mentions says nothing about the question), and walks only through
	// memories the caller may read (the scope predicate over m follows the
	// head): the path names them.
	cypherExpandNamedHop2Head = `UNWIND $hop2_users AS uid
MATCH (mid:Memory {tenant: $tenant, user_id: uid})-[:MENTIONS]->(e)
USING INDEX mid:Memory(tenant, user_id)
WHERE e IN named
WITH e, mid AS m
WHERE `
	cypherExpandNamedHop2 = `
WITH e, m AS mid
MATCH (mid)-[:MENTIONS]->(e2:Entity {tenant: $tenant})
WHERE e2 <> e AND COUNT { (e2)<-[:MENTIONS]-() } <= $max_degree
WITH DISTINCT e, mid, e2 LIMIT $fanout
MATCH (e2)<-[:MENTIONS]-(found:Memory {tenant: $tenant})
WHERE found <> mid AND found.user_id IN $user_ids
RETURN found, 2 AS hop, 'entity' AS via,
  ['query', 'Entity:' + e.id, 'Memory:' + mid.id, 'Entity:' + e2.id, 'Memory:' + found.id] AS path`

	// Entities of the first hits, one hop out, but not the user's hubs: an
	// entity more than $hub_max of the user's memories mention (a quarter of
	// them, at least 3: the user's company, named by every order) says
	// nothing about the question. In a small partition an order and its
	// complaint share an entity that is no hub. The entity's degree, which
	// Neo4j keeps on the node, settles most entities; the user's mentions
	// are counted only when it cannot (counting them always doubled the
	// expansion's time in the bench).
	cypherExpandSeeds = `UNWIND $seeds AS sid
MATCH (s:Memory {tenant: $tenant, id: sid})-[:MENTIONS]->(e:Entity {tenant: $tenant})
WHERE s.user_id IN $user_ids AND COUNT { (e)<-[:MENTIONS]-() } <= $max_degree AND (COUNT { (e)<-[:MENTIONS]-() } <= $hub_max OR COUNT { (e)<-[:MENTIONS]-(o) WHERE o.user_id = s.user_id } <= $hub_max)
WITH DISTINCT s, e LIMIT $fanout
MATCH (e)<-[:MENTIONS]-(found:Memory {tenant: $tenant})
WHERE NOT found.id IN $seeds AND found.user_id IN $user_ids
RETURN found, 1 AS hop, 'hit' AS via, ['Memory:' + s.id, 'Entity:' + e.id, 'Memory:' + found.id] AS path`

	// The turns said just before and just after each first hit in its
	// session, by observed time (created_at, then id): the reply to a
	// question that matched one speaker's turn is the other's next turn.
	// Filters and scope apply to what is found, as to every part.
	cypherExpandAdjacent = `UNWIND $seeds AS sid
MATCH (s:Memory {tenant: $tenant, id: sid})-[:IN_SESSION]->(ses:Session {tenant: $tenant})<-[:IN_SESSION]-(o:Memory {tenant: $tenant})
WHERE s.user_id IN $user_ids AND o.user_id = s.user_id AND o <> s
WITH s, ses, o, o.created_at < s.created_at OR o.created_at = s.created_at AND o.id < s.id AS before
ORDER BY o.created_at, o.id
WITH s, ses, before, collect(o) AS os
WITH s, ses, CASE WHEN before THEN os[-1] ELSE os[0] END AS found
WHERE NOT found.id IN $seeds
RETURN found, 1 AS hop, 'adjacent' AS via, ['Memory:' + s.id, 'Session:' + ses.id, 'Memory:' + found.id] AS path`

	// The session's memories, from its node: scanning the user's memories
	// for the session id read the whole partition.
	cypherExpandSession = `UNWIND $sessions AS sid
MATCH (:Session {tenant: $tenant, id: sid})<-[:IN_SESSION]-(found:Memory {tenant: $tenant})
WHERE found.user_id = $user_id
RETURN found, 1 AS hop, 'session' AS via, ['Session:' + sid, 'Memory:' + found.id] AS path`

	// cypherExpandResolve follows a superseded memory to the current head of
	// its chain (when $resolve), keeps the shortest way to each memory and
	// hands over to recallFilters.
	cypherExpandResolve = `
WITH found, hop, via, path,
  CASE WHEN $resolve AND found.status <> 'active' THEN COLLECT {
    MATCH (found)<-[:SUPERSEDES*1..16]-(h:Memory {tenant: $tenant})
    WHERE h.status = 'active'
    RETURN h LIMIT 1
  } ELSE [] END AS heads
WITH coalesce(heads[0], found) AS m, hop, via,
  CASE WHEN size(heads) = 0 THEN path ELSE path + ['SUPERSEDED_BY', 'Memory:' + heads[0].id] END AS path
WHERE m.user_id IN $user_ids AND `

	cypherExpandBest = `
WITH m, hop, via, path ORDER BY hop, size(path)
WITH m, collect({hop: hop, via: via, path: path})[0] AS how
RETURN `
	cypherExpandOrder = `, how.hop AS hop, how.via AS via, how.path AS path,
  CASE WHEN size(m.embedding) = size($vec) THEN 2 * vector.similarity.cosine(m.embedding, $vec) - 1 END AS similarity
ORDER BY hop, m.updated_at DESC, m.id LIMIT $limit`

	// A recall search is a candidate part, recallFilters and
	// cypherSearchReturn.
	cypherSearchReturn = ` RETURN ` + memoryProjectionAsked + `, score ORDER BY score DESC, m.id LIMIT $limit`

	// cypherFullTextReturn also gives each hit's cosine to the question
	// ($vec, empty when the recall has none), so that the relevance gate
	// judges a word match by its meaning too, wherever it ranks by vector.
	cypherFullTextReturn = ` RETURN ` + memoryProjectionAsked + `, score,
  CASE WHEN size($vec) > 0 AND size(m.embedding) = size($vec) THEN 2 * vector.similarity.cosine(m.embedding, $vec) - 1 END AS similarity
ORDER BY score DESC, m.id LIMIT $limit`

	// memoryProjectionAsked is memoryProjection with the embedding only
	// when $embeddings: decoding embeddings is most of a search's client
	// time, and only MMR and the neighbours of first hits need them.
	memoryProjectionAsked = `m {` + memoryFields + `, embedding: CASE WHEN $embeddings THEN m.embedding END, ` + memoryProjectionLinks

	// cypherTouchMemories records that memories were recalled. It runs off
	// the request path, after the answer has left.
	cypherTouchMemories = `UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
SET m.access_count = coalesce(m.access_count, 0) + 1,
    m.last_accessed_at = CASE WHEN m.last_accessed_at IS NULL OR m.last_accessed_at < $at THEN $at ELSE m.last_accessed_at END
RETURN count(m) AS touched`
)

// cypherRecallFilters are the conditions every recall search shares: what
// was true (active now, or valid at $as_of, superseded or expired since, or
// shared knowledge retired since: archived with its validity closed, as a
// removed document's sections are), never a version that was never active
// (a candidate superseded or expired unconfirmed: never_active), then the
// request's filters, each
// off when its parameter is null. They are one text whatever the request
// asks, so that Neo4j plans each search once: none of them picks an index
// (the searches seek the user's partition, the vector or the full-text
// index first), so a filter that is off costs a null test per memory.
const cypherRecallFilters = `(CASE WHEN $as_of IS NULL
  THEN m.status = 'active' AND (m.valid_to IS NULL OR m.valid_to > $now)
  ELSE (m.status IN ['active', 'superseded', 'expired'] OR m.status = 'archived' AND m.valid_to IS NOT NULL AND coalesce(m.scope, 'user') <> 'user')
    AND m.never_active IS NULL AND m.created_at <= $as_of AND m.valid_from <= $as_of AND (m.valid_to IS NULL OR m.valid_to > $as_of) END)
AND ($types IS NULL OR m.type IN $types) AND ($kinds IS NULL OR m.kind IN $kinds)
AND ($from IS NULL OR m.created_at >= $from) AND ($to IS NULL OR m.created_at < $to)
AND ($in_session IS NULL OR m.session_id = $in_session)
AND ($slot_keys IS NULL OR m.key IN $slot_keys OR m.kind IN $slot_kinds OR m.type IN $slot_types)
AND `

// recallFilters returns cypherRecallFilters (ending in AND) and the scope
// predicate, with their values in params: the request's filters, the
// scope's, the tenant, the user's partitions (user_ids) and the limit.
//
// The policy's predicate is one opaque condition (a CASE) for the planner:
// given a disjunction over a memory's fields, Neo4j planned a scan of the
// partition per disjunct and a union of them, five scans for the demo
// policy. With erasing, each memory's user is checked for an erase in
// progress, which a query that drops such partitions before it reads them
// does not need.
func recallFilters(scope memory.Scope, q memory.SearchQuery, erasing bool) (string, string, map[string]any) {
	pred, params := policyPredicate(scope)
	if pred != "false" {
		pred = "(CASE WHEN " + pred + " THEN true ELSE false END)"
	}
	if erasing {
		pred = notErasing(pred)
	}
	params["tenant"] = scope.Tenant
	params["user_ids"] = partitionsOf(q)
	params["limit"] = clampLimit(q.Limit, defaultSearchLimit, maxSearchLimit)
	params["embeddings"] = q.Embeddings
	// A temporary memory is no longer recalled once its validity ends.
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	params["now"] = now.UTC()
	// Untyped nil: the driver sends null, which turns the filter off.
	orNull := func(name string, on bool, v any) {
		params[name] = nil
		if on {
			params[name] = v
		}
	}
	orNull("as_of", !q.AsOf.IsZero(), q.AsOf.UTC())
	types, kinds := withoutEmpty(q.Types), withoutEmpty(q.Kinds)
	orNull("types", len(types) > 0, types)
	orNull("kinds", len(kinds) > 0, kinds)
	orNull("from", !q.From.IsZero(), q.From.UTC())
	orNull("to", !q.To.IsZero(), q.To.UTC())
	orNull("in_session", q.SessionID != "", q.SessionID)
	list := func(xs []string) []string { return append([]string{}, withoutEmpty(xs)...) }
	sl := cmp.Or(q.Slots, &memory.Slots{})
	orNull("slot_keys", q.Slots != nil, list(sl.Keys))
	orNull("slot_kinds", q.Slots != nil, list(sl.Kinds))
	orNull("slot_types", q.Slots != nil, list(sl.Types))
	return cypherRecallFilters, pred, params
}

// recallVectorQuery builds the exact cosine search of the search's
// partitions, the limit from each.
// The scope predicate, the costliest condition, is tested last, on the
// nearest memories first, until the limit is reached (cypherRecallRanked).
func recallVectorQuery(scope memory.Scope, q memory.SearchQuery) (string, map[string]any) {
	filters, pred, params := recallFilters(scope, q, false)
	params["vec"] = float64s(q.Embedding)
	return cypherRecallVector + filters + "true" + cypherRecallExact + cypherRecallRanked + pred + cypherRecallPartitionTop, params
}

// recallVectorIndexQuery builds the vector-index search that fetches fetch
// neighbours, in each partition of the search when the index is
// partitioned, and keeps those of the user in scope.
func recallVectorIndexQuery(scope memory.Scope, q memory.SearchQuery, fetch int, partitioned bool) (string, map[string]any) {
	filters, pred, params := recallFilters(scope, q, true)
	params["vec"] = float64s(q.Embedding)
	params["fetch"] = fetch
	if !partitioned {
		return cypherRecallVectorWhole + filters + pred + cypherRecallCosine + cypherSearchReturn, params
	}
	var parts []string
	for _, u := range partitionsOf(q) {
		parts = append(parts, partitionOf(scope.Tenant, u))
	}
	params["partitions"] = parts
	return cypherRecallVectorPartition + filters + pred + cypherRecallCosine + cypherSearchReturn, params
}

// recallFullTextQuery builds the full-text search for the escaped words of
// a Lucene query: required inside the user's partition (with no weight, so
// scores stay those of the words), at least one word in the content.
func recallFullTextQuery(scope memory.Scope, q memory.SearchQuery, words string) (string, map[string]any) {
	filters, pred, params := recallFilters(scope, q, true)
	var parts []string
	for _, u := range partitionsOf(q) {
		parts = append(parts, `partition:"`+escapePhrase(partitionOf(scope.Tenant, u))+`"`)
	}
	partition := parts[0]
	if len(parts) > 1 {
		partition = "(" + strings.Join(parts, " ") + ")"
	}
	params["query"] = `+` + partition + `^0 +content:(` + words + identifierPhrases(q.Text) + `)`
	params["fetch"] = maxSearchLimit
	params["vec"] = float64s(q.Embedding)
	return cypherRecallFullText + filters + pred + cypherFullTextReturn, params
}

// identifierPhrases are the identifiers text names (facts.Identifiers) as
// boosted phrases, each to be added to a query's words: the analyzer splits
// SO-1001 into "so" and "1001", which every order of the series shares,
// and the phrase ranks the memory that holds SO-1001 itself first.
func identifierPhrases(text string) string {
	var b strings.Builder
	for _, id := range facts.Identifiers(text) {
		b.WriteString(` "` + escapePhrase(id) + `"^4`)
	}
	return b.String()
}

// partitionsOf lists the user ids a search reads: the user's, and with
// q.Shared also "", that of the knowledge shared in the tenant (alone when
// q names no user).
func partitionsOf(q memory.SearchQuery) []string {
	if q.Shared && q.UserID == "" {
		return []string{""}
	}
	if q.Shared {
		return []string{q.UserID, ""}
	}
	return []string{q.UserID}
}

// partitionOf is the partition property of a memory: a token naming its
// tenant and user ("" for shared knowledge). It is one word to the
// full-text analyser, so that the index matches exactly one partition: as
// the words of "tenant/user", the shared partition's "tenant/" matched
// every memory of the tenant, and the user's matches went missing behind
// other users' once the tenant had more than a search fetches.
func partitionOf(tenant, userID string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + userID))
	return "p" + hex.EncodeToString(sum[:16])
}

// Expansion bounds: how many named entities, intermediate paths and hub
// sizes a graph expansion considers.
const (
	expandNamedLimit = 10
	expandFanout     = 200
	expandMaxDegree  = 50
)

// expandQuery builds the graph expansion for the parts q asks for, or ""
// when it asks for none. Its text is the same for every q that asks for
// some (see cypherExpandNamed).
func expandQuery(scope memory.Scope, q memory.ExpandQuery) (string, map[string]any) {
	if q.Text == "" && len(q.Seeds) == 0 && q.SessionID == "" {
		return "", nil
	}
	sq := q.Filters
	sq.UserID, sq.Limit = q.UserID, q.Limit
	filters, pred, params := recallFilters(scope, sq, true)
	params["user_id"] = q.UserID
	users, none := partitionsOf(sq), []string{}
	text, padded := normaliseForNames(q.Text)
	params["text"], params["padded"], params["named_limit"] = text, padded, expandNamedLimit
	params["named_users"], params["hop1_users"], params["hop2_users"] = none, none, none
	if q.Text != "" {
		params["named_users"], params["hop1_users"] = users, users
		if q.Hops >= 2 {
			params["hop2_users"] = users
		}
	}
	params["seeds"] = append([]string{}, q.Seeds...)
	params["sessions"] = none
	if q.SessionID != "" {
		params["sessions"] = []string{q.SessionID}
	}
	params["fanout"], params["max_degree"], params["hub_max"] = expandFanout, expandMaxDegree, max(3, q.Partition/4)
	params["resolve"], params["vec"] = q.Filters.AsOf.IsZero(), float64s(q.Filters.Embedding)
	return cypherExpandNamedHead + pred + cypherExpandNamed + strings.Join([]string{cypherExpandNamedHop1, cypherExpandNamedHop2Head + pred + cypherExpandNamedHop2, cypherExpandSeeds, cypherExpandAdjacent, cypherExpandSession}, "\nUNION\n") +
		"\n}" + cypherExpandResolve + filters + pred + cypherExpandBest + memoryProjectionAsked + cypherExpandOrder, params
}

// normaliseForNames lowercases a question for entity-name matching and
// returns it as is and padded with word separators: letters, digits and
// '-' stay, everything else becomes a space, so " so-1001 " is found as a
// whole word.
func normaliseForNames(text string) (string, string) {
	lower := strings.ToLower(text)
	var b strings.Builder
	b.WriteByte(' ')
	for _, r := range lower {
		switch {
		case r < 128 && !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_'):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(' ')
	return lower, b.String()
}

// touchParams are the parameters of cypherTouchMemories.
func touchParams(tenant string, ids []string, at time.Time) map[string]any {
	return map[string]any{"tenant": tenant, "ids": ids, "at": at.UTC()}
}
