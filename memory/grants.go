package memory

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// NewGrant is what an admin sends to share memories between agents.
type NewGrant struct {
	Grantee        string     `json:"grantee"`
	Source         string     `json:"source"`
	Types          []string   `json:"types"`
	Kinds          []string   `json:"kinds,omitempty"`
	MaxSensitivity string     `json:"max_sensitivity"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
}

// CreateGrant stores a sharing grant and makes it effective at once, on
// every replica.
func (s *Service) CreateGrant(ctx context.Context, p Principal, n NewGrant) (Grant, error) {
	if err := s.manage(ctx, p); err != nil {
		return Grant{}, err
	}
	g, err := buildGrant(p.Tenant, n, s.now().UTC())
	if err != nil {
		return Grant{}, err
	}
	if g, err = s.grants.CreateGrant(ctx, g); err != nil {
		return Grant{}, err
	}
	return g, s.grantsChanged(ctx, p.Tenant)
}

// PutGrant stores a grant with a fixed id on behalf of the system (seed),
// replacing one with the same id in a single step.
func (s *Service) PutGrant(ctx context.Context, g Grant) error {
	built, err := buildGrant(g.Tenant, NewGrant{
		Grantee: g.Grantee, Source: g.Source, Types: g.Types, Kinds: g.Kinds,
		MaxSensitivity: g.MaxSensitivity, ExpiresAt: g.ExpiresAt,
	}, s.now().UTC())
	if err != nil {
		return err
	}
	built.ID = g.ID
	if _, err := s.grants.PutGrant(ctx, built); err != nil {
		return err
	}
	return s.grantsChanged(ctx, g.Tenant)
}

// GrantChange changes a grant; absent fields keep their value. "kinds": []
// lifts the kinds filter; no_expiry removes the expiry.
type GrantChange struct {
	Grantee        *string    `json:"grantee,omitempty"`
	Source         *string    `json:"source,omitempty"`
	Types          *[]string  `json:"types,omitempty"`
	Kinds          *[]string  `json:"kinds,omitempty"`
	MaxSensitivity *string    `json:"max_sensitivity,omitempty"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
	NoExpiry       bool       `json:"no_expiry,omitempty"`
}

// UpdateGrant changes a grant of the principal's tenant in one step and
// makes the change effective at once, on every replica.
func (s *Service) UpdateGrant(ctx context.Context, p Principal, id string, c GrantChange) (Grant, error) {
	if err := s.manage(ctx, p); err != nil {
		return Grant{}, err
	}
	if c.NoExpiry && c.ExpiresAt != nil {
		return Grant{}, Invalid("no_expiry", "give expires_at or no_expiry, not both")
	}
	cur, err := s.grant(ctx, p.Tenant, id)
	if err != nil {
		return Grant{}, err
	}
	n := NewGrant{
		Grantee: cur.Grantee, Source: cur.Source, Types: cur.Types, Kinds: cur.Kinds,
		MaxSensitivity: cur.MaxSensitivity, ExpiresAt: cur.ExpiresAt,
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&n.Grantee, c.Grantee)
	set(&n.Source, c.Source)
	set(&n.MaxSensitivity, c.MaxSensitivity)
	if c.Types != nil {
		n.Types = *c.Types
	}
	if c.Kinds != nil {
		n.Kinds = *c.Kinds
	}
	if c.ExpiresAt != nil {
		n.ExpiresAt = c.ExpiresAt
	}
	if c.NoExpiry {
		n.ExpiresAt = nil
	}
	g, err := buildGrant(p.Tenant, n, s.now().UTC())
	if err != nil {
		return Grant{}, err
	}
	g.ID, g.CreatedAt = cur.ID, cur.CreatedAt
	if g, err = s.grants.UpdateGrant(ctx, g); err != nil {
		return Grant{}, err
	}
	return g, s.grantsChanged(ctx, p.Tenant)
}

// Grant returns one grant of the principal's tenant.
func (s *Service) Grant(ctx context.Context, p Principal, id string) (Grant, error) {
	if err := s.manage(ctx, p); err != nil {
		return Grant{}, err
	}
	return s.grant(ctx, p.Tenant, id)
}

func (s *Service) grant(ctx context.Context, tenant, id string) (Grant, error) {
	gs, err := s.grants.ListGrants(ctx, tenant)
	if err != nil {
		return Grant{}, err
	}
	for _, g := range gs {
		if g.ID == id {
			return g, nil
		}
	}
	return Grant{}, ErrNotFound
}

// ListGrants returns the grants of the principal's tenant.
func (s *Service) ListGrants(ctx context.Context, p Principal) ([]Grant, error) {
	if err := s.manage(ctx, p); err != nil {
		return nil, err
	}
	return s.grants.ListGrants(ctx, p.Tenant)
}

// GrantSet is a tenant's grants and the grant revision they are at.
type GrantSet struct {
	Grants   []Grant `json:"grants"`
	Revision int64   `json:"revision"`
}

// Grants returns the grants of the principal's tenant with their revision.
func (s *Service) Grants(ctx context.Context, p Principal) (GrantSet, error) {
	if err := s.manage(ctx, p); err != nil {
		return GrantSet{}, err
	}
	var set GrantSet
	if s.admin.ready() {
		// The revision first: the grants read after it are at least as new.
		st, err := s.admin.Store.PolicyState(ctx, p.Tenant)
		if err != nil {
			return GrantSet{}, err
		}
		set.Revision = st.GrantRevision
	}
	gs, err := s.grants.ListGrants(ctx, p.Tenant)
	if err != nil {
		return GrantSet{}, err
	}
	set.Grants = gs
	if set.Grants == nil {
		set.Grants = []Grant{}
	}
	return set, nil
}

// DeleteGrant removes a grant; its memories become unreadable at once, on
// every replica.
func (s *Service) DeleteGrant(ctx context.Context, p Principal, id string) error {
	if err := s.manage(ctx, p); err != nil {
		return err
	}
	if err := s.grants.DeleteGrant(ctx, p.Tenant, id); err != nil {
		return err
	}
	return s.grantsChanged(ctx, p.Tenant)
}

// grantsChanged puts the tenant's new grants in force: on every replica
// through the revision bus when policy administration is configured, else
// by reloading this engine.
func (s *Service) grantsChanged(ctx context.Context, tenant string) error {
	if s.admin.ready() {
		return s.changed(ctx, tenant)
	}
	return s.ReloadGrants(ctx)
}

// ReloadGrants loads every tenant's grants into the policy engine.
func (s *Service) ReloadGrants(ctx context.Context) error {
	s.grantsMu.Lock()
	defer s.grantsMu.Unlock()
	all, err := s.grants.ListGrants(ctx, "")
	if err != nil {
		return fmt.Errorf("load grants: %w", err)
	}
	return s.authz.SetGrants(ctx, all)
}

func (s *Service) manage(ctx context.Context, p Principal) error {
	return s.require(ctx, p, ActionManage, Resource{Tenant: p.Tenant}, s.now().UTC())
}

func buildGrant(tenant string, n NewGrant, now time.Time) (Grant, error) {
	switch {
	case !validName(n.Grantee):
		return Grant{}, Invalid("grantee", "is required: an agent id")
	case n.Source != "*" && !validName(n.Source):
		return Grant{}, Invalid("source", `is required: an agent id or "*"`)
	case len(n.Types) == 0:
		return Grant{}, Invalid("types", "name at least one memory type")
	case SensitivityRank(n.MaxSensitivity) < 0:
		return Grant{}, Invalid("max_sensitivity", "must be one of "+strings.Join(Sensitivities, ", "))
	case n.ExpiresAt != nil && !n.ExpiresAt.After(now):
		return Grant{}, Invalid("expires_at", "must be in the future")
	}
	for _, t := range n.Types {
		if !contains(Types, t) {
			return Grant{}, Invalid("types", "each must be one of "+strings.Join(Types, ", "))
		}
	}
	for _, k := range n.Kinds {
		if k == "" || len(k) > 64 {
			return Grant{}, Invalid("kinds", "each kind is 1–64 bytes")
		}
	}
	return Grant{
		ID: NewID("grant"), Tenant: tenant, Grantee: n.Grantee, Source: n.Source, Types: n.Types,
		Kinds: n.Kinds, MaxSensitivity: n.MaxSensitivity, ExpiresAt: n.ExpiresAt, CreatedAt: now,
	}, nil
}
