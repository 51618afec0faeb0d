package tally

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
)

// TenantUsage returns how many memories tenant stores, in every status and
// version, and the characters of their content: what its quotas count.
func (s *Store) TenantUsage(ctx context.Context, tenant string) (memories, chars int64, err error) {
	err = s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		rec, _, err := neo.ReadOne(ctx, tx, cypherTenantUsage, map[string]any{"tenant": tenant}, func(r *neo4j.Record) (map[string]any, error) {
			return r.AsMap(), nil
		})
		memories, chars = neo.Integer(rec["memories"]), neo.Integer(rec["chars"])
		return err
	})
	return memories, chars, err
}
