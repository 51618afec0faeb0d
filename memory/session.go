package memory

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
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
	// into the future. A session of another user is ErrForbidden; one
	// past its caps ErrSessionFull; one being closed ErrSessionClosing.
	Append(ctx context.Context, s Session, turns []Turn, ttl time.Duration, now time.Time) (Session, error)
	// Get returns an open session, or ErrNotFound.
	Get(ctx context.Context, tenant, id string) (Session, error)
	// Claim marks an open session as closing and returns it, or
	// ErrNotFound. A claim not finished in time is offered to the expiry
	// worker again.
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
	SessionID string   `json:"session_id"`
	Memories  []Memory `json:"memories"`
	Reason    string   `json:"reason,omitempty"`
}

// KindSession is the kind of the episodic memory that records a session.
const KindSession = "session"

// sessionResource is the policy view of a session: an episodic memory of
// its user written by its owner, as its record will be.
func sessionResource(tenant, userID, agentID string) Resource {
	return Resource{Tenant: tenant, UserID: userID, AgentID: agentID, Type: TypeEpisodic, Kind: KindSession, Sensitivity: SensitivityInternal}
}

// authorOf is the agent id a principal's memories carry.
func authorOf(p Principal) string {
	if p.Kind == KindUser {
		return "user:" + p.ID
	}
	return p.ID
}

// AppendTurns adds turns to the open session id, opening it if needed.
func (s *Service) AppendTurns(ctx context.Context, p Principal, id string, r AppendRequest) (Session, error) {
	switch {
	case !validName(id):
		return Session{}, Invalid("session_id", "must be 1–64 letters, digits or -_.:@")
	case !validName(r.UserID):
		return Session{}, Invalid("user_id", "is required: 1–64 letters, digits or -_.:@")
	case len(r.Turns) == 0:
		return Session{}, Invalid("turns", "at least one turn is required")
	case len(r.Turns) > MaxIngestTurns:
		return Session{}, Invalid("turns", fmt.Sprintf("at most %d turns per request", MaxIngestTurns))
	case r.TTLSeconds < 0 || time.Duration(r.TTLSeconds)*time.Second > MaxSessionTTL:
		return Session{}, Invalid("ttl_seconds", fmt.Sprintf("must be between 0 and %d", int(MaxSessionTTL/time.Second)))
	case p.Kind != KindAgent && p.Kind != KindUser, !writesAsItself(p, r.AgentID):
		return Session{}, ErrForbidden
	}
	for i, t := range r.Turns {
		if err := validateTurn(t); err != nil {
			return Session{}, prefixTurn(err, i)
		}
	}
	now := s.now().UTC()
	if err := s.require(ctx, p, ActionWrite, sessionResource(p.Tenant, r.UserID, authorOf(p)), now); err != nil {
		return Session{}, err
	}
	turns := make([]Turn, len(r.Turns))
	for i, t := range r.Turns {
		if t.At.IsZero() {
			t.At = now
		}
		t.At = t.At.UTC()
		turns[i] = t
	}
	open := Session{ID: id, Tenant: p.Tenant, UserID: r.UserID, AgentID: authorOf(p), Owner: p}
	return s.sessions.Append(ctx, open, turns, time.Duration(r.TTLSeconds)*time.Second, now)
}

// GetSession returns an open session the principal may read.
func (s *Service) GetSession(ctx context.Context, p Principal, id string) (Session, error) {
	if !validName(id) {
		return Session{}, ErrNotFound
	}
	sess, err := s.sessions.Get(ctx, p.Tenant, id)
	if err != nil {
		return Session{}, err
	}
	if s.require(ctx, p, ActionRead, sessionResource(sess.Tenant, sess.UserID, sess.AgentID), s.now().UTC()) != nil {
		return Session{}, ErrNotFound
	}
	return sess, nil
}

// CloseSession ends an open session now and turns it into long-term
// memories through the extractor.
func (s *Service) CloseSession(ctx context.Context, p Principal, id string) (CloseResult, error) {
	sess, err := s.GetSession(ctx, p, id)
	if err != nil {
		return CloseResult{}, err
	}
	if err := s.require(ctx, p, ActionWrite, sessionResource(sess.Tenant, sess.UserID, sess.AgentID), s.now().UTC()); err != nil {
		return CloseResult{}, err
	}
	if sess, err = s.sessions.Claim(ctx, p.Tenant, id, s.now().UTC()); err != nil {
		return CloseResult{}, err
	}
	ms, err := s.EndSession(ctx, sess)
	if err != nil {
		// The claim lapses and the expiry worker tries again.
		return CloseResult{}, err
	}
	if err := s.sessions.Finish(ctx, sess.Tenant, sess.ID); err != nil {
		return CloseResult{}, err
	}
	res := CloseResult{SessionID: id, Memories: ms}
	if len(ms) == 0 {
		res.Reason = ReasonNothingWorthRemembering
	}
	return res, nil
}

// EndSession turns a claimed session into long-term memories, written as
// its owner: what the extractor finds in its turns, and one episodic memory
// that records the conversation — when, how long, what it was about —
// without repeating values a later conversation may supersede. A session
// with nothing worth remembering leaves nothing. Retrying is safe: every
// memory carries an idempotency key derived from the session. The caller
// makes sure this replica decides with the tenant's current policy and
// grants: a request has synced its tenant already; the expiry worker, which
// runs outside a request, syncs it first (see app).
func (s *Service) EndSession(ctx context.Context, sess Session) ([]Memory, error) {
	found, err := s.extract.Extract(ctx, sess.Turns)
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	if len(found) == 0 {
		return []Memory{}, nil
	}
	if len(found) > MaxExtractedPerRun-1 {
		found = found[:MaxExtractedPerRun-1]
	}
	found = append(found, sessionRecord(sess, found))
	idem := fmt.Sprintf("session:%s:%d", sess.ID, sess.CreatedAt.UnixMilli())
	for i := range found {
		found[i].Tenant, found[i].AgentID = "", ""
		found[i].UserID, found[i].SessionID = sess.UserID, sess.ID
		found[i].IdempotencyKey = fmt.Sprintf("%s:%d", idem, i)
	}
	return s.Create(ctx, sess.Owner, found)
}

// sessionRecord is the episodic memory of a conversation: its time, its
// size, the topics it touched and the entities it named.
func sessionRecord(sess Session, found []NewMemory) NewMemory {
	var topics []string
	seenTopic := map[string]bool{}
	var ents []Entity
	seenEnt := map[string]bool{}
	for _, m := range found {
		topic := m.Kind
		if m.Key != "" && !strings.Contains(m.Key, ":") {
			topic = m.Key
		}
		topic = strings.ReplaceAll(topic, "_", " ")
		if topic != "" && !seenTopic[topic] {
			seenTopic[topic] = true
			topics = append(topics, topic)
		}
		for _, e := range m.Entities {
			if !seenEnt[e.ID] {
				seenEnt[e.ID] = true
				ents = append(ents, e)
			}
		}
	}
	sort.Strings(topics)
	first, last := sess.CreatedAt, sess.UpdatedAt
	if len(sess.Turns) > 0 {
		first, last = sess.Turns[0].At, sess.Turns[len(sess.Turns)-1].At
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Conversation on %s %s–%s UTC (session %s, %d turns) about %s",
		first.Format(time.DateOnly), first.Format("15:04"), last.Format("15:04"), sess.ID, len(sess.Turns), strings.Join(topics, ", "))
	if len(ents) > 0 {
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name
		}
		fmt.Fprintf(&b, "; mentioned %s", strings.Join(names, ", "))
	}
	content := b.String()
	if utf8.RuneCountInString(content) > MaxContentChars {
		content = string([]rune(content)[:MaxContentChars])
	}
	importance := 0.4
	return NewMemory{
		Type: TypeEpisodic, Kind: KindSession, Content: content, Entities: ents,
		Importance: &importance, Source: "session",
	}
}
