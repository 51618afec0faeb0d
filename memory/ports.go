package memory

import (
	"context"
	"time"

	"mneme/intent"
)

// Store is what the memory services need from the system of record.
// graph.Store implements it against Neo4j; all methods filter on tenant.
type Store interface {
	// CreateMemories commits new memories in one transaction. A memory whose
	// (tenant, user, key) slot holds an active memory supersedes it. A memory
	// whose IdempotencyKey was seen before for the same tenant is not created
	// again; the stored one is returned instead.
	CreateMemories(ctx context.Context, ms []Memory) ([]Memory, error)
	// GetMemory returns one memory of the tenant, or ErrNotFound.
	GetMemory(ctx context.Context, tenant, id string) (Memory, error)
	// ListMemories returns memories in scope that match q, newest first.
	ListMemories(ctx context.Context, scope Scope, q ListQuery) ([]Memory, error)
	// ReplaceMemory writes next as a new version of the memory prevID, which
	// must be the current head with version expectVersion (0: any), else
	// ErrConflict. prevID becomes superseded.
	ReplaceMemory(ctx context.Context, tenant, prevID string, expectVersion int, next Memory) (Memory, error)
	// History returns the version chain that contains id, newest first.
	History(ctx context.Context, tenant, id string) ([]Memory, error)
	// DeleteMemory removes a memory and leaves a content-free tombstone.
	DeleteMemory(ctx context.Context, tenant, id, by, reason string) error
	// SearchVector returns in-scope memories of one user by cosine similarity.
	SearchVector(ctx context.Context, scope Scope, q SearchQuery) ([]Hit, error)
	// SearchFullText returns in-scope memories of one user by full-text score.
	SearchFullText(ctx context.Context, scope Scope, q SearchQuery) ([]Hit, error)
}

// ListQuery filters a listing. Zero values mean "no filter".
type ListQuery struct {
	UserID, Type, Kind, Status string
	From                       time.Time // created_at >= From
	To                         time.Time // created_at < To
	// AgentID keeps the memories that agent wrote; Text those whose content
	// contains it, ignoring case.
	AgentID, Text string
	Shared        bool // only shared knowledge: scope tenant, team or agent
	// After is a cursor: only memories strictly older than it, by
	// (created_at, id) descending.
	After *Cursor
	Limit int
}

// Cursor is a position in a listing ordered by (created_at, id) descending.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// SearchQuery asks for the memories of one user nearest to a query. Zero
// filters mean "no filter".
type SearchQuery struct {
	UserID       string
	Text         string    // full-text: raw user text, escaped by the store
	Embedding    []float32 // vector
	Types, Kinds []string
	From, To     time.Time // created_at in [From, To)
	SessionID    string    // only memories written in this session
	// Slots, when set, keeps only the memories whose key, kind or type it
	// lists (any of the three): what a question about the user asks for.
	Slots *Slots
	// AsOf, when set, searches what was true at that moment: versions whose
	// validity [valid_from, valid_to) covers it, superseded or expired
	// since or not. Zero
	// means active memories now.
	AsOf time.Time
	// Now is the moment "active now" means (zero: the store's clock): a
	// memory whose valid_to has passed is not found.
	Now time.Time
	// Shared adds the tenant's shared knowledge (about no user) to the
	// user's memories; the scope still decides which of it is read.
	Shared bool
	Limit  int
	// Embeddings asks for the hits' embeddings too (MMR needs them).
	Embeddings bool
}

// Slots names memories by slot, kind or type; a memory matches when any
// of the three is listed.
type Slots struct {
	Keys, Kinds, Types []string
}

// SearchStore is what recall needs from the graph beyond Store's exact
// searches: the size of a user's partition, the vector index, and graph
// expansion. graph.Store implements it.
type SearchStore interface {
	// PartitionSize counts the memories of one user, every status: the work
	// of an exact vector scan.
	PartitionSize(ctx context.Context, tenant, userID string) (int, error)
	// SearchVectorApprox returns in-scope memories of one user through the
	// approximate vector index, asking it for fetch neighbours in the user's
	// partition (in the whole database where the index knows no partitions);
	// it may return fewer than q.Limit although more exist.
	SearchVectorApprox(ctx context.Context, scope Scope, q SearchQuery, fetch int) ([]Hit, error)
	// Expand returns in-scope memories of one user reached through the
	// graph, nearest first, with the path that reached each.
	Expand(ctx context.Context, scope Scope, q ExpandQuery) ([]Expansion, error)
}

// ExpandQuery asks for memories linked to a question, to first hits, or to
// a session. Empty parts are skipped.
type ExpandQuery struct {
	UserID string
	// Text is the question; entities whose name or alias it contains are
	// expanded Hops (1 or 2) steps to the memories that mention them.
	Text string
	Hops int
	// Seeds are ids of first hits whose entities are expanded one step,
	// and whose turns just before and after in their session join.
	Seeds []string
	// Partition is the size of the user's partition: an entity a large
	// share of it mentions (the user's company) lends a first hit nothing.
	Partition int
	// SessionID adds the memories of the caller's session.
	SessionID string
	// Filters applies the recall filters (types, kinds, window, as_of);
	// with Filters.Embedding, each expansion's similarity to it comes back.
	Filters SearchQuery
	Limit   int
}

// Expansion is a memory found through the graph. A superseded memory
// reached on the way is replaced by the head of its chain (unless the
// search is as of a past time), and the path says so.
type Expansion struct {
	Memory Memory
	Hop    int      // 1 or 2 steps from the question, hit or session
	Via    string   // "entity" (named in the question), "hit" or "session"
	Path   []string // "query", "Entity:<id>", "Memory:<id>", "SUPERSEDED_BY", …
	// Similarity is the memory's cosine to the query's Filters.Embedding;
	// nil without one, or for a memory without an embedding of its size.
	Similarity *float64
}

// Hit is a memory found by one retrieval source, with its raw score.
type Hit struct {
	Memory Memory
	Score  float64
	// Similarity is the memory's cosine to the query's Embedding, from a
	// search that ranks by something else (full text); nil without an
	// embedding, or for a memory without one of its size.
	Similarity *float64
}

// Authorizer is the policy engine as the memory services see it.
type Authorizer interface {
	// Decide evaluates one action on one resource. Any error denies.
	Decide(ctx context.Context, p Principal, action string, r Resource, now time.Time) (Decision, error)
	// ReadScope computes what p may read of userID's memories (userID "" = all
	// users p may read) in p's tenant.
	ReadScope(ctx context.Context, p Principal, userID string, now time.Time) (Scope, error)
	// Covers reports whether a scope ReadScope returned covers r.
	Covers(s Scope, r Resource) bool
}

// Embedder turns texts into vectors of a fixed dimension. Some models embed
// a question differently from the text that answers it, so recall embeds its
// question with EmbedQuery and everything stored goes through Embed.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	Dimension() int
	Model() string
}

// Eraser is a place outside the graph that holds data about users: working
// memory, the recall log, queued writes. Erasing a user asks every place.
type Eraser interface {
	// Place names the place in an erase receipt ("sessions", "recall_log", …).
	Place() string
	// EraseUser removes everything the place holds about one user of a tenant
	// and returns how many items it removed.
	EraseUser(ctx context.Context, tenant, userID string) (int64, error)
}

// UserNames tells how questions may name a user: the name the user is
// known by besides the id ("Ethan Zhou"; "" when none), and the names of
// the tenant's other users (intent.Person). Forget drops what it may keep
// of a user who is erased.
type UserNames interface {
	Person(ctx context.Context, tenant, userID string) (intent.Person, error)
	Forget(tenant, userID string)
}
