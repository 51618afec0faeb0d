package upkeep

import (
	"testing"
	"time"

	"mneme/graph"
	"mneme/graph/graphtest"
	"mneme/memory"
)

// testStores returns a graph store on the test Neo4j with the schema in
// place, to write and read memories, and the upkeep store over its runner.
func testStores(t *testing.T) (*graph.Store, *Store) {
	t.Helper()
	g := graphtest.Store(t)
	return g, New(g.Runner())
}

func newMemory(tenant, user, content string) memory.Memory {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	return memory.Memory{
		ID: memory.NewID("mem"), Tenant: tenant, UserID: user, AgentID: "agent-a", Type: memory.TypeSemantic,
		Content: content, Status: memory.StatusActive, Sensitivity: memory.SensitivityConfidential,
		Importance: 0.5, Confidence: 1, ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1,
	}
}
