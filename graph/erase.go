package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

// EraseMemories deletes the memories ids of tenant in one transaction: each
// leaves a content-free tombstone, its edges go with it, and the entities and
// sessions no remaining memory links to are removed. Ids that do not exist
// are skipped, so a repeated erase counts zeros. Versions in kept, which
// the caller leaves in place, stay.
func (s *Store) EraseMemories(ctx context.Context, tenant string, ids, kept []string, t memory.Tombstone) (memory.GraphErased, error) {
	var out memory.GraphErased
	if len(ids) == 0 {
		return out, nil
	}
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		// The nodes the memories link to are locked first, in the order a
		// write takes them (lockBatch), then the memories. A version
		// written since the caller read the chain would outlive the erase
		// of those before it: refuse, so that the caller reads it again.
		params := map[string]any{"tenant": tenant, "ids": ids, "kept": append([]string{}, kept...)}
		ms, err := readAll(ctx, tx, cypherEraseTargets, params, memoryOf)
		if err != nil || len(ms) == 0 {
			return err
		}
		if err := lockBatch(ctx, tx, tenant, ms); err != nil {
			return err
		}
		if newer, err := count(ctx, tx, cypherNewerVersions, params); err != nil || newer > 0 {
			return cmp.Or(err, fmt.Errorf("%w: a new version of the memory was written meanwhile: read it again", memory.ErrConflict))
		}
		out, err = eraseMemories(ctx, tx, tenant, "", ids, t)
		return err
	})
	return out, err
}

// DefaultEraseBatch is how many memories EraseUser deletes per transaction
// unless Options.EraseBatch says otherwise. A transaction's memory grows
// with the memories it deletes (their properties, embeddings included, and
// edges), the index entries it removes and the tombstones it writes: a user
// with 50,000 memories erased in one transaction ran into Neo4j's
// transaction memory limit. A batch of this size needs a few MiB and, on a
// busy server, a few seconds, well within the store's default timeout.
const DefaultEraseBatch = 1000

// minEraseBatch is the smallest batch EraseUser shrinks to (see EraseUser).
const minEraseBatch = 50

// EraseUser deletes every memory about userID (all versions and statuses,
// with their edges and embeddings), the entities and sessions that only
// they linked to, sessions recorded as the user's, the User node and the
// Agent node the user wrote as (both counted in Users). Each memory leaves
// a content-free tombstone, and the user one under t.UserRef, which keeps
// t.Fence: from then on WriteEvents refuses the user's queued memories
// numbered at or below it.
//
// The erase runs in transactions of a bounded size (Options.EraseBatch,
// halved down to minEraseBatch while a batch fails as unavailable).
// The first marks the user as being erased (the User node, and the
// tombstone with its fence): from its commit on, every write about the user
// is refused, as unavailable, to be retried once the erase is over, or as
// below, and no read returns the user's memories. The tombstone keeps, too,
// when that transaction began (fence_at, by the store's clock; a call that
// finishes an erase cut short keeps the start of the erase it finishes): a
// write about the user that began before it (its ctx says when:
// writefence.BeginWrite) was under way when the user asked to be
// forgotten, and is refused for good, as writefence.ErrUserErased,
// whenever it reaches its transaction: during the erase, or after it, when
// the User node is gone and the write would otherwise make a new one. Each
// further transaction deletes a batch; the one that finds the last batch also removes the user's
// sessions, User and Agent nodes and marks the tombstone complete. An erase
// cut short (a failed batch, a cancelled ctx, a crash) leaves the user
// marked, so still unreadable and unwritable; calling EraseUser again
// finishes it and counts what was left. A call after a finished erase
// erases nothing and counts zeros.
func (s *Store) EraseUser(ctx context.Context, tenant, userID string, t memory.Tombstone) (memory.GraphErased, error) {
	var out memory.GraphErased
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		return beginUserErase(ctx, tx, tenant, userID, t, s.now())
	})
	batch := s.eraseBatch
	for done := false; err == nil && !done; {
		var b memory.GraphErased
		var last bool
		err = s.write(ctx, func(tx neo4j.ManagedTransaction) error {
			var err error
			b, last, err = eraseUserBatch(ctx, tx, tenant, userID, t, batch)
			return err
		})
		// A batch too slow for the store's timeout, or too big for the
		// transaction memory the server has left, is tried again smaller.
		if errors.Is(err, memory.ErrUnavailable) && ctx.Err() == nil && batch > minEraseBatch {
			batch, err = max(batch/2, minEraseBatch), nil
			continue
		}
		out, done = b, last
	}
	return out, err
}

// beginUserErase is the first transaction of EraseUser, begun at now: it
// marks the user as being erased and writes the user's tombstone with its
// fences. Writes about the user lock the User node and check the mark and
// the tombstone under the lock (cypherErasingUsers), so none commits after
// this one but those that began after now, once the erase is over.
func beginUserErase(ctx context.Context, tx neo4j.ManagedTransaction, tenant, userID string, t memory.Tombstone, now time.Time) error {
	if err := exec(ctx, tx, cypherBeginUserErase, map[string]any{"tenant": tenant, "user_id": userID}); err != nil {
		return err
	}
	if t.UserRef == "" {
		return nil
	}
	return exec(ctx, tx, cypherUserTombstone, map[string]any{
		"tenant": tenant, "id": t.UserRef, "deleted_at": t.At.UTC(), "by": t.By, "reason": t.Reason, "fence": t.Fence, "now": now.UTC(),
	})
}

// eraseUserBatch erases up to batch memories of a user marked by
// beginUserErase, and, when they were the last, what else the user leaves
// (done). It returns what the erase removed since beginUserErase: the
// batches add their counts up on the User node (cypherTallyErase), so that
// a batch whose commit reached the server while its caller gave up on it
// (a timeout) is counted too. A user no longer marked was erased to the end
// meanwhile, by another call: there is nothing more to do, and memories
// written since are a new start that this erase must not take.
func eraseUserBatch(ctx context.Context, tx neo4j.ManagedTransaction, tenant, userID string, t memory.Tombstone, batch int) (out memory.GraphErased, done bool, err error) {
	params := map[string]any{"tenant": tenant, "user_id": userID, "limit": batch}
	marked, _, err := readOne(ctx, tx, cypherLockErasingUser, params, func(r *neo4j.Record) (bool, error) {
		v, _ := r.Get("erasing")
		return v == true, nil
	})
	if err != nil || !marked {
		return out, true, err
	}
	ids, err := readAll(ctx, tx, cypherUserMemoryIDs, params, column("id", str))
	if err != nil {
		return out, false, err
	}
	last := ""
	if done = len(ids) < batch; done {
		last = userID
	}
	b, err := eraseMemories(ctx, tx, tenant, last, ids, t)
	if err != nil {
		return out, done, err
	}
	params["memories"], params["entities"], params["sessions"] = b.Memories, b.Entities, b.Sessions
	out, _, err = readOne(ctx, tx, cypherTallyErase, params, func(r *neo4j.Record) (memory.GraphErased, error) {
		c := r.AsMap()
		return memory.GraphErased{Memories: integer(c["memories"]), Entities: integer(c["entities"]), Sessions: integer(c["sessions"])}, nil
	})
	if err != nil || !done {
		return out, done, err
	}
	if out.Users, err = count(ctx, tx, cypherEraseUserNode, params); err != nil {
		return out, done, err
	}
	if err := exec(ctx, tx, cypherEraseUserTallies, map[string]any{"tenant": tenant, "user_id": userID}); err != nil {
		return out, done, err
	}
	author, err := count(ctx, tx, cypherEraseUserAuthor, map[string]any{"tenant": tenant, "author": "user:" + userID})
	if err != nil {
		return out, done, err
	}
	out.Users += author
	if t.UserRef == "" {
		return out, done, nil
	}
	return out, done, exec(ctx, tx, cypherUserTombstoneComplete, map[string]any{"tenant": tenant, "id": t.UserRef})
}

// eraseMemories is the shared body of both erases; userID, when set, also
// removes the sessions recorded as that user's.
func eraseMemories(ctx context.Context, tx neo4j.ManagedTransaction, tenant, userID string, ids []string, t memory.Tombstone) (memory.GraphErased, error) {
	var out memory.GraphErased
	// The query aggregates, so it returns exactly one row.
	erased, _, err := readOne(ctx, tx, cypherEraseMemories, map[string]any{
		"tenant": tenant, "ids": ids, "deleted_at": t.At.UTC(), "by": t.By, "reason": t.Reason,
		"user_ref": strOrNil(t.UserRef),
	}, func(rec *neo4j.Record) (erasedRow, error) {
		r := rec.AsMap()
		return erasedRow{memories: integer(r["memories"]), entities: strs(r["entity_ids"]), sessions: strs(r["session_ids"]), written: r["written"]}, nil
	})
	if err == nil {
		err = rememberDeletedKeys(ctx, tx, tenant, erased.written)
	}
	if err != nil {
		return out, err
	}
	out.Memories = erased.memories
	if len(erased.entities) > 0 {
		if out.Entities, err = count(ctx, tx, cypherEraseOrphanEntities, map[string]any{"tenant": tenant, "ids": erased.entities}); err != nil {
			return out, err
		}
	}
	if len(erased.sessions) > 0 || userID != "" {
		out.Sessions, err = count(ctx, tx, cypherEraseOrphanSessions, map[string]any{
			"tenant": tenant, "ids": erased.sessions, "user_id": strOrNil(userID),
		})
	}
	return out, err
}

// erasedRow is the row of cypherEraseMemories: how many memories went, and
// what they linked to.
type erasedRow struct {
	memories           int64
	entities, sessions []string
	written            any // writtenKeys of each memory erased
}

// fenced is what a batch of writes must leave out because the memories'
// users were erased after their jobs were accepted (memory.Fencer).
type fenced struct {
	total   int
	refused map[int]memory.Written // by index in the batch
}

// splitFenced returns the memories of ms their users' erasures do not
// refuse, and what becomes of those they do. Only queued memories
// (QueueSeq > 0) are checked. Read before the batch's locks, a refusal is
// final (fences only rise); a memory it lets through must be checked again
// under the locks (checkFenced).
func splitFenced(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, ms []memory.Memory) ([]memory.Memory, fenced, error) {
	f := fenced{total: len(ms)}
	users := map[string]string{} // tombstone id → user
	for _, m := range ms {
		if m.QueueSeq > 0 {
			users[memory.UserTombstoneID(tenant, m.UserID)] = m.UserID
		}
	}
	if len(users) == 0 {
		return ms, f, nil
	}
	type userFence struct {
		ref   string
		fence int64
	}
	found, err := readAll(ctx, tx, cypherUserFences, map[string]any{"tenant": tenant, "refs": slices.Collect(maps.Keys(users))}, func(r *neo4j.Record) (userFence, error) {
		ref, _ := r.Get("ref")
		fence, _ := r.Get("fence")
		return userFence{str(ref), integer(fence)}, nil
	})
	if err != nil || len(found) == 0 {
		return ms, f, err
	}
	fences := map[string]int64{} // by user
	for _, uf := range found {
		fences[users[uf.ref]] = uf.fence
	}
	kept := make([]memory.Memory, 0, len(ms))
	f.refused = map[int]memory.Written{}
	for i, m := range ms {
		if fence, ok := fences[m.UserID]; ok && m.QueueSeq > 0 && m.QueueSeq <= fence {
			f.refused[i] = memory.Written{Memory: m, Outcome: memory.OutcomeErased}
			continue
		}
		kept = append(kept, m)
	}
	return kept, f, nil
}

// errErasedMeanwhile rolls back a batch whose user was erased while the
// batch waited for the user's lock. Unavailable, so it is retried: the
// retry finds the fence before locking and refuses what it covers.
var errErasedMeanwhile = fmt.Errorf("%w: graph: a user of the batch was erased while the batch waited", memory.ErrUnavailable)

// checkFenced fails when an erase fenced out a memory of ms after
// splitFenced let it through. Called with the users' locks held, it sees
// every erase that could still race the write.
func checkFenced(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, ms []memory.Memory) error {
	_, f, err := splitFenced(ctx, tx, tenant, ms)
	if err == nil && len(f.refused) > 0 {
		err = errErasedMeanwhile
	}
	return err
}

// merge returns the outcomes of the whole batch from those of the memories
// splitFenced kept, in batch order.
func (f fenced) merge(kept []memory.Written) []memory.Written {
	if len(f.refused) == 0 {
		return kept
	}
	out := make([]memory.Written, 0, f.total)
	for i := range f.total {
		if w, ok := f.refused[i]; ok {
			out = append(out, w)
			continue
		}
		out = append(out, kept[0])
		kept = kept[1:]
	}
	return out
}

// TenantNode is one node of a tenant as an audit sees it.
type TenantNode struct {
	Labels []string
	// Props holds every property but the embedding.
	Props    map[string]any
	Embedded bool // the node has an embedding
}

// TenantNodes returns every node of a tenant with its properties. It scans
// the whole database: an audit tool (did an erase leave anything behind?),
// not a request path.
func (s *Store) TenantNodes(ctx context.Context, tenant string) ([]TenantNode, error) {
	return inRead(ctx, s, func(tx neo4j.ManagedTransaction) ([]TenantNode, error) {
		return readAll(ctx, tx, cypherTenantNodes, map[string]any{"tenant": tenant}, func(r *neo4j.Record) (TenantNode, error) {
			m := r.AsMap()
			props, _ := m["props"].(map[string]any)
			delete(props, "embedding")
			embedded, _ := m["embedded"].(bool)
			return TenantNode{Labels: strs(m["labels"]), Props: props, Embedded: embedded}, nil
		})
	})
}
