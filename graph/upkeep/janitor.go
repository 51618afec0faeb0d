package upkeep

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/janitor"
)

var _ janitor.Store = (*Store)(nil)

// Store reads and writes what the background sweeps need. It is safe for
// concurrent use.
type Store struct {
	tx *neo.Runner
}

// New returns a Store that runs its queries through tx, usually the graph
// store's (graph.Store.Runner).
func New(tx *neo.Runner) *Store {
	return &Store{tx: tx}
}

// Short local names for package neo's readers.
var (
	count   = neo.Count
	str     = neo.Str
	float   = neo.Float
	integer = neo.Integer
	timeOf  = neo.TimeOf
)

// Tenants lists every tenant that has a user, for the janitor.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	var out []string
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypherListTenants, nil, func(r *neo4j.Record) (string, error) {
			t, _ := r.Get("tenant")
			return str(t), nil
		})
		return err
	})
	return out, err
}

// ActiveUsers names at most most users of tenant who have active memories
// of their own, for the warm-up to ask about.
func (s *Store) ActiveUsers(ctx context.Context, tenant string, most int) ([]string, error) {
	var out []string
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypherActiveUsers, map[string]any{"tenant": tenant, "most": most}, func(r *neo4j.Record) (string, error) {
			u, _ := r.Get("user_id")
			return str(u), nil
		})
		return err
	})
	return out, err
}

// LiveMemories returns the metadata of the active and candidate memories of
// a tenant.
func (s *Store) LiveMemories(ctx context.Context, tenant string) ([]janitor.Usage, error) {
	var out []janitor.Usage
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypherLiveMemories, map[string]any{"tenant": tenant}, usageOf)
		return err
	})
	return out, err
}

// usageOf reads a record of cypherLiveMemories.
func usageOf(rec *neo4j.Record) (janitor.Usage, error) {
	r := rec.AsMap()
	return janitor.Usage{
		ID: str(r["id"]), UserID: str(r["user_id"]), Type: str(r["type"]), Status: str(r["status"]),
		Importance: float(r["importance"]), CreatedAt: timeOf(r["created_at"]), UpdatedAt: timeOf(r["updated_at"]),
		LastAccessedAt: timeOf(r["last_accessed_at"]), WrittenAt: timeOf(r["written_at"]), AccessCount: integer(r["access_count"]),
		Shared: r["shared"] == true, ValidTo: timeOf(r["valid_to"]), SaidByUser: r["said_by_user"] == true,
	}, nil
}

// Transition moves the still-live memories ids of tenant to status to, and
// returns how many moved.
func (s *Store) Transition(ctx context.Context, tenant string, ids []string, to, reason string, at time.Time) (int64, error) {
	var n int64
	err := s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		n, err = count(ctx, tx, cypherTransition, map[string]any{
			"tenant": tenant, "ids": ids, "to": to, "reason": reason, "at": at.UTC(),
		})
		return err
	})
	return n, err
}
