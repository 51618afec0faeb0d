package neo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

// Neo4j status codes Translate reads.
const (
	codeConstraintViolation = "Neo.ClientError.Schema.ConstraintValidationFailed"
	codeDatabaseUnavailable = "Neo.TransientError.General.DatabaseUnavailable"
	codeTransientPrefix     = "Neo.TransientError."
	codeTimedOut            = "TransactionTimedOut" // Neo.ClientError.Transaction.TransactionTimedOut…
)

// Translate turns driver errors into domain errors, once, at the edge of the
// stores: anything that means "the database cannot serve us now" wraps
// memory.ErrUnavailable; a uniqueness violation wraps memory.ErrConflict.
// Domain errors returned by transaction work pass through unchanged.
func Translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, memory.ErrNotFound), errors.Is(err, memory.ErrConflict),
		errors.Is(err, memory.ErrUnavailable), isInvalid(err):
		return err
	case unavailable(err):
		return fmt.Errorf("%w: neo4j: %w", memory.ErrUnavailable, err)
	}
	var dbErr *neo4j.Neo4jError
	if errors.As(err, &dbErr) && dbErr.Code == codeConstraintViolation {
		return fmt.Errorf("%w: %s", memory.ErrConflict, dbErr.Msg)
	}
	return fmt.Errorf("neo4j: %w", err)
}

func isInvalid(err error) bool {
	var inv *memory.InvalidError
	return errors.As(err, &inv)
}

// unavailable reports whether err means the database could not be reached or
// could not serve the request in time: lost or refused connections, a full
// pool, an unavailable database, transient errors that outlived the driver's
// retries, and deadlines. A cancelled context is the caller giving up, not
// the store failing, so it is not included.
func unavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) {
		return true
	}
	var conn *neo4j.ConnectivityError
	if errors.As(err, &conn) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	// The driver gives up retrying with a TransactionExecutionLimit that holds
	// every attempt's error but does not unwrap them.
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) {
		for _, e := range limit.Errors {
			if unavailable(e) {
				return true
			}
		}
		return strings.Contains(limit.Cause, "timeout")
	}
	var dbErr *neo4j.Neo4jError
	if errors.As(err, &dbErr) {
		return dbErr.Code == codeDatabaseUnavailable || strings.HasPrefix(dbErr.Code, codeTransientPrefix) ||
			strings.Contains(dbErr.Code, codeTimedOut)
	}
	return false
}
