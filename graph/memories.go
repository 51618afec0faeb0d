package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

// Listing and search limits.
const (
	defaultListLimit   = 50
	maxListLimit       = 500
	defaultSearchLimit = 10
	maxSearchLimit     = 500
)

// CreateMemories commits ms in one transaction: all or nothing. The caller
// sets ids, timestamps, version and status; the store only adjusts them for
// supersession. An active memory with a Key supersedes the active memory in
// its (tenant, user, key) slot, taking the next version number; memories of
// one batch apply in order. A memory in another status (a candidate, say) is
// stored beside the slot's head without displacing it. A memory whose
// IdempotencyKey is already stored for the tenant is not created; the stored
// memory is returned in its place. Every memory of a batch must belong to
// the same tenant. The whole batch costs two queries: the locks with the
// state they guard, then the writes.
func (s *Store) CreateMemories(ctx context.Context, ms []memory.Memory) ([]memory.Memory, error) {
	ws, err := s.writeBatch(ctx, ms, batchOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]memory.Memory, len(ws))
	for i, w := range ws {
		out[i] = w.Memory
	}
	return out, nil
}

// WriteEvents is CreateMemories for writes applied from the queue: it
// reports an outcome per memory, and an active memory with a Key is not
// written when its slot's active head has a later valid_from (stale).
func (s *Store) WriteEvents(ctx context.Context, ms []memory.Memory) ([]memory.Written, error) {
	return s.writeBatch(ctx, ms, batchOptions{rules: memory.WriteRules{CheckStale: true}})
}

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

// batchOptions say what else writeBatch does beside creating.
type batchOptions struct {
	// rules plan the batch (memory.PlanBatch).
	rules memory.WriteRules
	// dedup, when set, holds the scopes of the dedup search.
	dedup *memory.DedupWrite
	// rollback undoes the write once its queries ran (WarmWrite).
	rollback bool
}

// errRollback ends the transaction of a write that must leave nothing.
var errRollback = errors.New("graph: rolled back on purpose")

// errVanished: a memory the write meant to reinforce was deleted after it
// was found (deletion does not take the user's lock). The write is planned
// again from scratch.
var errVanished = errors.New("graph: a memory to reinforce vanished")

// writeBatch commits ms in one transaction. See cypher_batch.go for its
// queries. A batch is written in segments, in order; usually there is one.
// A segment ends early where applying it at once would differ from applying
// its memories one by one (see memory.PlanBatch); the next segment reads the state
// again, seeing what the earlier ones wrote.
func (s *Store) writeBatch(ctx context.Context, ms []memory.Memory, o batchOptions) ([]memory.Written, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	tenant := ms[0].Tenant
	for i, m := range ms {
		if err := checkNew(m); err != nil {
			return nil, err
		}
		if m.Tenant != tenant {
			return nil, memory.Invalid(fmt.Sprintf("memories[%d].tenant", i), "every memory of a batch must belong to one tenant")
		}
	}
	for attempt := 1; ; attempt++ {
		var out []memory.Written
		err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
			// Work may be retried: everything starts afresh.
			kept, fenced, err := splitFenced(ctx, tx, tenant, ms) // see memory.Fencer
			if err != nil {
				return err
			}
			ko := o
			if o.dedup != nil && len(kept) < len(ms) {
				d := *o.dedup
				d.ScopeOf = nil
				for i, k := range o.dedup.ScopeOf {
					if _, refused := fenced.refused[i]; !refused {
						d.ScopeOf = append(d.ScopeOf, k)
					}
				}
				ko.dedup = &d
			}
			written := make([]memory.Written, len(kept))
			for from := 0; from < len(kept); {
				var underLocks func() error
				if from == 0 {
					underLocks = func() error { return checkFenced(ctx, tx, tenant, kept) }
				}
				n, err := writeSegment(ctx, tx, tenant, kept, from, ko, written, underLocks)
				if err != nil {
					return err
				}
				from += n
			}
			out = fenced.merge(written)
			if o.rollback {
				return errRollback
			}
			return nil
		})
		if errors.Is(err, errVanished) && attempt < 3 {
			continue
		}
		if errors.Is(err, errRollback) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// writeSegment writes a segment of ms that starts at from and records what
// became of its memories in out. It returns the segment's length.
// underLocks, when set, runs as soon as the segment's locks are held.
func writeSegment(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, ms []memory.Memory, from int, o batchOptions, out []memory.Written, underLocks func() error) (int, error) {
	seg := ms[from:]
	var groups []probeGroup
	if o.dedup != nil {
		groups = probeGroups(tenant, seg, o.dedup.Scopes, o.dedup.ScopeOf[from:])
	}
	similar := make([][]memory.Hit, len(seg))
	var first *probeGroup
	if len(groups) > 0 {
		first = &groups[0]
	}
	st, err := lockAndRead(ctx, tx, tenant, seg, first, similar)
	if err != nil {
		return 0, err
	}
	if underLocks != nil {
		if err := underLocks(); err != nil {
			return 0, err
		}
	}
	for _, g := range groups[min(1, len(groups)):] {
		if err := similarIn(ctx, tx, tenant, g, similar); err != nil {
			return 0, err
		}
	}
	plan := memory.PlanBatch(st, seg, similar, o.rules)
	reinforce := func(rs []memory.Repeat) error {
		for _, r := range rs {
			m, err := reinforceIn(ctx, tx, tenant, r)
			if errors.Is(err, memory.ErrNotFound) {
				return errVanished
			}
			if err != nil {
				return err
			}
			plan.Written[r.Index] = memory.Written{Memory: m, Outcome: memory.OutcomeReinforced}
		}
		return nil
	}
	if err := reinforce(plan.ReinforceStored); err != nil {
		return 0, err
	}
	if len(plan.Create) > 0 {
		err := exec(ctx, tx, cypherWriteBatch, map[string]any{
			"tenant": tenant, "rows": createRows(plan.Create), "supersedes": supersedeRows(plan.Supersedes), "reason": reasonSameKey,
		})
		if err != nil {
			return 0, err
		}
	}
	if err := reinforce(plan.ReinforceNew); err != nil {
		return 0, err
	}
	copy(out[from:], plan.Written)
	return plan.N, nil
}

// createRows are the $rows of cypherWriteBatch for the memories a plan
// creates. Agents are linked, and so locked, in one order (see
// cypherLockBatch).
func createRows(ms []memory.Memory) []map[string]any {
	ms = slices.Clone(ms)
	slices.SortStableFunc(ms, func(a, b memory.Memory) int { return strings.Compare(a.AgentID, b.AgentID) })
	rows := make([]map[string]any, len(ms))
	for i, m := range ms {
		rows[i] = map[string]any{"props": memoryProps(m), "user_id": m.UserID, "entities": entityParams(m.Entities)}
	}
	return rows
}

// supersedeRows are the $supersedes of cypherWriteBatch.
func supersedeRows(ss []memory.Supersession) []map[string]any {
	rows := make([]map[string]any, len(ss))
	for i, sup := range ss {
		rows[i] = map[string]any{"id": sup.ID, "prev": sup.Prev}
	}
	return rows
}

// reinforceIn runs a reinforcement in tx, under the lock of the memory's
// user, which the batch holds.
func reinforceIn(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, r memory.Repeat) (memory.Memory, error) {
	return promoteIn(ctx, tx, tenant, r.Target, cypherReinforce, map[string]any{
		"session": r.SessionID, "step": r.ImportanceStep, "at": r.At.UTC(), "activate_at": r.ActivateAt,
		"idem": strOrNil(r.IdempotencyKey),
	})
}

// lockAndRead locks what ms link to (see cypherLockBatch) and reads, under
// those locks, the state their outcome depends on, in one query. With a
// probe group, the same query runs its dedup search too, into similar.
func lockAndRead(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, ms []memory.Memory, g *probeGroup, similar [][]memory.Hit) (memory.BatchState, error) {
	params := lockParams(tenant, ms)
	idems, slots, entityIDs := map[string]bool{}, map[memory.Slot]bool{}, map[string]bool{}
	for _, m := range ms {
		if m.IdempotencyKey != "" {
			idems[m.IdempotencyKey] = true
		}
		// A memory the plan turns into a candidate reads its slot for
		// nothing; one it keeps active needs it.
		if memory.TakesSlot(m) {
			slots[memory.Slot{UserID: m.UserID, Key: m.Key}] = true
		}
		for _, e := range m.Entities {
			entityIDs[e.ID] = true
		}
	}
	slotParams := make([]map[string]any, 0, len(slots))
	for sl := range slots {
		slotParams = append(slotParams, map[string]any{"user_id": sl.UserID, "key": sl.Key})
	}
	params["idems"] = slices.Collect(maps.Keys(idems))
	params["slots"] = slotParams
	params["entity_ids"] = slices.Collect(maps.Keys(entityIDs))
	cypher := cypherLockAndReadBatch
	if g != nil {
		var pred string
		pred, params = g.query(params)
		cypher = cypherLockReadSimilarHead + cypherSimilarBatch + pred + cypherSimilarBatchScore + cypherLockReadSimilarTail
	}
	recs, err := collect(ctx, tx, cypher, params)
	if err != nil {
		return memory.BatchState{}, err
	}
	if len(recs) != 1 {
		return memory.BatchState{}, fmt.Errorf("graph: batch state returned %d rows", len(recs))
	}
	r := recs[0].AsMap()
	st := memory.BatchState{Duplicates: map[string]memory.Memory{}, Heads: map[memory.Slot][]memory.Memory{}, Entities: map[string]memory.Entity{}}
	dups, _ := r["dups"].([]any)
	for _, v := range dups {
		m, err := decodeMemory(v)
		if err != nil {
			return memory.BatchState{}, err
		}
		st.Duplicates[m.IdempotencyKey] = m
	}
	heads, _ := r["heads"].([]any)
	for _, v := range heads {
		m, err := decodeMemory(v)
		if err != nil {
			return memory.BatchState{}, err
		}
		sl := memory.Slot{UserID: m.UserID, Key: m.Key}
		st.Heads[sl] = append(st.Heads[sl], m)
	}
	ents, _ := r["entities"].([]any)
	for _, v := range ents {
		em, _ := v.(map[string]any)
		e := memory.Entity{ID: str(em["id"]), Kind: str(em["kind"]), Name: str(em["name"])}
		st.Entities[e.ID] = e
	}
	if g != nil {
		if err := decodeSimilar(r["similar"], similar); err != nil {
			return memory.BatchState{}, err
		}
	}
	return st, nil
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
// tenant, is searched for nowhere.
func probeGroups(tenant string, ms []memory.Memory, scopes []memory.Scope, scopeOf []int) []probeGroup {
	byScope := map[int][]map[string]any{}
	for i, m := range ms {
		k := scopeOf[i]
		if k < 0 || k >= len(scopes) || len(m.Embedding) == 0 || scopes[k].Empty() || scopes[k].Tenant != tenant {
			continue
		}
		text, numbers := memory.FactSignature(m.Content)
		byScope[k] = append(byScope[k], map[string]any{
			"at": i, "user_id": m.UserID, "type": m.Type, "vec": float64s(m.Embedding), "fact_text": text, "fact_numbers": numbers,
		})
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
	recs, err := collect(ctx, tx, cypherSimilarOnlyHead+cypherSimilarBatch+pred+cypherSimilarBatchScore+cypherSimilarOnlyTail, params)
	if err != nil {
		return err
	}
	if len(recs) != 1 {
		return fmt.Errorf("graph: dedup search returned %d rows", len(recs))
	}
	v, _ := recs[0].Get("similar")
	return decodeSimilar(v, similar)
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

// lockBatch write-locks the users, sessions and entities the batch links
// to (see cypherLockBatch).
func lockBatch(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, ms []memory.Memory) error {
	return exec(ctx, tx, cypherLockBatch, lockParams(tenant, ms))
}

// lockParams lists what cypherLockBatch locks, each kind sorted by id.
func lockParams(tenant string, ms []memory.Memory) map[string]any {
	users, sessions := map[string]bool{}, map[string]bool{}
	entities := map[string]memory.Entity{}
	for _, m := range ms {
		users[m.UserID] = true
		if m.SessionID != "" {
			sessions[m.SessionID] = true
		}
		for _, e := range m.Entities {
			if _, seen := entities[e.ID]; !seen {
				entities[e.ID] = e
			}
		}
	}
	ents := slices.SortedFunc(maps.Values(entities), func(a, b memory.Entity) int { return strings.Compare(a.ID, b.ID) })
	return map[string]any{
		"tenant":   tenant,
		"users":    slices.Sorted(maps.Keys(users)),
		"sessions": slices.Sorted(maps.Keys(sessions)),
		"entities": entityParams(ents),
	}
}

// checkNew rejects memories the graph cannot hold consistently.
func checkNew(m memory.Memory) error {
	switch {
	case m.Tenant == "":
		return memory.Invalid("tenant", "is required")
	case m.ID == "":
		return memory.Invalid("id", "is required")
	case m.UserID == "":
		return memory.Invalid("user_id", "is required")
	}
	return nil
}

// link adds the edges of a newly created memory.
func link(ctx context.Context, tx neo4j.ManagedTransaction, m memory.Memory) error {
	return exec(ctx, tx, cypherLinkMemory, map[string]any{
		"tenant": m.Tenant, "id": m.ID, "user_id": m.UserID,
		"agent_id": strOrNil(m.AgentID), "session_id": strOrNil(m.SessionID),
		"entities": entityParams(m.Entities),
	})
}

func getMemory(ctx context.Context, tx neo4j.ManagedTransaction, tenant, id string) (memory.Memory, error) {
	recs, err := collect(ctx, tx, cypherGetMemory, map[string]any{"tenant": tenant, "id": id})
	if err != nil {
		return memory.Memory{}, err
	}
	if len(recs) == 0 {
		return memory.Memory{}, memory.ErrNotFound
	}
	ms, err := decodeMemories(recs)
	if err != nil {
		return memory.Memory{}, err
	}
	return ms[0], nil
}

// GetMemory returns the memory id of tenant in any status, or
// memory.ErrNotFound.
func (s *Store) GetMemory(ctx context.Context, tenant, id string) (memory.Memory, error) {
	var m memory.Memory
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		m, err = getMemory(ctx, tx, tenant, id)
		return err
	})
	return m, err
}

// ListMemories returns the memories in scope that match q, newest first by
// (created_at, id), at most q.Limit (default 50, at most 500). An empty
// scope returns nothing without a query. Listed memories carry no embedding.
func (s *Store) ListMemories(ctx context.Context, scope memory.Scope, q memory.ListQuery) ([]memory.Memory, error) {
	if scope.Empty() || scope.Tenant == "" {
		return nil, nil
	}
	cypher, params := listQuery(scope, q)
	var out []memory.Memory
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, cypher, params)
		if err != nil {
			return err
		}
		out, err = decodeMemories(recs)
		return err
	})
	return out, err
}

// ReplaceMemory writes next as the new version of prevID in one transaction.
// prevID must exist (else memory.ErrNotFound), be the head of its chain
// (active or candidate) and, when expectVersion > 0, have that version (else
// memory.ErrConflict). next keeps prev's user and key, gets version
// prev.version+1 and a SUPERSEDES edge to prev, which becomes superseded.
func (s *Store) ReplaceMemory(ctx context.Context, tenant, prevID string, expectVersion int, next memory.Memory) (memory.Memory, error) {
	if next.Tenant == "" {
		next.Tenant = tenant
	}
	if next.Tenant != tenant {
		return memory.Memory{}, memory.Invalid("tenant", "the new version must belong to the tenant of the old one")
	}
	if err := checkNew(next); err != nil {
		return memory.Memory{}, err
	}
	var out memory.Memory
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		// Lock order: linked nodes, then the memory — the same as
		// CreateMemories, so the two cannot deadlock on one slot.
		if err := lockBatch(ctx, tx, tenant, []memory.Memory{next}); err != nil {
			return err
		}
		recs, err := collect(ctx, tx, cypherLockHead, map[string]any{"tenant": tenant, "id": prevID})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return memory.ErrNotFound
		}
		r := recs[0].AsMap()
		version := int(integer(r["version"]))
		switch status := str(r["status"]); {
		case status != memory.StatusActive && status != memory.StatusCandidate:
			return fmt.Errorf("%w: memory %s is %s, not the current version", memory.ErrConflict, prevID, status)
		case expectVersion > 0 && version != expectVersion:
			return fmt.Errorf("%w: memory %s is at version %d, not %d", memory.ErrConflict, prevID, version, expectVersion)
		case next.UserID != str(r["user_id"]):
			return memory.Invalid("user_id", "a new version must be about the same user")
		case next.Key != str(r["key"]):
			return memory.Invalid("key", "a new version must fill the same slot")
		}
		n := next
		n.Version = version + 1
		if err := exec(ctx, tx, cypherCreateMemory, map[string]any{"tenant": tenant, "props": memoryProps(n)}); err != nil {
			return err
		}
		err = exec(ctx, tx, cypherSupersedeHead, map[string]any{
			"tenant": tenant, "id": n.ID, "prev_id": prevID, "reason": reasonUpdate,
		})
		if err != nil {
			return err
		}
		if err := link(ctx, tx, n); err != nil {
			return err
		}
		out, err = getMemory(ctx, tx, tenant, n.ID)
		return err
	})
	return out, err
}

// History returns every version in the supersession chain that contains id,
// newest first, or memory.ErrNotFound.
func (s *Store) History(ctx context.Context, tenant, id string) ([]memory.Memory, error) {
	var out []memory.Memory
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, cypherHistory, map[string]any{"tenant": tenant, "id": id})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return memory.ErrNotFound
		}
		out, err = decodeMemories(recs)
		return err
	})
	return out, err
}

// DeleteMemory removes a memory and its edges, leaves a content-free
// (:Tombstone {tenant, id, deleted_at, by, reason}), and removes the entities
// no memory mentions any more. Versions it superseded or that superseded it
// stay, with the chain cut where it was. memory.ErrNotFound when missing.
func (s *Store) DeleteMemory(ctx context.Context, tenant, id, by, reason string) error {
	at := s.now().UTC()
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, cypherDeleteMemory, map[string]any{
			"tenant": tenant, "id": id, "deleted_at": at, "by": by, "reason": reason,
		})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return memory.ErrNotFound
		}
		ids, _ := recs[0].Get("entity_ids")
		if entities := strs(ids); len(entities) > 0 {
			return exec(ctx, tx, cypherDeleteOrphanEntities, map[string]any{"tenant": tenant, "ids": entities})
		}
		return nil
	})
}

// SearchVector returns the memories of q.UserID in scope that pass q's
// filters (active ones unless q.AsOf), most similar to q.Embedding first, by
// exact cosine similarity over the user's partition (score in [-1, 1]).
// Memories without an embedding of the same dimension are skipped.
func (s *Store) SearchVector(ctx context.Context, scope memory.Scope, q memory.SearchQuery) ([]memory.Hit, error) {
	if scope.Empty() || scope.Tenant == "" || len(q.Embedding) == 0 {
		return nil, nil
	}
	if q.UserID == "" {
		return nil, memory.Invalid("user_id", "search needs a user")
	}
	cypher, params := recallVectorQuery(scope, q)
	return s.search(ctx, cypher, params)
}

// SearchFullText returns the memories of q.UserID in scope that pass q's
// filters and match the words of q.Text, best Lucene score first. q.Text is
// escaped: Lucene syntax in it is searched for as text, never interpreted.
func (s *Store) SearchFullText(ctx context.Context, scope memory.Scope, q memory.SearchQuery) ([]memory.Hit, error) {
	if scope.Empty() || scope.Tenant == "" {
		return nil, nil
	}
	if q.UserID == "" {
		return nil, memory.Invalid("user_id", "search needs a user")
	}
	query := fullTextQuery(q.Text)
	if query == "" {
		return nil, nil
	}
	cypher, params := recallFullTextQuery(scope, q, query)
	return s.search(ctx, cypher, params)
}

// SearchVectorIndex runs the bare approximate vector-index query for the k
// nearest memories of any status, then drops other tenants' hits: a baseline
// for benchmarks, not a recall path (no scope, no user partition, and fewer
// than k hits when other tenants crowd the neighbourhood).
func (s *Store) SearchVectorIndex(ctx context.Context, tenant string, vec []float32, k int) ([]memory.Hit, error) {
	if len(vec) == 0 || k <= 0 {
		return nil, nil
	}
	return s.search(ctx, cypherVectorIndexSearch, map[string]any{"tenant": tenant, "vec": float64s(vec), "k": k})
}

func (s *Store) search(ctx context.Context, cypher string, params map[string]any) ([]memory.Hit, error) {
	var out []memory.Hit
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, cypher, params)
		if err != nil {
			return err
		}
		out, err = decodeHits(recs)
		return err
	})
	return out, err
}

func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = float64(f)
	}
	return out
}

func clampLimit(n, def, most int) int {
	if n <= 0 {
		return def
	}
	return min(n, most)
}

// withoutEmpty drops empty strings; a filter of only empty strings is none.
func withoutEmpty(xs []string) []string {
	return slices.DeleteFunc(slices.Clone(xs), func(s string) bool { return s == "" })
}
