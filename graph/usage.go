package graph

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TenantUsage returns how many memories tenant stores, in every status and
// version, and the characters of their content: what its quotas count.
func (s *Store) TenantUsage(ctx context.Context, tenant string) (memories, chars int64, err error) {
	type usage struct{ memories, chars int64 }
	var u usage
	err = s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		u, _, err = readOne(ctx, tx, cypherTenantUsage, map[string]any{"tenant": tenant}, func(rec *neo4j.Record) (usage, error) {
			r := rec.AsMap()
			n := integer(r["memories"])
			c := integer(r["chars"])
			return usage{n, c}, nil
		})
		return err
	})
	return u.memories, u.chars, err
}
