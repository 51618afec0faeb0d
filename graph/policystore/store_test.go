package policystore

import (
	"context"
	"sync"
	"testing"
	"time"

	"mneme/graph"
	"mneme/internal/testenv"
)

var schemaOnce struct {
	sync.Once
	err error
}

// testStore returns a policy store on the test Neo4j, over the runner of a
// graph store that has put the schema in place.
func testStore(t *testing.T) *Store {
	t.Helper()
	g := graph.New(testenv.Neo4j(t), graph.Options{Database: testenv.Neo4jDatabase()})
	schemaOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		schemaOnce.err = g.EnsureSchema(ctx, testenv.EmbeddingDimension)
	})
	if schemaOnce.err != nil {
		t.Fatalf("EnsureSchema: %v", schemaOnce.err)
	}
	return New(g.Runner())
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
