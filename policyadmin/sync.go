package policyadmin

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"mneme/memory"
)

// tenantLocks serialises the reloads of one tenant.
type tenantLocks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (l *tenantLocks) lock(tenant string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*sync.Mutex{}
	}
	m := l.locks[tenant]
	if m == nil {
		m = &sync.Mutex{}
		l.locks[tenant] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// Sync makes sure this replica decides for tenant with its current policy
// and grants: one look at the announced revisions, and a reload from the
// store when this replica is behind. It is called once per request before
// anything is decided; an error means the replica cannot know what the
// tenant's policy is, and the request must be denied.
func (s *Service) Sync(ctx context.Context, tenant string) error {
	cur, announced, err := s.bus.Current(ctx, tenant)
	if err != nil {
		return fmt.Errorf("%w: policy revisions: %w", memory.ErrUnavailable, err)
	}
	loaded, ok := s.engine.Loaded(tenant)
	if ok && announced && !cur.Behind(loaded) {
		return nil
	}
	if err := s.reload(ctx, tenant, !announced); err != nil {
		return fmt.Errorf("%w: %w", memory.ErrUnavailable, err)
	}
	return nil
}

// reload loads the tenant's active policy and grants from the store when
// they are newer than what the engine has, and announces them when asked.
func (s *Service) reload(ctx context.Context, tenant string, announce bool) error {
	defer s.syncLocks.lock(tenant)()
	// State first, then what it names: the data read is at least as new as
	// the counters recorded, so a change racing this reload is reloaded again
	// on the next check rather than missed.
	st, err := s.policies.PolicyState(ctx, tenant)
	if err != nil {
		return fmt.Errorf("policy state: %w", err)
	}
	loaded, ok := s.engine.Loaded(tenant)
	if !ok || st.Epoch > loaded.PolicyEpoch {
		rev, err := s.revision(ctx, tenant, st.Active)
		if err != nil {
			return fmt.Errorf("policy revision %d: %w", st.Active, err)
		}
		if err := s.engine.UsePolicy(ctx, tenant, st.Active, st.Epoch, rev.Modules); err != nil {
			return err
		}
	}
	if !ok || st.GrantRevision > loaded.Grants {
		// Settings first: grants mark the revision loaded, so a failure
		// here is retried on the next request.
		if err := s.engine.UseSettings(ctx, tenant, st.GrantRevision, st.Settings); err != nil {
			return err
		}
		grants, err := s.grants.ListGrants(ctx, tenant)
		if err != nil {
			return fmt.Errorf("grants: %w", err)
		}
		if err := s.engine.UseGrants(ctx, tenant, st.GrantRevision, grants); err != nil {
			return err
		}
	}
	if announce {
		return s.bus.Announce(ctx, tenant, Revisions{Policy: st.Active, PolicyEpoch: st.Epoch, Grants: st.GrantRevision})
	}
	return nil
}

// changed loads the tenant's new state on this replica and announces it to
// the others, before the change is reported done.
func (s *Service) changed(ctx context.Context, tenant string) error {
	if err := s.reload(ctx, tenant, true); err != nil {
		return fmt.Errorf("%w: the change is stored but not yet in force everywhere: %w", memory.ErrUnavailable, err)
	}
	return nil
}

// WarmUp runs the reads of a tenant's first Sync (its policy state and
// grants) in tenants that hold nothing, so that the first request after a
// start does not pay for Neo4j planning them. It loads, announces and
// stores nothing; a failed warm-up costs the first callers time, never an
// answer.
func (s *Service) WarmUp(ctx context.Context) error {
	var errs []error
	for _, tenant := range memory.WarmTenants {
		if _, err := s.policies.PolicyState(ctx, tenant); err != nil {
			errs = append(errs, fmt.Errorf("warm-up policy state: %w", err))
		}
		if _, err := s.grants.ListGrants(ctx, tenant); err != nil {
			errs = append(errs, fmt.Errorf("warm-up grants: %w", err))
		}
	}
	return errors.Join(errs...)
}
