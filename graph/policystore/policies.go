package policystore

import (
	"context"
	"slices"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/memory"
	"mneme/policyadmin"
)

var _ policyadmin.PolicyStore = (*Store)(nil)

// Store keeps the tenants' policy revisions, policy state and settings in
// Neo4j. It is safe for concurrent use.
type Store struct {
	tx *neo.Runner
}

// New returns a Store that runs its queries through tx, usually the graph
// store's (graph.Store.Runner).
func New(tx *neo.Runner) *Store {
	return &Store{tx: tx}
}

// CreatePolicyRevision stores r under the tenant's next revision number,
// from 1, and returns it with its number.
func (s *Store) CreatePolicyRevision(ctx context.Context, r policyadmin.PolicyRevision) (policyadmin.PolicyRevision, error) {
	if r.Tenant == "" {
		return policyadmin.PolicyRevision{}, memory.Invalid("tenant", "is required")
	}
	names := make([]string, len(r.Modules))
	sources := make([]string, len(r.Modules))
	for i, m := range r.Modules {
		names[i], sources[i] = m.Name, m.Source
	}
	props := map[string]any{
		"author": r.Author, "message": r.Message, "created_at": neo.TimeOrNil(r.CreatedAt), "digest": r.Digest,
		"module_names": names, "module_sources": sources,
	}
	err := s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		n, _, err := neo.ReadOne(ctx, tx, cypherCreatePolicyRevision, map[string]any{"tenant": r.Tenant, "props": props}, neo.Column("number", neo.Integer))
		r.Number = n
		return err
	})
	if err != nil {
		return policyadmin.PolicyRevision{}, err
	}
	return r, nil
}

// PolicyRevision returns one revision with its modules, or
// memory.ErrNotFound.
func (s *Store) PolicyRevision(ctx context.Context, tenant string, number int64) (policyadmin.PolicyRevision, error) {
	var out policyadmin.PolicyRevision
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var found bool
		var err error
		out, found, err = neo.ReadOne(ctx, tx, cypherPolicyRevision, map[string]any{"tenant": tenant, "number": number}, neo.Column("rev", decodePolicyRevision))
		if err == nil && !found {
			err = memory.ErrNotFound
		}
		return err
	})
	return out, err
}

// ListPolicyRevisions returns the tenant's revisions without modules, oldest
// first.
func (s *Store) ListPolicyRevisions(ctx context.Context, tenant string) ([]policyadmin.PolicyRevision, error) {
	var out []policyadmin.PolicyRevision
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypherListPolicyRevisions, map[string]any{"tenant": tenant}, neo.Column("rev", decodePolicyRevision))
		return err
	})
	return out, err
}

// ActivatePolicy makes revision number the tenant's policy and bumps its
// epoch, or returns memory.ErrNotFound when there is no such revision.
// Revision 0, the bundled policy, always exists.
func (s *Store) ActivatePolicy(ctx context.Context, tenant string, number int64, by string, at time.Time) (policyadmin.PolicyState, error) {
	var out policyadmin.PolicyState
	err := s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		var found bool
		var err error
		out, found, err = neo.ReadOne(ctx, tx, cypherActivatePolicy, map[string]any{
			"tenant": tenant, "number": number, "by": by, "at": neo.TimeOrNil(at),
		}, neo.Column("state", decodePolicyState))
		if err == nil && !found {
			err = memory.ErrNotFound
		}
		return err
	})
	return out, err
}

// RollBackPolicy makes revision r.To the tenant's policy with r.Lineage as
// its lineage and bumps its epoch, if the epoch is still r.Epoch; otherwise
// it changes nothing and returns memory.ErrConflict. A missing revision is
// memory.ErrNotFound.
func (s *Store) RollBackPolicy(ctx context.Context, r policyadmin.Rollback) (policyadmin.PolicyState, error) {
	lineage := r.Lineage
	if lineage == nil {
		lineage = []int64{}
	}
	var out policyadmin.PolicyState
	err := s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		row, _, err := neo.ReadOne(ctx, tx, cypherRollBackPolicy, map[string]any{
			"tenant": r.Tenant, "number": r.To, "lineage": lineage, "epoch": r.Epoch, "by": r.By, "at": neo.TimeOrNil(r.At),
		}, neo.Column("state", func(v any) map[string]any { m, _ := v.(map[string]any); return m }))
		switch {
		case err != nil:
			return err
		case row["found"] != true:
			return memory.ErrNotFound
		case row["current"] != true:
			return memory.ErrConflict
		}
		out = decodePolicyState(row)
		return nil
	})
	return out, err
}

// PolicyState returns the tenant's state; the zero state when nothing was
// ever changed.
func (s *Store) PolicyState(ctx context.Context, tenant string) (policyadmin.PolicyState, error) {
	out := policyadmin.PolicyState{Tenant: tenant, History: []int64{}}
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		st, found, err := neo.ReadOne(ctx, tx, cypherPolicyState, map[string]any{"tenant": tenant}, neo.Column("state", decodePolicyState))
		if found {
			out = st
		}
		return err
	})
	return out, err
}

func decodePolicyRevision(v any) policyadmin.PolicyRevision {
	p, _ := v.(map[string]any)
	r := policyadmin.PolicyRevision{
		Tenant: neo.Str(p["tenant"]), Number: neo.Integer(p["number"]), Author: neo.Str(p["author"]),
		Message: neo.Str(p["message"]), CreatedAt: neo.TimeOf(p["created_at"]), Digest: neo.Str(p["digest"]),
	}
	names, sources := neo.Strs(p["module_names"]), neo.Strs(p["module_sources"])
	for i := range min(len(names), len(sources)) {
		r.Modules = append(r.Modules, policyadmin.PolicyModule{Name: names[i], Source: sources[i]})
	}
	return r
}

func decodePolicyState(v any) policyadmin.PolicyState {
	p, _ := v.(map[string]any)
	st := policyadmin.PolicyState{
		Tenant: neo.Str(p["tenant"]), Active: neo.Integer(p["active"]), Epoch: neo.Integer(p["epoch"]),
		GrantRevision: neo.Integer(p["grant_revision"]), ActivatedBy: neo.Str(p["activated_by"]), History: []int64{},
		Settings: decodeSettings(p),
	}
	if hs, ok := p["history"].([]any); ok {
		for _, h := range hs {
			st.History = append(st.History, neo.Integer(h))
		}
	}
	if ls, ok := p["lineage"].([]any); ok {
		for _, l := range ls {
			st.Lineage = append(st.Lineage, neo.Integer(l))
		}
	} else {
		st.Lineage = slices.Clone(st.History) // stored before lineages were kept
	}
	if t := neo.TimeOf(p["activated_at"]); !t.IsZero() {
		st.ActivatedAt = &t
	}
	return st
}
