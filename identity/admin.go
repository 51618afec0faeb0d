package identity

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"mneme/memory"
)

// MaxUserName is the longest name a user may be given, in characters.
const MaxUserName = 100

// DefaultGrace is how long a rotated key keeps working when the admin does
// not say; MaxGrace is the longest grace an admin may give.
const (
	DefaultGrace = 24 * time.Hour
	MaxGrace     = 30 * 24 * time.Hour
)

// FirstAdmin is the id of the admin memctl tenant create registers.
const FirstAdmin = "admin"

// CreateTenant registers a tenant with its first admin and returns that
// admin's key, whose secret exists nowhere else. It decides nothing by
// policy: it is for the operator's memctl, which talks to the stores.
func (s *Service) CreateTenant(ctx context.Context, name string) (IssuedKey, error) {
	if !memory.ValidTenant(name) || containsUnderscore(name) {
		return IssuedKey{}, memory.Invalid("tenant", "must be 1–64 letters, digits or -.:@ (no _: keys use it to end the tenant)")
	}
	now := s.now().UTC()
	admin := Principal{Kind: memory.KindAdmin, ID: FirstAdmin, CreatedAt: now}
	issued := s.newKey(name, admin.Kind, admin.ID, nil, now)
	err := s.store.CreateTenant(ctx, Tenant{Name: name, CreatedAt: now}, admin, issued.Key)
	s.record(ctx, memory.Principal{Tenant: name}, "tenant.create", "tenant:"+name, err, map[string]string{"key": issued.Key.ID})
	if err != nil {
		return IssuedKey{}, err
	}
	return issued, s.changed(ctx, name)
}

// PutKey stores a key whose secret the caller chose, for principal p,
// registering p when needed; for the demo seed and test harnesses.
func (s *Service) PutKey(ctx context.Context, key string, p memory.Principal, team string) error {
	tenant, err := ParseAPIKey(key)
	if err != nil || tenant != p.Tenant {
		return memory.Invalid("key", "must look like "+APIKeyPrefix+p.Tenant+"_<secret>")
	}
	now := s.now().UTC()
	if err := s.store.EnsurePrincipal(ctx, tenant, Principal{Kind: p.Kind, ID: p.ID, Team: team, Roles: p.Roles, CreatedAt: now}); err != nil {
		return err
	}
	k := Key{
		ID: memory.NewID("key"), Prefix: KeyPrefix(key), OwnerKind: p.Kind, OwnerID: p.ID,
		CreatedAt: now, Hash: s.hash.Hash(key),
	}
	if err := s.store.PutKey(ctx, tenant, k); err != nil {
		return err
	}
	return s.changed(ctx, tenant)
}

// manage lets the admins of p's tenant through, by the policy's "manage"
// decision; an error denies.
func (s *Service) manage(ctx context.Context, p memory.Principal) error {
	if s.authz == nil {
		return memory.ErrForbidden
	}
	return memory.RequireManage(ctx, s.authz, p, s.now().UTC(), s.log)
}

// record adds one act of p (the system's when p has no kind) to the audit
// trail: who, what, on what, and how it ended, by the error's stable code.
// Never a secret: details hold ids only.
func (s *Service) record(ctx context.Context, p memory.Principal, action, target string, err error, details map[string]string) {
	e := memory.NewAuditEvent(ctx, p, action, target, err, auditReason(err))
	e.Details = details
	s.audit.Audit(ctx, e)
}

// act runs one administrative act of p: authorization, then do, then the
// audit record of the outcome, unless policy refused a non-admin, which the
// decision log keeps (memory.Audited): anyone's key could flood the trail.
func (s *Service) act(ctx context.Context, p memory.Principal, action, target string, details map[string]string, do func() error) error {
	err := s.manage(ctx, p)
	if err == nil {
		err = do()
	}
	if memory.Audited(p, err) {
		s.record(ctx, p, action, target, err, details)
	}
	return err
}

var kinds = []string{memory.KindAgent, memory.KindUser, memory.KindAnalyst, memory.KindAdmin}

func validKind(kind string) bool { return slices.Contains(kinds, kind) }

func containsUnderscore(s string) bool { return slices.Contains([]byte(s), '_') }

// CreatePrincipal registers an agent (with an optional team), a user, an
// analyst (with roles) or an admin in the caller's tenant.
func (s *Service) CreatePrincipal(ctx context.Context, p memory.Principal, n NewPrincipal) (Principal, error) {
	n.Name = tidyName(n.Name)
	out := Principal{Kind: n.Kind, ID: n.ID, Team: n.Team, Roles: n.Roles, Name: n.Name, CreatedAt: s.now().UTC()}
	err := s.act(ctx, p, "principal.create", n.Kind+":"+n.ID, nil, func() error {
		if err := validPrincipal(n); err != nil {
			return err
		}
		return s.store.CreatePrincipal(ctx, p.Tenant, out)
	})
	if err != nil {
		return Principal{}, err
	}
	return out, nil
}

// tidyName keeps a name's words with one space between them.
func tidyName(name string) string { return strings.Join(strings.Fields(name), " ") }

func validPrincipal(n NewPrincipal) error {
	switch {
	case !validKind(n.Kind):
		return memory.Invalid("kind", "must be agent, user, analyst or admin")
	case !memory.ValidName(n.ID):
		return memory.Invalid("id", "must be 1–64 letters, digits or -_.:@")
	case !validID(n.Kind, n.ID):
		return memory.Invalid("id", "an agent's id may not start with user:, which marks what users write themselves")
	}
	return validFields(n.Kind, n.Team, n.Roles, n.Name)
}

// validID reports whether a valid name id can name a principal of kind. "user:" and a
// user id is the author of what users write themselves: an agent by that
// name would write as the user, and one named "USER:alice" would read as
// it in the panel and the audit trail.
func validID(kind, id string) bool {
	return !(kind == memory.KindAgent && strings.HasPrefix(strings.ToLower(id), "user:"))
}

// hidden reports whether r changes the direction of the text around it or
// shows as nothing: a name holding one ("Bob\u202eevil", "Bo\u200bb") shows
// as another in the panel and the audit trail. The joiners (U+200C, U+200D)
// stay: emoji and some scripts' names need them.
func hidden(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069' || r == '\u200e' || r == '\u200f' || r == '\u061c' ||
		r == '\u200b' || r == '\u2060' || r == '\ufeff'
}

// validFields checks what a principal of kind may have: a team (agents), a
// name (users), roles.
func validFields(kind, team string, roles []string, name string) error {
	switch {
	case team != "" && kind != memory.KindAgent:
		return memory.Invalid("team", "only agents have a team")
	case team != "" && !memory.ValidName(team):
		return memory.Invalid("team", "must be 1–64 letters, digits or -_.:@")
	case len(roles) > 16:
		return memory.Invalid("roles", "at most 16")
	case name != "" && kind != memory.KindUser:
		return memory.Invalid("name", "only users have a name")
	case utf8.RuneCountInString(name) > MaxUserName || !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) || strings.ContainsFunc(name, hidden):
		return memory.Invalid("name", fmt.Sprintf("must be at most %d characters of visible text: no control characters, direction marks or zero-width spaces", MaxUserName))
	}
	for _, r := range roles {
		if !memory.ValidName(r) {
			return memory.Invalid("roles", "each must be 1–64 letters, digits or -_.:@")
		}
		if known := KindRoles[kind]; !slices.Contains(known, r) {
			return fmt.Errorf("%w %q: %s roles are %s", ErrUnknownRole, r, kindsOf(kind), strings.Join(known, ", "))
		}
	}
	return nil
}

// AnalystRoles are the roles the bundled policy gives analysts
// (analyst_roles in rego/roles.rego; a policy test keeps them equal): a
// role it does not know reads nothing, so an analyst is given none other.
var AnalystRoles = []string{"analyst", "analyst_full"}

// KindRoles are the roles a principal of each kind may hold: an analyst's
// are AnalystRoles, and every other kind's is its kind alone, as the keys
// Mneme makes itself name them (seed, warm-up). A policy reads
// input.principal.roles, so no other role is given: one that grants nothing
// today would grant what a later policy gives it.
var KindRoles = map[string][]string{
	memory.KindAnalyst: AnalystRoles,
	memory.KindAgent:   {memory.KindAgent},
	memory.KindUser:    {memory.KindUser},
	memory.KindAdmin:   {memory.KindAdmin},
}

// kindsOf is "an agent's", "a user's", "an analyst's", "an admin's".
func kindsOf(kind string) string {
	if kind == memory.KindUser {
		return "a user's"
	}
	return "an " + kind + "'s"
}

// Principals lists the caller's tenant's principals.
func (s *Service) Principals(ctx context.Context, p memory.Principal) ([]Principal, error) {
	if err := s.manage(ctx, p); err != nil {
		return nil, err
	}
	return s.store.Principals(ctx, p.Tenant)
}

// Principal returns one principal of the caller's tenant.
func (s *Service) Principal(ctx context.Context, p memory.Principal, kind, id string) (Principal, error) {
	if err := s.manage(ctx, p); err != nil {
		return Principal{}, err
	}
	return s.store.Principal(ctx, p.Tenant, kind, id)
}

// ChangePrincipal changes a user's name, an agent's team or a principal's
// roles, with the rules of CreatePrincipal. Every replica authenticates the
// principal's keys afresh; this replica's recall forgets the user's old
// name at once, the others within usernames.TTL.
func (s *Service) ChangePrincipal(ctx context.Context, p memory.Principal, kind, id string, c PrincipalChange) (Principal, error) {
	if c.Name != nil {
		tidy := tidyName(*c.Name)
		c.Name = &tidy
	}
	var out Principal
	err := s.act(ctx, p, "principal.change", kind+":"+id, changedFields(c), func() error {
		if err := validChange(kind, c); err != nil {
			return err
		}
		var err error
		if out, err = s.store.ChangePrincipal(ctx, p.Tenant, kind, id, c); err != nil {
			return err
		}
		if c.Name != nil && s.names != nil {
			s.names.Forget(p.Tenant, id)
		}
		return s.changed(ctx, p.Tenant)
	})
	if err != nil {
		return Principal{}, err
	}
	return out, nil
}

// validChange checks a change of a principal of kind by the rules of a
// registration: a change with no field, or a field the kind does not have,
// is invalid.
func validChange(kind string, c PrincipalChange) error {
	switch {
	case c.Name == nil && c.Team == nil && c.Roles == nil:
		return memory.Invalid("body", "nothing to change: give name, team or roles")
	case !validKind(kind):
		return memory.Invalid("kind", "must be agent, user, analyst or admin")
	}
	return validFields(kind, deref(c.Team), deref(c.Roles), deref(c.Name))
}

// deref is what p points to, or the zero value.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// changedFields names the fields a change sets, for the audit trail.
func changedFields(c PrincipalChange) map[string]string {
	var fields []string
	if c.Name != nil {
		fields = append(fields, "name")
	}
	if c.Team != nil {
		fields = append(fields, "team")
	}
	if c.Roles != nil {
		fields = append(fields, "roles")
	}
	return map[string]string{"fields": strings.Join(fields, ",")}
}

// DeletePrincipal removes a principal and its keys; its memories stay (DELETE
// /v1/users/{id} erases a user's data). An agent's sharing grants go
// before and after it, so that none outlives it: a grant is stored only
// while its agents exist (graph), and one stored meanwhile goes after. An admin cannot delete themself, so
// that a tenant is never left without the admin who was acting.
func (s *Service) DeletePrincipal(ctx context.Context, p memory.Principal, kind, id string) error {
	details := map[string]string{}
	return s.act(ctx, p, "principal.delete", kind+":"+id, details, func() error {
		if kind == p.Kind && id == p.ID {
			return memory.Invalid("id", "an admin cannot delete themself")
		}
		revoked := 0
		revoke := func() error { // an agent's grants, before and after: one made meanwhile goes too
			if kind != memory.KindAgent || s.grants == nil {
				return nil
			}
			g, err := s.grants.RevokeGrantsOf(ctx, p, id)
			revoked += g
			details["grants"] = strconv.Itoa(revoked)
			if err != nil {
				return fmt.Errorf("revoke the agent's grants: %w", err)
			}
			return nil
		}
		if err := revoke(); err != nil {
			return err
		}
		n, err := s.store.DeletePrincipal(ctx, p.Tenant, kind, id)
		if err != nil {
			return err
		}
		if err := revoke(); err != nil {
			return err
		}
		details["keys"] = strconv.FormatInt(n, 10)
		return s.changed(ctx, p.Tenant)
	})
}

// newKey makes a key for an owner; the secret is returned once, here.
func (s *Service) newKey(tenant, kind, id string, expires *time.Time, now time.Time) IssuedKey {
	secret := NewAPIKey(tenant)
	return IssuedKey{Secret: secret, Key: Key{
		ID: memory.NewID("key"), Prefix: KeyPrefix(secret), OwnerKind: kind, OwnerID: id,
		Status: StatusActive, CreatedAt: now, ExpiresAt: utc(expires), Hash: s.hash.Hash(secret),
	}}
}

// CreateKey issues a key for a principal of the caller's tenant.
func (s *Service) CreateKey(ctx context.Context, p memory.Principal, n NewKey) (IssuedKey, error) {
	now := s.now().UTC()
	var issued IssuedKey
	details := map[string]string{}
	err := s.act(ctx, p, "key.create", n.OwnerKind+":"+n.OwnerID, details, func() error {
		if !validKind(n.OwnerKind) || !memory.ValidName(n.OwnerID) {
			return memory.Invalid("owner", "owner_kind must be agent, user, analyst or admin, with an owner_id")
		}
		if n.ExpiresAt != nil && !n.ExpiresAt.After(now) {
			return memory.Invalid("expires_at", "must be in the future")
		}
		issued = s.newKey(p.Tenant, n.OwnerKind, n.OwnerID, n.ExpiresAt, now)
		details["key"] = issued.Key.ID
		if err := s.store.CreateKey(ctx, p.Tenant, issued.Key); err != nil {
			return err
		}
		return s.changed(ctx, p.Tenant)
	})
	if err != nil {
		return IssuedKey{}, err
	}
	return issued, nil
}

// Keys lists the caller's tenant's keys, never their secrets.
func (s *Service) Keys(ctx context.Context, p memory.Principal) ([]Key, error) {
	if err := s.manage(ctx, p); err != nil {
		return nil, err
	}
	keys, err := s.store.Keys(ctx, p.Tenant)
	now := s.now()
	for i := range keys {
		keys[i].Status = keys[i].StatusAt(now)
	}
	return keys, err
}

// Key returns one key of the caller's tenant.
func (s *Service) Key(ctx context.Context, p memory.Principal, id string) (Key, error) {
	if err := s.manage(ctx, p); err != nil {
		return Key{}, err
	}
	k, err := s.store.Key(ctx, p.Tenant, id)
	k.Status = k.StatusAt(s.now())
	return k, err
}

// ChangeKey sets or clears a key's expiry, in force on every replica at once.
func (s *Service) ChangeKey(ctx context.Context, p memory.Principal, id string, c KeyChange) (Key, error) {
	var k Key
	now := s.now().UTC()
	err := s.act(ctx, p, "key.expiry", "key:"+id, nil, func() error {
		switch {
		case c.NoExpiry == (c.ExpiresAt != nil):
			return memory.Invalid("expires_at", "give expires_at or no_expiry: true")
		case c.ExpiresAt != nil && !c.ExpiresAt.After(now):
			return memory.Invalid("expires_at", "must be in the future: revoke the key to stop it now")
		}
		cur, err := s.store.Key(ctx, p.Tenant, id)
		if err != nil {
			return err
		}
		if !cur.worksAt(now) {
			// A key that stopped stays stopped: issue a new one.
			return ErrKeyInactive
		}
		if k, err = s.store.SetKeyExpiry(ctx, p.Tenant, id, utc(c.ExpiresAt)); err != nil {
			return err
		}
		return s.changed(ctx, p.Tenant)
	})
	k.Status = k.StatusAt(s.now())
	return k, err
}

// RevokeKey stops a key on every replica before their next request.
func (s *Service) RevokeKey(ctx context.Context, p memory.Principal, id string) (Key, error) {
	var k Key
	err := s.act(ctx, p, "key.revoke", "key:"+id, nil, func() error {
		var err error
		if k, err = s.store.RevokeKey(ctx, p.Tenant, id, s.now().UTC()); err != nil {
			return err
		}
		return s.changed(ctx, p.Tenant)
	})
	k.Status = k.StatusAt(s.now())
	return k, err
}

// RotateKey issues a successor of a key for the same owner and expiry; the
// old key keeps working for the grace period, then stops.
func (s *Service) RotateKey(ctx context.Context, p memory.Principal, id string, r Rotation) (IssuedKey, error) {
	now := s.now().UTC()
	grace := DefaultGrace
	var issued IssuedKey
	details := map[string]string{}
	err := s.act(ctx, p, "key.rotate", "key:"+id, details, func() error {
		if r.GraceSeconds != nil {
			if *r.GraceSeconds < 0 || *r.GraceSeconds > int64(MaxGrace/time.Second) {
				return memory.Invalid("grace_seconds", "must be 0.."+strconv.FormatInt(int64(MaxGrace/time.Second), 10))
			}
			grace = time.Duration(*r.GraceSeconds) * time.Second
		}
		details["grace_seconds"] = strconv.FormatInt(int64(grace/time.Second), 10)
		cur, err := s.store.Key(ctx, p.Tenant, id)
		if err != nil {
			return err
		}
		if st := cur.StatusAt(now); st != StatusActive {
			return ErrKeyInactive
		}
		issued = s.newKey(p.Tenant, cur.OwnerKind, cur.OwnerID, cur.ExpiresAt, now)
		details["key"] = issued.Key.ID
		if err := s.store.RotateKey(ctx, p.Tenant, id, now.Add(grace), issued.Key); err != nil {
			return err
		}
		return s.changed(ctx, p.Tenant)
	})
	if err != nil {
		return IssuedKey{}, err
	}
	return issued, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
