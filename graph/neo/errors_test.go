package neo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

func TestTranslate(t *testing.T) {
	connErr := &neo4j.ConnectivityError{Inner: io.EOF}
	tests := []struct {
		name string
		in   error
		is   []error // errors.Is must hold for each
		not  []error // and must not hold for these
	}{
		{"connectivity", connErr, []error{memory.ErrUnavailable}, []error{memory.ErrConflict}},
		{"retries exhausted", &neo4j.TransactionExecutionLimit{Cause: "timeout", Errors: []error{connErr, connErr}},
			[]error{memory.ErrUnavailable}, nil},
		{"database unavailable", &neo4j.Neo4jError{Code: "Neo.TransientError.General.DatabaseUnavailable"},
			[]error{memory.ErrUnavailable}, nil},
		{"transaction timed out", &neo4j.Neo4jError{Code: "Neo.ClientError.Transaction.TransactionTimedOut"},
			[]error{memory.ErrUnavailable}, nil},
		{"deadline", fmt.Errorf("run: %w", context.DeadlineExceeded), []error{memory.ErrUnavailable, context.DeadlineExceeded}, nil},
		{"caller cancelled", context.Canceled, []error{context.Canceled}, []error{memory.ErrUnavailable}},
		{"constraint", &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed", Msg: "already exists"},
			[]error{memory.ErrConflict}, []error{memory.ErrUnavailable}},
		{"syntax", &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError"}, nil,
			[]error{memory.ErrUnavailable, memory.ErrConflict, memory.ErrNotFound}},
		{"domain error passes", memory.ErrNotFound, []error{memory.ErrNotFound}, []error{memory.ErrUnavailable}},
		{"wrapped conflict passes", fmt.Errorf("%w: stale", memory.ErrConflict), []error{memory.ErrConflict}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Translate(tc.in)
			for _, target := range tc.is {
				if !errors.Is(got, target) {
					t.Errorf("Translate(%v) = %v: not %v", tc.in, got, target)
				}
			}
			for _, target := range tc.not {
				if errors.Is(got, target) {
					t.Errorf("Translate(%v) = %v: unexpectedly %v", tc.in, got, target)
				}
			}
		})
	}
	if Translate(nil) != nil {
		t.Error("Translate(nil) != nil")
	}
	var inv *memory.InvalidError
	if err := Translate(memory.Invalid("f", "bad")); !errors.As(err, &inv) {
		t.Errorf("InvalidError lost: %v", err)
	}
	var dbErr *neo4j.Neo4jError
	if err := Translate(&neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError"}); !errors.As(err, &dbErr) {
		t.Errorf("driver error not kept for logs: %v", err)
	}
}
