package app

import (
	"context"
	"errors"
	"time"

	"mneme/memory"
	"mneme/seed"
)

// LoadDemo loads the demo dataset; running it twice changes nothing.
func (a *App) LoadDemo(ctx context.Context) (seed.Report, error) {
	ds, err := seed.Demo()
	if err != nil {
		return seed.Report{}, err
	}
	return seed.Load(ctx, ds, seedSink{a})
}

// seedAttempts bounds retries of one seed write. A fresh Neo4j plans each
// new query shape once, and on a busy machine the first write can outlast a
// store call's deadline; the plan stays cached, so trying again succeeds.
// Seeding is idempotent by key, so a retried write never doubles a memory.
const seedAttempts = 3

func retrySeed(ctx context.Context, write func() error) error {
	var err error
	for range seedAttempts {
		if err = write(); !errors.Is(err, memory.ErrUnavailable) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
	return err
}

// seedSink writes the dataset straight to the stores: seeding is how the
// first admin key comes to exist, so it cannot go through the API.
type seedSink struct{ a *App }

// PutAPIKey stores a demo key under the keyed hash of this deployment's
// secret, on every seed: keys stored under another secret (or the plain
// hash of old) are replaced.
func (s seedSink) PutAPIKey(ctx context.Context, key string, p memory.Principal) error {
	return s.a.Identity.PutKey(ctx, key, p, p.Team)
}

func (s seedSink) EnsureAgent(ctx context.Context, tenant, id, team string) error {
	return s.a.Keys.EnsureAgent(ctx, tenant, id, team)
}

func (s seedSink) EnsureUser(ctx context.Context, tenant, id, name string) error {
	return s.a.Keys.EnsureUser(ctx, tenant, id, name)
}

func (s seedSink) PutGrant(ctx context.Context, g memory.Grant) error {
	return s.a.Admin.PutGrant(ctx, g)
}

func (s seedSink) WriteMemory(ctx context.Context, m memory.Memory) error {
	imp, conf := m.Importance, m.Confidence
	return retrySeed(ctx, func() error {
		_, err := s.a.Service.Import(ctx, memory.NewMemory{
			Tenant: m.Tenant, UserID: m.UserID, AgentID: m.AgentID, SessionID: m.SessionID, Type: m.Type,
			Kind: m.Kind, Key: m.Key, Content: m.Content, Sensitivity: m.Sensitivity,
			Importance: &imp, Confidence: &conf, Source: m.Source, Entities: m.Entities,
			IdempotencyKey: m.IdempotencyKey, Scope: &memory.ScopeRef{Kind: memory.ScopeOf(m), ID: m.ScopeID}, ValidTo: m.ValidTo,
		}, m.CreatedAt, m.Status)
		return err
	})
}
