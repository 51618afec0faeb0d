package policystore

import (
	"context"
	"testing"
	"time"

	"mneme/graph/graphtest"
)

// testStore returns a policy store over the runner of a graph store that
// has put the schema in place.
func testStore(t *testing.T) *Store {
	t.Helper()
	return New(graphtest.Store(t).Runner())
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
