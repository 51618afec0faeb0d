package graph

import (
	"context"
	"fmt"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

// CreateGrant stores g as given (the caller sets ID and CreatedAt), or
// returns the grant identical to g the tenant has already, with its own id,
// storing nothing. A grant id that exists in the tenant is
// memory.ErrConflict.
func (s *Store) CreateGrant(ctx context.Context, g memory.Grant) (memory.Grant, error) {
	switch {
	case g.Tenant == "":
		return memory.Grant{}, memory.Invalid("tenant", "is required")
	case g.ID == "":
		return memory.Grant{}, memory.Invalid("id", "is required")
	}
	params := map[string]any{"tenant": g.Tenant, "id": g.ID, "grantee": g.Grantee, "source": g.Source, "props": grantProps(g)}
	var existing any
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		v, found, err := readOne(ctx, tx, cypherCreateGrant, params, column("existing", func(v any) any { return v }))
		existing = v
		if err == nil && !found {
			err = errGrantAgentGone
		}
		return err
	})
	if err != nil {
		return memory.Grant{}, err
	}
	if existing != nil {
		return decodeGrant(existing), nil
	}
	return g, nil
}

// errGrantAgentGone is a grant whose grantee or source agent does not exist
// when the grant is stored (deleted since the caller looked): not found.
var errGrantAgentGone = fmt.Errorf("%w: the grant's agent does not exist", memory.ErrNotFound)

// ListGrants returns the grants of tenant, oldest first, expired ones
// included (the policy engine judges expiry against its own clock).
//
// tenant "" returns the grants of every tenant. It is the store's one
// deliberate cross-tenant read, used only by the policy engine when it loads
// all grants at start-up and on reload; nothing a client sends may reach it.
func (s *Store) ListGrants(ctx context.Context, tenant string) ([]memory.Grant, error) {
	cypher, params := cypherListGrants, map[string]any{"tenant": tenant}
	if tenant == "" {
		cypher, params = cypherListAllGrants, nil
	}
	var out []memory.Grant
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) (err error) {
		out, err = readAll(ctx, tx, cypher, params, column("grant", decodeGrant))
		return err
	})
	// A grant deleted while it was read comes back with no properties.
	return slices.DeleteFunc(out, func(g memory.Grant) bool { return g.ID == "" }), err
}

// DeleteGrant removes a grant, or returns memory.ErrNotFound.
func (s *Store) DeleteGrant(ctx context.Context, tenant, id string) error {
	return s.changeGrant(ctx, cypherDeleteGrant, map[string]any{"tenant": tenant, "id": id})
}

// UpdateGrant replaces the grant with g's id in one statement, or returns
// memory.ErrNotFound.
func (s *Store) UpdateGrant(ctx context.Context, g memory.Grant) (memory.Grant, error) {
	if g.Tenant == "" || g.ID == "" {
		return memory.Grant{}, memory.Invalid("id", "tenant and id are required")
	}
	err := s.changeGrant(ctx, cypherUpdateGrant, map[string]any{"tenant": g.Tenant, "id": g.ID, "props": grantProps(g)})
	if err != nil {
		return memory.Grant{}, err
	}
	return g, nil
}

// PutGrant creates g or replaces the grant with its id, in one statement.
func (s *Store) PutGrant(ctx context.Context, g memory.Grant) (memory.Grant, error) {
	if g.Tenant == "" || g.ID == "" {
		return memory.Grant{}, memory.Invalid("id", "tenant and id are required")
	}
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, cypherPutGrant, map[string]any{"tenant": g.Tenant, "id": g.ID, "props": grantProps(g)})
	})
	if err != nil {
		return memory.Grant{}, err
	}
	return g, nil
}

// changeGrant runs a grant change that returns how many grants it changed;
// none is memory.ErrNotFound.
func (s *Store) changeGrant(ctx context.Context, cypher string, params map[string]any) error {
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		n, _, err := readOne(ctx, tx, cypher, params, column("changed", integer))
		if err == nil && n == 0 {
			err = memory.ErrNotFound
		}
		return err
	})
}

// grantProps are the stored properties of g, tenant and id included.
func grantProps(g memory.Grant) map[string]any {
	var expires any
	if g.ExpiresAt != nil {
		expires = timeOrNil(*g.ExpiresAt)
	}
	return map[string]any{
		"tenant":          g.Tenant,
		"id":              g.ID,
		"grantee":         g.Grantee,
		"source":          g.Source,
		"types":           listOrNil(g.Types),
		"kinds":           listOrNil(g.Kinds),
		"max_sensitivity": g.MaxSensitivity,
		"expires_at":      expires,
		"created_at":      timeOrNil(g.CreatedAt),
	}
}

func decodeGrant(v any) memory.Grant {
	p, _ := v.(map[string]any)
	g := memory.Grant{
		ID:             str(p["id"]),
		Tenant:         str(p["tenant"]),
		Grantee:        str(p["grantee"]),
		Source:         str(p["source"]),
		Types:          strs(p["types"]),
		Kinds:          strs(p["kinds"]),
		MaxSensitivity: str(p["max_sensitivity"]),
		CreatedAt:      timeOf(p["created_at"]),
	}
	if t := timeOf(p["expires_at"]); !t.IsZero() {
		g.ExpiresAt = &t
	}
	return g
}

// listOrNil stores an empty list as null: both mean "none" to readers.
func listOrNil(xs []string) any {
	if len(xs) == 0 {
		return nil
	}
	return xs
}
