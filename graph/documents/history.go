package documents

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
)

// History counts what a document's imports left in the graph.
type History struct {
	// Statuses counts the document's section memories by status: active
	// ones, and those superseded or archived by later imports.
	Statuses map[string]int
	// Supersessions counts SUPERSEDES edges between its memories.
	Supersessions int
}

// History returns a document's counts.
func (s *Store) History(ctx context.Context, tenant, id string) (History, error) {
	h := History{Statuses: map[string]int{}}
	params := map[string]any{"tenant": tenant, "id": id}
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		recs, err := neo.Collect(ctx, tx, cypherStatuses, params)
		if err != nil {
			return err
		}
		for _, r := range recs {
			st, _ := r.Get("status")
			n, _ := r.Get("n")
			h.Statuses[neo.Str(st)] = int(neo.Integer(n))
		}
		n, err := neo.Count(ctx, tx, cypherSupersessions, params)
		h.Supersessions = int(n)
		return err
	})
	return h, err
}
