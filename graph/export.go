package graph

import (
	"cmp"
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/export"
	"mneme/memory"
)

var _ export.Graph = (*Store)(nil)

// ExportUser returns what the graph holds about userID in tenant: every
// memory in every version and status, and the content-free tombstones of
// the erased ones, in one read transaction so the two agree.
func (s *Store) ExportUser(ctx context.Context, tenant, userID string) (export.GraphRecords, error) {
	out := export.GraphRecords{Memories: []memory.Memory{}, Tombstones: []export.Tombstone{}}
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		ms, err := readAll(ctx, tx, cypherExportMemories, map[string]any{"tenant": tenant, "user_id": userID}, memoryOf)
		if err != nil {
			return err
		}
		ts, err := readAll(ctx, tx, cypherExportTombstones, map[string]any{
			"tenant": tenant, "ref": memory.UserTombstoneID(tenant, userID),
		}, column("tombstone", decodeTombstone))
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
	kind := cmp.Or(str(p["kind"]), export.TombstoneMemory)
	return export.Tombstone{
		ID: str(p["id"]), Kind: kind, DeletedAt: timeOf(p["deleted_at"]), By: str(p["by"]), Reason: str(p["reason"]),
	}
}
