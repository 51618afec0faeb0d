package tally

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/census"
	"mneme/graph"
	"mneme/graph/neo"
	"mneme/memory"
)

var _ census.Store = (*Store)(nil)

// Store counts memories. It is safe for concurrent use.
type Store struct {
	tx *neo.Runner
}

// New returns a Store that runs its queries through tx, usually the graph
// store's (graph.Store.Runner).
func New(tx *neo.Runner) *Store {
	return &Store{tx: tx}
}

// CountMemories counts the memories of scope's tenant that scope admits, by
// user, type and status. An empty scope counts nothing without a query.
func (s *Store) CountMemories(ctx context.Context, scope memory.Scope) ([]census.Count, error) {
	if scope.Empty() || scope.Tenant == "" {
		return nil, nil
	}
	pred, params := graph.ScopePredicate(scope)
	params["tenant"] = scope.Tenant
	var out []census.Count
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypherCountMatch+pred+cypherCountReturn, params, countOf)
		return err
	})
	return out, err
}

func countOf(rec *neo4j.Record) (census.Count, error) {
	r := rec.AsMap()
	return census.Count{
		UserID: neo.Str(r["user_id"]), Type: neo.Str(r["type"]), Status: neo.Str(r["status"]), N: neo.Integer(r["n"]),
	}, nil
}
