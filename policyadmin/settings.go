package policyadmin

import (
	"context"
	"strconv"
	"strings"

	"mneme/memory"
)

// Settings are a tenant's values for the knobs of the policy that its admins
// turn without writing Rego. The policy reads them as
// data.settings[tenant] (rego/settings.rego); an empty field means the
// policy's default.
type Settings struct {
	// UserMaxSensitivity is the highest sensitivity end users read about
	// themselves; "" means the policy's default, internal.
	UserMaxSensitivity string `json:"user_max_sensitivity,omitempty"`
	// UsersReadShared lets end users read the tenant's shared knowledge
	// (its rules and procedures); by default they do not.
	UsersReadShared bool `json:"users_read_shared,omitempty"`
}

// DefaultUserMaxSensitivity is the bundled policy's ceiling for end users.
const DefaultUserMaxSensitivity = memory.SensitivityInternal

// effective fills in the defaults, for showing admins what is in force.
func (s Settings) effective() Settings {
	if s.UserMaxSensitivity == "" {
		s.UserMaxSensitivity = DefaultUserMaxSensitivity
	}
	return s
}

// TenantSettings returns the settings in force for the principal's tenant,
// defaults filled in.
func (s *Service) TenantSettings(ctx context.Context, p memory.Principal) (Settings, error) {
	if err := s.manage(ctx, p); err != nil {
		return Settings{}, err
	}
	st, err := s.policies.PolicyState(ctx, p.Tenant)
	if err != nil {
		return Settings{}, err
	}
	return st.Settings.effective(), nil
}

// PutSettings replaces the tenant's settings and puts them in force on
// every replica at once, as a grant change does. It is audited: the
// settings decide what every end user may read.
func (s *Service) PutSettings(ctx context.Context, p memory.Principal, in Settings) (_ Settings, err error) {
	defer func() {
		s.audit(ctx, p, AuditSettingsPut, "tenant:"+p.Tenant, err, map[string]string{
			"user_max_sensitivity": in.UserMaxSensitivity, "users_read_shared": strconv.FormatBool(in.UsersReadShared),
		})
	}()
	if err := s.manage(ctx, p); err != nil {
		return Settings{}, err
	}
	if in.UserMaxSensitivity != "" && memory.SensitivityRank(in.UserMaxSensitivity) < 0 {
		return Settings{}, memory.Invalid("user_max_sensitivity", "must be one of "+strings.Join(memory.Sensitivities, ", "))
	}
	if err := s.policies.PutSettings(ctx, p.Tenant, in); err != nil {
		return Settings{}, err
	}
	return in.effective(), s.changed(ctx, p.Tenant)
}
