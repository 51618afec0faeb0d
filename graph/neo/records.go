package neo

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Running queries. Reads decode each record with a function of their own.
// The decoders read columns leniently (Str, Integer, TimeOf…): null, absent
// and mistyped values become zero values, as the domain types want them,
// where the driver's neo4j.GetRecordValue would fail.

// ReadAll runs one query in tx and decodes every record it returns, in
// order. No records give an empty, non-nil slice.
func ReadAll[T any](ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any, decode func(*neo4j.Record) (T, error)) ([]T, error) {
	res, err := tx.Run(ctx, cypher, params)
	if err != nil {
		return nil, err
	}
	return neo4j.CollectTWithContext(ctx, res, decode)
}

// ReadOne runs one query in tx and decodes the first record it returns; ok
// is false when there is none. Unlike neo4j.SingleTWithContext, no record
// is not an error: callers decide what absence means.
func ReadOne[T any](ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any, decode func(*neo4j.Record) (T, error)) (v T, ok bool, err error) {
	recs, err := Collect(ctx, tx, cypher, params)
	if err != nil || len(recs) == 0 {
		return v, false, err
	}
	v, err = decode(recs[0])
	return v, err == nil, err
}

// Count runs a query that returns a count n in one row; no row counts 0.
func Count(ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any) (int64, error) {
	n, _, err := ReadOne(ctx, tx, cypher, params, Column("n", Integer))
	return n, err
}

// Collect runs one query in tx and returns its records.
func Collect(ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any) ([]*neo4j.Record, error) {
	res, err := tx.Run(ctx, cypher, params)
	if err != nil {
		return nil, err
	}
	return res.Collect(ctx)
}

// Exec runs one query in tx for its effects.
func Exec(ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any) error {
	res, err := tx.Run(ctx, cypher, params)
	if err != nil {
		return err
	}
	_, err = res.Consume(ctx)
	return err
}

// Column returns a record decoder that reads one column through decode.
func Column[T any](name string, decode func(any) T) func(*neo4j.Record) (T, error) {
	return func(r *neo4j.Record) (T, error) {
		v, _ := r.Get(name)
		return decode(v), nil
	}
}

// Str reads a string; anything else reads as "".
func Str(v any) string {
	s, _ := v.(string)
	return s
}

// Strs reads a list of strings; an empty list reads as nil.
func Strs(v any) []string {
	xs, _ := v.([]any)
	if len(xs) == 0 {
		return nil
	}
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, Str(x))
	}
	return out
}

// Float reads a float or an integer as a float64.
func Float(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return 0
}

// FloatOrNil reads a number as a float64, and null as nil.
func FloatOrNil(v any) *float64 {
	if v == nil {
		return nil
	}
	f := Float(v)
	return &f
}

// Integer reads an integer or a float as an int64.
func Integer(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

// TimeOf reads a stored datetime as UTC; null reads as the zero time.
func TimeOf(v any) time.Time {
	if t, ok := v.(time.Time); ok {
		return t.UTC()
	}
	return time.Time{}
}

// Parameters. Optional values are stored as null (absent), so that absent
// keys do not collide in uniqueness constraints and indexes skip them.

// StrOrNil is s, or null when s is empty.
func StrOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// IntOrNil is n, or null when n is 0.
func IntOrNil(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// TimeOrNil is t in UTC, or null when t is the zero time.
func TimeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// Float64s is a vector as Neo4j stores it: a list of floats.
func Float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = float64(f)
	}
	return out
}
