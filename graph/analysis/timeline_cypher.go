package analysis

// timelineMatch binds the memories of a timeline's subject to m.
var timelineMatch = map[string]string{
	"user":   `MATCH (m:Memory {tenant: $tenant, user_id: $subject})`,
	"entity": `MATCH (:Entity {tenant: $tenant, id: $subject})<-[:MENTIONS]-(m:Memory {tenant: $tenant})`,
	"kind":   `MATCH (m:Memory {tenant: $tenant}) WHERE m.kind = $subject WITH m`,
}

// timelineQuery returns the subject's memories in scope, oldest first.
func timelineQuery(subject, where string) string {
	return timelineMatch[subject] + `
WHERE ` + where + `
RETURN ` + memoryMap + ` AS memory
ORDER BY m.created_at, m.id
LIMIT $limit`
}
