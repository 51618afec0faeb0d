package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"mneme/graph/keystore"
	"mneme/memory"
)

// warmUpTimeout bounds WarmUp: a store slow enough to exceed it would make
// the first requests slow anyway, and the server should start regardless.
const warmUpTimeout = 30 * time.Second

// WarmUp has the service run recall's and the write path's queries once in
// tenants that hold nothing (memory.Service.WarmUp), then recall's as the
// agents that hold grants (warmGrantees), and the analysts' graph queries
// (graphquery.Service.WarmUp), so that the first real recall, queued batch
// or graph query finds the query plans, connections and policy engine
// warm. It only logs a failure: a cold start is slower, not wrong.
func (a *App) WarmUp(ctx context.Context, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, warmUpTimeout)
	defer cancel()
	start := time.Now()
	var graph error
	if a.Graph != nil {
		graph = a.Graph.WarmUp(ctx)
	}
	if err := errors.Join(a.Service.WarmUp(ctx), a.Admin.WarmUp(ctx), a.warmGrantees(ctx), graph); err != nil {
		log.WarnContext(ctx, "warm-up failed; the first recalls and writes may be slow", "ms", time.Since(start).Milliseconds(), "err", err)
		return
	}
	log.InfoContext(ctx, "queries warmed up", "ms", time.Since(start).Milliseconds())
}

// maxWarmGrantees bounds how many agents warmGrantees recalls as.
const maxWarmGrantees = 16

// warmGrantees recalls as the agents that hold a sharing grant, each in its
// own tenant (memory.Service.WarmRecallAs): their read filters hold their
// grants, a shape no caller of the warm tenants has, and a grantee's first
// question would otherwise wait for Neo4j to plan it. They ask about users
// no one is, with random ids: four short ones, as most user ids are, so
// that each statement runs past the tenth time, when Neo4j compiles it, and
// a long one, as Neo4j plans per size of a parameter.
func (a *App) warmGrantees(ctx context.Context) error {
	if a.Store == nil {
		return nil
	}
	grants, err := a.Store.ListGrants(ctx, "")
	if err != nil {
		return fmt.Errorf("warm-up grantees: %w", err)
	}
	keys := keystore.New(a.Store.Runner())
	seen := map[[2]string]bool{}
	var callers []memory.Principal
	now := time.Now()
	for _, g := range grants {
		k := [2]string{g.Tenant, g.Grantee}
		if seen[k] || len(callers) == maxWarmGrantees || (g.ExpiresAt != nil && !g.ExpiresAt.After(now)) {
			continue
		}
		seen[k] = true
		p, err := keys.Principal(ctx, g.Tenant, memory.KindAgent, g.Grantee)
		if err != nil {
			continue // not registered: the agent cannot call
		}
		callers = append(callers, memory.Principal{Tenant: g.Tenant, Kind: p.Kind, ID: p.ID, Roles: p.Roles, Team: p.Team})
	}
	if len(callers) == 0 {
		return nil
	}
	var errs []error
	short := func() string { return memory.NewID("w")[:8] }
	for _, user := range []string{short(), short(), short(), short(), memory.NewID("w")} {
		errs = append(errs, a.Service.WarmRecallAs(ctx, callers, user))
	}
	return errors.Join(errs...)
}
