package analysis

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
)

// Census is what a tenant holds in the graph, and how many nodes anywhere
// carry labels the graph never uses: a before-and-after record that shows
// queries changed nothing.
type Census struct {
	Nodes, Relationships, Strangers int64
}

// Census counts the tenant's nodes and relationships, and the nodes that
// carry any of labels.
func (s *Store) Census(ctx context.Context, tenant string, labels []string) (Census, error) {
	var c Census
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		row, _, err := neo.ReadOne(ctx, tx, cypherCensus, map[string]any{"tenant": tenant}, func(r *neo4j.Record) (map[string]any, error) {
			return r.AsMap(), nil
		})
		if err != nil {
			return err
		}
		c.Nodes, c.Relationships = integer(row["nodes"]), integer(row["rels"])
		c.Strangers, err = neo.Count(ctx, tx, cypherStrangers, map[string]any{"labels": labels})
		return err
	})
	return c, err
}
