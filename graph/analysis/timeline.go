package analysis

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/graphquery"
	"mneme/memory"
)

// Timeline returns the memories in scope of a user, an entity or a kind,
// oldest first, at most q.Limit.
func (s *Store) Timeline(ctx context.Context, scope memory.Scope, q graphquery.TimelineQuery) ([]memory.Memory, error) {
	where, params := s.where(scope, q.Filter)
	subject := "kind"
	params["subject"] = q.Kind
	switch {
	case q.User != "":
		subject, params["subject"] = "user", q.User
	case q.Entity != "":
		subject, params["subject"] = "entity", q.Entity
	}
	params["limit"] = q.Limit
	var out []memory.Memory
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, timelineQuery(subject, where), params, func(r *neo4j.Record) (memory.Memory, error) {
			v, _ := r.Get("memory")
			return decodeMemory(v), nil
		})
		return err
	})
	return out, err
}
