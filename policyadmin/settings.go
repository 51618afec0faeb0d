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
	// (its rules and procedures); by default they do not. It is always
	// shown, false too: what is in force names every setting, as PUT must.
	UsersReadShared bool `json:"users_read_shared"`
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

// SettingsChange is what an admin sends to change the settings: a field
// left out (nil) is not changed by PATCH, and is missing to PUT, which
// replaces them all. An empty ceiling is the policy's default.
type SettingsChange struct {
	UserMaxSensitivity *string `json:"user_max_sensitivity"`
	UsersReadShared    *bool   `json:"users_read_shared"`
}

// PutSettings replaces the tenant's settings, every one of which c must
// give: a setting left out is a mistake, not a wish for its default.
func (s *Service) PutSettings(ctx context.Context, p memory.Principal, c SettingsChange) (Settings, error) {
	return s.changeSettings(ctx, p, c, true)
}

// PatchSettings changes the settings c gives and leaves the others.
func (s *Service) PatchSettings(ctx context.Context, p memory.Principal, c SettingsChange) (Settings, error) {
	return s.changeSettings(ctx, p, c, false)
}

// changeSettings changes the tenant's settings and puts them in force on
// every replica at once, as a grant change does. It is audited with each
// setting it changed, before and after, defaults filled in: the settings
// decide what every end user may read.
func (s *Service) changeSettings(ctx context.Context, p memory.Principal, c SettingsChange, all bool) (_ Settings, err error) {
	var details map[string]string
	defer func() { s.audit(ctx, p, AuditSettingsPut, "tenant:"+p.Tenant, err, details) }()
	if err := s.manage(ctx, p); err != nil {
		return Settings{}, err
	}
	if all {
		const why = "is required: PUT replaces every setting (PATCH /v1/policy/settings changes only those given)"
		switch {
		case c.UserMaxSensitivity == nil:
			return Settings{}, memory.Invalid("user_max_sensitivity", why)
		case c.UsersReadShared == nil:
			return Settings{}, memory.Invalid("users_read_shared", why)
		}
	}
	if c.UserMaxSensitivity != nil && *c.UserMaxSensitivity != "" && memory.SensitivityRank(*c.UserMaxSensitivity) < 0 {
		return Settings{}, memory.Invalid("user_max_sensitivity", "must be one of "+strings.Join(memory.Sensitivities, ", "))
	}
	before, err := s.policies.ChangeSettings(ctx, p.Tenant, c)
	if err != nil {
		return Settings{}, err
	}
	after := before
	if c.UserMaxSensitivity != nil {
		after.UserMaxSensitivity = *c.UserMaxSensitivity
	}
	if c.UsersReadShared != nil {
		after.UsersReadShared = *c.UsersReadShared
	}
	details = settingsChanged(before.effective(), after.effective())
	return after.effective(), s.changed(ctx, p.Tenant)
}

// settingsChanged names each setting that differs from before to after,
// with both values: "user_max_sensitivity": "public -> internal"; and
// "changed": "none" when none does.
func settingsChanged(before, after Settings) map[string]string {
	d := map[string]string{}
	if before.UserMaxSensitivity != after.UserMaxSensitivity {
		d["user_max_sensitivity"] = before.UserMaxSensitivity + " -> " + after.UserMaxSensitivity
	}
	if before.UsersReadShared != after.UsersReadShared {
		d["users_read_shared"] = strconv.FormatBool(before.UsersReadShared) + " -> " + strconv.FormatBool(after.UsersReadShared)
	}
	if len(d) == 0 {
		d["changed"] = "none"
	}
	return d
}
