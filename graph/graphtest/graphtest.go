// Package graphtest gives the tests of the stores beside graph, and of what
// reads through them, a graph store on the test Neo4j (internal/testenv)
// with the schema in place.
package graphtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"mneme/graph"
	"mneme/internal/testenv"
)

var schema struct {
	sync.Once
	err error
}

// Store returns a graph store on the test Neo4j whose schema EnsureSchema
// put in place, once per test binary.
func Store(t testing.TB) *graph.Store {
	t.Helper()
	g := graph.New(testenv.Neo4j(t), graph.Options{Database: testenv.Neo4jDatabase()})
	schema.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		schema.err = g.EnsureSchema(ctx, testenv.EmbeddingDimension)
	})
	if schema.err != nil {
		t.Fatalf("EnsureSchema: %v", schema.err)
	}
	return g
}

// Ctx is the test's context, bounded so that a store that hangs fails the
// test rather than the run.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
