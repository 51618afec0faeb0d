package graph

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

// EraseMemories deletes the memories ids of tenant in one transaction: each
// leaves a content-free tombstone, its edges go with it, and the entities and
// sessions no remaining memory links to are removed. Ids that do not exist
// are skipped, so a repeated erase counts zeros.
func (s *Store) EraseMemories(ctx context.Context, tenant string, ids []string, t memory.Tombstone) (memory.GraphErased, error) {
	var out memory.GraphErased
	if len(ids) == 0 {
		return out, nil
	}
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = eraseMemories(ctx, tx, tenant, "", ids, t)
		return err
	})
	return out, err
}

// EraseUser deletes, in one transaction, every memory about userID (all
// versions and statuses, with their edges and embeddings), the entities and
// sessions that only they linked to, sessions recorded as the user's, and
// the User node. Each memory leaves a content-free tombstone, and the user
// one under t.UserRef. A second call erases nothing and counts zeros.
func (s *Store) EraseUser(ctx context.Context, tenant, userID string, t memory.Tombstone) (memory.GraphErased, error) {
	var out memory.GraphErased
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		if err := exec(ctx, tx, cypherLockUser, map[string]any{"tenant": tenant, "user_id": userID}); err != nil {
			return err
		}
		recs, err := collect(ctx, tx, cypherUserMemoryIDs, map[string]any{"tenant": tenant, "user_id": userID})
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(recs))
		for _, r := range recs {
			id, _ := r.Get("id")
			ids = append(ids, str(id))
		}
		if out, err = eraseMemories(ctx, tx, tenant, userID, ids, t); err != nil {
			return err
		}
		if out.Users, err = count(ctx, tx, cypherEraseUserNode, map[string]any{"tenant": tenant, "user_id": userID}); err != nil {
			return err
		}
		if t.UserRef == "" {
			return nil
		}
		return exec(ctx, tx, cypherUserTombstone, map[string]any{
			"tenant": tenant, "id": t.UserRef, "deleted_at": t.At.UTC(), "by": t.By, "reason": t.Reason,
		})
	})
	return out, err
}

// eraseMemories is the shared body of both erases; userID, when set, also
// removes the sessions recorded as that user's.
func eraseMemories(ctx context.Context, tx neo4j.ManagedTransaction, tenant, userID string, ids []string, t memory.Tombstone) (memory.GraphErased, error) {
	var out memory.GraphErased
	recs, err := collect(ctx, tx, cypherEraseMemories, map[string]any{
		"tenant": tenant, "ids": ids, "deleted_at": t.At.UTC(), "by": t.By, "reason": t.Reason,
	})
	if err != nil {
		return out, err
	}
	var entities, sessions []string
	if len(recs) == 1 {
		r := recs[0].AsMap()
		out.Memories = integer(r["memories"])
		entities, sessions = strs(r["entity_ids"]), strs(r["session_ids"])
	}
	if len(entities) > 0 {
		if out.Entities, err = count(ctx, tx, cypherEraseOrphanEntities, map[string]any{"tenant": tenant, "ids": entities}); err != nil {
			return out, err
		}
	}
	if len(sessions) > 0 || userID != "" {
		out.Sessions, err = count(ctx, tx, cypherEraseOrphanSessions, map[string]any{
			"tenant": tenant, "ids": sessions, "user_id": strOrNil(userID),
		})
	}
	return out, err
}

// TenantNode is one node of a tenant as an audit sees it.
type TenantNode struct {
	Labels []string
	// Props holds every property but the embedding.
	Props    map[string]any
	Embedded bool // the node has an embedding
}

// TenantNodes returns every node of a tenant with its properties. It scans
// the whole database: an audit tool (did an erase leave anything behind?),
// not a request path.
func (s *Store) TenantNodes(ctx context.Context, tenant string) ([]TenantNode, error) {
	var out []TenantNode
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, cypherTenantNodes, map[string]any{"tenant": tenant})
		if err != nil {
			return err
		}
		out = make([]TenantNode, 0, len(recs))
		for _, r := range recs {
			m := r.AsMap()
			props, _ := m["props"].(map[string]any)
			delete(props, "embedding")
			embedded, _ := m["embedded"].(bool)
			out = append(out, TenantNode{Labels: strs(m["labels"]), Props: props, Embedded: embedded})
		}
		return nil
	})
	return out, err
}

// count runs a query that returns one row with a count n.
func count(ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any) (int64, error) {
	recs, err := collect(ctx, tx, cypher, params)
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	n, _ := recs[0].Get("n")
	return integer(n), nil
}
