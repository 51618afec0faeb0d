// Package exportstore reads from Neo4j what Mneme holds about one user for
// a data-subject export (package export): every memory about the user in
// every version and status, and the content-free tombstones of the erased
// ones; and whether a user was erased, so that the audit trail names them
// as their erase did. Store implements export.Graph over the transaction
// runner it shares with package graph, whose memory projection it reads
// (graph.MemoryOf).
package exportstore

import (
	"cmp"
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/export"
	"mneme/graph"
	"mneme/graph/neo"
	"mneme/memory"
)

var _ export.Graph = (*Store)(nil)

// Store reads a user's records for an export. It is safe for concurrent
// use.
type Store struct {
	tx *neo.Runner
}

// New returns a Store that runs its queries through tx, usually the graph
// store's (graph.Store.Runner).
func New(tx *neo.Runner) *Store {
	return &Store{tx: tx}
}

// ExportUser returns what the graph holds about userID in tenant: every
// memory in every version and status, and the content-free tombstones of
// the erased ones, in one read transaction so the two agree.
func (s *Store) ExportUser(ctx context.Context, tenant, userID string) (export.GraphRecords, error) {
	out := export.GraphRecords{Memories: []memory.Memory{}, Tombstones: []export.Tombstone{}}
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		ms, err := neo.ReadAll(ctx, tx, cypherExportMemories, map[string]any{"tenant": tenant, "user_id": userID}, graph.MemoryOf)
		if err != nil {
			return err
		}
		ts, err := neo.ReadAll(ctx, tx, cypherExportTombstones, map[string]any{
			"tenant": tenant, "ref": memory.UserTombstoneID(tenant, userID),
		}, neo.Column("tombstone", decodeTombstone))
		if err != nil {
			return err
		}
		if ms != nil {
			out.Memories = ms
		}
		if ts != nil {
			out.Tombstones = ts
		}
		return nil
	})
	return out, err
}

func decodeTombstone(v any) export.Tombstone {
	p, _ := v.(map[string]any)
	kind := cmp.Or(neo.Str(p["kind"]), export.TombstoneMemory)
	return export.Tombstone{
		ID: neo.Str(p["id"]), Kind: kind, DeletedAt: neo.TimeOf(p["deleted_at"]), By: neo.Str(p["by"]), Reason: neo.Str(p["reason"]),
	}
}

// UserErased reports whether userID of tenant was erased: the graph holds
// the user's tombstone, of an erase finished or under way. It implements
// journal.ErasedUsers.
func (s *Store) UserErased(ctx context.Context, tenant, userID string) (bool, error) {
	var n int64
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		n, err = neo.Count(ctx, tx, cypherUserErased, map[string]any{"tenant": tenant, "id": memory.UserTombstoneID(tenant, userID)})
		return err
	})
	return n > 0, err
}
