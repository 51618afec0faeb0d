# Sharing grants: "agent X may read memories of types T (kinds K) written by
# agent Y, up to sensitivity S". Grants are data, under data.grants keyed by
# tenant and then by grantee, so that a decision only looks at the grants of
# its principal. Each is shaped like the JSON of memory.Grant:
#
#   data.grants = {
#     "acme": {"support-bot": [{
#       "id": "g1", "tenant": "acme", "grantee": "support-bot",
#       "source": "order-bot",        # or "*": every agent of the tenant
#       "types": ["episodic"],        # empty: the grant shares nothing
#       "kinds": ["order"],           # absent or empty: every kind
#       "max_sensitivity": "internal",
#       "expires_at": "2030-01-01T00:00:00Z",  # absent or null: never
#       "created_at": "..."
#     }]}
#   }
package mneme.authz

# active_grants are the grants of the principal's tenant whose grantee is the
# principal and that have not expired at input.context.now. The grant's own
# tenant and grantee are checked too, in case one was filed in the wrong place.
active_grants contains g if {
	input.principal.kind == "agent"
	some g in data.grants[input.principal.tenant][input.principal.id]
	g.tenant == input.principal.tenant
	g.grantee == input.principal.id
	g.source != ""
	unexpired(g)
}

# unexpired holds for a grant without an expiry, or one that expires strictly
# after input.context.now. Both instants are RFC 3339.
unexpired(g) if object.get(g, "expires_at", null) == null

unexpired(g) if {
	is_string(g.expires_at)
	time.parse_rfc3339_ns(g.expires_at) > time.parse_rfc3339_ns(input.context.now)
}

# grant_covers holds when grant g shares the memory with metadata r. A field
# absent from r counts as "" (package policy always sends every field). A
# grant shares memories about users and an agent's own knowledge, written by
# its source; never the tenant's or a team's knowledge, which policy shares.
grant_covers(g, r) if {
	object.get(r, "scope", "user") in grant_scopes
	source_matches(g.source, object.get(r, "agent_id", ""))
	object.get(r, "type", "") in g.types
	kind_allowed(g, r)
	rank_at_most(r.sensitivity, g.max_sensitivity)
}

grant_scopes := {"user", "agent"}

# The wildcard source shares the memories of every agent of the tenant, and
# those no agent wrote.
source_matches("*", _)

source_matches(source, agent_id) if {
	source != "*"
	source == agent_id
}

# kinds_unrestricted holds when a grant names no kinds: it covers every kind.
kinds_unrestricted(g) if object.get(g, "kinds", null) == null

kinds_unrestricted(g) if {
	is_array(g.kinds)
	count(g.kinds) == 0
}

kind_allowed(g, _) if kinds_unrestricted(g)

kind_allowed(g, r) if object.get(r, "kind", "") in g.kinds
