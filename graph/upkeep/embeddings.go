package upkeep

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/reembed"
)

var _ reembed.Store = (*Store)(nil)

// EmbeddingTenants returns every tenant that holds memories: those of the
// janitor's Tenants, since every memory is about a user of its tenant.
func (s *Store) EmbeddingTenants(ctx context.Context) ([]string, error) {
	return s.Tenants(ctx)
}

// CountMemories returns how many memories, of any status, a tenant holds.
func (s *Store) CountMemories(ctx context.Context, tenant string) (int, error) {
	var n int64
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
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
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypherStaleEmbeddings, params, func(r *neo4j.Record) (reembed.Text, error) {
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
		rows[i] = map[string]any{"id": v.ID, "embedding": neo.Float64s(v.Embedding)}
	}
	var n int64
	err := s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		n, err = count(ctx, tx, cypherSetEmbeddings, map[string]any{"tenant": tenant, "model": model, "rows": rows})
		return err
	})
	return int(n), err
}
