package keystore

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
	"mneme/userids"
)

// The agents and users memories are linked to: the nodes a write's
// WRITTEN_BY and ABOUT point at, with the team and name recall and policy
// read (their keys: keys.go).

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

// EnsureUser creates the user if needed and sets the name the user is
// known by when name is not empty.
func (s *Store) EnsureUser(ctx context.Context, tenant, id, name string) error {
	if tenant == "" || id == "" {
		return memory.Invalid("user", "tenant and id are required")
	}
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, cypherEnsureUser, map[string]any{"tenant": tenant, "id": id, "id_fold": userids.Fold(id), "name": strOrNil(name)})
	})
}
