package keystore

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/userids"
)

// CheckUserID refuses an id the tenant does not know as a user when it
// differs only by case from one it knows, with a
// *userids.CaseConflictError naming that user (the least by id); a known
// id, and a new one without such a twin, are nil. A write makes the same
// check under its locks (package graph); this one is for what reaches the
// graph only later, such as the turns of an open session.
func (s *Store) CheckUserID(ctx context.Context, tenant, id string) error {
	var existing string
	var found bool
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		existing, found, err = neo.ReadOne(ctx, tx, cypherUserCaseTwin, map[string]any{"tenant": tenant, "id": id, "id_fold": userids.Fold(id)}, neo.Column("existing", str))
		return err
	})
	if err != nil || !found {
		return err
	}
	return &userids.CaseConflictError{ID: id, Existing: existing}
}

// foldBatch is how many users one transaction of EnsureUserFolds updates.
const foldBatch = 10_000

// EnsureUserFolds gives users stored before folded ids existed theirs
// (userids.Fold), batch by batch; memoryd runs it at start-up, after
// graph's EnsureSchema made the index that finds them. It finds nothing to
// do after its first run: every user made since gets its folded id with
// its node.
func (s *Store) EnsureUserFolds(ctx context.Context) error {
	for {
		var n int
		err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
			rows, err := neo.ReadAll(ctx, tx, cypherUsersWithoutFold, map[string]any{"batch": foldBatch}, func(r *neo4j.Record) (map[string]any, error) {
				id, _ := r.Get("id")
				eid, _ := r.Get("eid")
				return map[string]any{"eid": eid, "id_fold": userids.Fold(str(id))}, nil
			})
			if n = len(rows); err != nil || n == 0 {
				return err
			}
			return exec(ctx, tx, cypherSetUserFolds, map[string]any{"rows": rows})
		})
		if err != nil {
			return fmt.Errorf("keystore: folding user ids: %w", err)
		}
		if n < foldBatch {
			return nil
		}
	}
}
