package mneme.authz_test

import data.mneme.authz

support := {"tenant": "acme", "kind": "agent", "id": "support-bot"}

# grant is g1: support-bot reads order-bot's episodic order memories up to
# internal until 2030, with overrides.
grant(overrides) := object.union(
	{
		"id": "g1", "tenant": "acme", "grantee": "support-bot", "source": "order-bot",
		"types": ["episodic"], "kinds": ["order"], "max_sensitivity": "internal",
		"expires_at": "2030-01-01T00:00:00Z", "created_at": "2025-01-01T00:00:00Z",
	},
	overrides,
)

allowed_by(grants, p, action, r) if {
	authz.allow with input as in_put(p, action, r) with data.grants as filed(grants)
}

test_grant_shares_memory if {
	allowed_by([grant({})], support, "read", mem({}))
	r := authz.reasons with input as in_put(support, "read", mem({})) with data.grants as filed([grant({})])
	r == {"grant g1 from order-bot"}
}

test_grant_covers_any_user if allowed_by([grant({})], support, "read", mem({"user_id": "u42"}))

test_grant_is_for_its_grantee_only if {
	not allowed_by([grant({"grantee": "other-bot"})], support, "read", mem({}))

	# Filed under support-bot but naming another grantee.
	misfiled := {"acme": {"support-bot": [grant({"grantee": "other-bot"})]}}
	not authz.allow with input as in_put(support, "read", mem({})) with data.grants as misfiled
}

test_filed_groups_by_tenant_and_grantee if {
	g1 := grant({})
	g2 := grant({"id": "g2"})
	g3 := grant({"id": "g3", "grantee": "x"})
	g4 := grant({"id": "g4", "tenant": "globex"})
	filed([g1, g2, g3, g4]) == {"acme": {"support-bot": [g1, g2], "x": [g3]}, "globex": {"support-bot": [g4]}}
}

test_grant_is_for_agents_only if {
	p := {"tenant": "acme", "kind": "analyst", "id": "support-bot"}
	not allowed_by([grant({})], p, "read", mem({}))
}

test_grant_is_for_its_source_only if not allowed_by([grant({})], support, "read", mem({"agent_id": "billing-bot"}))

test_wildcard_source_shares_every_agent if {
	g := grant({"source": "*"})
	allowed_by([g], support, "read", mem({"agent_id": "billing-bot"}))
	allowed_by([g], support, "read", mem({}))
}

test_empty_source_shares_nothing if not allowed_by([grant({"source": ""})], support, "read", mem({"agent_id": ""}))

test_grant_types if {
	not allowed_by([grant({})], support, "read", mem({"type": "semantic"}))
	allowed_by([grant({"types": ["semantic", "episodic"]})], support, "read", mem({"type": "semantic"}))
}

test_grant_without_types_shares_nothing if {
	not allowed_by([grant({"types": []})], support, "read", mem({}))
	not allowed_by([grant({"types": null})], support, "read", mem({}))
	not allowed_by([object.remove(grant({}), ["types"])], support, "read", mem({}))
}

test_kinds_filter if {
	not allowed_by([grant({})], support, "read", mem({"kind": "preference"}))
	not allowed_by([grant({})], support, "read", mem({"kind": ""}))
	allowed_by([grant({"kinds": ["preference", "order"]})], support, "read", mem({"kind": "preference"}))
}

test_no_kinds_means_every_kind if {
	allowed_by([grant({"kinds": []})], support, "read", mem({"kind": "preference"}))
	allowed_by([grant({"kinds": null})], support, "read", mem({"kind": "preference"}))
	allowed_by([object.remove(grant({}), ["kinds"])], support, "read", mem({"kind": ""}))
}

test_sensitivity_ceiling if {
	allowed_by([grant({})], support, "read", mem({"sensitivity": "public"}))
	allowed_by([grant({})], support, "read", mem({"sensitivity": "internal"}))
	not allowed_by([grant({})], support, "read", mem({"sensitivity": "confidential"}))
	not allowed_by([grant({})], support, "read", mem({"sensitivity": "restricted"}))
	allowed_by([grant({"max_sensitivity": "restricted"})], support, "read", mem({"sensitivity": "restricted"}))
}

test_unknown_ceiling_shares_nothing if {
	not allowed_by([grant({"max_sensitivity": "secret"})], support, "read", mem({"sensitivity": "public"}))
	not allowed_by([object.remove(grant({}), ["max_sensitivity"])], support, "read", mem({"sensitivity": "public"}))
}

test_expired_grant_shares_nothing if {
	not allowed_by([grant({"expires_at": "2025-06-01T11:59:59Z"})], support, "read", mem({}))
	not allowed_by([grant({"expires_at": now})], support, "read", mem({}))
}

test_grant_valid_until_it_expires if {
	allowed_by([grant({"expires_at": "2025-06-01T12:00:00.000000001Z"})], support, "read", mem({}))
}

test_grant_without_expiry_never_expires if {
	allowed_by([grant({"expires_at": null})], support, "read", mem({}))
	allowed_by([object.remove(grant({}), ["expires_at"])], support, "read", mem({}))
}

test_grant_expiry_honours_offsets if {
	# 14:00+02:00 is 12:00Z: expired at now.
	not allowed_by([grant({"expires_at": "2025-06-01T14:00:00+02:00"})], support, "read", mem({}))
	allowed_by([grant({"expires_at": "2025-06-01T14:00:01+02:00"})], support, "read", mem({}))
}

test_grant_of_another_tenant_shares_nothing if {
	# Of another tenant.
	not allowed_by([grant({"tenant": "globex"})], support, "read", mem({}))

	# Filed under acme but naming another tenant.
	misfiled := {"acme": {"support-bot": [grant({"tenant": "globex"})]}}
	not authz.allow with input as in_put(support, "read", mem({})) with data.grants as misfiled

	# Cross-tenant memory, even with a wildcard grant.
	not allowed_by([grant({"source": "*"})], object.union(support, {"tenant": "globex"}), "read", mem({}))
}

test_grant_does_not_allow_write_or_delete if {
	not allowed_by([grant({})], support, "write", mem({}))
	not allowed_by([grant({})], support, "delete", mem({}))
}

test_several_grants_give_several_reasons if {
	gs := [grant({}), grant({"id": "g2", "source": "*"})]
	r := authz.reasons with input as in_put(support, "read", mem({})) with data.grants as filed(gs)
	r == {"grant g1 from order-bot", "grant g2 from *"}
}

test_no_grants_data if not authz.allow with input as in_put(support, "read", mem({}))

test_unexpired if {
	authz.unexpired({}) with input as {"context": {"now": now}}
	authz.unexpired({"expires_at": "2026-01-01T00:00:00Z"}) with input as {"context": {"now": now}}
	not authz.unexpired({"expires_at": "2024-01-01T00:00:00Z"}) with input as {"context": {"now": now}}
}

test_source_matches if {
	authz.source_matches("*", "a")
	authz.source_matches("a", "a")
	not authz.source_matches("a", "b")
}

test_kind_allowed if {
	authz.kind_allowed({}, {"kind": "x"})
	authz.kind_allowed({"kinds": ["x"]}, {"kind": "x"})
	not authz.kind_allowed({"kinds": ["y"]}, {"kind": "x"})
}
