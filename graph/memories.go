package graph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

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
// the same tenant. The whole batch costs two queries: the locks, then the
// writes.
func (s *Store) CreateMemories(ctx context.Context, ms []memory.Memory) ([]memory.Memory, error) {
	ws, err := s.writeBatch(ctx, ms, false)
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
	return s.writeBatch(ctx, ms, true)
}

// writeBatch commits ms in one transaction, checking for stale events when
// checkStale is set. See cypher_batch.go for the three queries it runs.
func (s *Store) writeBatch(ctx context.Context, ms []memory.Memory, checkStale bool) ([]memory.Written, error) {
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
	var out []memory.Written
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		ms, fenced, err := splitFenced(ctx, tx, tenant, ms) // see memory.Fencer
		if err != nil {
			return err
		}
		if err := lockBatch(ctx, tx, tenant, ms); err != nil {
			return err
		}
		if err := checkFenced(ctx, tx, tenant, ms); err != nil {
			return err
		}
		st, err := readBatchState(ctx, tx, tenant, ms)
		if err != nil {
			return err
		}
		plan := planBatch(ms, st, checkStale)
		out = fenced.merge(plan.written) // work may be retried: the plan is built afresh
		if len(plan.rows) == 0 {
			return nil
		}
		return exec(ctx, tx, cypherWriteBatch, map[string]any{
			"tenant": tenant, "rows": plan.rows, "supersedes": plan.supersedes, "reason": reasonSameKey,
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// batchState is what a batch's outcome depends on, read under its locks.
type batchState struct {
	dups     map[string]memory.Memory // by idempotency key
	heads    map[slot][]memory.Memory // active memories per slot
	entities map[string]memory.Entity // as stored, by id
}

// slot is a (user, key) pair; the tenant is the batch's.
type slot struct{ user, key string }

// takesSlot says whether m becomes the head of its slot: only an active
// memory with a key does. A candidate (or a memory imported in another
// status) must not displace the trusted fact, and is never stale.
func takesSlot(m memory.Memory) bool { return m.Key != "" && m.Status == memory.StatusActive }

func readBatchState(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, ms []memory.Memory) (batchState, error) {
	idems, slots, entityIDs := map[string]bool{}, map[slot]bool{}, map[string]bool{}
	for _, m := range ms {
		if m.IdempotencyKey != "" {
			idems[m.IdempotencyKey] = true
		}
		if takesSlot(m) {
			slots[slot{m.UserID, m.Key}] = true
		}
		for _, e := range m.Entities {
			entityIDs[e.ID] = true
		}
	}
	slotParams := make([]map[string]any, 0, len(slots))
	for sl := range slots {
		slotParams = append(slotParams, map[string]any{"user_id": sl.user, "key": sl.key})
	}
	recs, err := collect(ctx, tx, cypherBatchState, map[string]any{
		"tenant": tenant, "idems": slices.Collect(maps.Keys(idems)), "slots": slotParams,
		"entity_ids": slices.Collect(maps.Keys(entityIDs)),
	})
	if err != nil {
		return batchState{}, err
	}
	if len(recs) != 1 {
		return batchState{}, fmt.Errorf("graph: batch state returned %d rows", len(recs))
	}
	r := recs[0].AsMap()
	st := batchState{dups: map[string]memory.Memory{}, heads: map[slot][]memory.Memory{}, entities: map[string]memory.Entity{}}
	dups, _ := r["dups"].([]any)
	for _, v := range dups {
		m, err := decodeMemory(v)
		if err != nil {
			return batchState{}, err
		}
		st.dups[m.IdempotencyKey] = m
	}
	heads, _ := r["heads"].([]any)
	for _, v := range heads {
		m, err := decodeMemory(v)
		if err != nil {
			return batchState{}, err
		}
		sl := slot{m.UserID, m.Key}
		st.heads[sl] = append(st.heads[sl], m)
	}
	ents, _ := r["entities"].([]any)
	for _, v := range ents {
		em, _ := v.(map[string]any)
		e := memory.Entity{ID: str(em["id"]), Kind: str(em["kind"]), Name: str(em["name"])}
		st.entities[e.ID] = e
	}
	return st, nil
}

// batchPlan is what a batch writes and reports.
type batchPlan struct {
	written    []memory.Written
	rows       []map[string]any
	supersedes []map[string]any
}

// planBatch decides, in batch order, what becomes of each memory: a stored
// or earlier idempotency key makes it a duplicate; with checkStale, a head
// of its slot valid from later makes it stale; otherwise it is created, and
// if it takes its slot it supersedes every active head there and takes the
// next version. Created memories are reported as the store would read them
// back: times in UTC, entities as stored, sorted by id.
func planBatch(ms []memory.Memory, st batchState, checkStale bool) batchPlan {
	p := batchPlan{written: make([]memory.Written, len(ms))}
	dups := maps.Clone(st.dups)
	heads := make(map[slot][]memory.Memory, len(st.heads))
	for sl, hs := range st.heads {
		heads[sl] = slices.Clone(hs)
	}
	for i, m := range ms {
		if d, ok := dups[m.IdempotencyKey]; ok && m.IdempotencyKey != "" {
			p.written[i] = memory.Written{Memory: d, Outcome: memory.OutcomeDuplicate}
			continue
		}
		sl := slot{m.UserID, m.Key}
		if checkStale && takesSlot(m) {
			if newest, ok := newestHead(heads[sl]); ok && newest.ValidFrom.After(m.ValidFrom) {
				p.written[i] = memory.Written{Memory: newest, Outcome: memory.OutcomeStale}
				continue
			}
		}
		m = asStored(m, st.entities)
		if takesSlot(m) {
			if top := heads[sl]; len(top) > 0 {
				best := top[0]
				for _, h := range top {
					p.supersedes = append(p.supersedes, map[string]any{"id": m.ID, "prev": h.ID})
					if h.Version > best.Version {
						best = h
					}
				}
				m.Version, m.Supersedes = best.Version+1, best.ID
			}
			heads[sl] = []memory.Memory{m}
		}
		if m.IdempotencyKey != "" {
			dups[m.IdempotencyKey] = m
		}
		p.written[i] = memory.Written{Memory: m, Outcome: memory.OutcomeCreated}
		p.rows = append(p.rows, map[string]any{
			"props": memoryProps(m), "user_id": m.UserID, "entities": entityParams(m.Entities),
		})
	}
	return p
}

// newestHead returns the head valid from the latest time.
func newestHead(hs []memory.Memory) (memory.Memory, bool) {
	if len(hs) == 0 {
		return memory.Memory{}, false
	}
	best := hs[0]
	for _, h := range hs[1:] {
		if h.ValidFrom.After(best.ValidFrom) {
			best = h
		}
	}
	return best, true
}

// asStored returns m as reading it back would: times in UTC, entities once
// each with the kind and name stored, sorted by id.
func asStored(m memory.Memory, stored map[string]memory.Entity) memory.Memory {
	m.ValidFrom, m.CreatedAt, m.UpdatedAt = utc(m.ValidFrom), utc(m.CreatedAt), utc(m.UpdatedAt)
	if m.ValidTo != nil {
		t := utc(*m.ValidTo)
		m.ValidTo = &t
	}
	if len(m.Entities) > 0 {
		byID := map[string]memory.Entity{}
		for _, e := range m.Entities {
			if s, ok := stored[e.ID]; ok {
				e = s
			}
			byID[e.ID] = e
		}
		m.Entities = slices.SortedFunc(maps.Values(byID), func(a, b memory.Entity) int { return strings.Compare(a.ID, b.ID) })
	}
	return m
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// lockBatch write-locks every user, agent, session and entity the batch
// links to, in one query and one global order (label, then id), so that two
// writers never wait on each other in a cycle.
func lockBatch(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, ms []memory.Memory) error {
	users, agents, sessions := map[string]bool{}, map[string]bool{}, map[string]bool{}
	entities := map[string]memory.Entity{}
	for _, m := range ms {
		users[m.UserID] = true
		if m.AgentID != "" {
			agents[m.AgentID] = true
		}
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
	return exec(ctx, tx, cypherLockBatch, map[string]any{
		"tenant":   tenant,
		"users":    slices.Sorted(maps.Keys(users)),
		"agents":   slices.Sorted(maps.Keys(agents)),
		"sessions": slices.Sorted(maps.Keys(sessions)),
		"entities": entityParams(ents),
	})
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
