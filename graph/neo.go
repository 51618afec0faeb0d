package graph

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
)

// The store's queries read and write through package neo's plumbing, under
// short local names.
var (
	translate, count, collect, exec = neo.Translate, neo.Count, neo.Collect, neo.Exec
	// Readers of a record's values.
	str, strs, float, integer, timeOf, float64s = neo.Str, neo.Strs, neo.Float, neo.Integer, neo.TimeOf, neo.Float64s
	strOrNil, intOrNil, timeOrNil, floatOrNil   = neo.StrOrNil, neo.IntOrNil, neo.TimeOrNil, neo.FloatOrNil
	unsized                                     = neo.Unsized
	// The Lucene syntax of the full-text indexes.
	fullTextQuery, containsTerms, escapePhrase = neo.FullTextQuery, neo.ContainsTerms, neo.EscapePhrase
)

func readAll[T any](ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any, decode func(*neo4j.Record) (T, error)) ([]T, error) {
	return neo.ReadAll(ctx, tx, cypher, params, decode)
}

func readOne[T any](ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any, decode func(*neo4j.Record) (T, error)) (T, bool, error) {
	return neo.ReadOne(ctx, tx, cypher, params, decode)
}

// inRead returns what work reads in a read transaction of s.
func inRead[T any](ctx context.Context, s *Store, work func(tx neo4j.ManagedTransaction) (T, error)) (T, error) {
	var out T
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = work(tx)
		return err
	})
	return out, err
}

func column[T any](name string, decode func(any) T) func(*neo4j.Record) (T, error) {
	return neo.Column(name, decode)
}
