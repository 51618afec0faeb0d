package graph

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
	"mneme/policyadmin"
)

var _ policyadmin.PolicyStore = (*Store)(nil)

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
		"author": r.Author, "message": r.Message, "created_at": timeOrNil(r.CreatedAt), "digest": r.Digest,
		"module_names": names, "module_sources": sources,
	}
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		n, _, err := readOne(ctx, tx, cypherCreatePolicyRevision, map[string]any{"tenant": r.Tenant, "props": props}, column("number", integer))
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
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var found bool
		var err error
		out, found, err = readOne(ctx, tx, cypherPolicyRevision, map[string]any{"tenant": tenant, "number": number}, column("rev", decodePolicyRevision))
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
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = readAll(ctx, tx, cypherListPolicyRevisions, map[string]any{"tenant": tenant}, column("rev", decodePolicyRevision))
		return err
	})
	return out, err
}

// ActivatePolicy makes revision number the tenant's policy and bumps its
// epoch, or returns memory.ErrNotFound when there is no such revision.
// Revision 0, the bundled policy, always exists.
func (s *Store) ActivatePolicy(ctx context.Context, tenant string, number int64, by string, at time.Time) (policyadmin.PolicyState, error) {
	var out policyadmin.PolicyState
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		var found bool
		var err error
		out, found, err = readOne(ctx, tx, cypherActivatePolicy, map[string]any{
			"tenant": tenant, "number": number, "by": by, "at": timeOrNil(at),
		}, column("state", decodePolicyState))
		if err == nil && !found {
			err = memory.ErrNotFound
		}
		return err
	})
	return out, err
}

// PolicyState returns the tenant's state; the zero state when nothing was
// ever changed.
func (s *Store) PolicyState(ctx context.Context, tenant string) (policyadmin.PolicyState, error) {
	out := policyadmin.PolicyState{Tenant: tenant, History: []int64{}}
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		st, found, err := readOne(ctx, tx, cypherPolicyState, map[string]any{"tenant": tenant}, column("state", decodePolicyState))
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
		Tenant: str(p["tenant"]), Number: integer(p["number"]), Author: str(p["author"]),
		Message: str(p["message"]), CreatedAt: timeOf(p["created_at"]), Digest: str(p["digest"]),
	}
	names, sources := strs(p["module_names"]), strs(p["module_sources"])
	for i := range min(len(names), len(sources)) {
		r.Modules = append(r.Modules, policyadmin.PolicyModule{Name: names[i], Source: sources[i]})
	}
	return r
}

func decodePolicyState(v any) policyadmin.PolicyState {
	p, _ := v.(map[string]any)
	st := policyadmin.PolicyState{
		Tenant: str(p["tenant"]), Active: integer(p["active"]), Epoch: integer(p["epoch"]),
		GrantRevision: integer(p["grant_revision"]), ActivatedBy: str(p["activated_by"]), History: []int64{},
		Settings: decodeSettings(p),
	}
	if hs, ok := p["history"].([]any); ok {
		for _, h := range hs {
			st.History = append(st.History, integer(h))
		}
	}
	if t := timeOf(p["activated_at"]); !t.IsZero() {
		st.ActivatedAt = &t
	}
	return st
}
