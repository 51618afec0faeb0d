package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
	"mneme/reembed"
)

var _ reembed.Store = (*Store)(nil)

// VectorIndexDimension returns the dimension of the memory vector index, or
// 0 when there is no such index yet. Like EnsureSchema it allows for a slow
// first query: it runs at start-up, when a fresh server may still be warming.
func (s *Store) VectorIndexDimension(ctx context.Context) (int, error) {
	var index indexInfo
	err := s.run(ctx, neo4j.AccessModeRead, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
		var err error
		index, _, err = readOne(ctx, tx, ddlShowIndex, map[string]any{"name": indexVector}, indexInfoOf)
		return err
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
	steps := []struct {
		ddl    string
		params map[string]any
		mode   neo4j.AccessMode
	}{
		{ddlDropVectorIndex, nil, neo4j.AccessModeWrite},
		{ddlMemoryVector, map[string]any{"dim": dim}, neo4j.AccessModeWrite},
		{ddlAwaitIndexes, map[string]any{"seconds": int(schemaTimeout / time.Second)}, neo4j.AccessModeRead},
	}
	for _, st := range steps {
		err := s.run(ctx, st.mode, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
			return exec(ctx, tx, st.ddl, st.params)
		})
		if err != nil {
			return fmt.Errorf("graph: recreating index %s: %q: %w", indexVector, firstWords(st.ddl), err)
		}
	}
	return nil
}

// EmbeddingTenants returns every tenant that holds memories: those of the
// janitor's Tenants, since every memory is about a user of its tenant.
func (s *Store) EmbeddingTenants(ctx context.Context) ([]string, error) {
	return s.Tenants(ctx)
}

// CountMemories returns how many memories, of any status, a tenant holds.
func (s *Store) CountMemories(ctx context.Context, tenant string) (int, error) {
	var n int64
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		n, err = count(ctx, tx, cypherCountMemories, map[string]any{"tenant": tenant})
		return err
	})
	return int(n), err
}

// StaleEmbeddings returns up to limit memories of the tenant with an id
// greater than after, by id, whose vector was not made by model at dim.
func (s *Store) StaleEmbeddings(ctx context.Context, tenant, after, model string, dim, limit int) ([]reembed.Text, error) {
	var out []reembed.Text
	params := map[string]any{"tenant": tenant, "after": after, "model": model, "dim": dim, "limit": limit}
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = readAll(ctx, tx, cypherStaleEmbeddings, params, func(r *neo4j.Record) (reembed.Text, error) {
			id, _ := r.Get("id")
			content, _ := r.Get("content")
			return reembed.Text{ID: str(id), Content: str(content)}, nil
		})
		return err
	})
	return out, err
}

// SetEmbeddings stores vectors made by model on memories of the tenant, in
// one transaction, and returns how many memories it updated.
func (s *Store) SetEmbeddings(ctx context.Context, tenant, model string, vecs []reembed.Vector) (int, error) {
	rows := make([]map[string]any, len(vecs))
	for i, v := range vecs {
		rows[i] = map[string]any{"id": v.ID, "embedding": float64s(v.Embedding)}
	}
	var n int64
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		n, err = count(ctx, tx, cypherSetEmbeddings, map[string]any{"tenant": tenant, "model": model, "rows": rows})
		return err
	})
	return int(n), err
}
