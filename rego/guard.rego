# Package mneme.guard decides what happens to a memory whose content holds
# secrets or personal identifiers, per tenant, memory type and finding kind.
#
# Input (built by package policy): the input of mneme.authz for the write —
# {principal, action: "write", resource, context} — plus
#
#   findings: the distinct kinds the guard found in the content, e.g.
#             ["bank_card", "phone"]. Never the values.
#
# Output: actions, an object from each finding kind to "reject" (the write is
# refused), "redact" (the value is masked in place) or "allow". A kind with no
# rule is rejected: the guard fails closed.
package mneme.guard

# default_actions is the table every tenant starts from: finding kind, then
# memory type ("*" for any type), then the action.
default_actions := {
	"password": {"*": "reject"},
	"secret": {"*": "reject"},
	"cn_id": {"*": "reject"},
	"id_number": {"*": "reject"},
	"bank_card": {"*": "redact"},
	"phone": {"*": "redact"},
	"email": {"*": "redact"},
	"health": {"*": "redact"},
}

# tenant_actions overrides the table for one tenant, with the same shape:
# tenant, finding kind, memory type or "*", action. Admins edit it.
tenant_actions := {}

# Contact details are the point of a contact memory: a phone number or an
# e-mail address in a profile memory of a contact kind is kept as written.
contact_findings := {"phone", "email"}

contact_kinds := {"contact", "contact_info", "phone", "email"}

actions[kind] := action_for(kind) if {
	some kind in input.findings
}

# action_for resolves one kind: the tenant's rule for the type, the tenant's
# rule for any type, the contact exception, the default for the type, the
# default for any type, else reject.
action_for(kind) := a if {
	a := tenant_actions[input.resource.tenant][kind][input.resource.type]
} else := a if {
	a := tenant_actions[input.resource.tenant][kind]["*"]
} else := "allow" if {
	kind in contact_findings
	input.resource.type == "profile"
	input.resource.kind in contact_kinds
} else := a if {
	a := default_actions[kind][input.resource.type]
} else := a if {
	a := default_actions[kind]["*"]
} else := "reject"
