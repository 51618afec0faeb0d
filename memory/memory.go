// Package memory is Mneme's domain: the memory model, the principals that act
// on it, and the services that write, read and recall memories. It declares the
// small interfaces it needs from the graph store, the policy engine and the
// embedder; the concrete types live in graph, policy and embed.
package memory

import (
	"cmp"
	"slices"
	"time"
)

// Memory types.
const (
	TypeEpisodic   = "episodic"
	TypeSemantic   = "semantic"
	TypeProcedural = "procedural"
	TypeProfile    = "profile"
)

// Types lists every long-term memory type.
var Types = []string{TypeEpisodic, TypeSemantic, TypeProcedural, TypeProfile}

// Memory statuses. Only active memories are recalled by default.
const (
	StatusActive     = "active"
	StatusCandidate  = "candidate"
	StatusSuperseded = "superseded"
	StatusArchived   = "archived"
	StatusExpired    = "expired"
)

// Statuses lists every memory status.
var Statuses = []string{StatusActive, StatusCandidate, StatusSuperseded, StatusArchived, StatusExpired}

// Sensitivity levels, lowest first. Policies compare them by rank.
const (
	SensitivityPublic       = "public"
	SensitivityInternal     = "internal"
	SensitivityConfidential = "confidential"
	SensitivityRestricted   = "restricted"
)

// Sensitivities lists the sensitivity levels in increasing order.
var Sensitivities = []string{SensitivityPublic, SensitivityInternal, SensitivityConfidential, SensitivityRestricted}

// SensitivityRank returns the position of s in Sensitivities, or -1.
func SensitivityRank(s string) int { return slices.Index(Sensitivities, s) }

// Memory is one remembered fact, event, procedure or trait.
type Memory struct {
	ID          string     `json:"id"`
	Tenant      string     `json:"tenant"`
	UserID      string     `json:"user_id"`
	AgentID     string     `json:"agent_id"`
	SessionID   string     `json:"session_id,omitempty"`
	Type        string     `json:"type"`
	Kind        string     `json:"kind,omitempty"`
	Key         string     `json:"key,omitempty"`
	Content     string     `json:"content"`
	Status      string     `json:"status"`
	Sensitivity string     `json:"sensitivity"`
	Importance  float64    `json:"importance"`
	Confidence  float64    `json:"confidence"`
	Source      string     `json:"source,omitempty"`
	Entities    []Entity   `json:"entities,omitempty"`
	ValidFrom   time.Time  `json:"valid_from"`
	ValidTo     *time.Time `json:"valid_to,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	Version     int        `json:"version"`
	// Scope says whom the memory belongs to: "" (or ScopeUser) for a memory
	// about UserID, else shared knowledge of the tenant, of team ScopeID or
	// of agent ScopeID, about no user (UserID "").
	Scope   string `json:"scope,omitempty"`
	ScopeID string `json:"scope_id,omitempty"`
	// AccessCount and LastAccessedAt say how often and when recall last
	// returned the memory; they are updated after the answer has left.
	AccessCount    int        `json:"access_count"`
	LastAccessedAt *time.Time `json:"last_accessed_at,omitempty"`
	// Supersedes is the id of the version this memory replaced, if any.
	Supersedes string `json:"supersedes,omitempty"`
	// EmbeddingModel and EmbeddingDim name the embedder that made
	// Embedding, so that vectors of another model can be found and renewed.
	EmbeddingModel string `json:"embedding_model,omitempty"`
	EmbeddingDim   int    `json:"embedding_dim,omitempty"`
	// Embedding is never serialised to clients.
	Embedding []float32 `json:"-"`
	// IdempotencyKey lets a client retry a create safely.
	IdempotencyKey string `json:"-"`
	// QueueSeq is the Seq of the queued job that writes the memory (0 for a
	// write that was not queued). The store refuses it when the user was
	// erased with a fence at or above it (Tombstone.Fence).
	QueueSeq int64 `json:"-"`
	// EvidenceCount is how many writes observed this memory: one for the
	// write that created it, one more for each duplicate that reinforced it.
	EvidenceCount int `json:"evidence_count,omitempty"`
	// Outcome and Redacted are set in write responses only: what the write
	// did (see WriteResult) and the finding kinds masked in the content.
	Outcome  string   `json:"outcome,omitempty"`
	Redacted []string `json:"redacted,omitempty"`
}

// Entity is a business object a memory mentions: an order, a company, a product.
type Entity struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Aliases are other names the entity goes by ("ACME", "艾克米"); recall
	// matches a question against the name and every alias.
	Aliases []string `json:"aliases,omitempty"`
}

// Principal is who is calling, derived from the API key alone.
type Principal struct {
	Tenant string   `json:"tenant"`
	Kind   string   `json:"kind"` // agent, user, admin, analyst
	ID     string   `json:"id"`
	Roles  []string `json:"roles,omitempty"`
	// Team is an agent's team: it reads the team's shared knowledge.
	Team string `json:"team,omitempty"`
}

// Memory scopes: a memory about one user, or knowledge shared at the
// tenant, a team or one agent.
const (
	ScopeUser   = "user"
	ScopeTenant = "tenant"
	ScopeTeam   = "team"
	ScopeAgent  = "agent"
)

// ScopeOf returns m's scope, ScopeUser when unset.
func ScopeOf(m Memory) string { return cmp.Or(m.Scope, ScopeUser) }

// Principal kinds.
const (
	KindAgent   = "agent"
	KindUser    = "user"
	KindAdmin   = "admin"
	KindAnalyst = "analyst"
)

// Grant lets one agent read memories written by another. Grants are data:
// admins change them without touching Rego.
type Grant struct {
	ID             string     `json:"id"`
	Tenant         string     `json:"tenant"`
	Grantee        string     `json:"grantee"`         // agent id that may read
	Source         string     `json:"source"`          // agent id whose memories are shared, or "*"
	Types          []string   `json:"types"`           // memory types; empty means none
	Kinds          []string   `json:"kinds,omitempty"` // empty means every kind
	MaxSensitivity string     `json:"max_sensitivity"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
}

// Resource is the metadata of a memory that policy sees. Content never goes
// to the policy engine.
type Resource struct {
	Tenant      string `json:"tenant"`
	ID          string `json:"id,omitempty"`
	UserID      string `json:"user_id"`
	AgentID     string `json:"agent_id,omitempty"`
	Type        string `json:"type,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Sensitivity string `json:"sensitivity,omitempty"`
	Status      string `json:"status,omitempty"`
	Scope       string `json:"scope,omitempty"` // "" counts as ScopeUser
	ScopeID     string `json:"scope_id,omitempty"`
	// Author is AuthorUser when the user the memory is about wrote it
	// (agent_id "user:" + user_id), else AuthorAgent; it follows from the
	// two ids, so stores compute it rather than keep it.
	Author string `json:"author,omitempty"`
}

// Authors of a memory, as Resource.Author names them.
const (
	AuthorUser  = "user"
	AuthorAgent = "agent"
)

// SaidByUser reports whether the user m is about wrote it themselves.
func (m Memory) SaidByUser() bool { return m.UserID != "" && m.AgentID == "user:"+m.UserID }

// authors names Resource.Author by SaidByUser.
var authors = map[bool]string{true: AuthorUser, false: AuthorAgent}

// ResourceOf returns the policy view of m.
func ResourceOf(m Memory) Resource {
	return Resource{
		Tenant: m.Tenant, ID: m.ID, UserID: m.UserID, AgentID: m.AgentID,
		Type: m.Type, Kind: m.Kind, Sensitivity: m.Sensitivity, Status: m.Status,
		Scope: ScopeOf(m), ScopeID: m.ScopeID, Author: authors[m.SaidByUser()],
	}
}

// Actions a principal may take on a memory.
const (
	ActionRead   = "read"
	ActionWrite  = "write"
	ActionDelete = "delete"
	ActionManage = "manage" // grants and keys of a tenant
)

// Scope is the readable part of one tenant for a principal, as computed by
// policy. When Filter is set, a memory of the tenant is in scope when it
// matches the filter, and Clauses are ignored; otherwise it is in scope when
// it matches at least one clause. The graph store turns a scope into a Cypher
// predicate; an empty scope matches nothing.
type Scope struct {
	Tenant  string
	Clauses []Clause
	// Filter is the read policy compiled by partial evaluation.
	Filter *Filter
}

// Clause is one way a memory can be readable. Empty fields match anything.
type Clause struct {
	UserID         string   `json:"user_id,omitempty"`
	AgentIDs       []string `json:"agent_ids,omitempty"`
	Types          []string `json:"types,omitempty"`
	Kinds          []string `json:"kinds,omitempty"`
	MaxSensitivity string   `json:"max_sensitivity,omitempty"`
	// Scopes and ScopeIDs match a memory's scope ("" as ScopeUser) and id.
	Scopes   []string `json:"scopes,omitempty"`
	ScopeIDs []string `json:"scope_ids,omitempty"`
	Authors  []string `json:"authors,omitempty"` // Resource.Author in these
}

// Empty reports whether the scope can match nothing.
func (s Scope) Empty() bool {
	if s.Filter != nil {
		return s.Filter.IsFalse()
	}
	return len(s.Clauses) == 0
}

// Decision is the outcome of one policy evaluation.
type Decision struct {
	Allow   bool     `json:"allow"`
	Reasons []string `json:"reasons,omitempty"`
	// Refusal, when the policy says why a denial may be told to the client
	// (a user's write above their ceiling), is the error to refuse with; it
	// wraps ErrForbidden. Nil: a plain ErrForbidden.
	Refusal error `json:"-"`
}
