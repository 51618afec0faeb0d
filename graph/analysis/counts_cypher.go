package analysis

import "strings"

// classProperty maps each field a policy filter may read to its Cypher
// expression over m, read as the policy input reads it (absent = ""). A
// field not listed here puts each memory in a class of its own (m.id), so
// that a field added to policies later is never decided for a whole group.
var classProperty = map[string]string{
	"id":          "m.id",
	"user_id":     "coalesce(m.user_id, '')",
	"agent_id":    "coalesce(m.agent_id, '')",
	"type":        "coalesce(m.type, '')",
	"kind":        "coalesce(m.kind, '')",
	"sensitivity": "coalesce(m.sensitivity, '')",
	"status":      "coalesce(m.status, '')",
	"scope":       "coalesce(m.scope, 'user')",
	"scope_id":    "coalesce(m.scope_id, '')",
}

// classList is the Cypher list of a memory's values in the class fields.
func classList(fields []string) string {
	exprs := make([]string, 0, len(fields))
	for _, f := range fields {
		e, ok := classProperty[f]
		if !ok {
			e = "m.id"
		}
		exprs = append(exprs, e)
	}
	return "[" + strings.Join(exprs, ", ") + "]"
}

// resourceMap projects the memory bound to m as a policy resource.
const resourceMap = `m {.id, .tenant, .user_id, .agent_id, .type, .kind, .sensitivity, .status, .scope, .scope_id}`

// countTail groups the rows bound to m, g (the group's key), names and
// kinds by group and decision class: how many memories, and one of them.
func countTail(class string) string {
	return `
WITH g, names, kinds, ` + class + ` AS class, m
WITH g, class, count(m) AS n, head(collect(names)) AS names, head(collect(kinds)) AS kinds, head(collect(m)) AS m
LIMIT $most
RETURN g, names, kinds, class, n, ` + resourceMap + ` AS rep`
}

// groupBy maps an aggregate dimension to its group key over m.
var groupBy = map[string]string{
	"type":        "coalesce(m.type, '')",
	"kind":        "coalesce(m.kind, '')",
	"agent":       "coalesce(m.agent_id, '')",
	"user":        "coalesce(m.user_id, '')",
	"status":      "coalesce(m.status, '')",
	"sensitivity": "coalesce(m.sensitivity, '')",
	"day":         "toString(date(m.created_at))",
	"week":        "toString(date.truncate('week', m.created_at))",
	"month":       "toString(date.truncate('month', m.created_at))",
}

// aggregateQuery counts the memories in scope (where) by the expression
// key, or by the entities they mention for "entity".
func aggregateQuery(by, where, class string) string {
	if by == "entity" {
		return `MATCH (m:Memory {tenant: $tenant})-[r:MENTIONS]->(e:Entity {tenant: $tenant})
WHERE ` + where + `
WITH m, [e.id] AS g, [coalesce(r.name, e.name)] AS names, [coalesce(r.kind, e.kind)] AS kinds` + countTail(class)
	}
	return `MATCH (m:Memory {tenant: $tenant})
WHERE ` + where + `
WITH m, [` + groupBy[by] + `] AS g, [''] AS names, [''] AS kinds` + countTail(class)
}

// coMentionsQuery counts the memories in scope that mention entity
// $entity and another entity, per other entity.
func coMentionsQuery(where, class string) string {
	return `MATCH (e:Entity {tenant: $tenant, id: $entity})<-[re:MENTIONS]-(m:Memory {tenant: $tenant})-[ro:MENTIONS]->(o:Entity {tenant: $tenant})
WHERE o <> e AND ` + where + `
WITH m, [e.id, o.id] AS g, [coalesce(re.name, e.name), coalesce(ro.name, o.name)] AS names, [coalesce(re.kind, e.kind), coalesce(ro.kind, o.kind)] AS kinds` + countTail(class)
}

// pairsQuery counts the memories in scope per pair of entities they both
// mention.
func pairsQuery(where, class string) string {
	return `MATCH (e:Entity {tenant: $tenant})<-[re:MENTIONS]-(m:Memory {tenant: $tenant})-[ro:MENTIONS]->(o:Entity {tenant: $tenant})
WHERE e.id < o.id AND ` + where + `
WITH m, [e.id, o.id] AS g, [coalesce(re.name, e.name), coalesce(ro.name, o.name)] AS names, [coalesce(re.kind, e.kind), coalesce(ro.kind, o.kind)] AS kinds` + countTail(class)
}

// entitiesQuery counts, per entity whose id, or a name a memory in scope
// gives it, contains $text, the memories in scope that mention it. Any
// mention's name narrows the entities first; only a readable one's may
// match, and the entity goes by the first name a readable memory gives it.
func entitiesQuery(where, class string) string {
	return `MATCH (e:Entity {tenant: $tenant})
USING INDEX e:Entity(tenant, id)
WHERE e.id IS NOT NULL AND ($text = '' OR toLower(e.id) CONTAINS $text OR toLower(coalesce(e.name, '')) CONTAINS $text
  OR EXISTS { MATCH (e)<-[n:MENTIONS]-() WHERE toLower(n.name) CONTAINS $text })
MATCH (e)<-[r:MENTIONS]-(m:Memory {tenant: $tenant})
WHERE ` + where + `
WITH e, collect(m) AS ms, collect(r.name) + coalesce(e.name, []) AS said, collect(r.kind) + coalesce(e.kind, []) AS kinds
WHERE $text = '' OR toLower(e.id) CONTAINS $text OR any(n IN said WHERE toLower(n) CONTAINS $text)
UNWIND ms AS m
WITH m, [e.id] AS g, [head(said)] AS names, [head(kinds)] AS kinds` + countTail(class)
}
