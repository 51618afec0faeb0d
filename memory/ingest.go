package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
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

// Ingestion limits.
const (
	MaxIngestTurns     = 200
	MaxTurnChars       = 8000
	MaxExtractedPerRun = MaxBatch
)

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

// IngestResult says what an ingestion stored.
type IngestResult struct {
	Memories []Memory `json:"memories"`
	// Reason explains an empty result.
	Reason string `json:"reason,omitempty"`
}

// ReasonNothingWorthRemembering is IngestResult.Reason when the turns held
// no fact, preference or event the extractor recognises.
const ReasonNothingWorthRemembering = "nothing worth remembering: no preference, fact, amount, order, date, company or place found"

// Ingest extracts memories from conversation turns and writes them through
// Create, so policy and every write rule apply as to any other write. It is
// the unit of work of both the synchronous route and a queued ingest job.
func (s *Service) Ingest(ctx context.Context, p Principal, r IngestRequest) (IngestResult, error) {
	if err := validateIngest(r); err != nil {
		return IngestResult{}, err
	}
	if !WritesAsItself(p, r.AgentID) {
		return IngestResult{}, ErrForbidden
	}
	found, err := s.extractFor(ctx, r)
	if err != nil {
		return IngestResult{}, err
	}
	if len(found) == 0 {
		return IngestResult{Memories: []Memory{}, Reason: ReasonNothingWorthRemembering}, nil
	}
	ms, err := s.Create(ctx, p, found)
	if err != nil {
		return IngestResult{}, err
	}
	return IngestResult{Memories: ms}, nil
}

// extractFor runs the extractor over an ingestion's turns and makes what it
// found the request's: its user and session; tenant and author are left to
// the writer, so an extractor cannot choose them.
func (s *Service) extractFor(ctx context.Context, r IngestRequest) ([]NewMemory, error) {
	found, err := s.extract.Extract(ctx, r.Turns)
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	if len(found) > MaxExtractedPerRun {
		found = found[:MaxExtractedPerRun]
	}
	for i := range found {
		found[i].Tenant, found[i].AgentID = "", ""
		found[i].UserID, found[i].SessionID = r.UserID, r.SessionID
	}
	return found, nil
}

// WritesAsItself reports whether an author a request names is empty or the
// principal's own: nobody writes as another agent or user.
func WritesAsItself(p Principal, agentID string) bool {
	return agentID == "" || agentID == AuthorOf(p)
}

// AuthorOf is the agent id a principal's memories carry.
func AuthorOf(p Principal) string {
	if p.Kind == KindUser {
		return "user:" + p.ID
	}
	return p.ID
}

func validateIngest(r IngestRequest) error {
	switch {
	case !validName(r.UserID):
		return Invalid("user_id", "is required: 1–64 letters, digits or -_.:@")
	case r.SessionID != "" && !validName(r.SessionID):
		return Invalid("session_id", "must be 1–64 letters, digits or -_.:@")
	case len(r.Turns) == 0:
		return Invalid("turns", "at least one turn is required")
	case len(r.Turns) > MaxIngestTurns:
		return Invalid("turns", fmt.Sprintf("at most %d turns per request", MaxIngestTurns))
	}
	return ValidateTurns(r.Turns)
}

// ValidateTurns checks conversation turns; an error names the first bad
// one's field as turns[i].field.
func ValidateTurns(turns []Turn) error {
	for i, t := range turns {
		if err := validateTurn(t); err != nil {
			return prefixTurn(err, i)
		}
	}
	return nil
}

func validateTurn(t Turn) error {
	switch {
	case !contains(Roles, t.Role):
		return Invalid("role", "must be one of "+strings.Join(Roles, ", "))
	case strings.TrimSpace(t.Content) == "":
		return Invalid("content", "must not be empty")
	case !utf8.ValidString(t.Content):
		return Invalid("content", "must be valid UTF-8")
	case utf8.RuneCountInString(t.Content) > MaxTurnChars:
		return Invalid("content", fmt.Sprintf("must be at most %d characters", MaxTurnChars))
	}
	return nil
}

func prefixTurn(err error, i int) error {
	var inv *InvalidError
	if errors.As(err, &inv) {
		return Invalid(fmt.Sprintf("turns[%d].%s", i, inv.Field), inv.Reason)
	}
	return err
}
