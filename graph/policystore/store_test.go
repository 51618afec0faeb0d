package policystore

import (
	"testing"

	"mneme/graph/graphtest"
)

// testStore returns a policy store over the runner of a graph store that
// has put the schema in place.
func testStore(t *testing.T) *Store {
	t.Helper()
	return New(graphtest.Store(t).Runner())
}
