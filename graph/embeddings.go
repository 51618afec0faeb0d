package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

// VectorIndexDimension returns the dimension of the memory vector index, or
// 0 when there is no such index yet. Like EnsureSchema it allows for a slow
// first query: it runs at start-up, when a fresh server may still be warming.
func (s *Store) VectorIndexDimension(ctx context.Context) (int, error) {
	var index indexInfo
	err := s.run(ctx, neo4j.AccessModeRead, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
		// The partitioned index, or on a server without it the whole one.
		for _, vec := range []*vectorIndex{vectorPartitioned, vectorWhole} {
			var err error
			if index, _, err = readOne(ctx, tx, ddlShowIndex, map[string]any{"name": vec.name}, indexInfoOf); err != nil || index.kind != "" {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("graph: inspecting index %s: %w", indexVector, err)
	}
	return int(index.dim), nil
}

// RecreateVectorIndex drops the memory vector index and creates it for
// vectors of dim, then waits until it is online. Vectors of another size
// stay on their memories but are left out of the index (and of exact
// search) until they are re-embedded.
func (s *Store) RecreateVectorIndex(ctx context.Context, dim int) error {
	if dim <= 0 {
		return memory.Invalid("dim", "the embedding dimension must be positive")
	}
	for _, vec := range []*vectorIndex{vectorPartitioned, vectorWhole} {
		err := s.run(ctx, neo4j.AccessModeWrite, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
			return exec(ctx, tx, vec.drop, nil)
		})
		if err != nil {
			return fmt.Errorf("graph: dropping index %s: %w", vec.name, err)
		}
	}
	vec, err := s.ensureVectorIndex(ctx, dim, map[string]bool{})
	if err != nil {
		return fmt.Errorf("graph: recreating the vector index: %w", err)
	}
	err = s.run(ctx, neo4j.AccessModeRead, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, ddlAwaitIndexes, map[string]any{"seconds": int(schemaTimeout / time.Second)})
	})
	if err != nil {
		return fmt.Errorf("graph: recreating index %s: waiting: %w", vec.name, err)
	}
	return nil
}
