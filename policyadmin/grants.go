package policyadmin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"mneme/facts"
	"mneme/memory"
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
// every replica. A grant identical to one the tenant has (the same agents,
// types and kinds in any order, sensitivity and expiry) is not made again:
// CreateGrant returns that one, and created false, so that running the
// same set-up twice leaves one grant.
func (s *Service) CreateGrant(ctx context.Context, p memory.Principal, n NewGrant) (g memory.Grant, created bool, err error) {
	g, created, err = s.createGrant(ctx, p, n)
	target := "grant"
	if g.ID != "" {
		target = grantTarget(g.ID)
	}
	details := grantDetails(g)
	if err == nil && !created {
		details["existing"] = "true"
	}
	s.audit(ctx, p, AuditGrantCreate, target, err, details)
	return g, created, err
}

func (s *Service) createGrant(ctx context.Context, p memory.Principal, n NewGrant) (memory.Grant, bool, error) {
	if err := s.manage(ctx, p); err != nil {
		return memory.Grant{}, false, err
	}
	built, err := buildGrant(p.Tenant, n, s.now().UTC())
	if err != nil {
		return memory.Grant{}, false, err
	}
	if err := s.knownAgents(ctx, p.Tenant, built, memory.Grant{}); err != nil {
		return memory.Grant{}, false, err
	}
	g, err := s.grants.CreateGrant(ctx, built)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		// An agent of the grant was deleted since knownAgents looked.
		return memory.Grant{}, false, cmp.Or(s.knownAgents(ctx, p.Tenant, built, memory.Grant{}), ErrUnknownGrantee)
	case err != nil:
		return memory.Grant{}, false, err
	case g.ID != built.ID: // the tenant has this grant already
		return g, false, nil
	}
	return g, true, s.grantsChanged(ctx, p.Tenant)
}

// PutGrant stores a grant with a fixed id on behalf of the system (seed),
// replacing one with the same id in a single step.
func (s *Service) PutGrant(ctx context.Context, g memory.Grant) error {
	err := s.putGrant(ctx, g)
	s.audit(ctx, memory.Principal{Tenant: g.Tenant}, AuditGrantPut, grantTarget(g.ID), err, grantDetails(g))
	return err
}

func (s *Service) putGrant(ctx context.Context, g memory.Grant) error {
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
func (s *Service) UpdateGrant(ctx context.Context, p memory.Principal, id string, c GrantChange) (memory.Grant, error) {
	g, err := s.updateGrant(ctx, p, id, c)
	s.audit(ctx, p, AuditGrantUpdate, grantTarget(id), err, grantDetails(g))
	return g, err
}

func (s *Service) updateGrant(ctx context.Context, p memory.Principal, id string, c GrantChange) (memory.Grant, error) {
	if err := s.manage(ctx, p); err != nil {
		return memory.Grant{}, err
	}
	switch {
	case c == (GrantChange{}): // a revision that changes nothing
		return memory.Grant{}, memory.Invalid("body", "nothing to change: give grantee, source, types, kinds, max_sensitivity, expires_at or no_expiry")
	case c.NoExpiry && c.ExpiresAt != nil:
		return memory.Grant{}, memory.Invalid("no_expiry", "give expires_at or no_expiry, not both")
	}
	cur, err := s.grant(ctx, p.Tenant, id)
	if err != nil {
		return memory.Grant{}, err
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
		return memory.Grant{}, err
	}
	if err := s.knownAgents(ctx, p.Tenant, g, cur); err != nil {
		return memory.Grant{}, err
	}
	g.ID, g.CreatedAt = cur.ID, cur.CreatedAt
	if g, err = s.grants.UpdateGrant(ctx, g); err != nil {
		return memory.Grant{}, err
	}
	return g, s.grantsChanged(ctx, p.Tenant)
}

// Grant returns one grant of the principal's tenant.
func (s *Service) Grant(ctx context.Context, p memory.Principal, id string) (memory.Grant, error) {
	if err := s.manage(ctx, p); err != nil {
		return memory.Grant{}, err
	}
	return s.grant(ctx, p.Tenant, id)
}

func (s *Service) grant(ctx context.Context, tenant, id string) (memory.Grant, error) {
	gs, err := s.grants.ListGrants(ctx, tenant)
	if err != nil {
		return memory.Grant{}, err
	}
	for _, g := range gs {
		if g.ID == id {
			return g, nil
		}
	}
	return memory.Grant{}, memory.ErrNotFound
}

// ListGrants returns the grants of the principal's tenant.
func (s *Service) ListGrants(ctx context.Context, p memory.Principal) ([]memory.Grant, error) {
	if err := s.manage(ctx, p); err != nil {
		return nil, err
	}
	return s.grants.ListGrants(ctx, p.Tenant)
}

// GrantSet is a tenant's grants and the grant revision they are at.
type GrantSet struct {
	Grants   []memory.Grant `json:"grants"`
	Revision int64          `json:"revision"`
}

// Grants returns the grants of the principal's tenant with their revision.
func (s *Service) Grants(ctx context.Context, p memory.Principal) (GrantSet, error) {
	if err := s.manage(ctx, p); err != nil {
		return GrantSet{}, err
	}
	// The revision first: the grants read after it are at least as new.
	st, err := s.policies.PolicyState(ctx, p.Tenant)
	if err != nil {
		return GrantSet{}, err
	}
	set := GrantSet{Revision: st.GrantRevision}
	gs, err := s.grants.ListGrants(ctx, p.Tenant)
	if err != nil {
		return GrantSet{}, err
	}
	set.Grants = gs
	if set.Grants == nil {
		set.Grants = []memory.Grant{}
	}
	return set, nil
}

// DeleteGrant removes a grant; its memories become unreadable at once, on
// every replica.
func (s *Service) DeleteGrant(ctx context.Context, p memory.Principal, id string) error {
	err := s.deleteGrant(ctx, p, id)
	s.audit(ctx, p, AuditGrantDelete, grantTarget(id), err, nil)
	return err
}

func (s *Service) deleteGrant(ctx context.Context, p memory.Principal, id string) error {
	if err := s.manage(ctx, p); err != nil {
		return err
	}
	if err := s.grants.DeleteGrant(ctx, p.Tenant, id); err != nil {
		return err
	}
	return s.grantsChanged(ctx, p.Tenant)
}

// RevokeGrantsOf deletes every grant that names agent, as grantee or as
// source, as the agent itself is deleted: an agent made later under the
// same id must not inherit what an admin granted the old one. Each is
// audited as a grant.delete by p; it returns how many went.
func (s *Service) RevokeGrantsOf(ctx context.Context, p memory.Principal, agent string) (int, error) {
	gs, err := s.ListGrants(ctx, p)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, g := range gs {
		if g.Grantee != agent && g.Source != agent {
			continue
		}
		if err := s.DeleteGrant(ctx, p, g.ID); err != nil && !errors.Is(err, memory.ErrNotFound) {
			return n, err
		}
		n++
	}
	return n, nil
}

// grantsChanged puts the tenant's new grants in force on every replica:
// this one reloads them, the others hear of it through the revision bus.
func (s *Service) grantsChanged(ctx context.Context, tenant string) error {
	return s.changed(ctx, tenant)
}

// ReloadGrants loads every tenant's grants into the policy engine: at
// start-up, for work that decides outside a request (which syncs its tenant
// first).
func (s *Service) ReloadGrants(ctx context.Context) error {
	s.grantsMu.Lock()
	defer s.grantsMu.Unlock()
	all, err := s.grants.ListGrants(ctx, "")
	if err != nil {
		return fmt.Errorf("load grants: %w", err)
	}
	return s.authz.SetGrants(ctx, all)
}

// knownAgents returns ErrUnknownGrantee or ErrUnknownSource unless the
// tenant has the agents g names ("*" aside). A grant whose agent was deleted
// since can still be narrowed or ended: only what changes from cur must
// exist.
func (s *Service) knownAgents(ctx context.Context, tenant string, g, cur memory.Grant) error {
	for _, c := range []struct {
		id, was string
		unknown error
	}{{g.Grantee, cur.Grantee, ErrUnknownGrantee}, {g.Source, cur.Source, ErrUnknownSource}} {
		if c.id == "*" || c.id == c.was {
			continue
		}
		ok, err := s.principals.AgentExists(ctx, tenant, c.id)
		if err == nil && !ok {
			err = c.unknown
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// MaxGrantKinds caps the kinds one grant names: every decision reads them.
const MaxGrantKinds = 64

// distinct returns xs without repeats, in order; nil stays nil.
func distinct(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	if xs != nil && out == nil {
		return []string{}
	}
	return out
}

func buildGrant(tenant string, n NewGrant, now time.Time) (memory.Grant, error) {
	switch {
	case !memory.ValidName(n.Grantee):
		return memory.Grant{}, memory.Invalid("grantee", "is required: an agent id")
	case n.Source != "*" && !memory.ValidName(n.Source):
		return memory.Grant{}, memory.Invalid("source", `is required: an agent id or "*"`)
	case n.Source == n.Grantee:
		return memory.Grant{}, memory.Invalid("source", "is the grantee: an agent reads its own memories without a grant")
	case len(n.Types) == 0:
		return memory.Grant{}, memory.Invalid("types", "name at least one memory type")
	case memory.SensitivityRank(n.MaxSensitivity) < 0:
		return memory.Grant{}, memory.Invalid("max_sensitivity", "must be one of "+strings.Join(memory.Sensitivities, ", "))
	case n.ExpiresAt != nil && !n.ExpiresAt.After(now):
		return memory.Grant{}, memory.Invalid("expires_at", "must be in the future")
	}
	for _, t := range n.Types {
		if !slices.Contains(memory.Types, t) {
			return memory.Grant{}, memory.Invalid("types", "each must be one of "+strings.Join(memory.Types, ", "))
		}
	}
	if len(n.Kinds) > MaxGrantKinds {
		return memory.Grant{}, memory.Invalid("kinds", fmt.Sprintf("at most %d kinds", MaxGrantKinds))
	}
	// A kind is a memory's kind, by the rule that memories' kinds follow:
	// one no memory may have ("ｅmail" with a full-width ｅ) would make a
	// grant that shares nothing.
	kinds := make([]string, len(n.Kinds))
	for i, k := range n.Kinds {
		if kinds[i] = facts.Composed(k); kinds[i] == "" || !memory.ValidKind(kinds[i]) {
			return memory.Grant{}, memory.Invalid("kinds", "each kind is a memory kind: not empty, and "+memory.KindRule)
		}
	}
	if n.Kinds == nil {
		kinds = nil
	}
	return memory.Grant{
		ID: memory.NewID("grant"), Tenant: tenant, Grantee: n.Grantee, Source: n.Source, Types: distinct(n.Types),
		Kinds: distinct(kinds), MaxSensitivity: n.MaxSensitivity, ExpiresAt: n.ExpiresAt, CreatedAt: now,
	}, nil
}
