package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/facts"
	"mneme/memory"
)

// WriteDeduped implements memory.DedupStore: CreateMemories (or WriteEvents,
// with w.CheckStale) where each memory may instead reinforce what it
// repeats. The dedup search runs in the write's transaction, under its user
// locks, so what it finds cannot change before the write commits.
func (s *Store) WriteDeduped(ctx context.Context, w memory.DedupWrite) ([]memory.Written, error) {
	return s.writeDeduped(ctx, w, false)
}

// WarmWrite implements memory.WriteWarmer: it runs the queries of
// WriteDeduped(w) in a transaction that it then rolls back, so Neo4j plans
// them and nothing is stored.
func (s *Store) WarmWrite(ctx context.Context, w memory.DedupWrite) error {
	_, err := s.writeDeduped(ctx, w, true)
	return err
}

func (s *Store) writeDeduped(ctx context.Context, w memory.DedupWrite, rollback bool) ([]memory.Written, error) {
	if !w.Rules.Dedup || w.Rules.DuplicateThreshold <= 0 || len(w.ScopeOf) != len(w.Memories) {
		return nil, errors.New("graph: a deduplicated write needs dedup rules with a duplicate threshold and a scope per memory")
	}
	return s.writeBatch(ctx, w.Memories, batchOptions{rules: w.Rules, dedup: &w, rollback: rollback})
}

// probeGroup is the dedup search of the memories of a segment that share a
// scope: one probe ({at, user_id, type, vec}) per memory.
type probeGroup struct {
	scope  memory.Scope
	probes []map[string]any
}

// query adds the group's parameters to params and returns its scope
// predicate.
func (g probeGroup) query(params map[string]any) (string, map[string]any) {
	pred, more := scopePredicate(g.scope)
	maps.Copy(params, more)
	params["probes"] = g.probes
	return pred, params
}

// probeGroups groups the dedup search of ms by scope, in scope order. A
// memory without a scope (scopeOf[i] < 0), an empty one, or one of another
// tenant, is searched for nowhere. Above a threshold of 1 only the same text
// merges (facts.Same), and the seek on the same numbers is left out: it read
// every number-free memory of the user (they share the digest of no
// numbers), so a conversation's turns cost more the longer its history.
func probeGroups(tenant string, ms []memory.Memory, scopes []memory.Scope, scopeOf []int, threshold float64) []probeGroup {
	byScope := map[int][]map[string]any{}
	for i, m := range ms {
		k := scopeOf[i]
		if k < 0 || k >= len(scopes) || len(m.Embedding) == 0 || scopes[k].Empty() || scopes[k].Tenant != tenant {
			continue
		}
		text, numbers := facts.Signature(m.Content)
		probe := map[string]any{"at": i, "user_id": m.UserID, "type": m.Type, "vec": float64s(m.Embedding), "fact_text": text, "fact_numbers": numbers}
		if threshold > 1 {
			probe["fact_numbers"] = nil // matches nothing
		}
		byScope[k] = append(byScope[k], probe)
	}
	var out []probeGroup
	for _, k := range slices.Sorted(maps.Keys(byScope)) {
		out = append(out, probeGroup{scope: scopes[k], probes: byScope[k]})
	}
	return out
}

// similarIn runs the dedup search of a probe group on its own, into similar.
func similarIn(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, g probeGroup, similar [][]memory.Hit) error {
	pred, params := g.query(map[string]any{"tenant": tenant})
	rows, err := readAll(ctx, tx, cypherSimilarOnlyHead+cypherSimilarBatch+pred+cypherSimilarBatchScore+cypherSimilarOnlyTail, params, func(r *neo4j.Record) (any, error) {
		v, _ := r.Get("similar")
		return v, nil
	})
	if err != nil {
		return err
	}
	if len(rows) != 1 {
		return fmt.Errorf("graph: dedup search returned %d rows", len(rows))
	}
	return decodeSimilar(rows[0], similar)
}

// decodeSimilar reads a list of {at, hits} into similar[at].
func decodeSimilar(v any, similar [][]memory.Hit) error {
	list, _ := v.([]any)
	for _, e := range list {
		em, _ := e.(map[string]any)
		i := int(integer(em["at"]))
		hits, _ := em["hits"].([]any)
		if i < 0 || i >= len(similar) {
			return fmt.Errorf("graph: dedup search answered for memory %d of %d", i, len(similar))
		}
		for _, h := range hits {
			hm, _ := h.(map[string]any)
			m, err := decodeMemory(hm["memory"])
			if err != nil {
				return err
			}
			similar[i] = append(similar[i], memory.Hit{Memory: m, Score: float(hm["score"])})
		}
	}
	return nil
}
