package analysis

import (
	"context"
	"maps"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/graphquery"
	"mneme/memory"
)

// Aggregate counts the memories in scope that match q's filter by q.By,
// per group and decision class.
func (s *Store) Aggregate(ctx context.Context, scope memory.Scope, q graphquery.AggregateQuery, class []string, most int) ([]graphquery.ClassCount, error) {
	if _, ok := groupBy[q.By]; !ok && q.By != graphquery.ByEntity {
		return nil, memory.Invalid("by", "unknown dimension "+q.By)
	}
	where, params := s.where(scope, q.Filter)
	return s.counts(ctx, aggregateQuery(q.By, where, classList(class)), params, most)
}

// CoMentions counts the memories in scope that mention two entities, per
// pair (with q.Entity one of them) and decision class.
func (s *Store) CoMentions(ctx context.Context, scope memory.Scope, q graphquery.CoMentionQuery, class []string, most int) ([]graphquery.ClassCount, error) {
	where, params := s.where(scope, q.Filter)
	if q.Entity == "" {
		return s.counts(ctx, pairsQuery(where, classList(class)), params, most)
	}
	params["entity"] = q.Entity
	return s.counts(ctx, coMentionsQuery(where, classList(class)), params, most)
}

// Entities counts, per entity matching q.Text, the memories in scope that
// mention it, per decision class.
func (s *Store) Entities(ctx context.Context, scope memory.Scope, q graphquery.EntityQuery, class []string, most int) ([]graphquery.ClassCount, error) {
	where, params := s.where(scope, graphquery.MemoryFilter{})
	params["text"] = q.Text
	return s.counts(ctx, entitiesQuery(where, classList(class)), params, most)
}

func (s *Store) counts(ctx context.Context, cypher string, params map[string]any, most int) ([]graphquery.ClassCount, error) {
	params = maps.Clone(params)
	params["most"] = most
	var out []graphquery.ClassCount
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypher, params, func(r *neo4j.Record) (graphquery.ClassCount, error) {
			row := r.AsMap()
			return graphquery.ClassCount{
				Group: neo.Strs(row["g"]), Names: neo.Strs(row["names"]), Kinds: neo.Strs(row["kinds"]),
				Class: neo.Strs(row["class"]), Count: integer(row["n"]), Rep: memory.ResourceOf(decodeMemory(row["rep"])),
			}, nil
		})
		return err
	})
	return out, err
}
