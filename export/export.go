// Package export answers data-subject requests: everything Mneme holds about
// one user — every memory in every version and status, the content-free
// tombstones of erased ones, the turns of open sessions and the recall-log
// entries about them — in one document, for the admins of the user's tenant.
// Each export is recorded in the admin audit trail.
package export

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"mneme/memory"
)

// Tombstone kinds.
const (
	TombstoneMemory = "memory"
	TombstoneUser   = "user"
)

// Tombstone is what stays of an erased memory, or of an erased user: who
// erased it, when and why, never what it said.
type Tombstone struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	DeletedAt time.Time `json:"deleted_at"`
	By        string    `json:"by,omitempty"`
	Reason    string    `json:"reason,omitempty"`
}

// GraphRecords is what the system of record holds about one user.
type GraphRecords struct {
	Memories   []memory.Memory
	Tombstones []Tombstone
}

// Graph reads a user's records from the system of record. graph.Store
// implements it.
type Graph interface {
	ExportUser(ctx context.Context, tenant, userID string) (GraphRecords, error)
}

// Sessions lists a user's open sessions. session.Store implements it.
type Sessions interface {
	UserSessions(ctx context.Context, tenant, userID string) ([]memory.Session, error)
}

// Names reads the name a user is known by, "" when none was given.
// graph/keystore.Store implements it.
type Names interface {
	UserName(ctx context.Context, tenant, userID string) (string, error)
}

// MaxRecalls bounds the recall-log entries read; the log keeps fewer per
// user than this.
const MaxRecalls = 100_000

// Options configures a Service. Logger, Now and Audit are optional.
type Options struct {
	Graph    Graph
	Sessions Sessions
	Recalls  memory.RecallLogReader
	Names    Names
	// Authz decides whether the caller may manage its tenant.
	Authz memory.Authorizer
	// Audit records every export, done or refused.
	Audit  memory.Auditor
	Logger *slog.Logger
	Now    func() time.Time
}

// Service exports what is held about users.
type Service struct {
	graph    Graph
	sessions Sessions
	recalls  memory.RecallLogReader
	names    Names
	authz    memory.Authorizer
	audit    memory.Auditor
	log      *slog.Logger
	now      func() time.Time
}

// New returns a Service, or an error naming each required part opts lacks.
func New(opts Options) (*Service, error) {
	var missing []error
	for name, ok := range map[string]bool{
		"Graph": opts.Graph != nil, "Sessions": opts.Sessions != nil, "Recalls": opts.Recalls != nil, "Names": opts.Names != nil, "Authz": opts.Authz != nil,
	} {
		if !ok {
			missing = append(missing, errors.New("export: "+name+" is required"))
		}
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	s := &Service{
		graph: opts.Graph, sessions: opts.Sessions, recalls: opts.Recalls, names: opts.Names, authz: opts.Authz,
		audit: opts.Audit, log: opts.Logger, now: opts.Now,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Document is everything held about one user, as of ExportedAt.
type Document struct {
	Tenant     string    `json:"tenant"`
	UserID     string    `json:"user_id"`
	Name       string    `json:"name,omitempty"`
	ExportedAt time.Time `json:"exported_at"`
	// Memories are every version in every status, oldest first, without
	// embeddings (numbers derived from the content).
	Memories   []memory.Memory `json:"memories"`
	Tombstones []Tombstone     `json:"tombstones"`
	// Sessions are the open conversations about the user, with their turns.
	Sessions []memory.Session `json:"sessions"`
	// Recalls are the recall-log entries about the user, newest first.
	Recalls []memory.RecallRecord `json:"recalls"`
}

// User exports what is held about userID in the caller's tenant. Only those
// policy lets manage the tenant may; a user of whom nothing is held (another
// tenant's, say) is memory.ErrNotFound. The attempt is audited either way.
func (s *Service) User(ctx context.Context, p memory.Principal, userID string) (doc Document, err error) {
	now := s.now().UTC()
	defer func() { s.record(ctx, p, userID, now, doc, err) }()
	// Who asks first: an id anyone may choose must not reach the audit
	// trail from a caller who may not export at all.
	if err := memory.RequireManage(ctx, s.authz, p, now, s.log); err != nil {
		return Document{}, err
	}
	if !memory.ValidName(userID) {
		return Document{}, memory.Invalid("id", "is required: 1–64 letters, digits or -_.:@")
	}
	g, err := s.graph.ExportUser(ctx, p.Tenant, userID)
	if err != nil {
		return Document{}, fmt.Errorf("export graph: %w", err)
	}
	sessions, err := s.sessions.UserSessions(ctx, p.Tenant, userID)
	if err != nil {
		return Document{}, fmt.Errorf("export sessions: %w", err)
	}
	recalls, err := s.recalls.RecentRecalls(ctx, p.Tenant, userID, MaxRecalls)
	if err != nil {
		return Document{}, fmt.Errorf("export recall log: %w", err)
	}
	name, err := s.names.UserName(ctx, p.Tenant, userID)
	if err != nil {
		return Document{}, fmt.Errorf("export name: %w", err)
	}
	doc = Document{
		Tenant: p.Tenant, UserID: userID, Name: name, ExportedAt: now,
		Memories: nonNil(g.Memories), Tombstones: nonNil(g.Tombstones), Sessions: nonNil(sessions), Recalls: nonNil(recalls),
	}
	if doc.Name == "" && len(doc.Memories)+len(doc.Tombstones)+len(doc.Sessions)+len(doc.Recalls) == 0 {
		return Document{}, memory.ErrNotFound
	}
	return doc, nil
}

// record puts the export in the audit trail: counts only, never content.
// A refusal of a non-admin by policy belongs to the decision log instead
// (memory.Audited).
func (s *Service) record(ctx context.Context, p memory.Principal, userID string, at time.Time, doc Document, err error) {
	if s.audit == nil || !memory.Audited(p, err) {
		return
	}
	e := memory.NewAuditEvent(ctx, p, "user.export", "user:"+userID, err, memory.AuditReason(err))
	e.Time = at
	if err == nil {
		e.Details = map[string]string{
			"memories":   fmt.Sprint(len(doc.Memories)),
			"tombstones": fmt.Sprint(len(doc.Tombstones)),
			"sessions":   fmt.Sprint(len(doc.Sessions)),
			"recalls":    fmt.Sprint(len(doc.Recalls)),
		}
	}
	s.audit.Audit(ctx, e)
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
