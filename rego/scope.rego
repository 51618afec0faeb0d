# The readable scope: what a principal may read, as a set of clauses that the
# graph store turns into a query predicate, so that reads are narrowed before
# they are checked one by one with allow.
#
# Input: as for allow, with action "read" and resource {tenant, user_id}, where
# user_id "" (or absent) asks for every user the principal may read.
#
# Output: scope, a set of clause objects with optional fields
#
#   {user_id, agent_ids: [...], types: [...], kinds: [...], max_sensitivity,
#    scopes: [...], scope_ids: [...], authors: [...]}
#
# A memory of the principal's tenant matches a clause when every present field
# matches: user_id equal, agent_id in agent_ids, type in types, kind in kinds,
# sensitivity known and ranked no higher than max_sensitivity, scope in
# scopes, scope_id in scope_ids, author in authors. Every clause
# carries max_sensitivity, so memories of unknown sensitivity match none. An
# empty set matches nothing.
#
# Invariant (checked from Go over generated principals, grants and memories):
# a memory matches some clause exactly when allow holds for reading it.
package mneme.authz

scope contains narrowed if {
	scope_guards
	some c in clauses
	narrowed := narrow_to_user(c)
}

scope_guards if {
	same_tenant
	known_principal
	input.action == "read"
}

requested_user := object.get(input, ["resource", "user_id"], "")

# narrow_to_user restricts a clause to the requested user, and drops it when
# it is about another user.
narrow_to_user(c) := c if requested_user == ""

narrow_to_user(c) := object.union(c, {"user_id": requested_user}) if {
	requested_user != ""
	object.get(c, "user_id", requested_user) == requested_user
}

# One clause per rule of allow that permits reads.

clauses contains {"max_sensitivity": top_sensitivity} if {
	input.principal.kind == "admin"
}

clauses contains {"agent_ids": [input.principal.id], "max_sensitivity": top_sensitivity} if {
	input.principal.kind == "agent"
}

clauses contains {"authors": ["user"], "scopes": ["user"], "max_sensitivity": top_sensitivity} if {
	input.principal.kind == "agent"
}

clauses contains {"scopes": ["agent"], "scope_ids": [input.principal.id], "max_sensitivity": top_sensitivity} if {
	input.principal.kind == "agent"
}

clauses contains {"scopes": ["tenant"], "max_sensitivity": top_sensitivity} if {
	input.principal.kind == "agent"
}

clauses contains {"scopes": ["team"], "scope_ids": [object.get(input.principal, "team", "")], "max_sensitivity": top_sensitivity} if {
	input.principal.kind == "agent"
	object.get(input.principal, "team", "") != ""
}

clauses contains {"scopes": ["tenant"], "max_sensitivity": user_max_sensitivity} if {
	input.principal.kind == "user"
	users_read_shared
	is_number(ranks[user_max_sensitivity])
}

clauses contains c if {
	some g in active_grants
	c := grant_clause(g)
}

clauses contains {"user_id": input.principal.id, "max_sensitivity": user_max_sensitivity} if {
	input.principal.kind == "user"
	is_number(ranks[user_max_sensitivity])
}

clauses contains {"types": sort(caps.types), "max_sensitivity": caps.max_sensitivity} if {
	input.principal.kind == "analyst"
	some role in input.principal.roles
	caps := analyst_roles[role]
}

# grant_clause is the clause of a grant that shares something: at least one
# type and a known ceiling (grant_covers never holds otherwise).
grant_clause(g) := object.union_n([
	{"types": sort(g.types), "max_sensitivity": g.max_sensitivity, "scopes": sort(grant_scopes)},
	source_filter(g),
	kinds_filter(g),
]) if {
	is_array(g.types)
	count(g.types) > 0
	is_number(ranks[g.max_sensitivity])
}

source_filter(g) := {} if g.source == "*"

source_filter(g) := {"agent_ids": [g.source]} if g.source != "*"

kinds_filter(g) := {} if kinds_unrestricted(g)

kinds_filter(g) := {"kinds": sort(g.kinds)} if not kinds_unrestricted(g)
