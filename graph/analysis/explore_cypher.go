package analysis

import (
	"strconv"
	"strings"
)

// memoryMap projects the memory bound to m for an answer: its metadata,
// content, entities and the id of the version it superseded; never its
// embedding.
const memoryMap = `m {.id, .tenant, .user_id, .agent_id, .session_id, .type, .kind, .key, .content, .status, ` +
	`.sensitivity, .importance, .confidence, .source, .valid_from, .valid_to, .created_at, .updated_at, .version, .scope, .scope_id, ` +
	`entities: [(m)-[r:MENTIONS]->(e) | {id: e.id, kind: coalesce(r.kind, e.kind), name: coalesce(r.name, e.name)}], supersedes: head([(m)-[:SUPERSEDES]->(o) | o.id])}`

// nameOf and kindOf are the name and kind of node x: a user's or an
// agent's own, and for an entity those a memory in scope, among ms, gives
// it on its mention (an entity keeps none of its own: they are its
// writers' words).
const (
	nameOf = `coalesce(head([w IN ms WHERE x:Entity | head([(w)-[r:MENTIONS]->(x) WHERE r.name IS NOT NULL | r.name])]), x.name)`
	kindOf = `coalesce(head([w IN ms WHERE x:Entity | head([(w)-[r:MENTIONS]->(x) WHERE r.kind IS NOT NULL | r.kind])]), x.kind)`
)

// condMentions holds when the memory bound to m mentions entity $f_entity.
const condMentions = `EXISTS { MATCH (m)-[:MENTIONS]->(fe:Entity) WHERE fe.tenant = $tenant AND fe.id = $f_entity }`

// around is how each node label other than Memory is reached from the
// memories that point to it. Labels and relationship types come from this
// table only.
var around = map[string]struct{ label, rel string }{
	"entity":  {"Entity", "MENTIONS"},
	"user":    {"User", "ABOUT"},
	"agent":   {"Agent", "WRITTEN_BY"},
	"session": {"Session", "IN_SESSION"},
}

// startQuery finds a node other than a memory that some memory in scope
// points to; WHERE is the scope's condition over m. The label is a
// condition of WHERE, which the planner reads as the pattern's.
func startQuery(label, rel, where string) string {
	return `MATCH (x {tenant: $tenant, id: $id})
WHERE x:` + label + `
MATCH (m:Memory {tenant: $tenant})-[:` + rel + `]->(x) WHERE ` + where + `
WITH x, collect(m)[..$witnesses] AS ms
RETURN x.id AS id, ` + nameOf + ` AS name, ` + kindOf + ` AS kind, [m IN ms | ` + resourceMap + `] AS witnesses`
}

// startMemoryQuery finds a memory in scope.
func startMemoryQuery(where string) string {
	return `MATCH (m:Memory {tenant: $tenant, id: $id})
WHERE ` + where + `
RETURN ` + memoryMap + ` AS memory`
}

// intoQuery finds the memories in scope that point to the frontier's nodes
// of one label, newest first.
func intoQuery(label, rel, where string) string {
	return `UNWIND $ids AS xid
MATCH (x {tenant: $tenant, id: xid})<-[:` + rel + `]-(m:Memory {tenant: $tenant})
WHERE x:` + label + ` AND ` + where + `
WITH x, m ORDER BY m.created_at DESC, m.id LIMIT $limit
RETURN x.id AS x_id, ` + memoryMap + ` AS memory`
}

// outQuery finds what the frontier's memories point to.
func outQuery(where string) string {
	return `UNWIND $ids AS mid
MATCH (m:Memory {tenant: $tenant, id: mid})-[r:ABOUT|WRITTEN_BY|MENTIONS|IN_SESSION]->(x)
WHERE ` + where + ` AND x.tenant = $tenant
RETURN m.id AS m_id, type(r) AS rel, labels(x) AS labels, x.id AS id, coalesce(r.name, x.name) AS name, coalesce(r.kind, x.kind) AS kind
LIMIT $limit`
}

// versionsQuery finds the memories in scope one SUPERSEDES step from the
// frontier's memories, either way.
func versionsQuery(where string) string {
	return `UNWIND $ids AS sid
MATCH (s:Memory {tenant: $tenant, id: sid})-[r:SUPERSEDES]-(m:Memory {tenant: $tenant})
WHERE ` + where + `
RETURN s.id AS s_id, startNode(r) = s AS newer, ` + memoryMap + ` AS memory
LIMIT $limit`
}

// pathsQuery finds the shortest paths of at most maxLen relationships of
// the types rels between two entities, every memory on them in scope.
// maxLen is a checked integer and rels come from graphquery.Relations.
func pathsQuery(rels []string, maxLen int, pred string) string {
	return `MATCH (a:Entity {tenant: $tenant, id: $from}), (b:Entity {tenant: $tenant, id: $to})
MATCH p = allShortestPaths((a)-[:` + strings.Join(rels, "|") + `*..` + strconv.Itoa(maxLen) + `]-(b))
WHERE all(m IN nodes(p) WHERE m.tenant = $tenant AND (NOT m:Memory OR ` + pred + `))
WITH p, [m IN nodes(p) WHERE m:Memory] AS ms
RETURN [x IN nodes(p) | {labels: labels(x), id: x.id, name: ` + nameOf + `, kind: ` + kindOf + `,
        memory: CASE WHEN x:Memory THEN head([m IN ms WHERE m = x | ` + memoryMap + `]) END}] AS nodes,
       [r IN relationships(p) | {type: type(r), from: labels(startNode(r)), from_id: startNode(r).id,
        to: labels(endNode(r)), to_id: endNode(r).id}] AS rels
LIMIT $limit`
}
