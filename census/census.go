// Package census counts the memories a principal may read, by user, type
// and status: the figures of the panel's overview. The count runs under the
// read policy's scope, pushed down into the store's query, so it covers
// every memory of the principal's tenant the policy lets it read and never
// one it does not.
package census

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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

// Tally is a count and the time it was taken.
type Tally struct {
	Counts []Count
	At     time.Time
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
	// Reuse is how long a count is served again to the same scope; one
	// older than that is still served while a new count runs in the
	// background, and the next view gets the new one. Zero counts on every
	// call.
	Reuse time.Duration
	// Now defaults to time.Now.
	Now func() time.Time
}

// refreshTimeout bounds a count run in the background.
const refreshTimeout = time.Minute

// maxScopes bounds the counts kept; when full the cache starts afresh.
const maxScopes = 1024

// Service counts memories under policy.
type Service struct {
	store Store
	authz Scoper
	reuse time.Duration
	now   func() time.Time

	mu      sync.Mutex
	tallies map[string]*kept // by tenant and scope
	running sync.WaitGroup   // background counts
}

// kept is a count served again, and whether a new one is under way.
type kept struct {
	tenant     string
	tally      Tally
	refreshing bool
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
	s := &Service{store: opts.Store, authz: opts.Authz, reuse: opts.Reuse, now: opts.Now, tallies: map[string]*kept{}}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Count returns the memories of p's tenant that p may read, counted by
// user, type and status, in no particular order, with the time they were
// counted: up to Reuse ago, or older while a new count runs. A principal who
// may read nothing gets nothing, without a query.
func (s *Service) Count(ctx context.Context, p memory.Principal) (Tally, error) {
	now := s.now().UTC()
	scope, err := s.authz.ReadScope(ctx, p, "", now)
	if err != nil {
		return Tally{}, fmt.Errorf("census: read scope: %w", err)
	}
	if scope.Empty() || scope.Tenant != p.Tenant {
		return Tally{At: now}, nil
	}
	if s.reuse <= 0 {
		counts, err := s.store.CountMemories(ctx, scope)
		return Tally{Counts: counts, At: now}, err
	}
	// The scope is what the policy lets p read now: a policy or grant
	// change gives another key, so it is never served an old count.
	b, err := json.Marshal(scope)
	if err != nil {
		return Tally{}, fmt.Errorf("census: scope key: %w", err)
	}
	key := string(b)
	s.mu.Lock()
	if k := s.tallies[key]; k != nil {
		if now.Sub(k.tally.At) >= s.reuse && !k.refreshing {
			k.refreshing = true
			s.running.Add(1)
			go s.refresh(context.WithoutCancel(ctx), key, scope)
		}
		t := k.tally
		s.mu.Unlock()
		return t, nil
	}
	s.mu.Unlock()
	counts, err := s.store.CountMemories(ctx, scope)
	if err != nil {
		return Tally{}, err
	}
	t := Tally{Counts: counts, At: now}
	s.keep(key, scope.Tenant, t)
	return t, nil
}

// refresh counts scope again for key, off the request that found its count
// old. A failed count leaves the old one to be tried again by a later view.
func (s *Service) refresh(ctx context.Context, key string, scope memory.Scope) {
	defer s.running.Done()
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	at := s.now().UTC()
	counts, err := s.store.CountMemories(ctx, scope)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.tallies[key]
	if k == nil { // forgotten meanwhile: the next view counts afresh
		return
	}
	k.refreshing = false
	if err == nil && at.After(k.tally.At) {
		k.tally = Tally{Counts: counts, At: at}
	}
}

func (s *Service) keep(key, tenant string, t Tally) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tallies) >= maxScopes {
		s.tallies = map[string]*kept{}
	}
	s.tallies[key] = &kept{tenant: tenant, tally: t}
}

// Forget drops the counts kept for tenant, so that the next view counts
// again: for a change made here (a delete in the panel) that the viewer
// expects to see at once.
func (s *Service) Forget(tenant string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, k := range s.tallies {
		if k.tenant == tenant {
			delete(s.tallies, key)
		}
	}
}

// Wait waits for the counts running in the background.
func (s *Service) Wait() { s.running.Wait() }
