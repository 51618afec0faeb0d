package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Neo4j caches a query plan under the query's text and its parameters'
// types, and for strings and lists also under their size rounded up to a
// power of ten (2–10, 11–100, …): a plan made for a tenant of 12 characters
// is planned again for one of 4. WarmUp therefore runs in a short and a
// long tenant and for a short and a long user id. Tenant names never
// contain '_' (it separates tenant and secret in API keys), so no request
// can name WarmTenants and they never hold data; every warm-up uses them.
var (
	WarmTenants = []string{"m_warm", "mneme_warmup"}
	warmUsers   = []string{"warm-u", "warmup-user-0"}
)

// WarmQueries are questions as users ask them, English and Chinese, with
// and without named entities, so that every part of a recall's queries
// runs. Each caller asks them in every warm tenant, more than ten recalls:
// Neo4j compiles a query's expressions on its tenth use.
var WarmQueries = []string{"warm up: order SO-100001 预热 Shanghai", "What is my budget for warm-up?", "预热订单SO-100002发到哪里了？", "预热的采购预算是多少？"}

// warmCallers are the kinds of caller whose read filters differ most in
// shape, and so in the text of the queries Neo4j plans: an agent in a team
// reads its team's knowledge too, which one without a team does not.
var warmCallers = []Principal{
	{Kind: KindAgent, ID: "warm-a", Roles: []string{"agent"}}, {Kind: KindAgent, ID: "warm-t", Roles: []string{"agent"}, Team: "warm-team"},
	{Kind: KindUser, ID: "warm-u"},
	{Kind: KindAdmin, ID: "warmup-admin", Roles: []string{"admin"}},
}

// WarmUp runs recall for each kind of caller in tenants that hold nothing,
// and the graph queries a recall reaches only when it finds something
// (first-hit expansion, the vector index; policyadmin warms a tenant's first
// policy reads); then the queries of a write, in transactions the
// store rolls back (WriteWarmer). The first recall or queued batch after a
// start would otherwise pay for Neo4j planning these queries, the driver
// opening its connections and the policy engine's first partial
// evaluations: seconds instead of milliseconds. It stores and records
// nothing, and returns every error it met; a failed warm-up costs the first
// callers time, never an answer.
func (s *Service) WarmUp(ctx context.Context) error {
	var errs []error
	// Recall first, in every warm tenant: when the store is slow enough for
	// the warm-up to run out of time, the writes, which a queue absorbs,
	// are the part left cold.
	for _, warm := range []func(context.Context, []Principal, string) error{s.warmRecall, s.warmGraph, s.warmWrites} {
		for _, tenant := range WarmTenants {
			callers := slices.Clone(warmCallers)
			for i := range callers {
				callers[i].Tenant = tenant
			}
			for _, user := range warmUsers {
				errs = append(errs, warm(ctx, callers, user))
			}
		}
	}
	return errors.Join(errs...)
}

// WarmRecallAs runs recall's queries, and the graph queries a recall
// reaches, as each of callers in its own tenant about user, whom none of
// them should know: a caller's read filter (its grants, its tenant's own
// policy) is part of the statements' text, and the warm tenants' callers
// cannot share every one. Nothing is stored, and a recall that finds
// nothing records nothing.
func (s *Service) WarmRecallAs(ctx context.Context, callers []Principal, user string) error {
	return errors.Join(s.warmRecall(ctx, callers, user), s.warmGraph(ctx, callers, user))
}

// warmBatchSizes are write sizes in each of Neo4j's plan-cache bands of
// list sizes up to a queue batch (1, 2–10, 11–100, 101–1000).
var warmBatchSizes = []int{1, 10, 100, 256}

// WriteWarmer runs the queries of a deduplicated write and rolls it back:
// nothing is stored. graph.Store implements it.
type WriteWarmer interface {
	WarmWrite(ctx context.Context, w DedupWrite) error
}

// warmWrites runs the write path's queries for a batch of each warm size,
// as a queued batch applies them: many users, slots, sessions, entities and
// erase fences (QueueSeq).
func (s *Service) warmWrites(ctx context.Context, callers []Principal, user string) error {
	p, now := callers[0], s.now().UTC()
	var errs []error
	for _, n := range warmBatchSizes {
		ms, err := s.warmBatch(p, user, n, now)
		if err != nil {
			return err
		}
		if err := s.embedAll(ctx, ms); err != nil {
			errs = append(errs, fmt.Errorf("warm-up write: %w", err))
			continue
		}
		writer := func(int) Principal { return p }
		scopes, scopeOf, err := s.dedupScopes(ctx, writer, ms, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("warm-up write: %w", err))
			continue
		}
		if err := s.warm.WarmWrite(ctx, s.dedupWrite(ms, scopes, scopeOf, writer, true)); err != nil {
			errs = append(errs, fmt.Errorf("warm-up write of %d: %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// warmRecall recalls as every kind of caller at once, so that the driver
// also opens the connections concurrent requests need.
func (s *Service) warmRecall(ctx context.Context, callers []Principal, user string) error {
	errs := make([]error, len(callers))
	var wg sync.WaitGroup
	for i, p := range callers {
		wg.Go(func() {
			for _, q := range WarmQueries {
				if _, err := s.Recall(ctx, p, RecallRequest{UserID: user, Query: q, SessionID: "warmup-session"}); err != nil {
					errs[i] = fmt.Errorf("warm-up recall as %s: %w", p.Kind, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// warmGraph runs what a recall in an empty tenant does not reach, for every
// kind of caller: each one's read filter is part of the statements' text,
// and a list of first hits is planned apart from the empty list a recall's
// first expansion sends.
func (s *Service) warmGraph(ctx context.Context, callers []Principal, user string) error {
	if !s.graphOn() {
		return nil
	}
	var errs []error
	for _, p := range callers {
		scope, err := s.authz.ReadScope(ctx, p, user, s.now())
		if err != nil {
			errs = append(errs, fmt.Errorf("warm-up read scope as %s: %w", p.Kind, err))
			continue
		}
		q := SearchQuery{UserID: user, Limit: s.recall.Candidates, Embedding: make([]float32, max(s.embed.Dimension(), 1))}
		q.Embedding[0] = 1
		// Three times in each of the four warm partitions: Neo4j compiles a
		// statement's expressions on its tenth run, which a recall would wait for.
		for range 3 {
			_, expandErr := s.searchStore.Expand(ctx, scope, ExpandQuery{UserID: user, Seeds: []string{"warm-1", "warm-2", "warm-3"}, Filters: q, Limit: q.Limit})
			_, indexErr := s.searchStore.SearchVectorApprox(ctx, scope, q, q.Limit*s.recall.IndexOverfetch)
			errs = append(errs, expandErr, indexErr)
		}
	}
	return errors.Join(errs...)
}

// warmBatch builds n memories of p's tenant for warmWrites: pairs of an
// episode and a budget (a slot), one pair per user, each with its session
// and entity, all queued (QueueSeq).
func (s *Service) warmBatch(p Principal, user string, n int, now time.Time) ([]Memory, error) {
	// build refuses the warm tenants, whose names no request may use: it
	// builds in a valid one, and the memories move to the warm tenant.
	builder := p
	builder.Tenant = "warmup"
	ms := make([]Memory, 0, n)
	for i := range n {
		nm := NewMemory{
			UserID: fmt.Sprintf("%s-%d", user, i/2), SessionID: fmt.Sprintf("warmup-session-%d", i),
			Type: TypeEpisodic, Content: fmt.Sprintf("Warm-up: order SO-%d was delivered", 100000+i/2),
			Entities: []Entity{{ID: fmt.Sprintf("order:SO-%d", 100000+i), Kind: "order", Name: fmt.Sprintf("SO-%d", 100000+i)}},
		}
		if i%2 == 1 {
			nm.Type, nm.Kind, nm.Key = TypeSemantic, "budget", "budget"
			nm.Content = fmt.Sprintf("Warm-up: the budget is %dk", 100+i)
		}
		m, err := s.build(builder, nm, now)
		if err != nil {
			return nil, fmt.Errorf("warm-up write: %w", err)
		}
		m.Tenant, m.EvidenceCount, m.QueueSeq = p.Tenant, 1, 1
		ms = append(ms, m)
	}
	return ms, nil
}
