package graphquery

import (
	"context"
	"errors"
	"fmt"

	"mneme/memory"
)

// Neo4j plans a statement the first time it sees its text, and a path or
// neighbourhood statement planned cold on a busy machine can outlive the
// analyst's whole time limit (query_timeout on the first query after a
// start). WarmUp runs each shape's statements once, in a tenant that holds
// nothing, as the callers whose read filters differ: the default lengths,
// hops and groupings, as a first query sends them. The tenant name holds
// '_', which no API key's tenant can, so no request can reach it.
func (s *Service) WarmUp(ctx context.Context) error {
	var errs []error
	for _, p := range []memory.Principal{
		{Tenant: memory.WarmTenants[0], Kind: memory.KindAnalyst, ID: "warm-analyst", Roles: []string{"analyst"}},
		{Tenant: memory.WarmTenants[0], Kind: memory.KindAdmin, ID: "warm-admin"},
	} {
		scope, err := s.authz.ReadScope(ctx, p, "", s.now())
		if err != nil {
			errs = append(errs, fmt.Errorf("graph warm-up read scope as %s: %w", p.Kind, err))
			continue
		}
		errs = append(errs, s.warmShapes(ctx, scope))
	}
	return errors.Join(errs...)
}

func (s *Service) warmShapes(ctx context.Context, scope memory.Scope) error {
	class := classFields(scope)
	start := NodeRef{Label: LabelEntity, ID: "warm-entity"}
	var errs []error
	keep := func(err error) {
		if err != nil && !errors.Is(err, memory.ErrNotFound) {
			errs = append(errs, fmt.Errorf("graph warm-up: %w", err))
		}
	}
	_, err := s.store.Start(ctx, scope, start)
	keep(err)
	for _, length := range []int{2, DefaultPathLength} {
		_, err = s.store.Paths(ctx, scope, PathQuery{From: "warm-a", To: "warm-b", MaxLength: length, Via: []string{RelMentions, RelSupersedes}, Limit: DefaultPaths})
		keep(err)
	}
	_, _, err = s.store.Expand(ctx, scope, MemoryFilter{}, []NodeRef{start}, DefaultNodes)
	keep(err)
	_, err = s.store.CoMentions(ctx, scope, CoMentionQuery{Entity: start.ID, Limit: DefaultRows}, class, DefaultRows)
	keep(err)
	_, err = s.store.CoMentions(ctx, scope, CoMentionQuery{Limit: DefaultRows}, class, DefaultRows)
	keep(err)
	for _, by := range []string{ByType, ByKind, ByAgent, ByEntity} {
		_, err = s.store.Aggregate(ctx, scope, AggregateQuery{By: by}, class, DefaultRows)
		keep(err)
	}
	for _, q := range []TimelineQuery{{Entity: start.ID}, {User: "warm-user"}, {Kind: "warm"}} {
		q.Limit = DefaultRows
		_, err = s.store.Timeline(ctx, scope, q)
		keep(err)
	}
	_, err = s.store.Entities(ctx, scope, EntityQuery{Text: "warm", Limit: DefaultRows}, class, DefaultRows)
	keep(err)
	return errors.Join(errs...)
}
