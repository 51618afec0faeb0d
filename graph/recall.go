package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

var _ memory.SearchStore = (*Store)(nil)

// PartitionSize counts the memories of one user in every status.
func (s *Store) PartitionSize(ctx context.Context, tenant, userID string) (int, error) {
	cypher, params := unsized(cypherPartitionSize, map[string]any{"tenant": tenant, "user_id": userID})
	n, err := inRead(ctx, s, func(tx neo4j.ManagedTransaction) (int64, error) {
		return count(ctx, tx, cypher, params)
	})
	return int(n), err
}

// SearchVectorApprox asks the vector index for fetch neighbours of
// q.Embedding in the partition of q.UserID (and with q.Shared in the
// tenant's shared one) and returns those in scope that pass q's filters,
// nearest first (cosine in [-1, 1]), at most q.Limit. Filters and scope
// apply after the index: when they leave out most neighbours, fewer than
// q.Limit come back although more exist. On a server whose index knows no
// partition (Neo4j 5.26) the fetch neighbours are the whole database's, and
// a user whose memories are a small share of it gets few of them.
func (s *Store) SearchVectorApprox(ctx context.Context, scope memory.Scope, q memory.SearchQuery, fetch int) ([]memory.Hit, error) {
	if scope.Empty() || scope.Tenant == "" || len(q.Embedding) == 0 || fetch <= 0 {
		return nil, nil
	}
	if q.UserID == "" && !q.Shared {
		return nil, memory.Invalid("user_id", "search needs a user")
	}
	vec, err := s.vectorIndex(ctx)
	if err != nil {
		return nil, err
	}
	cypher, params := recallVectorIndexQuery(scope, q, fetch, vec.partitioned)
	return s.search(ctx, cypher, params)
}

// Expand returns the memories of q.UserID in scope reached from the entities
// named in q.Text (q.Hops steps), from the entities of q.Seeds (one step), the
// memories said just before and after each seed in its session and from
// q.SessionID, fewest steps first, then newest. A superseded memory
// reached on the way counts as the active head of its chain unless
// q.Filters.AsOf is set.
func (s *Store) Expand(ctx context.Context, scope memory.Scope, q memory.ExpandQuery) ([]memory.Expansion, error) {
	if scope.Empty() || scope.Tenant == "" {
		return nil, nil
	}
	if q.UserID == "" {
		return nil, memory.Invalid("user_id", "expansion needs a user")
	}
	cypher, params := expandQuery(scope, q)
	if cypher == "" {
		return nil, nil
	}
	cypher, params = unsized(cypher, params)
	return inRead(ctx, s, func(tx neo4j.ManagedTransaction) ([]memory.Expansion, error) {
		return readAll(ctx, tx, cypher, params, expansionOf)
	})
}

// expansionOf reads a record of expandQuery.
func expansionOf(r *neo4j.Record) (memory.Expansion, error) {
	m, err := memoryOf(r)
	if err != nil {
		return memory.Expansion{}, err
	}
	hop, _ := r.Get("hop")
	via, _ := r.Get("via")
	path, _ := r.Get("path")
	sim, _ := r.Get("similarity")
	return memory.Expansion{Memory: m, Hop: int(integer(hop)), Via: str(via), Path: strs(path), Similarity: floatOrNil(sim)}, nil
}

// TouchMemories adds one to the access count of each memory of ids and moves
// its last_accessed_at forward to at. Unknown ids are skipped.
func (s *Store) TouchMemories(ctx context.Context, tenant string, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	cypher, params := unsized(cypherTouchMemories, touchParams(tenant, ids, at))
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, cypher, params)
	})
	if err != nil {
		return fmt.Errorf("touch memories: %w", err)
	}
	return nil
}
