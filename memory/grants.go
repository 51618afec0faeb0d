package memory

import (
	"context"
	"errors"
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

// CreateGrant stores a sharing grant and makes it effective at once.
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
	return g, s.ReloadGrants(ctx)
}

// PutGrant stores a grant with a fixed id on behalf of the system (seed).
func (s *Service) PutGrant(ctx context.Context, g Grant) error {
	built, err := buildGrant(g.Tenant, NewGrant{
		Grantee: g.Grantee, Source: g.Source, Types: g.Types, Kinds: g.Kinds,
		MaxSensitivity: g.MaxSensitivity, ExpiresAt: g.ExpiresAt,
	}, s.now().UTC())
	if err != nil {
		return err
	}
	built.ID = g.ID
	if err := s.grants.DeleteGrant(ctx, g.Tenant, g.ID); err != nil && !isNotFound(err) {
		return err
	}
	if _, err := s.grants.CreateGrant(ctx, built); err != nil {
		return err
	}
	return s.ReloadGrants(ctx)
}

// ListGrants returns the grants of the principal's tenant.
func (s *Service) ListGrants(ctx context.Context, p Principal) ([]Grant, error) {
	if err := s.manage(ctx, p); err != nil {
		return nil, err
	}
	return s.grants.ListGrants(ctx, p.Tenant)
}

// DeleteGrant removes a grant; its memories become unreadable at once.
func (s *Service) DeleteGrant(ctx context.Context, p Principal, id string) error {
	if err := s.manage(ctx, p); err != nil {
		return err
	}
	if err := s.grants.DeleteGrant(ctx, p.Tenant, id); err != nil {
		return err
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

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
