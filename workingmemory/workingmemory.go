// Package workingmemory serves the conversations of Mneme's agents: their
// open sessions — appending turns, reading them, and closing them — and the
// memories extracted from conversation turns, whether from a closing
// session or an ingestion, now or through the job queue. The sessions
// themselves live in a memory.SessionStore (package session keeps them in
// Redis); what is extracted is written through the memory service, so
// policy and every write rule apply as to any other write.
package workingmemory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"mneme/memory"
)

// Memories writes what conversations leave; memory.Service implements it.
type Memories interface {
	// Write writes new memories as a principal and says what became of each.
	Write(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error)
	// AuthorizeWrites decides, as of a queued ingestion's acceptance,
	// whether its principal may write what was extracted.
	AuthorizeWrites(ctx context.Context, p memory.Principal, in []memory.NewMemory, at time.Time) error
	// ApplyMemoryJobs writes queued memories.
	ApplyMemoryJobs(ctx context.Context, jobs []memory.Job) ([]memory.JobResult, error)
}

// Options configures a Service. Everything but Quota, Logger and Now is
// required.
type Options struct {
	// Memories writes what a closed session or an ingestion leaves.
	Memories Memories
	// Sessions keeps the open sessions.
	Sessions memory.SessionStore
	// Authz decides who may write and read a session, as it decides for
	// the episodic memory that will record it.
	Authz memory.Authorizer
	// Extract finds what is worth remembering in a session's turns.
	Extract memory.Extractor
	// Queue keeps queued ingestions until a worker applies them.
	Queue memory.JobQueue
	// Quota, when set, admits a queued ingestion as the memory service
	// admits a write.
	Quota memory.Quota
	// Users, when set, refuses turns and ingestions about a user id that
	// differs only by case from a user the tenant knows, before they reach
	// the graph (whose write refuses them too, later).
	Users UserIDs
	// Owners, when set, refuses to open or ingest into a session id whose
	// memories are another user's or another agent's (a closed session's
	// id); the open sessions refuse it themselves.
	Owners SessionOwners
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Service serves working memory. It is safe for concurrent use.
type Service struct {
	memories Memories
	sessions memory.SessionStore
	queue    memory.JobQueue
	quota    memory.Quota
	users    UserIDs
	owners   SessionOwners
	authz    memory.Authorizer
	extract  memory.Extractor
	log      *slog.Logger
	now      func() time.Time
}

// New returns a Service, or an error naming each required option missing.
func New(o Options) (*Service, error) {
	var missing []error
	for _, r := range []struct {
		name string
		ok   bool
	}{{"Memories", o.Memories != nil}, {"Sessions", o.Sessions != nil}, {"Authz", o.Authz != nil}, {"Extract", o.Extract != nil}, {"Queue", o.Queue != nil}} {
		if !r.ok {
			missing = append(missing, fmt.Errorf("workingmemory: %s is required", r.name))
		}
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{memories: o.Memories, sessions: o.Sessions, queue: o.Queue, quota: o.Quota, users: o.Users, owners: o.Owners, authz: o.Authz, extract: o.Extract, log: o.Logger, now: o.Now}, nil
}

// UserIDs checks the user id a conversation is about; graph/keystore.Store
// implements it.
type UserIDs interface {
	// CheckUserID refuses (with a *userids.CaseConflictError) an id the
	// tenant does not know as a user that differs only by case from one it
	// knows.
	CheckUserID(ctx context.Context, tenant, id string) error
}

// SessionOwners says who a session id belongs to once it closed;
// sessionowners.Guard implements it.
type SessionOwners interface {
	// CheckSession refuses, with memory.ErrSessionTaken, a session id the
	// graph holds memories under about another user than userID, or
	// written by another author than agentID (unless it is the user's).
	CheckSession(ctx context.Context, tenant, id, userID, agentID string) error
}

// checkOwner asks Owners, when set.
func (s *Service) checkOwner(ctx context.Context, tenant, id, userID, agentID string) error {
	if s.owners == nil {
		return nil
	}
	return s.owners.CheckSession(ctx, tenant, id, userID, agentID)
}

// checkUserID asks Users, when set.
func (s *Service) checkUserID(ctx context.Context, tenant, id string) error {
	if s.users == nil {
		return nil
	}
	return s.users.CheckUserID(ctx, tenant, id)
}

// require asks policy (see memory.Require).
func (s *Service) require(ctx context.Context, p memory.Principal, action string, r memory.Resource, now time.Time) error {
	return memory.Require(ctx, s.authz, p, action, r, now, s.log)
}
