package policystore

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/policyadmin"
)

// PutSettings replaces the tenant's policy settings; an empty field removes
// the setting (the policy's default applies).
func (s *Store) PutSettings(ctx context.Context, tenant string, st policyadmin.Settings) error {
	var ceiling any
	if st.UserMaxSensitivity != "" {
		ceiling = st.UserMaxSensitivity
	}
	return s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		return neo.Exec(ctx, tx, cypherPutSettings, map[string]any{
			"tenant": tenant, "user_max_sensitivity": ceiling, "users_read_shared": st.UsersReadShared,
		})
	})
}

func decodeSettings(p map[string]any) policyadmin.Settings {
	shared, _ := p["users_read_shared"].(bool)
	return policyadmin.Settings{UserMaxSensitivity: neo.Str(p["user_max_sensitivity"]), UsersReadShared: shared}
}
