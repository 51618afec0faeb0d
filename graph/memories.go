package graph

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/memory"
)

// Listing and search limits. A listing returns one more than the largest
// page: the service asks for it to learn whether another page follows.
const (
	defaultListLimit   = 50
	maxListLimit       = memory.MaxListSize + 1
	defaultSearchLimit = 10
	maxSearchLimit     = 500
)

// link adds the edges of a newly created memory.
func link(ctx context.Context, tx neo4j.ManagedTransaction, m memory.Memory) error {
	return exec(ctx, tx, cypherLinkMemory, map[string]any{
		"tenant": m.Tenant, "id": m.ID, "user_id": m.UserID, "scope": scopeParam(m),
		"agent_id": strOrNil(m.AgentID), "session_id": strOrNil(m.SessionID),
		"entities": entityParams(m.Entities),
	})
}

func getMemory(ctx context.Context, tx neo4j.ManagedTransaction, tenant, id string) (memory.Memory, error) {
	m, ok, err := readOne(ctx, tx, cypherGetMemory, map[string]any{"tenant": tenant, "id": id}, memoryOf)
	switch {
	case err != nil:
		return memory.Memory{}, err
	case !ok:
		return memory.Memory{}, memory.ErrNotFound
	}
	return m, nil
}

// GetMemory returns the memory id of tenant in any status, or
// memory.ErrNotFound.
func (s *Store) GetMemory(ctx context.Context, tenant, id string) (memory.Memory, error) {
	return inRead(ctx, s, func(tx neo4j.ManagedTransaction) (memory.Memory, error) {
		return getMemory(ctx, tx, tenant, id)
	})
}

// ListMemories returns the memories in scope that match q, newest first by
// (created_at, id), at most q.Limit (default 50, at most 500). An empty
// scope returns nothing without a query. Listed memories carry no embedding.
func (s *Store) ListMemories(ctx context.Context, scope memory.Scope, q memory.ListQuery) ([]memory.Memory, error) {
	if scope.Empty() || scope.Tenant == "" {
		return nil, nil
	}
	l := listQuery(scope, q)
	var out []memory.Memory
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		for _, cypher := range l.queries {
			var err error
			if out, err = readAll(ctx, tx, cypher, l.params, memoryOf); err != nil || len(out) == l.limit {
				return err
			}
		}
		return nil
	})
	return out, err
}

// ReplaceMemory writes next as the new version of prevID in one transaction.
// prevID must exist (else memory.ErrNotFound), be the head of its chain
// (active or candidate) and, when expectVersion > 0, have that version; a
// candidate next replaces no active head (else memory.ErrConflict). next keeps prev's user and key, gets version
// prev.version+1 and a SUPERSEDES edge to prev, which becomes superseded.
func (s *Store) ReplaceMemory(ctx context.Context, tenant, prevID string, expectVersion int, next memory.Memory) (memory.Memory, error) {
	next.Tenant = cmp.Or(next.Tenant, tenant)
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
		prev, ok, err := readOne(ctx, tx, cypherLockHead, map[string]any{"tenant": tenant, "id": prevID}, headOf)
		if err != nil {
			return err
		}
		if !ok {
			return memory.ErrNotFound
		}
		switch {
		case prev.status != memory.StatusActive && prev.status != memory.StatusCandidate:
			return fmt.Errorf("%w: memory %s is %s, not the current version", memory.ErrConflict, prevID, prev.status)
		case expectVersion > 0 && prev.version != expectVersion:
			return fmt.Errorf("%w: memory %s is at version %d, not %d", memory.ErrConflict, prevID, prev.version, expectVersion)
		case next.Status == memory.StatusCandidate && prev.status == memory.StatusActive:
			// A candidate's new version was made as a candidate; the user
			// confirmed the old one meanwhile, and a candidate in its place
			// would leave the slot with nothing in force.
			return fmt.Errorf("%w: memory %s was confirmed meanwhile", memory.ErrConflict, prevID)
		case next.UserID != prev.userID:
			return memory.Invalid("user_id", "a new version must be about the same user")
		case next.Key != prev.key:
			return memory.Invalid("key", "a new version must fill the same slot")
		}
		n := next
		n.Version = prev.version + 1
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

// head is what cypherLockHead reads of the version a replacement supersedes.
type head struct {
	status, userID, key string
	version             int
}

func headOf(r *neo4j.Record) (head, error) {
	cols := r.AsMap()
	return head{
		status: str(cols["status"]), userID: str(cols["user_id"]), key: str(cols["key"]),
		version: int(integer(cols["version"])),
	}, nil
}

// History returns every version in the supersession chain that contains id,
// newest first, or memory.ErrNotFound.
func (s *Store) History(ctx context.Context, tenant, id string) ([]memory.Memory, error) {
	var out []memory.Memory
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		ms, err := readAll(ctx, tx, cypherHistory, map[string]any{"tenant": tenant, "id": id}, memoryOf)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return memory.ErrNotFound
		}
		out = ms
		return nil
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
		var written any
		entities, ok, err := readOne(ctx, tx, cypherDeleteMemory, map[string]any{
			"tenant": tenant, "id": id, "deleted_at": at, "by": by, "reason": reason,
		}, func(r *neo4j.Record) ([]string, error) {
			ids, _ := r.Get("entity_ids")
			written, _ = r.Get("written")
			return strs(ids), nil
		})
		if err != nil {
			return err
		}
		if !ok {
			return memory.ErrNotFound
		}
		if err := rememberDeletedKeys(ctx, tx, tenant, written); err != nil {
			return err
		}
		if len(entities) > 0 {
			return exec(ctx, tx, cypherDeleteOrphanEntities, map[string]any{"tenant": tenant, "ids": entities})
		}
		return nil
	})
}

// DeletedKeyHash is what the store keeps of an idempotency key whose memory
// was deleted, and of the memory's author (deletedAuthor): enough to know
// a retry, nothing of what a client put in it.
func DeletedKeyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// deletedAuthor is who wrote under a key: the user a memory is about and
// its author. Only their retry is one; another writer's key is its own.
func deletedAuthor(userID, agentID string) string { return DeletedKeyHash(userID + "\x00" + agentID) }

// deletedBody is what a deleted key keeps of the memory its write created:
// 32 bits of a hash of its type and text, enough to tell a retry from
// another memory sent under the key (a chance in four billion of taking one
// for the other), too few to tell the text back.
func deletedBody(typ, content string) string {
	sum := sha256.Sum256([]byte(typ + "\x00" + content))
	return hex.EncodeToString(sum[:4])
}

// repeatBody is what a key whose write reinforced a memory keeps of the
// write, as deletedBody, with the slot and kind it named: a retry names
// the same.
func repeatBody(m memory.Memory) string {
	return deletedBody(m.Type, m.Content+"\x00"+m.Kind+"\x00"+m.Key)
}

// rememberDeletedKeys records the keys of written (writtenKeys of each
// memory deleted) with their author, and the key that created a memory
// with its body. A key that repeated it sent a text of its own, which the
// memory does not hold: any memory its writer sends under it counts as a
// retry.
func rememberDeletedKeys(ctx context.Context, tx neo4j.ManagedTransaction, tenant string, written any) error {
	ws, _ := written.([]any)
	var rows []map[string]any
	for _, w := range ws {
		m, _ := w.(map[string]any)
		author := deletedAuthor(str(m["user"]), str(m["agent"]))
		for _, k := range strs(m["keys"]) {
			var body any
			if k == str(m["created_by"]) {
				body = deletedBody(str(m["type"]), str(m["content"]))
			}
			rows = append(rows, map[string]any{"hash": DeletedKeyHash(k), "author": author, "body": body})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return exec(ctx, tx, cypherRememberDeletedKeys, map[string]any{"tenant": tenant, "rows": rows})
}

// SearchVector returns the memories of q.UserID in scope that pass q's
// filters (active ones unless q.AsOf), most similar to q.Embedding first, by
// exact cosine similarity over the user's partition (score in [-1, 1]);
// with q.Shared and no user, over the tenant's shared knowledge alone; with
// q.Shared and a user, q.Limit from each of the two partitions.
// Memories without an embedding of the same dimension are skipped.
func (s *Store) SearchVector(ctx context.Context, scope memory.Scope, q memory.SearchQuery) ([]memory.Hit, error) {
	if scope.Empty() || scope.Tenant == "" || len(q.Embedding) == 0 {
		return nil, nil
	}
	if q.UserID == "" && !q.Shared {
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
// nearest memories of any status in the partition of userID, the index
// score in [0, 1]: a baseline for benchmarks, not a recall path (no scope,
// no filters). Where the index knows no partition (Neo4j 5.26) it asks for
// the k nearest of the whole database and drops other tenants' hits, so
// fewer than k may return, and other users' are among them.
func (s *Store) SearchVectorIndex(ctx context.Context, tenant, userID string, vec []float32, k int) ([]memory.Hit, error) {
	if len(vec) == 0 || k <= 0 {
		return nil, nil
	}
	index, err := s.vectorIndex(ctx)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"tenant": tenant, "vec": float64s(vec), "k": k}
	if !index.partitioned {
		return s.search(ctx, cypherVectorIndexSearchWhole, params)
	}
	params["partition"] = partitionOf(tenant, userID)
	return s.search(ctx, cypherVectorIndexSearch, params)
}

// search runs a recall search, unsized: one plan for every request.
func (s *Store) search(ctx context.Context, cypher string, params map[string]any) ([]memory.Hit, error) {
	cypher, params = unsized(cypher, params)
	return inRead(ctx, s, func(tx neo4j.ManagedTransaction) ([]memory.Hit, error) {
		return readAll(ctx, tx, cypher, params, hitOf)
	})
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
