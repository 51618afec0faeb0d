package mneme.authz_test

import data.mneme.authz

now := "2025-06-01T12:00:00Z"

agent := {"tenant": "acme", "kind": "agent", "id": "order-bot"}

user := {"tenant": "acme", "kind": "user", "id": "u1"}

admin := {"tenant": "acme", "kind": "admin", "id": "root"}

analyst(roles) := {"tenant": "acme", "kind": "analyst", "id": "ana", "roles": roles}

# mem is a memory of acme about u1 written by order-bot, with overrides.
mem(overrides) := object.union(
	{
		"tenant": "acme", "id": "m1", "user_id": "u1", "agent_id": "order-bot",
		"type": "episodic", "kind": "order", "sensitivity": "internal", "status": "active",
	},
	overrides,
)

# filed files grants as package policy does: by tenant, then by grantee.
filed(grants) := {tenant: by_grantee |
	some g0 in grants
	tenant := g0.tenant
	by_grantee := {grantee: gs |
		some g1 in grants
		g1.tenant == tenant
		grantee := g1.grantee
		gs := [g | some g in grants; g.tenant == tenant; g.grantee == grantee]
	}
}

in_put(p, action, r) := {"principal": p, "action": action, "resource": r, "context": {"now": now}}

allowed(p, action, r) if authz.allow with input as in_put(p, action, r) with data.grants as {}

# allowed_with decides with tenant settings (see settings.rego).
allowed_with(settings, p, action, r) if {
	authz.allow with input as in_put(p, action, r) with data.grants as {} with data.settings as settings
}

reasons(p, action, r) := rs if {
	rs := authz.reasons with input as in_put(p, action, r) with data.grants as {}
}

# Guards.

test_default_is_deny if not authz.allow with input as {}

test_tenant_mismatch_denies_every_kind if {
	some p in [agent, user, admin, analyst(["analyst_full"])]
	not allowed(p, "read", mem({"tenant": "globex"}))
}

test_tenant_mismatch_reason if {
	"tenant mismatch" in reasons(admin, "read", mem({"tenant": "globex"}))
}

test_empty_tenant_denies if {
	not allowed(object.union(admin, {"tenant": ""}), "read", mem({"tenant": ""}))
}

test_missing_resource_tenant_denies if {
	not allowed(admin, "read", object.remove(mem({}), ["tenant"]))
}

test_unknown_principal_kind_denies if {
	p := object.union(admin, {"kind": "robot"})
	not allowed(p, "read", mem({}))
	"unknown principal" in reasons(p, "read", mem({}))
}

test_principal_without_id_denies if {
	not allowed(object.union(agent, {"id": ""}), "read", mem({"agent_id": ""}))
}

test_unknown_action_denies if {
	not allowed(admin, "purge", mem({}))
	"unknown action" in reasons(admin, "purge", mem({}))
}

test_unknown_sensitivity_denies if {
	not allowed(admin, "read", mem({"sensitivity": "secret"}))
	not allowed(agent, "read", mem({"sensitivity": "secret"}))
	not allowed(user, "read", mem({"sensitivity": "secret"}))
	"unknown sensitivity" in reasons(admin, "read", mem({"sensitivity": "secret"}))
}

test_missing_sensitivity_denies if {
	not allowed(admin, "write", object.remove(mem({}), ["sensitivity"]))
}

# Agents.

test_agent_reads_own_memory if {
	allowed(agent, "read", mem({}))
	reasons(agent, "read", mem({})) == {"agent reads its own memory"}
}

test_agent_reads_own_memory_about_any_user if allowed(agent, "read", mem({"user_id": "u2"}))

test_agent_reads_own_restricted_memory if allowed(agent, "read", mem({"sensitivity": "restricted"}))

test_agent_does_not_read_other_agent_without_grant if {
	not allowed(agent, "read", mem({"agent_id": "support-bot"}))
	reasons(agent, "read", mem({"agent_id": "support-bot"})) == {"no rule permits agent read"}
}

test_agent_does_not_read_memory_without_agent if not allowed(agent, "read", object.remove(mem({}), ["agent_id"]))

# What u1 said about themselves, as package policy sends it.
said := mem({"agent_id": "user:u1", "author": "user", "type": "profile", "kind": "preference", "sensitivity": "confidential"})

test_agent_reads_what_the_user_said_about_themselves if {
	reasons(agent, "read", said) == {"agent reads what the user said about themselves"}
	not allowed(agent, "write", said)
	not allowed(agent, "delete", said)
	not allowed(agent, "confirm", said)
}

test_agent_does_not_read_an_author_id_of_that_form_alone if {
	not allowed(agent, "read", object.union(said, {"author": "agent"}))
	not allowed(agent, "read", object.remove(said, ["author"]))
	not allowed(agent, "read", object.union(said, {"scope": "agent", "scope_id": "support-bot"}))
}

test_agent_writes_own_memory if allowed(agent, "write", mem({"user_id": "u9"}))

test_agent_does_not_write_as_another_agent if not allowed(agent, "write", mem({"agent_id": "support-bot"}))

test_agent_does_not_write_memory_without_user if not allowed(agent, "write", mem({"user_id": ""}))

test_agent_deletes_own_memory if allowed(agent, "delete", mem({}))

test_agent_does_not_delete_other_agent_memory if not allowed(agent, "delete", mem({"agent_id": "support-bot"}))

test_agent_does_not_manage if not allowed(agent, "manage", {"tenant": "acme"})

# End users.

test_user_reads_memories_about_themselves if {
	allowed(user, "read", mem({"agent_id": "any-bot", "sensitivity": "internal"}))
	allowed(user, "read", mem({"agent_id": "any-bot", "sensitivity": "public"}))
}

# The ceiling: by default users read up to internal; what is above is read by
# admins and by the agents that wrote it.
test_user_does_not_read_above_the_default_ceiling if {
	not allowed(user, "read", mem({"sensitivity": "confidential"}))
	not allowed(user, "read", mem({"sensitivity": "restricted"}))
	reasons(user, "read", mem({"sensitivity": "confidential"})) == {"no rule permits user read"}
	allowed(admin, "read", mem({"sensitivity": "confidential"}))
	allowed(agent, "read", mem({"sensitivity": "confidential"}))
}

test_user_ceiling_is_a_tenant_setting if {
	s := {"acme": {"user_max_sensitivity": "confidential"}}
	allowed_with(s, user, "read", mem({"sensitivity": "confidential"}))
	not allowed_with(s, user, "read", mem({"sensitivity": "restricted"}))
	allowed_with({"acme": {"user_max_sensitivity": "restricted"}}, user, "read", mem({"sensitivity": "restricted"}))
}

test_user_ceiling_can_be_lowered if {
	s := {"acme": {"user_max_sensitivity": "public"}}
	allowed_with(s, user, "read", mem({"sensitivity": "public"}))
	not allowed_with(s, user, "read", mem({"sensitivity": "internal"}))
}

test_user_ceiling_of_another_tenant_does_not_apply if {
	not allowed_with({"globex": {"user_max_sensitivity": "restricted"}}, user, "read", mem({"sensitivity": "confidential"}))
}

test_user_ceiling_unknown_reads_nothing if {
	s := {"acme": {"user_max_sensitivity": "secret"}}
	not allowed_with(s, user, "read", mem({"sensitivity": "public"}))
}

test_user_ceiling_does_not_bind_admins_or_agents if {
	s := {"acme": {"user_max_sensitivity": "public"}}
	allowed_with(s, admin, "read", mem({"sensitivity": "restricted"}))
	allowed_with(s, agent, "read", mem({"sensitivity": "restricted"}))
}

test_user_does_not_read_memories_about_others if not allowed(user, "read", mem({"user_id": "u2"}))

test_user_deletes_memories_about_themselves if allowed(user, "delete", mem({}))

test_user_does_not_delete_memories_about_others if not allowed(user, "delete", mem({"user_id": "u2"}))

test_user_writes_profile_and_episodic_about_themselves if {
	allowed(user, "write", mem({"type": "profile", "agent_id": "user:u1"}))
	allowed(user, "write", mem({"type": "episodic", "agent_id": "user:u1"}))
}

# A user writes nothing they could not read back and delete: not above the
# tenant's ceiling, whose name the refusal carries.
test_user_does_not_write_above_their_ceiling if {
	mine := {"type": "profile", "agent_id": "user:u1"}
	allowed(user, "write", mem(object.union(mine, {"sensitivity": "internal"})))
	not allowed(user, "write", mem(object.union(mine, {"sensitivity": "confidential"})))
	not allowed(user, "write", mem(object.union(mine, {"sensitivity": "restricted"})))
	authz.write_ceiling == "internal" with input as in_put(user, "write", mem(object.union(mine, {"sensitivity": "restricted"})))
		with data.grants as {}
	reasons(user, "write", mem(object.union(mine, {"sensitivity": "restricted"}))) == {"sensitivity restricted is above the user's ceiling internal"}
}

test_user_write_ceiling_is_the_tenant_setting if {
	mine := {"type": "profile", "agent_id": "user:u1"}
	allowed_with({"acme": {"user_max_sensitivity": "confidential"}}, user, "write", mem(object.union(mine, {"sensitivity": "confidential"})))
	not allowed_with({"acme": {"user_max_sensitivity": "public"}}, user, "write", mem(object.union(mine, {"sensitivity": "internal"})))
	authz.write_ceiling == "public" with input as in_put(user, "write", mem(object.union(mine, {"sensitivity": "internal"})))
		with data.grants as {} with data.settings as {"acme": {"user_max_sensitivity": "public"}}
}

# write_ceiling names only that refusal: not a write allowed, nor one refused
# for another reason, nor anyone's but a user's.
test_write_ceiling_only_for_a_users_write_above_it if {
	mine := {"type": "profile", "agent_id": "user:u1", "sensitivity": "restricted"}
	not authz.write_ceiling with input as in_put(user, "write", mem(object.union(mine, {"sensitivity": "internal"}))) with data.grants as {}
	not authz.write_ceiling with input as in_put(user, "write", mem(object.union(mine, {"type": "semantic"}))) with data.grants as {}
	not authz.write_ceiling with input as in_put(user, "write", mem(object.union(mine, {"user_id": "u2"}))) with data.grants as {}
	not authz.write_ceiling with input as in_put(user, "read", mem(mine)) with data.grants as {}
	not authz.write_ceiling with input as in_put(agent, "write", mem({"sensitivity": "restricted"})) with data.grants as {}
	allowed(agent, "write", mem({"sensitivity": "restricted"}))
	allowed(admin, "write", mem(mine))
}

test_user_does_not_write_semantic_or_procedural if {
	not allowed(user, "write", mem({"type": "semantic", "agent_id": "user:u1"}))
	not allowed(user, "write", mem({"type": "procedural", "agent_id": "user:u1"}))
}

test_user_does_not_write_about_others if not allowed(user, "write", mem({"user_id": "u2", "type": "profile", "agent_id": "user:u1"}))

# No impersonation: a user writes only as "user:<its id>".
test_user_does_not_write_as_an_agent if {
	not allowed(user, "write", mem({"type": "profile", "agent_id": "support-bot"}))
	not allowed(user, "write", mem({"type": "episodic", "agent_id": "order-bot"}))
	reasons(user, "write", mem({"type": "profile", "agent_id": "support-bot"})) == {"no rule permits user write"}
}

test_user_does_not_write_as_another_user if not allowed(user, "write", mem({"type": "profile", "agent_id": "user:u2"}))

test_user_does_not_write_without_author if {
	not allowed(user, "write", mem({"type": "profile", "agent_id": ""}))
	not allowed(user, "write", object.remove(mem({"type": "profile"}), ["agent_id"]))
	not allowed(user, "write", mem({"type": "profile", "agent_id": "user:"}))
	not allowed(user, "write", mem({"type": "profile", "agent_id": "u1"}))
}

test_user_does_not_manage if not allowed(user, "manage", {"tenant": "acme"})

# Admins.

test_admin_does_everything_in_its_tenant if {
	every action in ["read", "write", "delete"] {
		allowed(admin, action, mem({"user_id": "u7", "agent_id": "x", "sensitivity": "restricted"}))
	}
	allowed(admin, "manage", {"tenant": "acme"})
	reasons(admin, "manage", {"tenant": "acme"}) == {"admin may manage in its tenant"}
}

test_admin_does_not_manage_another_tenant if not allowed(admin, "manage", {"tenant": "globex"})

test_manage_is_admin_only if {
	every p in [agent, user, analyst(["analyst_full"])] {
		not allowed(p, "manage", {"tenant": "acme"})
	}
}

# Analysts.

test_analyst_reads_semantic_and_procedural_up_to_internal if {
	p := analyst(["analyst"])
	allowed(p, "read", mem({"type": "semantic", "sensitivity": "public"}))
	allowed(p, "read", mem({"type": "procedural", "sensitivity": "internal", "user_id": "u5", "agent_id": "z"}))
	reasons(p, "read", mem({"type": "semantic"})) == {"role analyst reads semantic up to internal"}
}

test_analyst_does_not_read_other_types if {
	p := analyst(["analyst"])
	not allowed(p, "read", mem({"type": "episodic", "sensitivity": "public"}))
	not allowed(p, "read", mem({"type": "profile", "sensitivity": "public"}))
}

test_analyst_sensitivity_ceiling if not allowed(analyst(["analyst"]), "read", mem({"type": "semantic", "sensitivity": "confidential"}))

test_analyst_full_reads_all_types_up_to_confidential if {
	p := analyst(["analyst_full"])
	every t in ["episodic", "semantic", "procedural", "profile"] {
		allowed(p, "read", mem({"type": t, "sensitivity": "confidential"}))
	}
	not allowed(p, "read", mem({"sensitivity": "restricted"}))
}

test_analyst_roles_combine if {
	p := analyst(["analyst", "analyst_full"])
	allowed(p, "read", mem({"type": "profile", "sensitivity": "confidential"}))
}

test_analyst_without_known_role_reads_nothing if {
	not allowed(analyst([]), "read", mem({"type": "semantic", "sensitivity": "public"}))
	not allowed(analyst(["auditor"]), "read", mem({"type": "semantic", "sensitivity": "public"}))
	not allowed(object.remove(analyst([]), ["roles"]), "read", mem({"type": "semantic", "sensitivity": "public"}))
}

test_analyst_does_not_write_or_delete if {
	p := analyst(["analyst_full"])
	not allowed(p, "write", mem({"type": "semantic", "sensitivity": "public"}))
	not allowed(p, "delete", mem({"type": "semantic", "sensitivity": "public"}))
}

test_roles_of_other_kinds_are_ignored if {
	not allowed(object.union(user, {"roles": ["analyst_full"]}), "read", mem({"user_id": "u2", "type": "semantic"}))
}

test_user_confirms_memories_about_themselves if {
	allowed(user, "confirm", mem({"status": "candidate"}))
	reasons(user, "confirm", mem({"status": "candidate"})) == {"user confirms memories about themselves"}
}

test_user_does_not_confirm_memories_about_others if not allowed(user, "confirm", mem({"user_id": "u2", "status": "candidate"}))

test_agent_does_not_confirm_its_guesses if not allowed(agent, "confirm", mem({"status": "candidate"}))

test_admin_confirms if allowed(admin, "confirm", mem({"status": "candidate"}))

# Shared knowledge: memories of the tenant, a team or an agent, about no user.

shared(scope, scope_id, overrides) := object.union(
	mem({"user_id": "", "agent_id": "", "type": "semantic", "kind": "rule", "scope": scope, "scope_id": scope_id}),
	overrides,
)

sales_bot := {"tenant": "acme", "kind": "agent", "id": "sales-bot", "team": "sales"}

test_admin_writes_and_reads_tenant_and_team_knowledge if {
	some action in ["write", "read"]
	allowed(admin, action, shared("tenant", "", {}))
	allowed(admin, action, shared("team", "sales", {}))
}

test_agent_reads_tenant_knowledge_and_its_teams if {
	allowed(sales_bot, "read", shared("tenant", "", {}))
	allowed(sales_bot, "read", shared("team", "sales", {}))
	not allowed(sales_bot, "read", shared("team", "support", {}))
	# An agent without a team reads no team's knowledge, not even "".
	not allowed(agent, "read", shared("team", "sales", {}))
	not allowed(agent, "read", shared("team", "", {}))
}

test_agent_never_writes_tenant_or_team_knowledge if {
	some r in [shared("tenant", "", {}), shared("team", "sales", {}), shared("team", "sales", {"agent_id": "sales-bot"})]
	not allowed(sales_bot, "write", r)
}

test_agent_writes_and_reads_its_own_procedures if {
	own := shared("agent", "sales-bot", {"agent_id": "sales-bot", "type": "procedural", "kind": "how_to"})
	allowed(sales_bot, "write", own)
	allowed(sales_bot, "read", own)
	"agent writes its own procedure" in authz.reasons with input as in_put(sales_bot, "write", own) with data.grants as {}
	not allowed(agent, "read", own)
	not allowed(agent, "write", own)
	# Only procedures, only as itself, and about no user.
	not allowed(sales_bot, "write", object.union(own, {"type": "semantic"}))
	not allowed(sales_bot, "write", object.union(own, {"scope_id": "order-bot"}))
	not allowed(sales_bot, "write", object.union(own, {"user_id": "u1"}))
}

test_grant_shares_an_agents_procedures if {
	own := shared("agent", "sales-bot", {"agent_id": "sales-bot", "type": "procedural", "kind": "how_to"})
	g := {
		"id": "g9", "tenant": "acme", "grantee": "order-bot", "source": "sales-bot",
		"types": ["procedural"], "max_sensitivity": "internal",
	}
	authz.allow with input as in_put(agent, "read", own) with data.grants as filed([g])
	# A wildcard grant never opens the tenant's or a team's knowledge.
	wild := object.union(g, {"source": "*", "types": ["semantic"]})
	not authz.allow with input as in_put(agent, "read", shared("team", "sales", {})) with data.grants as filed([wild])
}

test_user_never_writes_shared_knowledge if {
	some r in [
		shared("tenant", "", {"agent_id": "user:u1", "type": "profile"}),
		shared("team", "sales", {"agent_id": "user:u1", "type": "profile"}),
		shared("agent", "user:u1", {"agent_id": "user:u1", "type": "profile"}),
		mem({"agent_id": "user:u1", "type": "profile", "scope": "tenant"}),
	]
	not allowed(user, "write", r)
	not allowed_with({"acme": {"users_read_shared": true}}, user, "write", r)
}

test_user_reads_tenant_knowledge_only_where_settings_say if {
	not allowed(user, "read", shared("tenant", "", {}))
	allowed_with({"acme": {"users_read_shared": true}}, user, "read", shared("tenant", "", {}))
	not allowed_with({"acme": {"users_read_shared": true}}, user, "read", shared("team", "sales", {}))
	not allowed_with({"acme": {"users_read_shared": true}}, user, "read", shared("tenant", "", {"sensitivity": "confidential"}))
}

test_analyst_reads_shared_knowledge_by_role if {
	allowed(analyst(["analyst"]), "read", shared("team", "sales", {}))
	not allowed(analyst(["analyst"]), "read", shared("tenant", "", {"type": "episodic"}))
}
