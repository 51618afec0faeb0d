package graph

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

// PutAPIKey stores (or replaces) the principal an API key stands for, under
// the key's hash. The key itself is never stored.
func (s *Store) PutAPIKey(ctx context.Context, tenant, hash string, p memory.Principal) error {
	switch {
	case tenant == "":
		return memory.Invalid("tenant", "is required")
	case hash == "":
		return memory.Invalid("hash", "is required")
	case p.Tenant != "" && p.Tenant != tenant:
		return memory.Invalid("tenant", "the principal belongs to another tenant than the key")
	}
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, cypherPutAPIKey, map[string]any{
			"tenant": tenant, "id": hash, "kind": p.Kind, "principal_id": p.ID, "roles": listOrNil(p.Roles),
		})
	})
}

// LookupAPIKey returns the principal of the key with this hash in tenant, or
// memory.ErrNotFound. The tenant comes from the key itself, so even this
// lookup is tenant-scoped.
func (s *Store) LookupAPIKey(ctx context.Context, tenant, hash string) (memory.Principal, error) {
	var p memory.Principal
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var found bool
		var err error
		p, found, err = readOne(ctx, tx, cypherLookupAPIKey, map[string]any{"tenant": tenant, "id": hash}, func(rec *neo4j.Record) (memory.Principal, error) {
			r := rec.AsMap()
			return memory.Principal{Tenant: tenant, Kind: str(r["kind"]), ID: str(r["principal_id"]), Roles: strs(r["roles"])}, nil
		})
		if err == nil && !found {
			err = memory.ErrNotFound
		}
		return err
	})
	return p, err
}

// EnsureAgent creates the agent if needed and sets its team when team is
// not empty.
func (s *Store) EnsureAgent(ctx context.Context, tenant, id, team string) error {
	if tenant == "" || id == "" {
		return memory.Invalid("agent", "tenant and id are required")
	}
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, cypherEnsureAgent, map[string]any{"tenant": tenant, "id": id, "team": strOrNil(team)})
	})
}

// EnsureUser creates the user if needed.
func (s *Store) EnsureUser(ctx context.Context, tenant, id string) error {
	if tenant == "" || id == "" {
		return memory.Invalid("user", "tenant and id are required")
	}
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, cypherEnsureUser, map[string]any{"tenant": tenant, "id": id})
	})
}
