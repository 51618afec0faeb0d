// Package workingmemory serves the open conversations of Mneme's agents:
// appending turns to a session, reading it, and closing it, which turns its
// turns into long-term memories through the extractor and the memory
// service. The sessions themselves live in a memory.SessionStore (package
// session keeps them in Redis); recall shows an open session's last turns
// through the memory service.
package workingmemory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"mneme/memory"
)

// Creator writes new memories as a principal; memory.Service implements it.
type Creator interface {
	Create(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.Memory, error)
}

// Options configures a Service. Everything but Logger and Now is required.
type Options struct {
	// Memories writes what a closed session leaves.
	Memories Creator
	// Sessions keeps the open sessions.
	Sessions memory.SessionStore
	// Authz decides who may write and read a session, as it decides for
	// the episodic memory that will record it.
	Authz memory.Authorizer
	// Extract finds what is worth remembering in a session's turns.
	Extract memory.Extractor
	Logger  *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Service serves working memory. It is safe for concurrent use.
type Service struct {
	memories Creator
	sessions memory.SessionStore
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
	}{{"Memories", o.Memories != nil}, {"Sessions", o.Sessions != nil}, {"Authz", o.Authz != nil}, {"Extract", o.Extract != nil}} {
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
	return &Service{memories: o.Memories, sessions: o.Sessions, authz: o.Authz, extract: o.Extract, log: o.Logger, now: o.Now}, nil
}

// require asks policy; an evaluation error denies.
func (s *Service) require(ctx context.Context, p memory.Principal, action string, r memory.Resource, now time.Time) error {
	d, err := s.authz.Decide(ctx, p, action, r, now)
	if err != nil {
		s.log.WarnContext(ctx, "policy error; denying", "action", action, "err", err)
		return memory.ErrForbidden
	}
	if !d.Allow {
		return memory.ErrForbidden
	}
	return nil
}
