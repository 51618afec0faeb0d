package mneme.authz_test

import data.mneme.authz

test_ranks_are_ordered if {
	authz.ranks.public < authz.ranks.internal
	authz.ranks.internal < authz.ranks.confidential
	authz.ranks.confidential < authz.ranks.restricted
}

test_top_sensitivity_is_highest if {
	authz.ranks[authz.top_sensitivity] == max([r | some r in authz.ranks])
}

test_rank_at_most if {
	authz.rank_at_most("public", "public")
	authz.rank_at_most("internal", "restricted")
	not authz.rank_at_most("restricted", "confidential")
	not authz.rank_at_most("secret", "restricted")
	not authz.rank_at_most("public", "secret")
}

test_analyst_roles_name_known_types_and_levels if {
	known := {"episodic", "semantic", "procedural", "profile"}
	every _, caps in authz.analyst_roles {
		every t in caps.types {
			t in known
		}
		authz.ranks[caps.max_sensitivity] < authz.ranks.restricted
	}
}
