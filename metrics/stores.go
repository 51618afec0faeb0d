package metrics

import (
	"context"
	"errors"
	"net"

	"github.com/redis/go-redis/v9"

	"mneme/memory"
)

// storeFailed reports whether err is a failure of the store rather than an
// answer: not found, a version conflict, an invalid request or a cancelled
// caller are answers.
func storeFailed(err error) bool {
	return err != nil && !errors.Is(err, memory.ErrNotFound) && !errors.Is(err, memory.ErrConflict) &&
		!errors.Is(err, context.Canceled) && !errors.As(err, new(*memory.InvalidError))
}

// Graph wraps the graph store as memory's Store, counting its failures as
// Neo4j errors.
func (m *Metrics) Graph(next memory.Store) memory.Store { return graphStore{next, m} }

// GraphWrites wraps the graph store's deduplicated writes likewise.
func (m *Metrics) GraphWrites(next memory.DedupStore) memory.DedupStore { return graphWrites{next, m} }

// GraphSearch wraps the graph store's recall searches likewise.
func (m *Metrics) GraphSearch(next memory.SearchStore) memory.SearchStore {
	return graphSearch{next, m}
}

func (m *Metrics) neo4j(err error) error {
	if storeFailed(err) {
		m.StoreError("neo4j")
	}
	return err
}

type graphStore struct {
	next memory.Store
	m    *Metrics
}

func (g graphStore) CreateMemories(ctx context.Context, ms []memory.Memory) ([]memory.Memory, error) {
	out, err := g.next.CreateMemories(ctx, ms)
	return out, g.m.neo4j(err)
}

func (g graphStore) GetMemory(ctx context.Context, tenant, id string) (memory.Memory, error) {
	out, err := g.next.GetMemory(ctx, tenant, id)
	return out, g.m.neo4j(err)
}

func (g graphStore) ListMemories(ctx context.Context, scope memory.Scope, q memory.ListQuery) ([]memory.Memory, error) {
	out, err := g.next.ListMemories(ctx, scope, q)
	return out, g.m.neo4j(err)
}

func (g graphStore) ReplaceMemory(ctx context.Context, tenant, prevID string, expectVersion int, next memory.Memory) (memory.Memory, error) {
	out, err := g.next.ReplaceMemory(ctx, tenant, prevID, expectVersion, next)
	return out, g.m.neo4j(err)
}

func (g graphStore) History(ctx context.Context, tenant, id string) ([]memory.Memory, error) {
	out, err := g.next.History(ctx, tenant, id)
	return out, g.m.neo4j(err)
}

func (g graphStore) DeleteMemory(ctx context.Context, tenant, id, by, reason string) error {
	return g.m.neo4j(g.next.DeleteMemory(ctx, tenant, id, by, reason))
}

func (g graphStore) SearchVector(ctx context.Context, scope memory.Scope, q memory.SearchQuery) ([]memory.Hit, error) {
	out, err := g.next.SearchVector(ctx, scope, q)
	return out, g.m.neo4j(err)
}

func (g graphStore) SearchFullText(ctx context.Context, scope memory.Scope, q memory.SearchQuery) ([]memory.Hit, error) {
	out, err := g.next.SearchFullText(ctx, scope, q)
	return out, g.m.neo4j(err)
}

type graphWrites struct {
	next memory.DedupStore
	m    *Metrics
}

func (g graphWrites) WriteDeduped(ctx context.Context, w memory.DedupWrite) ([]memory.Written, error) {
	out, err := g.next.WriteDeduped(ctx, w)
	return out, g.m.neo4j(err)
}

type graphSearch struct {
	next memory.SearchStore
	m    *Metrics
}

func (g graphSearch) PartitionSize(ctx context.Context, tenant, userID string) (int, error) {
	n, err := g.next.PartitionSize(ctx, tenant, userID)
	return n, g.m.neo4j(err)
}

func (g graphSearch) SearchVectorApprox(ctx context.Context, scope memory.Scope, q memory.SearchQuery, fetch int) ([]memory.Hit, error) {
	out, err := g.next.SearchVectorApprox(ctx, scope, q, fetch)
	return out, g.m.neo4j(err)
}

func (g graphSearch) Expand(ctx context.Context, scope memory.Scope, q memory.ExpandQuery) ([]memory.Expansion, error) {
	out, err := g.next.Expand(ctx, scope, q)
	return out, g.m.neo4j(err)
}

// RedisHook counts the failures of Redis commands (a missing key is an
// answer, not a failure). Add it with redis.Client.AddHook.
func (m *Metrics) RedisHook() redis.Hook { return redisHook{m} }

type redisHook struct{ m *Metrics }

func (h redisHook) failed(err error) {
	if err != nil && !errors.Is(err, redis.Nil) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		h.m.StoreError("redis")
	}
}

func (h redisHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		h.failed(err)
		return c, err
	}
}

func (h redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.failed(err)
		return err
	}
}

func (h redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			h.failed(c.Err())
		}
		return err
	}
}
