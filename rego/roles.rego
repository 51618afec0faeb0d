# Sensitivity levels and the capabilities of analyst roles.
#
# These are policy, not data: changing them changes what people may read, so
# they change by review of this file. Sharing grants between agents, which
# admins edit, are data (see grants.rego).
package mneme.authz

# ranks orders the sensitivity levels. It must list memory.Sensitivities in
# order; a Go test checks that it does. A sensitivity that is not a key here is
# unknown, and a memory with an unknown sensitivity is never allowed.
ranks := {
	"public": 0,
	"internal": 1,
	"confidential": 2,
	"restricted": 3,
}

# top_sensitivity is the highest level: a scope clause with no ceiling uses it,
# so that memories of unknown sensitivity never match.
top_sensitivity := "restricted"

# rank_at_most holds when level s is known and no higher than level ceiling.
rank_at_most(s, ceiling) if ranks[s] <= ranks[ceiling]

# analyst_roles says what each analyst role reads: memories of these types,
# about any user and written by any agent of the tenant, up to a sensitivity.
# Analysts never write or delete.
analyst_roles := {
	"analyst": {
		"types": ["procedural", "semantic"],
		"max_sensitivity": "internal",
	},
	"analyst_full": {
		"types": ["episodic", "procedural", "profile", "semantic"],
		"max_sensitivity": "confidential",
	},
}
