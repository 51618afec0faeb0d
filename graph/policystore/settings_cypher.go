package policystore

// Queries of settings.go. A tenant's policy settings live on its policy
// state and change under its lock, bumping the grant revision as a grant
// change does, so every replica reloads them with the grants.

import "mneme/graph"

const (
	cypherPutSettings = graph.MergePolicyState + `SET st.grant_revision = st.grant_revision + 1,
    st.user_max_sensitivity = $user_max_sensitivity,
    st.users_read_shared = $users_read_shared`
)
