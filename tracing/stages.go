package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"mneme/memory"
)

// Graph wraps memory's Store: a span per store call. Attributes are counts
// and kinds of search, never content or ids of users.
func (t *Tracing) Graph(next memory.Store) memory.Store { return graphStore{next, t} }

// GraphWrites wraps the deduplicated writes: a span per write.
func (t *Tracing) GraphWrites(next memory.DedupStore) memory.DedupStore { return graphWrites{next, t} }

// GraphSearch wraps recall's searches: a span per candidate source.
func (t *Tracing) GraphSearch(next memory.SearchStore) memory.SearchStore {
	return graphSearch{next, t}
}

// Embedder wraps the embedder: a span per batch and per question.
func (t *Tracing) Embedder(next memory.Embedder) memory.Embedder { return embedder{next, t} }

// Authorizer wraps the policy engine as memory sees it: a span per decision
// and per read scope.
func (t *Tracing) Authorizer(next memory.Authorizer) memory.Authorizer { return authorizer{next, t} }

type graphStore struct {
	next memory.Store
	t    *Tracing
}

func (g graphStore) CreateMemories(ctx context.Context, ms []memory.Memory) (out []memory.Memory, err error) {
	ctx, s := g.t.span(ctx, "graph.create", attribute.Int("mneme.memories", len(ms)))
	defer func() { done(s, err) }()
	return g.next.CreateMemories(ctx, ms)
}

func (g graphStore) GetMemory(ctx context.Context, tenant, id string) (m memory.Memory, err error) {
	ctx, s := g.t.span(ctx, "graph.get")
	defer func() { done(s, err) }()
	return g.next.GetMemory(ctx, tenant, id)
}

func (g graphStore) ListMemories(ctx context.Context, scope memory.Scope, q memory.ListQuery) (out []memory.Memory, err error) {
	ctx, s := g.t.span(ctx, "graph.list", attribute.Int("mneme.limit", q.Limit))
	defer func() { s.SetAttributes(attribute.Int("mneme.memories", len(out))); done(s, err) }()
	return g.next.ListMemories(ctx, scope, q)
}

func (g graphStore) ReplaceMemory(ctx context.Context, tenant, prevID string, expectVersion int, next memory.Memory) (m memory.Memory, err error) {
	ctx, s := g.t.span(ctx, "graph.replace")
	defer func() { done(s, err) }()
	return g.next.ReplaceMemory(ctx, tenant, prevID, expectVersion, next)
}

func (g graphStore) History(ctx context.Context, tenant, id string) (out []memory.Memory, err error) {
	ctx, s := g.t.span(ctx, "graph.history")
	defer func() { done(s, err) }()
	return g.next.History(ctx, tenant, id)
}

func (g graphStore) DeleteMemory(ctx context.Context, tenant, id, by, reason string) (err error) {
	ctx, s := g.t.span(ctx, "graph.delete")
	defer func() { done(s, err) }()
	return g.next.DeleteMemory(ctx, tenant, id, by, reason)
}

func (g graphStore) SearchVector(ctx context.Context, scope memory.Scope, q memory.SearchQuery) (out []memory.Hit, err error) {
	ctx, s := g.t.span(ctx, "recall.vector", attribute.String("mneme.path", "exact"))
	defer func() { s.SetAttributes(attribute.Int("mneme.hits", len(out))); done(s, err) }()
	return g.next.SearchVector(ctx, scope, q)
}

func (g graphStore) SearchFullText(ctx context.Context, scope memory.Scope, q memory.SearchQuery) (out []memory.Hit, err error) {
	ctx, s := g.t.span(ctx, "recall.fulltext")
	defer func() { s.SetAttributes(attribute.Int("mneme.hits", len(out))); done(s, err) }()
	return g.next.SearchFullText(ctx, scope, q)
}

type graphWrites struct {
	next memory.DedupStore
	t    *Tracing
}

func (g graphWrites) WriteDeduped(ctx context.Context, w memory.DedupWrite) (out []memory.Written, err error) {
	ctx, s := g.t.span(ctx, "write.commit", attribute.Int("mneme.memories", len(w.Memories)))
	defer func() { done(s, err) }()
	return g.next.WriteDeduped(ctx, w)
}

type graphSearch struct {
	next memory.SearchStore
	t    *Tracing
}

func (g graphSearch) PartitionSize(ctx context.Context, tenant, userID string) (n int, err error) {
	ctx, s := g.t.span(ctx, "recall.partition")
	defer func() { done(s, err) }()
	return g.next.PartitionSize(ctx, tenant, userID)
}

func (g graphSearch) SearchVectorApprox(ctx context.Context, scope memory.Scope, q memory.SearchQuery, fetch int) (out []memory.Hit, err error) {
	ctx, s := g.t.span(ctx, "recall.vector", attribute.String("mneme.path", "index"))
	defer func() { s.SetAttributes(attribute.Int("mneme.hits", len(out))); done(s, err) }()
	return g.next.SearchVectorApprox(ctx, scope, q, fetch)
}

func (g graphSearch) Expand(ctx context.Context, scope memory.Scope, q memory.ExpandQuery) (out []memory.Expansion, err error) {
	ctx, s := g.t.span(ctx, "recall.graph", attribute.Int("mneme.hops", q.Hops))
	defer func() { s.SetAttributes(attribute.Int("mneme.hits", len(out))); done(s, err) }()
	return g.next.Expand(ctx, scope, q)
}

type embedder struct {
	memory.Embedder
	t *Tracing
}

func (e embedder) Embed(ctx context.Context, texts []string) (out [][]float32, err error) {
	ctx, s := e.t.span(ctx, "embed", attribute.Int("mneme.texts", len(texts)), attribute.String("mneme.model", e.Model()))
	defer func() { done(s, err) }()
	return e.Embedder.Embed(ctx, texts)
}

func (e embedder) EmbedQuery(ctx context.Context, text string) (out []float32, err error) {
	ctx, s := e.t.span(ctx, "embed", attribute.Int("mneme.texts", 1), attribute.String("mneme.model", e.Model()))
	defer func() { done(s, err) }()
	return e.Embedder.EmbedQuery(ctx, text)
}

type authorizer struct {
	next memory.Authorizer
	t    *Tracing
}

func (a authorizer) Decide(ctx context.Context, p memory.Principal, action string, r memory.Resource, now time.Time) (d memory.Decision, err error) {
	ctx, s := a.t.span(ctx, "policy.decide", attribute.String("mneme.action", action), attribute.String("mneme.principal_kind", p.Kind))
	defer func() { s.SetAttributes(attribute.Bool("mneme.allow", d.Allow)); done(s, err) }()
	return a.next.Decide(ctx, p, action, r, now)
}

func (a authorizer) Covers(s memory.Scope, r memory.Resource) bool { return a.next.Covers(s, r) }

func (a authorizer) ReadScope(ctx context.Context, p memory.Principal, userID string, now time.Time) (sc memory.Scope, err error) {
	ctx, s := a.t.span(ctx, "policy.scope", attribute.String("mneme.principal_kind", p.Kind))
	defer func() { done(s, err) }()
	return a.next.ReadScope(ctx, p, userID, now)
}
