package graphquery

import (
	"errors"
	"fmt"
	"time"

	"mneme/memory"
)

// Limits of a query. A request past one is refused with a LimitError rather
// than answered slowly.
const (
	DefaultHops       = 1
	MaxHops           = 3
	DefaultNodes      = 200
	MaxNodes          = 1000
	DefaultPathLength = 4
	MaxPathLength     = 8
	DefaultPaths      = 10
	MaxPaths          = 50
	DefaultRows       = 100
	MaxRows           = 1000
	// MaxGroups caps the rows a counting query reads from the store
	// (groups times decision classes) before they are decided and summed.
	MaxGroups = 20000
	// MaxText caps every id and search text.
	MaxText = 200
	// DefaultTimeout bounds one query, all its store reads included.
	DefaultTimeout = 5 * time.Second
)

// LimitError is a query past one of the limits: more hops, rows or groups
// than a query may have.
type LimitError struct {
	Field string
	Max   int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s is past its limit of %d: narrow the query", e.Field, e.Max)
}

// ErrTimeout is a query that ran past its time limit.
var ErrTimeout = errors.New("the query ran past its time limit: narrow it (fewer hops, a smaller limit, filters)")

// ErrCypherRefused answers a request to run an analyst's own Cypher: the
// read policy cannot be enforced on arbitrary Cypher, so none is run.
var ErrCypherRefused = errors.New("raw Cypher is not offered: policy cannot be enforced on arbitrary queries; use the graph query shapes under /v1/graph")

// clamp returns v, def when v is 0, or a LimitError past most.
func clamp(field string, v, def, most int) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0:
		return 0, memory.Invalid(field, "must be positive")
	case v > most:
		return 0, &LimitError{Field: field, Max: most}
	}
	return v, nil
}
