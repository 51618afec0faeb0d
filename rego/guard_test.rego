package mneme.guard_test

import data.mneme.guard

resource(type, kind) := {
	"tenant": "acme", "id": "", "user_id": "u1", "agent_id": "support-bot",
	"type": type, "kind": kind, "sensitivity": "internal", "status": "active",
}

in_put(type, kind, findings) := {
	"principal": {"tenant": "acme", "kind": "agent", "id": "support-bot", "roles": []},
	"action": "write",
	"resource": resource(type, kind),
	"context": {"now": "2025-06-01T12:00:00Z"},
	"findings": findings,
}

test_secrets_and_ids_are_rejected if {
	guard.actions == {"password": "reject", "secret": "reject", "cn_id": "reject"} with input as in_put("profile", "contact", ["password", "secret", "cn_id"])
}

test_social_security_and_passport_numbers_are_rejected if {
	guard.actions == {"id_number": "reject"} with input as in_put("profile", "contact", ["id_number"])
	guard.actions == {"id_number": "reject"} with input as in_put("episodic", "order", ["id_number"])
}

test_bank_card_is_redacted_everywhere if {
	guard.actions == {"bank_card": "redact"} with input as in_put("profile", "contact", ["bank_card"])
	guard.actions == {"bank_card": "redact"} with input as in_put("episodic", "order", ["bank_card"])
}

test_contact_details_are_redacted_in_episodic if {
	guard.actions == {"phone": "redact", "email": "redact"} with input as in_put("episodic", "ticket", ["phone", "email"])
}

test_contact_details_are_kept_in_profile_contacts if {
	guard.actions == {"phone": "allow", "email": "allow"} with input as in_put("profile", "contact", ["phone", "email"])
}

test_contact_details_are_redacted_in_other_profile_kinds if {
	guard.actions == {"phone": "redact"} with input as in_put("profile", "preference", ["phone"])
}

test_health_is_redacted if {
	guard.actions == {"health": "redact"} with input as in_put("profile", "preference", ["health"])
}

test_unknown_kind_is_rejected if {
	guard.actions == {"dna_sequence": "reject"} with input as in_put("semantic", "", ["dna_sequence"])
}

test_no_findings_no_actions if {
	guard.actions == {} with input as in_put("semantic", "", [])
}

test_tenant_override_by_type if {
	overrides := {"acme": {"health": {"profile": "allow"}}}
	guard.actions == {"health": "allow"} with input as in_put("profile", "preference", ["health"])
		with guard.tenant_actions as overrides
	guard.actions == {"health": "redact"} with input as in_put("episodic", "ticket", ["health"])
		with guard.tenant_actions as overrides
}

test_tenant_override_for_any_type if {
	overrides := {"acme": {"bank_card": {"*": "reject"}}}
	guard.actions == {"bank_card": "reject"} with input as in_put("episodic", "order", ["bank_card"])
		with guard.tenant_actions as overrides
}

test_tenant_override_beats_contact_exception if {
	overrides := {"acme": {"phone": {"*": "redact"}}}
	guard.actions == {"phone": "redact"} with input as in_put("profile", "contact", ["phone"])
		with guard.tenant_actions as overrides
}

test_other_tenants_override_does_not_apply if {
	overrides := {"globex": {"secret": {"*": "allow"}}}
	guard.actions == {"secret": "reject"} with input as in_put("semantic", "", ["secret"])
		with guard.tenant_actions as overrides
}
