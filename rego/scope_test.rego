package mneme.authz_test

import data.mneme.authz

scope_of(p, user_id, grants) := s if {
	req := {
		"principal": p,
		"action": "read",
		"resource": {"tenant": p.tenant, "user_id": user_id},
		"context": {"now": now},
	}
	s := authz.scope with input as req with data.grants as filed(grants)
}

scope_with(p, user_id, settings) := s if {
	req := {
		"principal": p,
		"action": "read",
		"resource": {"tenant": p.tenant, "user_id": user_id},
		"context": {"now": now},
	}
	s := authz.scope with input as req with data.grants as {} with data.settings as settings
}

test_scope_admin if {
	scope_of(admin, "", []) == {{"max_sensitivity": "restricted"}}
	scope_of(admin, "u1", []) == {{"user_id": "u1", "max_sensitivity": "restricted"}}
}

# shared_clauses are the clauses of an agent without a team for what others
# share with it: what users said about themselves, its own knowledge and the
# tenant's.
shared_clauses(id) := {
	{"authors": ["user"], "scopes": ["user"], "max_sensitivity": "restricted"},
	{"scopes": ["agent"], "scope_ids": [id], "max_sensitivity": "restricted"},
	{"scopes": ["tenant"], "max_sensitivity": "restricted"},
}

test_scope_agent_own if {
	scope_of(agent, "", []) == {{"agent_ids": ["order-bot"], "max_sensitivity": "restricted"}} | shared_clauses("order-bot")
	scope_of(agent, "u2", []) == {
		{"user_id": "u2", "agent_ids": ["order-bot"], "max_sensitivity": "restricted"},
		{"user_id": "u2", "authors": ["user"], "scopes": ["user"], "max_sensitivity": "restricted"},
		{"user_id": "u2", "scopes": ["agent"], "scope_ids": ["order-bot"], "max_sensitivity": "restricted"},
		{"user_id": "u2", "scopes": ["tenant"], "max_sensitivity": "restricted"},
	}
}

test_scope_agent_team if {
	sales := object.union(agent, {"team": "sales"})
	scope_of(sales, "", []) == {
		{"agent_ids": ["order-bot"], "max_sensitivity": "restricted"},
		{"scopes": ["team"], "scope_ids": ["sales"], "max_sensitivity": "restricted"},
	} | shared_clauses("order-bot")
}

test_scope_user_reads_shared_where_settings_say if {
	scope_with(user, "", {"acme": {"users_read_shared": true}}) == {
		{"user_id": "u1", "max_sensitivity": "internal"},
		{"scopes": ["tenant"], "max_sensitivity": "internal"},
	}
	scope_with(user, "", {"acme": {"users_read_shared": false}}) == {{"user_id": "u1", "max_sensitivity": "internal"}}
}

test_scope_agent_grants if {
	gs := [
		grant({}),
		grant({"id": "g2", "source": "*", "types": ["semantic", "procedural"], "kinds": [], "max_sensitivity": "public"}),
	]
	scope_of(support, "", gs) == {
		{"agent_ids": ["support-bot"], "max_sensitivity": "restricted"},
		{"agent_ids": ["order-bot"], "types": ["episodic"], "kinds": ["order"], "max_sensitivity": "internal", "scopes": ["agent", "user"]},
		{"types": ["procedural", "semantic"], "max_sensitivity": "public", "scopes": ["agent", "user"]},
	} | shared_clauses("support-bot")
}

test_scope_skips_grants_that_share_nothing if {
	gs := [
		grant({"expires_at": "2020-01-01T00:00:00Z"}),
		grant({"types": []}),
		grant({"max_sensitivity": "secret"}),
		grant({"grantee": "other-bot"}),
		grant({"tenant": "globex"}),
		grant({"source": ""}),
	]
	scope_of(support, "", gs) == {{"agent_ids": ["support-bot"], "max_sensitivity": "restricted"}} | shared_clauses("support-bot")
}

test_scope_user if {
	scope_of(user, "", []) == {{"user_id": "u1", "max_sensitivity": "internal"}}
	scope_of(user, "u1", []) == {{"user_id": "u1", "max_sensitivity": "internal"}}
	scope_of(user, "u2", []) == set()
}

test_scope_user_ceiling_from_settings if {
	scope_with(user, "u1", {"acme": {"user_max_sensitivity": "confidential"}}) == {{"user_id": "u1", "max_sensitivity": "confidential"}}
	scope_with(user, "", {"acme": {"user_max_sensitivity": "public"}}) == {{"user_id": "u1", "max_sensitivity": "public"}}
	scope_with(user, "", {"globex": {"user_max_sensitivity": "restricted"}}) == {{"user_id": "u1", "max_sensitivity": "internal"}}
}

# An unknown ceiling gives no clause, as allow permits nothing then.
test_scope_user_unknown_ceiling_is_empty if scope_with(user, "", {"acme": {"user_max_sensitivity": "secret"}}) == set()

test_scope_admin_and_agent_ignore_user_ceiling if {
	s := {"acme": {"user_max_sensitivity": "public"}}
	scope_with(admin, "", s) == {{"max_sensitivity": "restricted"}}
	scope_with(agent, "", s) == {{"agent_ids": ["order-bot"], "max_sensitivity": "restricted"}} | shared_clauses("order-bot")
}

test_scope_analyst if {
	scope_of(analyst(["analyst"]), "", []) == {{"types": ["procedural", "semantic"], "max_sensitivity": "internal"}}
	scope_of(analyst(["analyst", "analyst_full", "auditor"]), "u3", []) == {
		{"user_id": "u3", "types": ["procedural", "semantic"], "max_sensitivity": "internal"},
		{"user_id": "u3", "types": ["episodic", "procedural", "profile", "semantic"], "max_sensitivity": "confidential"},
	}
	scope_of(analyst([]), "", []) == set()
}

test_scope_is_empty_when_guards_fail if {
	# Another tenant's resource.
	s := authz.scope with input as {"principal": admin, "action": "read", "resource": {"tenant": "globex"}}
	s == set()

	# Unknown kind, missing id, not a read.
	scope_of(object.union(admin, {"kind": "robot"}), "", []) == set()
	scope_of(object.union(agent, {"id": ""}), "", []) == set()
	w := authz.scope with input as {"principal": admin, "action": "write", "resource": {"tenant": "acme"}}
	w == set()
}

test_grant_clause if {
	authz.grant_clause(grant({})) == {"agent_ids": ["order-bot"], "types": ["episodic"], "kinds": ["order"], "max_sensitivity": "internal", "scopes": ["agent", "user"]}
	authz.grant_clause(grant({"source": "*", "kinds": null, "types": ["semantic", "episodic"]})) == {"types": ["episodic", "semantic"], "max_sensitivity": "internal", "scopes": ["agent", "user"]}
	not authz.grant_clause(grant({"types": null}))
}
