// Package census counts the memories a principal may read, by user, type
// and status: the figures of the panel's overview. The count runs under the
// read policy's scope, pushed down into the store's query, so it covers
// every memory of the principal's tenant the policy lets it read and never
// one it does not.
package census

import (
	"context"
	"errors"
	"fmt"
	"time"

	"mneme/memory"
)

// Count is how many memories of one user have one type and status.
type Count struct {
	UserID string
	Type   string
	Status string
	N      int64
}

// Store counts the memories of a scope's tenant that the scope admits.
type Store interface {
	CountMemories(ctx context.Context, scope memory.Scope) ([]Count, error)
}

// Scoper computes what a principal may read; policy.Engine is one.
type Scoper interface {
	ReadScope(ctx context.Context, p memory.Principal, userID string, now time.Time) (memory.Scope, error)
}

// Options configures a Service. Store and Authz are required.
type Options struct {
	Store Store
	Authz Scoper
	// Now defaults to time.Now.
	Now func() time.Time
}

// Service counts memories under policy.
type Service struct {
	store Store
	authz Scoper
	now   func() time.Time
}

// New returns a Service, or an error naming each required part opts lacks.
func New(opts Options) (*Service, error) {
	var missing []error
	if opts.Store == nil {
		missing = append(missing, errors.New("census: Store is required"))
	}
	if opts.Authz == nil {
		missing = append(missing, errors.New("census: Authz is required"))
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	s := &Service{store: opts.Store, authz: opts.Authz, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Count returns the memories of p's tenant that p may read, counted by
// user, type and status, in no particular order. A principal who may read
// nothing gets nothing, without a query.
func (s *Service) Count(ctx context.Context, p memory.Principal) ([]Count, error) {
	scope, err := s.authz.ReadScope(ctx, p, "", s.now().UTC())
	if err != nil {
		return nil, fmt.Errorf("census: read scope: %w", err)
	}
	if scope.Empty() || scope.Tenant != p.Tenant {
		return nil, nil
	}
	return s.store.CountMemories(ctx, scope)
}
