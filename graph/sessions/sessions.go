package sessions

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/sessionowners"
)

var _ sessionowners.Ledger = (*Store)(nil)

// Store reads and claims the owners of session ids. It is safe for
// concurrent use.
type Store struct {
	tx *neo.Runner
}

// New returns a Store that runs its queries through tx, usually the graph
// store's (graph.Store.Runner).
func New(tx *neo.Runner) *Store {
	return &Store{tx: tx}
}

// SessionOwner implements sessionowners.Ledger.
func (s *Store) SessionOwner(ctx context.Context, tenant, id string) (o sessionowners.Owner, found bool, err error) {
	err = s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		o, found, err = neo.ReadOne(ctx, tx, cypherOwner, map[string]any{"tenant": tenant, "id": id}, ownerOf)
		return err
	})
	return o, found, err
}

// ClaimSession implements sessionowners.Ledger.
func (s *Store) ClaimSession(ctx context.Context, tenant, id string, w sessionowners.Owner) (o sessionowners.Owner, err error) {
	params := map[string]any{"tenant": tenant, "id": id, "user_id": w.UserID, "agent_id": neo.StrOrNil(w.AgentID)}
	err = s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		o, _, err = neo.ReadOne(ctx, tx, cypherClaim, params, ownerOf)
		return err
	})
	return o, err
}

func ownerOf(r *neo4j.Record) (sessionowners.Owner, error) {
	user, _ := r.Get("user_id")
	agent, _ := r.Get("agent_id")
	return sessionowners.Owner{UserID: neo.Str(user), AgentID: neo.Str(agent)}, nil
}
