// Package identity says who a caller is and manages who may call: tenants,
// their principals (agents, users, analysts, admins) and API keys. Keys are
// stored as keyed hashes (Hasher) and resolved through an in-process cache
// that a per-tenant epoch in Redis invalidates on every replica (cache.go).
package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"mneme/memory"
)

// Options configures a Service. Store, Epochs and Hasher are required.
type Options struct {
	Store  Store
	Epochs Epochs
	Hasher Hasher
	// Authz decides the admin calls; without it they are all forbidden.
	Authz Authorizer
	// Audit records every administrative act.
	Audit  memory.Auditor
	Logger *slog.Logger
	Now    func() time.Time
	// NoCache looks every key up in the store; for measuring the cache.
	NoCache bool
	// Names, when set, is told of a user whose name changed: recall's
	// cache of users' names on this replica.
	Names NameCache
	// Grants, when set, revokes the sharing grants of an agent deleted.
	Grants GrantRevoker
}

// GrantRevoker deletes the sharing grants that name an agent, as grantee or
// source; p is the admin deleting it.
type GrantRevoker interface {
	RevokeGrantsOf(ctx context.Context, p memory.Principal, agent string) (int, error)
}

// NameCache forgets a user's name, which it reads again when next asked.
type NameCache interface {
	Forget(tenant, userID string)
}

// Service authenticates callers and administers tenants, principals and
// keys.
type Service struct {
	store   Store
	epochs  Epochs
	hash    Hasher
	authz   Authorizer
	audit   memory.Auditor
	log     *slog.Logger
	now     func() time.Time
	cache   *keyCache
	touches *toucher
	names   NameCache
	grants  GrantRevoker
}

// New returns a Service, or an error naming each required part opts lacks.
func New(opts Options) (*Service, error) {
	var missing []error
	if opts.Store == nil {
		missing = append(missing, errors.New("identity: Store is required"))
	}
	if opts.Epochs == nil {
		missing = append(missing, errors.New("identity: Epochs is required"))
	}
	if opts.Hasher.secret == nil {
		missing = append(missing, fmt.Errorf("identity: Hasher is required: %w", ErrKeySecret))
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	s := &Service{
		store: opts.Store, epochs: opts.Epochs, hash: opts.Hasher, authz: opts.Authz, audit: opts.Audit,
		log: opts.Logger, now: opts.Now, touches: newToucher(), names: opts.Names, grants: opts.Grants,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.audit == nil {
		s.audit = discardAudit{}
	}
	if !opts.NoCache {
		s.cache = newKeyCache(defaultCacheSize, defaultCacheMaxAge)
	}
	return s, nil
}

type discardAudit struct{}

func (discardAudit) Audit(context.Context, memory.AuditEvent) {}

// Authenticate resolves an API key to its principal. A malformed, unknown,
// revoked or expired key is memory.ErrUnauthenticated; a store that cannot
// answer is memory.ErrUnavailable, so that an outage never reads as a bad
// key. It costs one Redis GET (the tenant's key epoch) and, when the cache
// holds the key at that epoch, nothing else.
func (s *Service) Authenticate(ctx context.Context, key string) (memory.Principal, error) {
	tenant, err := ParseAPIKey(key)
	if err != nil {
		return memory.Principal{}, err
	}
	epoch, err := s.epochs.Epoch(ctx, tenant)
	if err != nil {
		return memory.Principal{}, fmt.Errorf("%w: key epoch of %s: %v", memory.ErrUnavailable, tenant, err)
	}
	hash := s.hash.Hash(key)
	now := s.now()
	e, ok := s.cache.get(hash, epoch, now)
	if !ok {
		cred, err := s.store.KeyByHash(ctx, tenant, hash)
		switch {
		case errors.Is(err, memory.ErrNotFound):
			e = cacheEntry{epoch: epoch, loaded: now}
		case err != nil:
			return memory.Principal{}, err
		default:
			e = cacheEntry{cred: cred, found: true, epoch: epoch, loaded: now}
		}
		// Unknown keys are cached too, so that a stream of bad keys does not
		// reach Neo4j; creating a key bumps the epoch, which ends them.
		s.cache.put(hash, e)
	}
	if !e.found || !e.cred.Key.worksAt(now) {
		return memory.Principal{}, memory.ErrUnauthenticated
	}
	s.touches.used(tenant, e.cred.Key, now)
	return e.cred.Principal, nil
}

// changed tells every replica that tenant's keys changed. The change is
// stored already; a failure here leaves other replicas on their cached
// entries until those age out (defaultCacheMaxAge), so it is reported.
func (s *Service) changed(ctx context.Context, tenant string) error {
	if err := s.epochs.Bump(ctx, tenant); err != nil {
		return fmt.Errorf("%w: announce key change of %s: %v", memory.ErrUnavailable, tenant, err)
	}
	return nil
}

// Place names the API keys in an erase receipt.
func (s *Service) Place() string { return "api_keys" }

// EraseUser makes identity a memory.Eraser: erasing a user removes their
// registration and keys, on every replica before its next request.
func (s *Service) EraseUser(ctx context.Context, tenant, userID string) (int64, error) {
	n, err := s.store.DeleteUser(ctx, tenant, userID)
	if err != nil {
		return 0, err
	}
	return n, s.changed(ctx, tenant)
}

var _ memory.Eraser = (*Service)(nil)
