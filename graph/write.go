package graph

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

// CountText returns how many property values of tenant's nodes and
// relationships contain needle. Audits and tests use it to prove that a
// rejected or redacted value was never stored.
func (s *Store) CountText(ctx context.Context, tenant, needle string) (int64, error) {
	var n int64
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		// One row for nodes and one for relationships (UNION ALL).
		hits, err := readAll(ctx, tx, cypherCountText, map[string]any{"tenant": tenant, "needle": needle}, func(r *neo4j.Record) (int64, error) {
			v, _ := r.Get("hits")
			return integer(v), nil
		})
		if err != nil {
			return err
		}
		n = 0
		for _, h := range hits {
			n += h
		}
		return nil
	})
	return n, err
}

// SimilarMemories returns the memories of q.UserID of type q.Type in one of
// q.Statuses, in scope, most similar to q.Embedding first (cosine in
// [-1, 1]). An empty scope or embedding finds nothing.
func (s *Store) SimilarMemories(ctx context.Context, scope memory.Scope, q memory.SimilarQuery) ([]memory.Hit, error) {
	if scope.Empty() || scope.Tenant == "" || len(q.Embedding) == 0 || len(q.Statuses) == 0 {
		return nil, nil
	}
	pred, params := scopePredicate(scope)
	params["tenant"] = scope.Tenant
	params["user_id"] = q.UserID
	params["type"] = q.Type
	params["statuses"] = q.Statuses
	params["vec"] = float64s(q.Embedding)
	params["limit"] = clampLimit(q.Limit, 5, maxSearchLimit)
	return s.search(ctx, cypherSimilarCandidates+pred+cypherSimilarScore, params)
}

// ReinforceMemory records one more observation of the active or candidate
// memory id (see memory.Reinforcement) and returns it as stored. A candidate
// that becomes active takes over its key's slot, superseding the slot's
// heads. memory.ErrNotFound when id is missing or no longer active or a
// candidate.
func (s *Store) ReinforceMemory(ctx context.Context, tenant, id string, r memory.Reinforcement) (memory.Memory, error) {
	return s.promote(ctx, tenant, id, r.UserID, nil, cypherReinforce, reinforceParams(r))
}

// ConfirmMemory makes the candidate id active, taking over its key's slot:
// it supersedes the heads there that reader covers. It returns the memory;
// an active one as it is; memory.ErrConflict for any other status,
// memory.ErrNotFound when missing.
func (s *Store) ConfirmMemory(ctx context.Context, tenant, id, userID string, reader memory.Scope, at time.Time) (memory.Memory, error) {
	return s.promote(ctx, tenant, id, userID, &reader, cypherConfirm, map[string]any{"at": at.UTC()})
}

// promote runs a query that may turn a candidate active, then supersedes the
// slot's old head when it did. It locks the user first, as every write does,
// so that promotions and creations of one slot queue in one order.
func (s *Store) promote(ctx context.Context, tenant, id, userID string, reader *memory.Scope, cypher string, params map[string]any) (memory.Memory, error) {
	var out memory.Memory
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		if err := lockBatch(ctx, tx, tenant, []memory.Memory{{UserID: userID}}); err != nil {
			return err
		}
		var err error
		out, err = promoteIn(ctx, tx, tenant, id, reader, cypher, params)
		return err
	})
	return out, err
}

// promoteIn is promote inside a transaction that holds the user's lock. A
// memory made active supersedes the heads of its slot that reader covers
// (nil: every head, for the system): one the promoter may not read stays.
func promoteIn(ctx context.Context, tx neo4j.ManagedTransaction, tenant, id string, reader *memory.Scope, cypher string, params map[string]any) (memory.Memory, error) {
	params["tenant"], params["id"] = tenant, id
	p, ok, err := readOne(ctx, tx, cypher, params, promotionOf)
	if err != nil {
		return memory.Memory{}, err
	}
	if !ok {
		return memory.Memory{}, memory.ErrNotFound
	}
	if p.status != memory.StatusActive && p.status != memory.StatusCandidate {
		return memory.Memory{}, fmt.Errorf("%w: memory %s is %s", memory.ErrConflict, id, p.status)
	}
	if p.before == memory.StatusCandidate && p.status == memory.StatusActive && p.key != "" {
		pred, sp := "true", map[string]any{}
		if reader != nil {
			pred, sp = policyPredicate(*reader)
		}
		maps.Copy(sp, map[string]any{"tenant": tenant, "id": id, "user_id": p.userID, "key": p.key, "reason": reasonActivated, "levels": memory.Sensitivities})
		err := exec(ctx, tx, cypherSupersedeSlot+pred+cypherSupersedeSlotTail, sp)
		if err != nil {
			return memory.Memory{}, err
		}
	}
	return getMemory(ctx, tx, tenant, id)
}

// promotion is what cypherReinforce and cypherConfirm return: the memory's
// status before and after, and its slot.
type promotion struct {
	before, status, key, userID string
}

func promotionOf(r *neo4j.Record) (promotion, error) {
	cols := r.AsMap()
	return promotion{before: str(cols["before"]), status: str(cols["status"]), key: str(cols["key"]), userID: str(cols["user_id"])}, nil
}

// reinforceIn runs a reinforcement in tx by w, the memory written, under
// the lock of the memory's user, which the batch holds. Its idempotency key
// keeps w's writer and body (see RepeatKey): the text w sent is not the
// memory's, and only w's retry is one.
func reinforceIn(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, r memory.Repeat, w memory.Memory, reader *memory.Scope) (memory.Memory, error) {
	params := reinforceParams(r.Reinforcement)
	if r.IdempotencyKey != "" {
		params["idem_hash"] = DeletedKeyHash(r.IdempotencyKey)
		params["idem_author"], params["idem_body"] = deletedAuthor(w.UserID, w.AgentID), repeatBody(w)
		params["idem_sens"] = memory.SensitivityRank(w.Sensitivity)
	}
	return promoteIn(ctx, tx, tenant, r.Target, reader, cypherReinforce, params)
}

// reinforceParams are cypherReinforce's parameters for r; the key's writer
// and body are unknown.
func reinforceParams(r memory.Reinforcement) map[string]any {
	return map[string]any{
		"session": r.SessionID, "step": r.ImportanceStep, "at": r.At.UTC(), "activate_at": r.ActivateAt,
		"idem": strOrNil(r.IdempotencyKey), "idem_hash": nil, "idem_author": nil, "idem_body": nil, "idem_sens": nil,
	}
}
