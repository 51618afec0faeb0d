package documents

import (
	"context"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/documents"
	"mneme/graph/neo"
	"mneme/knowledge"
	"mneme/memory"
)

var _ documents.Store = (*Store)(nil)

// Store keeps documents in Neo4j.
type Store struct {
	tx *neo.Runner
}

// New returns a Store over the graph's transaction runner.
func New(tx *neo.Runner) *Store { return &Store{tx: tx} }

// EnsureSchema creates the documents' constraint; it is idempotent.
func (s *Store) EnsureSchema(ctx context.Context) error {
	return s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		return neo.Exec(ctx, tx, ddlDocumentID, nil)
	})
}

func decodeInfo(r *neo4j.Record) (documents.Info, error) {
	get := func(k string) any { v, _ := r.Get(k); return v }
	return documents.Info{
		ID: neo.Str(get("id")), Title: neo.Str(get("title")), Format: neo.Str(get("format")),
		Sections: int(neo.Integer(get("sections"))), ImportedAt: neo.TimeOf(get("imported_at")),
		Scope: neo.Str(get("scope")), ScopeID: neo.Str(get("scope_id")),
	}, nil
}

// Document returns a document of the tenant, or memory.ErrNotFound.
func (s *Store) Document(ctx context.Context, tenant, id string) (documents.Info, error) {
	var d documents.Info
	var ok bool
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		d, ok, err = neo.ReadOne(ctx, tx, cypherDocument, map[string]any{"tenant": tenant, "id": id}, decodeInfo)
		return err
	})
	if err == nil && !ok {
		err = memory.ErrNotFound
	}
	return d, err
}

// Sections returns the active memories of a document's sections.
func (s *Store) Sections(ctx context.Context, tenant, id string) ([]knowledge.Stored, error) {
	var out []knowledge.Stored
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypherSections, map[string]any{"tenant": tenant, "id": id}, func(r *neo4j.Record) (knowledge.Stored, error) {
			key, _ := r.Get("key")
			digest, _ := r.Get("digest")
			mid, _ := r.Get("id")
			return knowledge.Stored{Key: neo.Str(key), Digest: neo.Str(digest), ID: neo.Str(mid)}, nil
		})
		return err
	})
	return out, err
}

// Claim takes the document for an import into a scope (documents.Store),
// under the document node's lock so that claims of two scopes serialise.
func (s *Store) Claim(ctx context.Context, tenant, id, kind, scopeID string, run bool, now, until time.Time) (bool, error) {
	var free, running bool
	err := s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		_, _, err := neo.ReadOne(ctx, tx, cypherClaim, map[string]any{
			"tenant": tenant, "id": id, "scope": kind, "scope_id": scopeID, "run": run, "now": now.UTC(), "until": until.UTC(),
		}, func(r *neo4j.Record) (bool, error) {
			f, _ := r.Get("free")
			rn, _ := r.Get("running")
			free, _ = f.(bool)
			running, _ = rn.(bool)
			return free, nil
		})
		return err
	})
	if err == nil && free && running {
		err = documents.ErrImportRunning
	}
	return free, err
}

// Record stores the document and links the written memories to it, in one
// transaction; with placed nil it lets the import's claim go.
func (s *Store) Record(ctx context.Context, tenant string, d documents.Info, placed []documents.Placed) error {
	rows := make([]map[string]any, len(placed))
	for i, p := range placed {
		rows[i] = map[string]any{
			"memory": p.MemoryID, "key": p.Key, "digest": p.Digest,
			"headings": p.Headings, "position": p.Position, "part": p.Part,
		}
	}
	return s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		err := neo.Exec(ctx, tx, cypherRecordDocument, map[string]any{
			"tenant": tenant, "id": d.ID, "title": d.Title, "format": d.Format, "sections": d.Sections,
			"imported_at": d.ImportedAt.UTC(), "scope": d.Scope, "scope_id": neo.StrOrNil(d.ScopeID), "last": placed == nil,
		})
		if err != nil || len(rows) == 0 {
			return err
		}
		return neo.Exec(ctx, tx, cypherLinkSections, map[string]any{"tenant": tenant, "id": d.ID, "rows": rows})
	})
}

// Retire archives the document's active memories ids, or all of them when
// ids is nil, valid until at.
func (s *Store) Retire(ctx context.Context, tenant, id string, ids []string, at time.Time) (int, error) {
	var n int64
	err := s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		n, err = neo.Count(ctx, tx, cypherRetire, map[string]any{
			"tenant": tenant, "id": id, "all": ids == nil, "ids": append([]string{}, ids...), "at": at.UTC(),
		})
		return err
	})
	return int(n), err
}

// List returns the tenant's documents not removed, by id.
func (s *Store) List(ctx context.Context, tenant string) ([]documents.Info, error) {
	var out []documents.Info
	err := s.tx.Read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypherList, map[string]any{"tenant": tenant}, decodeInfo)
		return err
	})
	return out, err
}

// Remove archives the document's active memories and marks it removed, in
// one transaction that takes the document node's lock first, as Claim and
// Record do; while an import's claim holds, it removes nothing, and a
// document removed already is not found (documents.Store).
func (s *Store) Remove(ctx context.Context, tenant, id string, at time.Time) (int, error) {
	var n int64
	err := s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		args := map[string]any{"tenant": tenant, "id": id, "at": at.UTC()}
		type lock struct{ busy, removed bool }
		l, found, err := neo.ReadOne(ctx, tx, cypherLockForRemoval, args, func(r *neo4j.Record) (lock, error) {
			busy, _ := r.Get("busy")
			removed, _ := r.Get("removed")
			b, _ := busy.(bool)
			rm, _ := removed.(bool)
			return lock{busy: b, removed: rm}, nil
		})
		switch {
		case err != nil:
			return err
		case !found:
			return memory.ErrNotFound
		case l.busy:
			return fmt.Errorf("%w: document %s is being imported; remove it once the import has ended", memory.ErrConflict, id)
		case l.removed:
			// Nothing is left to retire: as for an id never imported.
			return fmt.Errorf("%w: document %s is removed already", memory.ErrNotFound, id)
		}
		args["all"], args["ids"] = true, []string{}
		if n, err = neo.Count(ctx, tx, cypherRetire, args); err != nil {
			return err
		}
		return neo.Exec(ctx, tx, cypherRemove, args)
	})
	return int(n), err
}

// Release lets an import's claim go (documents.Store).
func (s *Store) Release(ctx context.Context, tenant, id string) error {
	return s.tx.Write(ctx, func(tx neo4j.ManagedTransaction) error {
		return neo.Exec(ctx, tx, cypherRelease, map[string]any{"tenant": tenant, "id": id})
	})
}
