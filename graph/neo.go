package graph

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
)

// The store's queries read and write through package neo's plumbing, under
// short local names.
var (
	translate  = neo.Translate
	count      = neo.Count
	collect    = neo.Collect
	exec       = neo.Exec
	str        = neo.Str
	strs       = neo.Strs
	float      = neo.Float
	integer    = neo.Integer
	timeOf     = neo.TimeOf
	strOrNil   = neo.StrOrNil
	intOrNil   = neo.IntOrNil
	timeOrNil  = neo.TimeOrNil
	float64s   = neo.Float64s
	floatOrNil = neo.FloatOrNil
	unsized    = neo.Unsized
	// The Lucene syntax of the full-text indexes.
	fullTextQuery = neo.FullTextQuery
	containsTerms = neo.ContainsTerms
	escapePhrase  = neo.EscapePhrase
)

func readAll[T any](ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any, decode func(*neo4j.Record) (T, error)) ([]T, error) {
	return neo.ReadAll(ctx, tx, cypher, params, decode)
}

func readOne[T any](ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any, decode func(*neo4j.Record) (T, error)) (T, bool, error) {
	return neo.ReadOne(ctx, tx, cypher, params, decode)
}

func column[T any](name string, decode func(any) T) func(*neo4j.Record) (T, error) {
	return neo.Column(name, decode)
}
