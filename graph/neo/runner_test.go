package neo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/internal/testenv"
)

// Answered tells when the server last answered a transaction, committed or
// refused by it; a transaction that never reached it tells nothing.
func TestRunnerAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Neo4j")
	}
	ctx := context.Background()
	r := neo.NewRunner(testenv.Neo4j(t), testenv.Neo4jDatabase(), 0)
	if got := r.Answered(); !got.IsZero() {
		t.Fatalf("Answered before any transaction = %s, want zero", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_ = r.Read(cancelled, func(tx neo4j.ManagedTransaction) error { return nil })
	if got := r.Answered(); !got.IsZero() {
		t.Fatalf("Answered after a transaction that never ran = %s, want zero", got)
	}
	err := r.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		_, err := tx.Run(ctx, "RETURN 1", nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	first := r.Answered()
	if first.IsZero() {
		t.Fatal("Answered after a committed transaction is zero")
	}
	err = r.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		_, err := tx.Run(ctx, "THIS IS NOT CYPHER", nil)
		return err
	})
	var refused *neo4j.Neo4jError
	if !errors.As(err, &refused) {
		t.Fatalf("bad query = %v, want the server's refusal", err)
	}
	if got := r.Answered(); !got.After(first) {
		t.Errorf("Answered after the server's refusal = %s, want after %s", got, first)
	}
}
