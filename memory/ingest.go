package memory

import (
	"context"
	"time"
)

// Turn is one message of a conversation.
type Turn struct {
	// Role is who spoke: user, assistant, system or tool.
	Role    string    `json:"role"`
	Content string    `json:"content"`
	At      time.Time `json:"at,omitzero"`
}

// Turn roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
	RoleTool      = "tool"
)

// Roles lists every turn role.
var Roles = []string{RoleUser, RoleAssistant, RoleSystem, RoleTool}

// Extractor finds what is worth remembering in conversation turns. It
// returns memories with type, kind, key, content, entities and importance;
// the service fills in whose and which session they are.
type Extractor interface {
	Extract(ctx context.Context, turns []Turn) ([]NewMemory, error)
}

// IngestRequest is a piece of conversation to learn from.
type IngestRequest struct {
	UserID    string `json:"user_id"`
	SessionID string `json:"session_id,omitempty"`
	// AgentID, when given, must be the caller's own author id (its agent
	// id, or "user:<id>" for an end user): memories are always written as
	// the caller, and naming anyone else is refused.
	AgentID string `json:"agent_id,omitempty"`
	Turns   []Turn `json:"turns"`
}

// IngestResult says what an ingestion (or a session's close) stored.
type IngestResult struct {
	Memories []Memory `json:"memories"`
	// Reason explains an empty result, or what the quota left out.
	Reason string `json:"reason,omitempty"`
	// Refused counts what was left out rather than lose the rest: what
	// policy does not let the writer write (an end user's notes), what the
	// guard refuses and, at a session's close, what the quota cannot hold.
	Refused int `json:"refused,omitempty"`
}
