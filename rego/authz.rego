# Package mneme.authz decides what a principal may do with a memory.
#
# Input (built by package policy; field names are the JSON tags of the memory
# package's types):
#
#   principal: {tenant, kind: agent|user|admin|analyst, id, roles: [...],
#               team: an agent's team, or ""}
#   action:    read | write | delete | manage | confirm
#   resource:  a memory's metadata, never its content:
#              {tenant, id, user_id, agent_id, type, kind, sensitivity, status,
#               scope: user|tenant|team|agent, scope_id,
#               author: "user" when the user it is about wrote it themselves
#               (agent_id "user:" + user_id), else "agent"}
#              (for manage, only tenant matters). A memory of scope user is
#              about user_id; the others are knowledge shared in the tenant,
#              a team (scope_id) or one agent (scope_id), about no user.
#   context:   {now: RFC 3339 instant}; policies never read the clock.
#
# Data: data.grants, sharing grants keyed by tenant and grantee (see
# grants.rego); data.settings, each tenant's settings (see settings.rego).
#
# Output: allow (boolean, default false) and reasons (a set of strings saying
# why, or why not). The readable scope is in scope.rego.
package mneme.authz

default allow := false

# allow holds when every guard holds and at least one rule permits.
allow if {
	guards
	count(permits) > 0
}

guards if {
	same_tenant
	known_principal
	known_action
	known_sensitivity
}

# reasons explains the decision: the rules that permit, else the guards that
# fail, else a single "no rule permits".
reasons := permits if {
	allow
} else := denials if {
	count(denials) > 0
} else := {sprintf("no rule permits %s %s", [principal_kind_name, action_name])}

principal_kind_name := object.get(input, ["principal", "kind"], "?")

action_name := object.get(input, "action", "?")

principal_kinds := {"agent", "user", "admin", "analyst"}

actions := {"read", "write", "delete", "manage", "confirm"}

# Guards. Each is stated positively, so that a missing input field fails it.

# Tenants never see each other.
same_tenant if {
	input.principal.tenant != ""
	input.resource.tenant == input.principal.tenant
}

known_principal if {
	input.principal.kind in principal_kinds
	input.principal.id != ""
}

known_action if input.action in actions

# Every memory action needs a known sensitivity; manage has no memory.
known_sensitivity if input.action == "manage"

known_sensitivity if {
	input.action != "manage"
	is_number(ranks[input.resource.sensitivity])
}

denials contains "tenant mismatch" if not same_tenant

denials contains "unknown principal" if not known_principal

denials contains "unknown action" if not known_action

denials contains "unknown sensitivity" if not known_sensitivity

# Agents.

permits contains "agent reads its own memory" if {
	input.principal.kind == "agent"
	input.action == "read"
	input.resource.agent_id == input.principal.id
}

# An agent writes memories about any user of its tenant, as itself: the
# memory's agent_id is the agent's id, never a parameter it may choose.
# What users tell Mneme about themselves is for every agent that serves
# them: a preference a user restated supersedes the agent's version of it,
# and the agent must still know it.
permits contains "agent reads what the user said about themselves" if {
	input.principal.kind == "agent"
	input.action == "read"
	input.resource.author == "user"
	object.get(input.resource, "scope", "user") == "user"
}

permits contains "agent writes its own memory" if {
	input.principal.kind == "agent"
	input.action == "write"
	input.resource.agent_id == input.principal.id
	input.resource.user_id != ""
	object.get(input.resource, "scope", "user") == "user"
}

# Shared knowledge. The tenant's and the teams' knowledge is written by
# admins (their rule below); an agent writes its own procedures, what it
# learned about doing its work, and reads them with its own memories.

permits contains "agent writes its own procedure" if {
	input.principal.kind == "agent"
	input.action == "write"
	object.get(input.resource, "scope", "user") == "agent"
	object.get(input.resource, "scope_id", "") == input.principal.id
	input.resource.agent_id == input.principal.id
	input.resource.user_id == ""
	input.resource.type == "procedural"
}

permits contains "agent reads its own knowledge" if {
	input.principal.kind == "agent"
	input.action == "read"
	object.get(input.resource, "scope", "user") == "agent"
	object.get(input.resource, "scope_id", "") == input.principal.id
}

permits contains "agent reads the tenant's knowledge" if {
	input.principal.kind == "agent"
	input.action == "read"
	object.get(input.resource, "scope", "user") == "tenant"
}

permits contains "agent reads its team's knowledge" if {
	input.principal.kind == "agent"
	input.action == "read"
	object.get(input.principal, "team", "") != ""
	object.get(input.resource, "scope", "user") == "team"
	object.get(input.resource, "scope_id", "") == object.get(input.principal, "team", "")
}

# End users read the tenant's knowledge only where its settings say so (see
# settings.rego), up to their ceiling; they never write any.
permits contains "user reads the tenant's knowledge" if {
	input.principal.kind == "user"
	input.action == "read"
	users_read_shared
	object.get(input.resource, "scope", "user") == "tenant"
	rank_at_most(input.resource.sensitivity, user_max_sensitivity)
}

permits contains "agent deletes its own memory" if {
	input.principal.kind == "agent"
	input.action == "delete"
	input.resource.agent_id == input.principal.id
}

# Another agent's memory is readable only through a sharing grant.
permits contains sprintf("grant %s from %s", [g.id, g.source]) if {
	input.action == "read"
	some g in active_grants
	grant_covers(g, input.resource)
}

# End users see and delete what is about them, and tell Mneme about
# themselves: profile and episodic memories only.

# Up to the tenant's ceiling only: above it are the company's notes about
# them (costs, risk flags), which admins read and the agents that wrote them.
permits contains "user reads memories about themselves" if {
	input.principal.kind == "user"
	input.action == "read"
	input.resource.user_id == input.principal.id
	rank_at_most(input.resource.sensitivity, user_max_sensitivity)
}

permits contains "user deletes memories about themselves" if {
	input.principal.kind == "user"
	input.action == "delete"
	input.resource.user_id == input.principal.id
}

# A candidate memory (an agent's inference, a preference seen too few times)
# becomes active when the user it is about confirms it. Agents cannot confirm
# their own guesses.
permits contains "user confirms memories about themselves" if {
	input.principal.kind == "user"
	input.action == "confirm"
	input.resource.user_id == input.principal.id
}

user_writable_types := {"profile", "episodic"}

# A user writes as "user:<id>" and never as an agent: a memory an end user
# could attribute to support-bot would be read back as support-bot's own.
# And only up to their ceiling: above it they could neither read nor delete
# what they said, while every agent that serves them still reads it.
permits contains "user writes a memory about themselves" if {
	user_writes_about_themselves
	rank_at_most(input.resource.sensitivity, user_max_sensitivity)
}

user_writes_about_themselves if {
	input.principal.kind == "user"
	input.action == "write"
	input.resource.user_id == input.principal.id
	input.resource.agent_id == concat("", ["user:", input.principal.id])
	input.resource.type in user_writable_types
	object.get(input.resource, "scope", "user") == "user"
}

# write_ceiling is the ceiling a user's write about themselves went above,
# and only then: the engine names it in the refusal (code
# sensitivity_above_ceiling), so that the user knows what to send instead.
# Optional in an edited policy: without it the refusal is plain forbidden.
write_ceiling := user_max_sensitivity if {
	user_writes_about_themselves
	is_number(ranks[input.resource.sensitivity])
	is_number(ranks[user_max_sensitivity])
	not rank_at_most(input.resource.sensitivity, user_max_sensitivity)
}

denials contains sprintf("sensitivity %s is above the user's ceiling %s", [input.resource.sensitivity, write_ceiling]) if write_ceiling

# Admins do everything within their tenant, and only they manage grants and
# keys.

permits contains sprintf("admin may %s in its tenant", [input.action]) if {
	input.principal.kind == "admin"
}

# Analysts read by role (see analyst_roles in roles.rego).

permits contains sprintf("role %s reads %s up to %s", [role, input.resource.type, caps.max_sensitivity]) if {
	input.principal.kind == "analyst"
	input.action == "read"
	some role in input.principal.roles
	caps := analyst_roles[role]
	input.resource.type in caps.types
	rank_at_most(input.resource.sensitivity, caps.max_sensitivity)
}
