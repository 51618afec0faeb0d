package client

import (
	"time"
)

// Memory types.
const (
	TypeEpisodic   = "episodic"
	TypeSemantic   = "semantic"
	TypeProcedural = "procedural"
	TypeProfile    = "profile"
)

// Memory statuses: only active memories are recalled; a candidate waits
// for its user's confirmation or more evidence.
const (
	StatusActive     = "active"
	StatusCandidate  = "candidate"
	StatusSuperseded = "superseded"
	StatusArchived   = "archived"
	StatusExpired    = "expired"
)

// Sensitivities, from least to most guarded.
const (
	SensitivityPublic       = "public"
	SensitivityInternal     = "internal"
	SensitivityConfidential = "confidential"
	SensitivityRestricted   = "restricted"
)

// Memory scopes: a memory about one user, or knowledge shared by the
// tenant, a team or one agent.
const (
	ScopeUser   = "user"
	ScopeTenant = "tenant"
	ScopeTeam   = "team"
	ScopeAgent  = "agent"
)

// ScopeRef names where a shared memory belongs: the tenant (no ID), a team
// or an agent.
type ScopeRef struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
}

// Write outcomes (WriteResult.Outcome).
const (
	OutcomeCreated    = "created"
	OutcomeReinforced = "reinforced"
	OutcomeSkipped    = "skipped"
	// OutcomeStale: a fact dated before its key's current one, not stored;
	// the answer is the current one.
	OutcomeStale = "stale"
	// OutcomeDeleted: a retry of a write whose memory was deleted since;
	// nothing was written again.
	OutcomeDeleted = "deleted"
)

// Memory is one stored memory.
type Memory struct {
	ID             string     `json:"id"`
	Tenant         string     `json:"tenant"`
	UserID         string     `json:"user_id"`
	AgentID        string     `json:"agent_id"`
	SessionID      string     `json:"session_id,omitempty"`
	Type           string     `json:"type"`
	Kind           string     `json:"kind,omitempty"`
	Key            string     `json:"key,omitempty"`
	Content        string     `json:"content"`
	Status         string     `json:"status"`
	Sensitivity    string     `json:"sensitivity"`
	Importance     float64    `json:"importance"`
	Confidence     float64    `json:"confidence"`
	Source         string     `json:"source,omitempty"`
	Entities       []Entity   `json:"entities,omitempty"`
	ValidFrom      time.Time  `json:"valid_from"`
	ValidTo        *time.Time `json:"valid_to,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	Version        int        `json:"version"`
	AccessCount    int        `json:"access_count"`
	LastAccessedAt *time.Time `json:"last_accessed_at,omitempty"`
	Supersedes     string     `json:"supersedes,omitempty"`
	EmbeddingModel string     `json:"embedding_model,omitempty"`
	EmbeddingDim   int        `json:"embedding_dim,omitempty"`
	EvidenceCount  int        `json:"evidence_count,omitempty"`
	// Scope and ScopeID say whom a shared memory belongs to; a memory about
	// a user has neither.
	Scope   string `json:"scope,omitempty"`
	ScopeID string `json:"scope_id,omitempty"`
	// Outcome and Redacted are set in write answers only.
	Outcome  string   `json:"outcome,omitempty"`
	Redacted []string `json:"redacted,omitempty"`
}

// Entity is a business object a memory mentions.
type Entity struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
}

// NewMemory is a memory to store. The author is the caller; AgentID, when
// set, must name the caller.
type NewMemory struct {
	UserID      string   `json:"user_id"`
	AgentID     string   `json:"agent_id,omitempty"`
	SessionID   string   `json:"session_id,omitempty"`
	Type        string   `json:"type"`
	Kind        string   `json:"kind,omitempty"`
	Key         string   `json:"key,omitempty"`
	Content     string   `json:"content"`
	Sensitivity string   `json:"sensitivity,omitempty"`
	Importance  *float64 `json:"importance,omitempty"`
	Confidence  *float64 `json:"confidence,omitempty"`
	Source      string   `json:"source,omitempty"`
	Entities    []Entity `json:"entities,omitempty"`
	// IdempotencyKey makes a retried write store the memory once. Add fills
	// it in when it is empty.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// ObservedAt dates a fact observed before the write; only admins may
	// set it further back than a few minutes.
	ObservedAt *time.Time `json:"observed_at,omitempty"`
	// Scope shares the memory as knowledge of the tenant, a team or an
	// agent; UserID is then empty.
	Scope *ScopeRef `json:"scope,omitempty"`
	// ValidTo ends a temporary memory: after it, it is no longer recalled.
	ValidTo *time.Time `json:"valid_to,omitempty"`
}

// WriteResult says what became of one memory of a write.
type WriteResult struct {
	Outcome  string   `json:"outcome"`
	Reason   string   `json:"reason,omitempty"`
	ID       string   `json:"id,omitempty"`
	Status   string   `json:"status,omitempty"`
	Redacted []string `json:"redacted,omitempty"`
}

// WriteResponse answers Add: the memories stored or reinforced, and one
// result per memory sent, in order.
type WriteResponse struct {
	Memories []Memory      `json:"memories"`
	Results  []WriteResult `json:"results"`
}

// UpdateRequest changes a memory into a new version; nil fields stay.
type UpdateRequest struct {
	Content     *string  `json:"content,omitempty"`
	Kind        *string  `json:"kind,omitempty"`
	Sensitivity *string  `json:"sensitivity,omitempty"`
	Importance  *float64 `json:"importance,omitempty"`
	Confidence  *float64 `json:"confidence,omitempty"`
}

// ListOptions filters a listing; zero fields do not filter.
type ListOptions struct {
	UserID, Type, Kind, Status string
	From, To                   time.Time
	Limit                      int
	Cursor                     string
}

// Page is one page of a listing.
type Page struct {
	Memories   []Memory `json:"memories"`
	NextCursor string   `json:"next_cursor,omitempty"`
}

// RecallRequest asks for the memories that matter for a query.
type RecallRequest struct {
	UserID      string     `json:"user_id"`
	Query       string     `json:"query"`
	SessionID   string     `json:"session_id,omitempty"`
	SessionOnly bool       `json:"session_only,omitempty"`
	Types       []string   `json:"types,omitempty"`
	Kinds       []string   `json:"kinds,omitempty"`
	From        *time.Time `json:"from,omitempty"`
	To          *time.Time `json:"to,omitempty"`
	AsOf        *time.Time `json:"as_of,omitempty"`
	K           int        `json:"k,omitempty"`
	Budget      int        `json:"budget,omitempty"`
	Diversify   bool       `json:"diversify,omitempty"`
}

// RecallResult answers a recall.
type RecallResult struct {
	Memories []Recalled `json:"memories"`
	// Context is a ready block for an agent's prompt.
	Context   string         `json:"context"`
	Truncated bool           `json:"truncated"`
	Session   *RecallSession `json:"session,omitempty"`
	UsedChars int            `json:"used_chars"`
	Search    SearchInfo     `json:"search"`
}

// SearchInfo says how a recall found and ranked its candidates.
type SearchInfo struct {
	// VectorPath is exact, index, index+exact or none; vector in place of
	// the first three for callers other than admins.
	VectorPath string `json:"vector_path"`
	// PartitionSize is the measured size of the user's partition that
	// chose the path, every memory about the user counted: the service
	// reports it to admins only (0 otherwise, and when not measured).
	PartitionSize int `json:"partition_size"`
	// VectorComplete is false when the vector index returned fewer
	// candidates than asked for and no exact scan made up for it.
	VectorComplete bool         `json:"vector_complete"`
	Candidates     SourceCounts `json:"candidates"`
	// Diversified is true when MMR ordered the memories.
	Diversified bool `json:"diversified"`
	// Rerank is off, applied or failed; on failure the fused order stands
	// and RerankError says why.
	Rerank      string `json:"rerank"`
	RerankError string `json:"rerank_error,omitempty"`
	// Stages times the parts of the recall, in milliseconds.
	Stages Stages `json:"stages_ms"`
}

// SourceCounts counts what each search returned before fusion.
type SourceCounts struct {
	Vector   int `json:"vector"`
	FullText int `json:"fulltext"`
	Graph    int `json:"graph"`
	Intent   int `json:"intent"`
}

// Stages times the parts of a recall, in milliseconds.
type Stages struct {
	Scope      float64 `json:"scope"`
	Embed      float64 `json:"embed"`
	Candidates float64 `json:"candidates"`
	Vector     float64 `json:"vector"`
	FullText   float64 `json:"fulltext"`
	Graph      float64 `json:"graph"`
	Seeds      float64 `json:"seeds"`
	Rank       float64 `json:"rank"`
	Rerank     float64 `json:"rerank"`
	Policy     float64 `json:"policy"`
	Total      float64 `json:"total"`
}

// Recalled is one recalled memory with its score and how it was found.
type Recalled struct {
	Memory  Memory  `json:"memory"`
	Score   float64 `json:"score"`
	Explain Explain `json:"explain"`
}

// Explain breaks a recall score into its parts.
type Explain struct {
	// Gate is the relevance test the memory passed: vector, fulltext,
	// entity or intent, or neighbour and session for memories let in
	// beside one that passed.
	Gate string `json:"gate"`
	// Scope is where the memory comes from: user:<id>, tenant, team:<id>
	// or agent:<id>.
	Scope            string   `json:"scope,omitempty"`
	Sources          []string `json:"sources"`
	VectorSimilarity float64  `json:"vector_similarity"`
	VectorRank       int      `json:"vector_rank,omitempty"`
	FullTextScore    float64  `json:"fulltext_score,omitempty"`
	FullTextRank     int      `json:"fulltext_rank,omitempty"`
	// TermCoverage is the weighted share of the question's informative
	// words the memory contains.
	TermCoverage float64 `json:"term_coverage,omitempty"`
	// Intent names what a question about the user asked for (answer_style,
	// rules, …) when the memory answers it; IntentRank is its place there.
	Intent           []string `json:"intent,omitempty"`
	IntentRank       int      `json:"intent_rank,omitempty"`
	GraphRank        int      `json:"graph_rank,omitempty"`
	GraphHops        int      `json:"graph_hops,omitempty"`
	GraphPath        []string `json:"graph_path,omitempty"`
	SessionRank      int      `json:"session_rank,omitempty"`
	AdjacentRank     int      `json:"adjacent_rank,omitempty"`
	Fused            float64  `json:"fused"`
	AgeDays          float64  `json:"age_days"`
	DecayFactor      float64  `json:"decay_factor"`
	ImportanceFactor float64  `json:"importance_factor"`
	ProfileFactor    float64  `json:"profile_factor"`
	MMRMaxSimilarity *float64 `json:"mmr_max_similarity,omitempty"`
	RerankScore      *float64 `json:"rerank_score,omitempty"`
	Policy           string   `json:"policy"`
}

// RecallSession is the open session's recent turns, in a recall answer.
type RecallSession struct {
	ID        string `json:"id"`
	Source    string `json:"source"`
	Turns     []Turn `json:"turns"`
	Truncated bool   `json:"truncated"`
}

// Turn is one utterance of a conversation.
type Turn struct {
	Role    string    `json:"role"` // user, assistant, system or tool
	Content string    `json:"content"`
	At      time.Time `json:"at,omitzero"`
}

// IngestRequest hands conversation turns to the extractor.
type IngestRequest struct {
	UserID    string `json:"user_id"`
	SessionID string `json:"session_id,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	Turns     []Turn `json:"turns"`
	// IdempotencyKey is sent as the Idempotency-Key header of IngestAsync:
	// a resubmission with the same key returns the first job. IngestAsync
	// makes a fresh one when it is empty.
	IdempotencyKey string `json:"-"`
}

// AppendRequest adds turns to a session, opening it on the first call.
type AppendRequest struct {
	UserID string `json:"user_id"`
	// AgentID, when set, must be the caller's own author id.
	AgentID string `json:"agent_id,omitempty"`
	Turns   []Turn `json:"turns"`
	// TTLSeconds is how long the session lives after its last turn (0: the
	// session's or the service's default).
	TTLSeconds int `json:"ttl_seconds,omitempty"`
}

// Session is an open conversation in working memory.
type Session struct {
	ID        string    `json:"id"`
	Tenant    string    `json:"tenant"`
	UserID    string    `json:"user_id"`
	AgentID   string    `json:"agent_id"`
	Turns     []Turn    `json:"turns"`
	Bytes     int       `json:"bytes"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// CloseResult says what closing a session stored.
type CloseResult struct {
	SessionID string `json:"session_id"`
	IngestResult
}

// IngestResult says what a synchronous ingestion stored.
type IngestResult struct {
	Memories []Memory `json:"memories"`
	Reason   string   `json:"reason,omitempty"`
	// Refused counts what was left out: what policy does not let the
	// caller write, what the write guard refuses, and, at a session's
	// close, what the tenant's quota has no room for.
	Refused int `json:"refused,omitempty"`
}

// Job is a queued write or ingestion.
type Job struct {
	ID         string      `json:"id"`
	Kind       string      `json:"kind"`
	Status     string      `json:"status"` // queued, done or failed
	AcceptedAt time.Time   `json:"accepted_at"`
	FinishedAt *time.Time  `json:"finished_at,omitempty"`
	Attempts   int         `json:"attempts,omitempty"`
	Memories   []JobMemory `json:"memories,omitempty"`
	// A failed job's stable error code and message, as the API answers.
	ErrorCode string `json:"error_code,omitempty"`
	Error     string `json:"error,omitempty"`
}

// JobMemory is what became of one memory of a job.
type JobMemory struct {
	ID      string `json:"id,omitempty"`
	Outcome string `json:"outcome"`
	Status  string `json:"status,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Receipt says what an erase removed, per place.
type Receipt struct {
	Tenant   string           `json:"tenant"`
	UserID   string           `json:"user_id"`
	MemoryID string           `json:"memory_id,omitempty"`
	ErasedAt time.Time        `json:"erased_at"`
	Counts   map[string]int64 `json:"counts"`
}

// Principal is who an API key stands for.
type Principal struct {
	Tenant string   `json:"tenant"`
	Kind   string   `json:"kind"`
	ID     string   `json:"id"`
	Roles  []string `json:"roles,omitempty"`
	// Team is an agent's team, whose shared knowledge it reads.
	Team string `json:"team,omitempty"`
}

// NewGrant lets one agent read memories another wrote (admins).
type NewGrant struct {
	Grantee        string     `json:"grantee"`
	Source         string     `json:"source"`
	Types          []string   `json:"types"`
	Kinds          []string   `json:"kinds,omitempty"`
	MaxSensitivity string     `json:"max_sensitivity"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
}

// Grant is a sharing grant in force.
type Grant struct {
	ID             string     `json:"id"`
	Tenant         string     `json:"tenant"`
	Grantee        string     `json:"grantee"`
	Source         string     `json:"source"`
	Types          []string   `json:"types"`
	Kinds          []string   `json:"kinds,omitempty"`
	MaxSensitivity string     `json:"max_sensitivity"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
}

// GrantChange changes a grant; nil fields stay. NoExpiry removes the
// expiry (give it or ExpiresAt, not both).
type GrantChange struct {
	Grantee        *string    `json:"grantee,omitempty"`
	Source         *string    `json:"source,omitempty"`
	Types          *[]string  `json:"types,omitempty"`
	Kinds          *[]string  `json:"kinds,omitempty"`
	MaxSensitivity *string    `json:"max_sensitivity,omitempty"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
	NoExpiry       bool       `json:"no_expiry,omitempty"`
}

// GrantSet is a tenant's grants and the revision they are at.
type GrantSet struct {
	Grants   []Grant `json:"grants"`
	Revision int64   `json:"revision"`
}
