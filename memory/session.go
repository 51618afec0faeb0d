package memory

import (
	"context"
	"time"
)

// Session is working memory: the turns of an open conversation, kept in
// Redis until it is closed or expires, then turned into long-term memories.
type Session struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	UserID string `json:"user_id"`
	// AgentID is who opened the session; its memories are written as theirs.
	AgentID   string    `json:"agent_id"`
	Turns     []Turn    `json:"turns"`
	Bytes     int       `json:"bytes"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// Owner is the principal that opened the session.
	Owner Principal `json:"-"`
}

// SessionStore keeps open sessions. A Redis-backed store implements it.
type SessionStore interface {
	// Append adds turns to the session s.ID of s.Tenant, opening it with
	// s's user and owner if it does not exist, and pushes its expiry ttl
	// into the future. A session of another user, or one opened by another
	// principal than s.Owner unless s.Owner is its user, is
	// ErrSessionTaken; one past its caps ErrSessionFull; one being closed
	// ErrSessionClosing.
	Append(ctx context.Context, s Session, turns []Turn, ttl time.Duration, now time.Time) (Session, error)
	// Get returns an open session, or ErrNotFound.
	Get(ctx context.Context, tenant, id string) (Session, error)
	// Claim marks an open session as closing and returns it; ErrNotFound,
	// or ErrSessionClosing while another holds it. A claim that lapsed is
	// taken again, by the expiry worker or a close.
	Claim(ctx context.Context, tenant, id string, now time.Time) (Session, error)
	// Finish removes a claimed session.
	Finish(ctx context.Context, tenant, id string) error
}

// Session limits.
const (
	// MaxSessionTTL bounds a per-session TTL a client asks for.
	MaxSessionTTL = 7 * 24 * time.Hour
	// RecallSessionTurns is how many recent turns recall shows of an open
	// session.
	RecallSessionTurns = 8
)

// AppendRequest adds turns to a session.
type AppendRequest struct {
	UserID string `json:"user_id"`
	// AgentID, when given, must be the caller's own author id: a session's
	// memories are written as whoever opened it.
	AgentID string `json:"agent_id,omitempty"`
	Turns   []Turn `json:"turns"`
	// TTLSeconds sets how long the session lives after its last turn; 0
	// keeps the session's or the configured default.
	TTLSeconds int `json:"ttl_seconds,omitempty"`
}

// CloseResult is what closing a session stored.
type CloseResult struct {
	SessionID string `json:"session_id"`
	IngestResult
}

// KindSession is the kind of the episodic memory that records a session.
const KindSession = "session"

// SessionResource is the policy view of a session: an episodic memory of
// its user written by its owner, as its record will be.
func SessionResource(tenant, userID, agentID string) Resource {
	return ResourceOf(Memory{Tenant: tenant, UserID: userID, AgentID: agentID, Type: TypeEpisodic, Kind: KindSession, Sensitivity: SensitivityInternal})
}
