package policystore

// Queries of settings.go. A tenant's policy settings live on its policy
// state and change under its lock, bumping the grant revision as a grant
// change does, so every replica reloads them with the grants.

import "mneme/graph"

const (
	// cypherChangeSettings reads the settings under the lock
	// MergePolicyState takes, so two changes of different settings both
	// hold, and sets those the change gives ($set_*).
	cypherChangeSettings = graph.MergePolicyState + `WITH st, {user_max_sensitivity: st.user_max_sensitivity, users_read_shared: st.users_read_shared} AS before
SET st.grant_revision = st.grant_revision + 1,
    st.user_max_sensitivity = CASE WHEN $set_ceiling THEN $user_max_sensitivity ELSE before.user_max_sensitivity END,
    st.users_read_shared = CASE WHEN $set_shared THEN $users_read_shared ELSE before.users_read_shared END
RETURN before`
)
