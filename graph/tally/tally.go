package tally

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/census"
	"mneme/graph"
	"mneme/graph/neo"
	"mneme/memory"
)

var _ census.Store = (*Store)(nil)

// Store counts memories. It is safe for concurrent use.
type Store struct {
	tx *neo.Runner
}

// New returns a Store that runs its queries through tx, usually the graph
// store's (graph.Store.Runner).
func New(tx *neo.Runner) *Store {
	return &Store{tx: tx}
}

// tallied are the memory properties a tally holds: a scope that reads no
// other can be counted from the tallies.
var tallied = []string{"sensitivity", "status", "type", "user_id"}

// CountMemories counts the memories of scope's tenant that scope admits, by
// user, type and status: from the tenant's tallies when the scope reads only
// what a tally holds and no memory of the tenant predates the tallies
// unreconciled (graph.EnsureSchema marks such tenants), otherwise from the
// memories. An empty scope counts nothing without a query.
func (s *Store) CountMemories(ctx context.Context, scope memory.Scope) ([]census.Count, error) {
	if scope.Empty() || scope.Tenant == "" {
		return nil, nil
	}
	pred, params := graph.ScopePredicate(scope)
	params["tenant"] = scope.Tenant
	covered := !slices.ContainsFunc(scopeFields(scope), func(f string) bool { return !slices.Contains(tallied, f) })
	var out []census.Count
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		cypher := cypherCountMatch + pred + cypherCountReturn
		if covered {
			pending, _, err := neo.ReadOne(ctx, tx, cypherPending, params, neo.Column("pending", func(v any) bool { b, _ := v.(bool); return b }))
			if err != nil {
				return err
			}
			if !pending {
				cypher = cypherTallyMatch + pred + cypherTallyReturn
			}
		}
		var err error
		out, err = neo.ReadAll(ctx, tx, cypher, params, countOf)
		return err
	})
	return out, err
}

func countOf(rec *neo4j.Record) (census.Count, error) {
	r := rec.AsMap()
	return census.Count{
		UserID: neo.Str(r["user_id"]), Type: neo.Str(r["type"]), Status: neo.Str(r["status"]), N: neo.Integer(r["n"]),
	}, nil
}

// Reconciled is what a reconciliation did.
type Reconciled struct {
	Tenants int `json:"tenants"`
	Users   int `json:"users"`
	// Mended counts the buckets whose tally differed from the memories.
	Mended int `json:"mended"`
}

// reconcileBatch is how many users one transaction recounts.
const reconcileBatch = 200

// ReconcileAll reconciles every tenant that holds memories.
func (s *Store) ReconcileAll(ctx context.Context) (Reconciled, error) {
	return s.reconcileEach(ctx, cypherMemoryTenants)
}

// ReconcilePending reconciles the tenants whose memories predate their
// tallies, which count from their memories until then.
func (s *Store) ReconcilePending(ctx context.Context) (Reconciled, error) {
	return s.reconcileEach(ctx, cypherPendingTenants)
}

// reconcileEach reconciles the tenants the query names, one after another.
// A tenant that fails does not stop the others; its error is returned at
// the end.
func (s *Store) reconcileEach(ctx context.Context, list string) (Reconciled, error) {
	var tenants []string
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		tenants, err = neo.ReadAll(ctx, tx, list, nil, neo.Column("tenant", neo.Str))
		return err
	})
	if err != nil {
		return Reconciled{}, err
	}
	var sum Reconciled
	var errs []error
	for _, t := range tenants {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		r, err := s.Reconcile(ctx, t)
		sum.Tenants += r.Tenants
		sum.Users += r.Users
		sum.Mended += r.Mended
		if err != nil {
			errs = append(errs, fmt.Errorf("tally: tenant %s: %w", t, err))
		}
	}
	return sum, errors.Join(errs...)
}

// Reconcile recounts a tenant's tallies from its memories, a batch of users
// at a time, and then clears the tenant's mark of memories older than the
// tallies, so that CountMemories reads them.
// Tallies are kept by every write; this builds them for memories stored
// before tallies existed, and mends any that drifted. It is safe beside
// writers and other reconciliations: each batch holds its users' anchors.
func (s *Store) Reconcile(ctx context.Context, tenant string) (Reconciled, error) {
	var users []string
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		users, err = neo.ReadAll(ctx, tx, cypherTallyUsers, map[string]any{"tenant": tenant}, neo.Column("user_id", neo.Str))
		return err
	})
	if err != nil {
		return Reconciled{}, err
	}
	out := Reconciled{Tenants: 1, Users: len(users)}
	for batch := range slices.Chunk(users, reconcileBatch) {
		var mended int
		err := s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
			var err error
			mended, err = recount(ctx, tx, tenant, batch)
			return err
		})
		if err != nil {
			return out, err
		}
		out.Mended += mended
	}
	return out, s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		return neo.Exec(ctx, tx, cypherDonePending, map[string]any{"tenant": tenant})
	})
}

// bucket is a tally's key.
type bucket struct{ user, typ, status, sensitivity string }

// recount replaces the tallies of users with their memories' counts and
// reports how many buckets changed.
func recount(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, users []string) (int, error) {
	params := map[string]any{"tenant": tenant, "users": users}
	if err := neo.Exec(ctx, tx, cypherLockAnchors, params); err != nil {
		return 0, err
	}
	before, err := counts(ctx, tx, cypherUserTallies, params)
	if err != nil {
		return 0, err
	}
	after, err := counts(ctx, tx, cypherRecount, params)
	if err != nil {
		return 0, err
	}
	mended := 0
	for b, n := range after {
		if before[b] != n {
			mended++
		}
	}
	for b := range before {
		if _, ok := after[b]; !ok {
			mended++
		}
	}
	rows := make([]any, 0, len(after))
	for b, n := range after {
		rows = append(rows, map[string]any{
			"user_id": b.user, "type": b.typ, "status": b.status, "sensitivity": b.sensitivity,
			"sens_rank": graph.SensRank(b.sensitivity), "n": n,
		})
	}
	params["rows"] = rows
	return mended, neo.Exec(ctx, tx, cypherReplaceTallies, params)
}

func counts(ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any) (map[bucket]int64, error) {
	recs, err := neo.Collect(ctx, tx, cypher, params)
	if err != nil {
		return nil, err
	}
	out := make(map[bucket]int64, len(recs))
	for _, rec := range recs {
		r := rec.AsMap()
		out[bucket{neo.Str(r["user_id"]), neo.Str(r["type"]), neo.Str(r["status"]), neo.Str(r["sensitivity"])}] = neo.Integer(r["n"])
	}
	return out, nil
}

// scopeFields names the memory properties, tenant aside, that a scope's
// predicate reads, each once: the tallies can answer under the scope only
// when they hold these.
func scopeFields(s memory.Scope) []string {
	seen := map[string]bool{}
	if s.Filter != nil {
		var walk func(f memory.Filter)
		walk = func(f memory.Filter) {
			if f.Field != "" && f.Field != "tenant" {
				seen[f.Field] = true
			}
			for _, a := range f.Args {
				walk(a)
			}
		}
		walk(*s.Filter)
	} else {
		for _, c := range s.Clauses {
			for field, used := range map[string]bool{
				"user_id": c.UserID != "", "agent_id": len(c.AgentIDs) > 0, "type": len(c.Types) > 0,
				"kind": len(c.Kinds) > 0, "scope": len(c.Scopes) > 0, "scope_id": len(c.ScopeIDs) > 0,
				"sensitivity": c.MaxSensitivity != "", "author": len(c.Authors) > 0,
			} {
				if used {
					seen[field] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
