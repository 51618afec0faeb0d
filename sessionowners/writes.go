package sessionowners

import (
	"context"

	"mneme/memory"
)

// claimAll claims, in the order of the batch, the session id of each memory
// that names one for its user and author; the first refusal ends the write
// before anything is written.
func (g *Guard) claimAll(ctx context.Context, ms []memory.Memory) error {
	type use struct {
		tenant, id string
		w          Owner
	}
	seen := map[use]bool{}
	for _, m := range ms {
		u := use{m.Tenant, m.SessionID, Owner{UserID: m.UserID, AgentID: m.AgentID}}
		if m.SessionID == "" || seen[u] {
			continue
		}
		seen[u] = true
		if err := g.Claim(ctx, u.tenant, u.id, u.w); err != nil {
			return err
		}
	}
	return nil
}

// Writes wraps the graph's deduplicated write (every write of a memory
// service: single, batch, ingested, queued, a session's close), refusing
// one that names a session id of another user or agent.
func (g *Guard) Writes(next memory.DedupStore) memory.DedupStore { return writes{next, g} }

type writes struct {
	next memory.DedupStore
	g    *Guard
}

func (w writes) WriteDeduped(ctx context.Context, in memory.DedupWrite) ([]memory.Written, error) {
	if err := w.g.claimAll(ctx, in.Memories); err != nil {
		return nil, err
	}
	return w.next.WriteDeduped(ctx, in)
}

// Store wraps the graph store's plain creation (imports) the same way.
func (g *Guard) Store(next memory.Store) memory.Store { return store{next, g} }

type store struct {
	memory.Store
	g *Guard
}

func (s store) CreateMemories(ctx context.Context, ms []memory.Memory) ([]memory.Memory, error) {
	if err := s.g.claimAll(ctx, ms); err != nil {
		return nil, err
	}
	return s.Store.CreateMemories(ctx, ms)
}
