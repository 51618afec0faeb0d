# Tenant settings: values of the default policy that each tenant's admins
# change without touching Rego, kept as data beside the grants:
#
#   data.settings = {"acme": {"user_max_sensitivity": "confidential",
#                             "users_read_shared": true}}
#
# A tenant without settings, or without one of them, gets its default.
package mneme.authz

# user_max_sensitivity is the highest sensitivity an end user of the
# principal's tenant reads about themselves; by default "internal", as notes
# above it are the company's, not theirs. A value that is not a known level
# makes rank_at_most fail, so users then read nothing: fail closed.
default user_max_sensitivity := "internal"

user_max_sensitivity := s if {
	s := data.settings[input.principal.tenant].user_max_sensitivity
}

# users_read_shared says whether end users of the principal's tenant read the
# tenant's shared knowledge (its rules and procedures); by default they do
# not: it is written for the agents that serve them.
default users_read_shared := false

users_read_shared if data.settings[input.principal.tenant].users_read_shared == true
