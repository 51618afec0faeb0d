// Package recalllog lets a tenant's admins read which recalls returned what
// about one user: the recall log that memory's recorder appends to.
package recalllog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"mneme/memory"
)

// Listing limits.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Options are what a Service needs; New names each one missing.
type Options struct {
	Log    memory.RecallLogReader
	Authz  memory.Decider
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service reads the recall log for admins.
type Service struct {
	log   memory.RecallLogReader
	authz memory.Decider
	slog  *slog.Logger
	now   func() time.Time
}

// New returns a Service, or an error naming each missing dependency.
func New(opts Options) (*Service, error) {
	var missing []error
	if opts.Log == nil {
		missing = append(missing, errors.New("recalllog: Log is required"))
	}
	if opts.Authz == nil {
		missing = append(missing, errors.New("recalllog: Authz is required"))
	}
	if opts.Logger == nil {
		missing = append(missing, errors.New("recalllog: Logger is required"))
	}
	if len(missing) > 0 {
		return nil, errors.Join(missing...)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Service{log: opts.Log, authz: opts.Authz, slog: opts.Logger, now: opts.Now}, nil
}

// RecallLog returns the latest recalls about one user of the admin's
// tenant, newest first. Only admins read it.
func (s *Service) RecallLog(ctx context.Context, p memory.Principal, userID string, limit int) ([]memory.RecallRecord, error) {
	if p.Kind != memory.KindAdmin {
		return nil, memory.ErrForbidden
	}
	if err := memory.RequireManage(ctx, s.authz, p, s.now().UTC(), s.slog); err != nil {
		return nil, err
	}
	switch {
	case !memory.ValidName(userID):
		return nil, memory.Invalid("user_id", "is missing or not a user id: 1–64 ASCII letters, digits or -_.:@, not dots alone")
	case limit < 0 || limit > MaxLimit:
		return nil, memory.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	out, err := s.log.RecentRecalls(ctx, p.Tenant, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("recall log: %w", err)
	}
	if out == nil {
		out = []memory.RecallRecord{}
	}
	return out, nil
}
