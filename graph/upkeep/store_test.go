package upkeep

import (
	"context"
	"sync"
	"testing"
	"time"

	"mneme/graph"
	"mneme/internal/testenv"
	"mneme/memory"
)

var schemaOnce struct {
	sync.Once
	err error
}

// testStores returns a graph store on the test Neo4j with the schema in
// place, to write and read memories, and the upkeep store over its runner.
func testStores(t *testing.T) (*graph.Store, *Store) {
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
	return g, New(g.Runner())
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newMemory(tenant, user, content string) memory.Memory {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	return memory.Memory{
		ID: memory.NewID("mem"), Tenant: tenant, UserID: user, AgentID: "agent-a", Type: memory.TypeSemantic,
		Content: content, Status: memory.StatusActive, Sensitivity: memory.SensitivityConfidential,
		Importance: 0.5, Confidence: 1, ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1,
	}
}
