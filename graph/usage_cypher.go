package graph

// Queries of usage.go.
const (
	// cypherTenantUsage counts a tenant's memories in every status and the
	// characters of their content. "m.id IS NOT NULL" lets the planner seek
	// the (tenant, id) constraint's index instead of scanning every tenant.
	cypherTenantUsage = `MATCH (m:Memory {tenant: $tenant})
WHERE m.id IS NOT NULL
RETURN count(m) AS memories, coalesce(sum(size(m.content)), 0) AS chars`
)
