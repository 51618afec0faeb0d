package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
	"mneme/userids"
	"mneme/writefence"
)

// CreateMemories commits ms in one transaction: all or nothing. The caller
// sets ids, timestamps, version and status; the store only adjusts them for
// supersession. An active memory with a Key supersedes the active memory in
// its (tenant, user, key) slot, taking the next version number; memories of
// one batch apply in order. A memory in another status (a candidate, say) is
// stored beside the slot's head without displacing it. A memory whose
// IdempotencyKey is already stored for the tenant is not created; the stored
// memory is returned in its place. Every memory of a batch must belong to
// the same tenant. A batch usually costs two queries: the locks with the
// state they guard, then the writes (see writeBatch).
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

// writeBatch commits ms in one transaction. See batch_cypher.go for its
// queries. A batch is written in segments, in order; usually there is one.
// A segment ends early where applying it at once would differ from applying
// its memories one by one (see memory.PlanBatch); the next segment reads
// the state again, seeing what the earlier ones wrote.
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
			out = fenced.merge(supersededInBatch(written))
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

// supersededInBatch marks the memories of a batch that a later memory of
// the same request superseded, as they now stand: their results would
// otherwise say active. Queued jobs applied together are requests of their
// own (QueueSeq), each answered as if applied alone, as a synchronous
// write is.
func supersededInBatch(written []memory.Written) []memory.Written {
	next := map[string]memory.Memory{}
	for _, w := range written {
		if w.Outcome == memory.OutcomeCreated && w.Memory.Supersedes != "" {
			next[w.Memory.Supersedes] = w.Memory
		}
	}
	for i, w := range written {
		if n, ok := next[w.Memory.ID]; ok && w.Outcome == memory.OutcomeCreated && n.QueueSeq == w.Memory.QueueSeq {
			at := n.ValidFrom
			written[i].Memory.Status, written[i].Memory.ValidTo = memory.StatusSuperseded, &at
		}
	}
	return written
}

// writeSegment writes a segment of ms that starts at from and records what
// became of its memories in out. It returns the segment's length.
// underLocks, when set, runs as soon as the segment's locks are held.
func writeSegment(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, ms []memory.Memory, from int, o batchOptions, out []memory.Written, underLocks func() error) (int, error) {
	seg := ms[from:]
	var groups []probeGroup
	if o.dedup != nil {
		groups = probeGroups(tenant, seg, o.dedup.Scopes, o.dedup.ScopeOf[from:], o.dedup.Rules.DuplicateThreshold)
	}
	similar := make([][]memory.Hit, len(seg))
	var first *probeGroup
	if len(groups) > 0 {
		first = &groups[0]
	}
	st, reused, replays, err := lockAndRead(ctx, tx, tenant, seg, first, similar)
	if err != nil {
		return 0, err
	}
	// A retry of a write that reinforced a memory is a duplicate of it,
	// however its slot moved on since: the retry repeats nothing.
	for _, m := range seg {
		if r, ok := replays[m.IdempotencyKey]; ok {
			st.Duplicates[m.IdempotencyKey] = asRetryOf(m, r)
		}
	}
	if reused != "" && o.rules.Dedup {
		return 0, fmt.Errorf("idempotency key %q: %w", reused, memory.ErrIdempotencyKeyReused)
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
	if plan.Reused != "" {
		return 0, fmt.Errorf("idempotency key %q: %w", plan.Reused, memory.ErrIdempotencyKeyReused)
	}
	reinforce := func(rs []memory.Repeat) error {
		for _, r := range rs {
			var reader *memory.Scope
			if o.dedup != nil {
				reader = &o.dedup.Scopes[o.dedup.ScopeOf[from+r.Index]]
			}
			m, err := reinforceIn(ctx, tx, tenant, r, seg[r.Index], reader)
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
	for i, m := range seg[:plan.N] {
		if r, ok := replays[m.IdempotencyKey]; ok && plan.Written[i].Outcome == memory.OutcomeDuplicate {
			plan.Written[i].Memory = r
		}
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
		rows[i] = map[string]any{"props": memoryProps(m), "user_id": m.UserID, "scope": scopeParam(m), "entities": entityParams(m.Entities)}
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

// lockAndRead locks what ms link to (see cypherLockBatch) and reads, under
// those locks, the state their outcome depends on, in one query. With a
// probe group, the same query runs its dedup search too, into similar.
// replays are the memories that the writes of the batch's keys reinforced,
// by key, when the batch retries those writes (see RepeatKey).
func lockAndRead(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, ms []memory.Memory, g *probeGroup, similar [][]memory.Hit) (st memory.BatchState, reused string, replays map[string]memory.Memory, err error) {
	params := lockParams(ctx, tenant, ms)
	slots := map[memory.Slot]bool{}
	// The batch's keys by their hash, and each key's first memory: the
	// retry of a key whose memory was deleted, or whose write reinforced
	// one, is its writer's, of the same body.
	keyOf, first := map[string]string{}, map[string]memory.Memory{}
	for _, m := range slices.Backward(ms) {
		if m.IdempotencyKey != "" {
			keyOf[DeletedKeyHash(m.IdempotencyKey)] = m.IdempotencyKey
			first[m.IdempotencyKey] = m
		}
		// A memory the plan turns into a candidate reads its slot for
		// nothing; one it keeps active needs it.
		if memory.TakesSlot(m) {
			slots[memory.SlotOf(m)] = true
		}
	}
	slotParams := make([]map[string]any, 0, len(slots))
	for sl := range slots {
		slotParams = append(slotParams, map[string]any{"user_id": sl.UserID, "scope": sl.Scope, "scope_id": sl.ScopeID, "key": sl.Key})
	}
	params["idems"] = slices.Collect(maps.Values(keyOf))
	params["deleted_keys"] = slices.Collect(maps.Keys(keyOf))
	params["slots"] = slotParams
	cypher := cypherLockAndReadBatch
	if g != nil {
		var pred string
		pred, params = g.query(params)
		cypher = cypherLockReadSimilarHead + cypherSimilarBatch + pred + cypherSimilarBatchScore + cypherLockReadSimilarTail
	}
	// The decoder keeps the dedup answers raw: they are read into similar
	// only once the row count is known to be right.
	type row struct {
		state     memory.BatchState
		similar   any
		erasing   []string
		erased    []string
		conflicts any
	}
	replays = map[string]memory.Memory{}
	rows, err := readAll(ctx, tx, cypher, params, func(r *neo4j.Record) (row, error) {
		st, err := batchStateOf(r)
		similar, _ := r.Get("similar")
		erasing, _ := r.Get("erasing")
		erased, _ := r.Get("erased")
		conflicts, _ := r.Get("case_conflict")
		deleted, _ := r.Get("deleted")
		ds, _ := deleted.([]any)
		for _, d := range ds {
			dm, _ := d.(map[string]any)
			key := keyOf[str(dm["hash"])]
			w := first[key]
			switch body := str(dm["body"]); {
			case deletedAuthor(w.UserID, w.AgentID) != str(dm["author"]): // another writer's key is its own
			case body != "" && body != deletedBody(w.Type, w.Content):
				reused = key
			default:
				st.Deleted[key] = true
			}
		}
		repeated, _ := r.Get("repeated")
		rs, _ := repeated.([]any)
		for _, d := range rs {
			dm, _ := d.(map[string]any)
			key := keyOf[str(dm["hash"])]
			w := first[key]
			stored, _ := dm["memory"].(map[string]any) // nil once deleted: the deleted key answers
			switch {
			case deletedAuthor(w.UserID, w.AgentID) != str(dm["author"]):
				if stored != nil { // a key in use is the tenant's, as one that created a memory
					reused = key
				}
			case str(dm["body"]) != repeatBody(w) || memory.SensitivityRank(w.Sensitivity) > int(integer(dm["sens"])):
				reused = key
			case stored != nil:
				m, err := decodeMemory(stored)
				if err != nil {
					return row{}, err
				}
				replays[key] = m
			}
		}
		return row{st, similar, strs(erasing), strs(erased), conflicts}, err
	})
	if err != nil {
		return memory.BatchState{}, "", nil, err
	}
	if len(rows) != 1 {
		return memory.BatchState{}, "", nil, fmt.Errorf("graph: batch state returned %d rows", len(rows))
	}
	if err := refusal(rows[0].erasing, rows[0].erased, rows[0].conflicts); err != nil {
		return memory.BatchState{}, "", nil, err
	}
	if g != nil {
		if err := decodeSimilar(rows[0].similar, similar); err != nil {
			return memory.BatchState{}, "", nil, err
		}
	}
	return rows[0].state, reused, replays, nil
}

// asRetryOf is r, the memory that the write w retries reinforced, as the
// plan takes a stored duplicate of w: w's own fields, which the key's body
// already matched, over r's.
func asRetryOf(w, r memory.Memory) memory.Memory {
	r.UserID, r.AgentID, r.Type, r.Content, r.Kind, r.Key, r.Sensitivity = w.UserID, w.AgentID, w.Type, w.Content, w.Kind, w.Key, w.Sensitivity
	return r
}

// batchStateOf reads the dups and heads columns of cypherBatchState.
func batchStateOf(r *neo4j.Record) (memory.BatchState, error) {
	cols := r.AsMap()
	st := memory.BatchState{Duplicates: map[string]memory.Memory{}, Deleted: map[string]bool{}, Heads: map[memory.Slot][]memory.Memory{}}
	dups, _ := cols["dups"].([]any)
	for _, v := range dups {
		m, err := decodeMemory(v)
		if err != nil {
			return memory.BatchState{}, err
		}
		st.Duplicates[m.IdempotencyKey] = m
	}
	heads, _ := cols["heads"].([]any)
	for _, v := range heads {
		m, err := decodeMemory(v)
		if err != nil {
			return memory.BatchState{}, err
		}
		sl := memory.SlotOf(m)
		st.Heads[sl] = append(st.Heads[sl], m)
	}
	return st, nil
}

// lockBatch write-locks the users, sessions and entities the batch links
// to (see cypherLockBatch), and fails with errUserErased when the
// erase of one of the users began after the batch's write about them did,
// with errUserErasing when one of the users is being erased, with a
// *userids.CaseConflictError when it would make a user whose id differs
// from another's only by case.
func lockBatch(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, ms []memory.Memory) error {
	refused, _, err := readOne(ctx, tx, cypherLockBatchChecked, lockParams(ctx, tenant, ms), func(r *neo4j.Record) (error, error) {
		erasing, _ := r.Get("erasing")
		erased, _ := r.Get("erased")
		conflict, _ := r.Get("case_conflict")
		return refusal(strs(erasing), strs(erased), conflict), nil
	})
	return cmp.Or(err, refused)
}

// refusal refuses a write, under its locks, about a user whose erase began
// after the write did (errUserErased), about a user being erased
// (errUserErasing) or that it would make beside a user whose id differs
// from its own only by case (case_conflict, see cypherErasingUsers); nil
// when none.
func refusal(erasing, erased []string, conflict any) error {
	c, ok := conflict.(map[string]any)
	switch {
	case len(erased) > 0:
		return errUserErased
	case len(erasing) > 0:
		return errUserErasing
	case !ok:
		return nil
	}
	return &userids.CaseConflictError{ID: str(c["id"]), Existing: str(c["existing"])}
}

// errUserErasing refuses a write about a user whose erase has begun and not
// ended (EraseUser), the write having begun after it (else
// errUserErased): unavailable (503) to a caller, who may try again
// once the erase is over. To the queue it may last (Lasting): a queued job counts
// its attempts and fails, for its sender to send again, rather than hold its
// shard and every tenant's jobs behind it.
var errUserErasing error = erasingError{}

type erasingError struct{}

func (erasingError) Error() string { return "graph: a user of the write is being erased" }
func (erasingError) Unwrap() error { return memory.ErrUnavailable }
func (erasingError) Lasting() bool { return true }

// errUserErased is writefence.ErrUserErased as the store returns it: a
// conflict with what is stored (memory.ErrConflict), which no retry heals.
var errUserErased error = userErasedError{}

type userErasedError struct{}

func (userErasedError) Error() string   { return writefence.ErrUserErased.Error() }
func (userErasedError) Unwrap() []error { return []error{writefence.ErrUserErased, memory.ErrConflict} }

// lockParams lists what cypherLockBatch locks, each kind sorted by id, and
// what cypherErasingUsers checks: each user's tombstone id ($refs) and,
// for the users of ms's memories that are not queued, when the write
// began ($began: the start ctx carries, writefence.BeginWrite; none when
// it carries none). The fence orders queued memories (QueueSeq).
func lockParams(ctx context.Context, tenant string, ms []memory.Memory) map[string]any {
	mark, marked := writefence.Began(ctx)
	users, sessions := map[string]any{}, map[string]bool{}
	refs, began := map[string]any{}, map[string]any{}
	scopes := map[[2]string]bool{}
	entities := map[string]memory.Entity{}
	for _, m := range ms {
		if sc := memory.ScopeOf(m); sc != memory.ScopeUser {
			scopes[[2]string{sc, m.ScopeID}] = true
		} else {
			users[m.UserID] = userids.Fold(m.UserID)
			refs[m.UserID] = memory.UserTombstoneID(tenant, m.UserID)
			if marked && m.QueueSeq == 0 {
				began[m.UserID] = mark.UTC()
			}
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
	scopeRows := []map[string]any{}
	for _, sc := range slices.SortedFunc(maps.Keys(scopes), func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) }) {
		scopeRows = append(scopeRows, map[string]any{"kind": sc[0], "id": sc[1]})
	}
	return map[string]any{
		"tenant":   tenant,
		"users":    slices.Sorted(maps.Keys(users)),
		"folds":    users,
		"refs":     refs,
		"began":    began,
		"scopes":   scopeRows,
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
	case memory.ScopeOf(m) == memory.ScopeUser && m.UserID == "":
		return memory.Invalid("user_id", "is required")
	case memory.ScopeOf(m) != memory.ScopeUser && m.UserID != "":
		return memory.Invalid("user_id", "must be empty for shared knowledge")
	}
	return nil
}

// scopeParam is the Scope node a shared memory is SHARED_IN, or nil for a
// memory about a user.
func scopeParam(m memory.Memory) any {
	if sc := memory.ScopeOf(m); sc != memory.ScopeUser {
		return map[string]any{"kind": sc, "id": m.ScopeID}
	}
	return nil
}
