package policystore

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/policyadmin"
)

// ChangeSettings sets the tenant's policy settings that c gives and leaves
// the others, in one transaction under the policy state's lock, and returns
// the settings as they were. An empty ceiling removes it (the policy's
// default applies).
func (s *Store) ChangeSettings(ctx context.Context, tenant string, c policyadmin.SettingsChange) (policyadmin.Settings, error) {
	var ceiling any
	if c.UserMaxSensitivity != nil && *c.UserMaxSensitivity != "" {
		ceiling = *c.UserMaxSensitivity
	}
	params := map[string]any{
		"tenant":      tenant,
		"set_ceiling": c.UserMaxSensitivity != nil, "user_max_sensitivity": ceiling,
		"set_shared": c.UsersReadShared != nil, "users_read_shared": c.UsersReadShared != nil && *c.UsersReadShared,
	}
	var before policyadmin.Settings
	err := s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		before, _, err = neo.ReadOne(ctx, tx, cypherChangeSettings, params, neo.Column("before", func(v any) policyadmin.Settings {
			m, _ := v.(map[string]any)
			return decodeSettings(m)
		}))
		return err
	})
	return before, err
}

func decodeSettings(p map[string]any) policyadmin.Settings {
	shared, _ := p["users_read_shared"].(bool)
	return policyadmin.Settings{UserMaxSensitivity: neo.Str(p["user_max_sensitivity"]), UsersReadShared: shared}
}
