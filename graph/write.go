package graph

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// CountText returns how many property values of tenant's nodes and
// relationships contain needle. Audits and tests use it to prove that a
// rejected or redacted value was never stored.
func (s *Store) CountText(ctx context.Context, tenant, needle string) (int64, error) {
	var n int64
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, cypherCountText, map[string]any{"tenant": tenant, "needle": needle})
		if err != nil {
			return err
		}
		n = 0
		for _, r := range recs {
			v, _ := r.Get("hits")
			n += integer(v)
		}
		return nil
	})
	return n, err
}
