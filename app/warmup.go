package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"mneme/graph/keystore"
	"mneme/graph/upkeep"
	"mneme/identity"
	"mneme/memory"
)

// warmUpTimeout bounds WarmUp: a store slow enough to exceed it would make
// the first requests slow anyway, and the server should start regardless.
// On a 2-core machine with a freshly started Neo4j the whole warm-up takes
// 18–28 s, and once took more than 30.
const warmUpTimeout = 60 * time.Second

// WarmUp runs the analysts' graph queries (graphquery.Service.WarmUp), the
// key lookup of authentication (warmKeys), recall's and the write path's
// queries in tenants that hold nothing (memory.Service.WarmUp), then
// recall's as the principals of the tenants that have users (warmCallers),
// so that the first real recall, queued batch or graph query finds the
// query plans, connections and policy engine warm. It only logs a failure:
// a cold start is slower, not wrong.
func (a *App) WarmUp(ctx context.Context, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, warmUpTimeout)
	defer cancel()
	start := time.Now()
	var graph error
	if a.Graph != nil {
		graph = a.Graph.WarmUp(ctx)
	}
	// The key lookup first: every caller's first request makes it, and it
	// takes a tenth of a second where the rest takes seconds.
	if err := errors.Join(a.warmKeys(ctx), a.Service.WarmUp(ctx), a.Admin.WarmUp(ctx), a.warmCallers(ctx), graph); err != nil {
		log.WarnContext(ctx, "warm-up failed; the first recalls and writes may be slow", "ms", time.Since(start).Milliseconds(), "err", err)
		return
	}
	log.InfoContext(ctx, "queries warmed up", "ms", time.Since(start).Milliseconds())
}

// warmKeyLookups is how many unknown keys warmKeys looks up per warm
// tenant: past the tenth run of a statement, when Neo4j compiles it.
const warmKeyLookups = 12

// warmKeys looks up keys no one holds, as authentication looks up a key it
// has not cached: every replica's first request does, and the statement
// was planned in front of it (40–60 ms). The hashes are random hex of a
// stored hash's length; none is found.
func (a *App) warmKeys(ctx context.Context) error {
	if a.Store == nil {
		return nil
	}
	keys := keystore.New(a.Store.Runner())
	for _, tenant := range memory.WarmTenants {
		for range warmKeyLookups {
			hash := make([]byte, sha256.Size)
			_, _ = rand.Read(hash)
			if _, err := keys.KeyByHash(ctx, tenant, hex.EncodeToString(hash)); err != nil && !errors.Is(err, memory.ErrNotFound) {
				return fmt.Errorf("warm-up key lookups: %w", err)
			}
		}
	}
	return nil
}

// maxWarmCallers bounds how many principals warmCallers recalls as, and
// maxWarmTenants how many tenants it reads them from.
const (
	maxWarmCallers = 24
	maxWarmTenants = 8
)

// warmCallers recalls as the principals that will call, each in its own
// tenant (memory.Service.WarmRecallAs): a caller's read filter (the grants
// it holds, its tenant's policy and settings) is part of the statements'
// text, a shape no caller of the warm tenants has, and the first question
// of each shape would otherwise wait 100–250 ms for Neo4j to plan it. They
// ask about users no one is, with random ids: four short ones, as most user
// ids are, so that each statement runs past the tenth time, when Neo4j
// compiles it, and a long one, as Neo4j plans per size of a parameter;
// then about users who have memories (warmRows).
func (a *App) warmCallers(ctx context.Context) error {
	if a.Store == nil {
		return nil
	}
	grants, err := a.Store.ListGrants(ctx, "")
	if err != nil {
		return fmt.Errorf("warm-up callers: %w", err)
	}
	tenants, err := upkeep.New(a.Store.Runner()).Tenants(ctx)
	if err != nil {
		return fmt.Errorf("warm-up callers: %w", err)
	}
	keys := keystore.New(a.Store.Runner())
	byTenant := map[string][]identity.Principal{}
	for _, g := range grants {
		if !slices.Contains(tenants, g.Tenant) {
			tenants = append(tenants, g.Tenant)
		}
	}
	for _, t := range tenants[:min(len(tenants), maxWarmTenants)] {
		if byTenant[t], err = keys.Principals(ctx, t); err != nil {
			return fmt.Errorf("warm-up callers: %w", err)
		}
	}
	callers := warmCallerSet(grants, byTenant, time.Now(), maxWarmCallers)
	if len(callers) == 0 {
		return nil
	}
	var errs []error
	short := func() string { return memory.NewID("w")[:8] }
	for _, user := range []string{short(), short(), short(), short(), memory.NewID("w")} {
		errs = append(errs, a.Service.WarmRecallAs(ctx, callers, user))
	}
	return errors.Join(append(errs, a.warmRows(ctx, callers))...)
}

// warmRowUsers is how many users of each tenant warmRows asks about.
const warmRowUsers = 3

// rowQuestions are the warm questions and two that ask for what is known
// of the user, which find memories wherever the user has any, and so run
// what only an answer runs: the policy's re-check of each memory, the
// answer's context block.
var rowQuestions = append(slices.Clip(memory.WarmQueries), "What do you know about me?", "我有什么偏好？")

// warmRows has each caller ask the warm questions about a real user
// (warmRowAsks), quietly: nothing is logged or counted. A recall about no
// one leaves Neo4j's code for index hits, full-text scores and expansions
// unused, and on a fresh Neo4j the first real questions then took up to
// 450 ms each where they settle at 10–30.
func (a *App) warmRows(ctx context.Context, callers []memory.Principal) error {
	up := upkeep.New(a.Store.Runner())
	users := map[string][]string{}
	for _, p := range callers {
		if _, done := users[p.Tenant]; done {
			continue
		}
		ids, err := up.ActiveUsers(ctx, p.Tenant, warmRowUsers)
		if err != nil {
			return fmt.Errorf("warm-up users: %w", err)
		}
		users[p.Tenant] = ids
	}
	asks := warmRowAsks(callers, users)
	errs := make([]error, len(asks))
	var wg sync.WaitGroup
	for i, ask := range asks {
		wg.Go(func() {
			for _, q := range rowQuestions {
				if _, err := a.Service.Recall(ctx, ask.caller, memory.RecallRequest{UserID: ask.user, Query: q, Quiet: true}); err != nil {
					errs[i] = fmt.Errorf("warm-up recall as %s about a user: %w", ask.caller.Kind, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// warmRowAsk is one caller asking about one user.
type warmRowAsk struct {
	caller memory.Principal
	user   string
}

// warmRowAsks pairs each caller with a user of its tenant who has
// memories, taking the tenant's users in turn; a user asks about
// themselves, as that is all they may.
func warmRowAsks(callers []memory.Principal, users map[string][]string) []warmRowAsk {
	var out []warmRowAsk
	turn := map[string]int{}
	for _, p := range callers {
		ids := users[p.Tenant]
		switch {
		case p.Kind == memory.KindUser:
			out = append(out, warmRowAsk{p, p.ID})
		case len(ids) > 0:
			out = append(out, warmRowAsk{p, ids[turn[p.Tenant]%len(ids)]})
			turn[p.Tenant]++
		}
	}
	return out
}

// warmCallerSet picks at most most callers: the agents that hold a live
// grant first (their filters are the longest), then every other agent, then
// one user and one admin of each tenant, whose filters have the same shape
// as any other user's or admin's of that tenant. Principals are given by
// tenant; a grantee that is not among them cannot call and is left out.
func warmCallerSet(grants []memory.Grant, byTenant map[string][]identity.Principal, now time.Time, most int) []memory.Principal {
	var out []memory.Principal
	seen := map[[3]string]bool{}
	add := func(tenant string, p identity.Principal) {
		k := [3]string{tenant, p.Kind, p.ID}
		if len(out) < most && !seen[k] {
			seen[k] = true
			out = append(out, memory.Principal{Tenant: tenant, Kind: p.Kind, ID: p.ID, Roles: p.Roles, Team: p.Team})
		}
	}
	for _, g := range grants {
		if g.ExpiresAt != nil && !g.ExpiresAt.After(now) {
			continue
		}
		if i := slices.IndexFunc(byTenant[g.Tenant], func(p identity.Principal) bool { return p.Kind == memory.KindAgent && p.ID == g.Grantee }); i >= 0 {
			add(g.Tenant, byTenant[g.Tenant][i])
		}
	}
	tenants := slices.Sorted(maps.Keys(byTenant))
	for _, t := range tenants {
		for _, p := range byTenant[t] {
			if p.Kind == memory.KindAgent {
				add(t, p)
			}
		}
	}
	for _, t := range tenants {
		for _, kind := range []string{memory.KindUser, memory.KindAdmin} {
			if i := slices.IndexFunc(byTenant[t], func(p identity.Principal) bool { return p.Kind == kind }); i >= 0 {
				add(t, byTenant[t][i])
			}
		}
	}
	return out
}
