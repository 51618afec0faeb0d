package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"mneme/memory"
)

// knowledgeWriter is the write path of POST /v1/memories: validation,
// policy, the guard, embedding, dedup and supersession by key.
type knowledgeWriter interface {
	Write(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error)
}

// Ways of writing shared knowledge (-shared-path).
const (
	// sharedViaService writes through memory.Service.Write, as POST
	// /v1/memories does.
	sharedViaService = "service"
	// sharedViaStore embeds and writes through graph.Store.CreateMemories,
	// as the user memories are loaded: the same batch write, without the
	// policy check, the guard and dedup of each memory.
	sharedViaStore = "store"
)

// storeWriter writes shared knowledge the way load writes user memories.
type storeWriter struct {
	store memoryWriter
	embed memory.Embedder
}

var _ knowledgeWriter = storeWriter{}

// Write stores in as p would have it stored by the service, every memory
// active and dated now; each is reported created.
func (w storeWriter) Write(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	ms := make([]memory.Memory, len(in))
	for i, n := range in {
		ms[i] = sharedOf(p.Tenant, n, now)
	}
	if err := embedInto(ctx, w.embed, ms); err != nil {
		return nil, err
	}
	if _, err := w.store.CreateMemories(ctx, ms); err != nil {
		return nil, err
	}
	out := make([]memory.WriteResult, len(ms))
	for i, m := range ms {
		out[i] = memory.WriteResult{Outcome: memory.OutcomeCreated, ID: m.ID, Status: m.Status}
	}
	return out, nil
}

// sharedOf is the memory the service builds of n in tenant: about no user,
// written by the agent whose knowledge it is, or by no agent.
func sharedOf(tenant string, n memory.NewMemory, now time.Time) memory.Memory {
	importance := 0.5
	if n.Importance != nil {
		importance = *n.Importance
	}
	var agent string
	if n.Scope.Kind == memory.ScopeAgent {
		agent = n.Scope.ID
	}
	return memory.Memory{
		ID: memory.NewID("mem"), Tenant: tenant, AgentID: agent, Type: n.Type, Kind: n.Kind, Key: n.Key,
		Content: n.Content, Status: memory.StatusActive, Sensitivity: n.Sensitivity, Importance: importance,
		Confidence: 1, Source: n.Source, Entities: n.Entities, ValidFrom: now, CreatedAt: now, UpdatedAt: now,
		Version: 1, IdempotencyKey: n.IdempotencyKey, Scope: n.Scope.Kind, ScopeID: n.Scope.ID,
	}
}

// SharedLoadReport is what writing the shared knowledge took.
type SharedLoadReport struct {
	// Path is how it was written: sharedViaService or sharedViaStore.
	Path     string `json:"path"`
	Memories int    `json:"memories"`
	// ByScope counts the memories sent per scope: tenant, team:<id>,
	// agent:<id>.
	ByScope map[string]int `json:"by_scope"`
	// Outcomes counts the write results: created, reinforced, skipped.
	Outcomes   map[string]int `json:"outcomes"`
	Superseded int            `json:"superseded"` // keyed memories a later one of their slot replaces
	Batches    int            `json:"batches"`
	Retries    int            `json:"retries"`
	Seconds    float64        `json:"seconds"`
	PerSecond  float64        `json:"memories_per_second"`
	Batch      Summary        `json:"batch"` // the Write calls
}

// sharedStream is the memories of one scope, in order, and who writes them.
type sharedStream struct {
	writer memory.Principal
	ms     []memory.NewMemory
}

// sharedStreams splits ms by scope, keeping their order within each scope
// so that supersession by key follows it; streams never share a key slot.
func sharedStreams(tenant string, ms []sharedMemory) []sharedStream {
	var out []sharedStream
	at := map[string]int{}
	for _, s := range ms {
		name := scopeName(*s.memory.Scope)
		i, ok := at[name]
		if !ok {
			i = len(out)
			at[name] = i
			out = append(out, sharedStream{writer: writerOf(tenant, s.writer)})
		}
		out[i].ms = append(out[i].ms, s.memory)
	}
	return out
}

// scopeName is how explain names a scope: tenant, team:<id>, agent:<id>.
func scopeName(r memory.ScopeRef) string {
	if r.ID == "" {
		return r.Kind
	}
	return r.Kind + ":" + r.ID
}

// writerOf is the principal that writes shared knowledge: the tenant's
// admin, or the agent itself for its own procedures.
func writerOf(tenant, agent string) memory.Principal {
	if agent == "" {
		return memory.Principal{Tenant: tenant, Kind: memory.KindAdmin, ID: "bench", Roles: []string{"admin"}}
	}
	return memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: agent, Roles: []string{"agent"}, Team: teamOf(agent)}
}

// teamOf is an agent's team: the recaller's is recallerTeam, the others'
// one of otherTeams.
func teamOf(agent string) string {
	if agent == recaller {
		return recallerTeam
	}
	sum := 0
	for _, c := range agent {
		sum += int(c)
	}
	return otherTeams[sum%len(otherTeams)]
}

// loadShared writes ms through w in batches of at most batch, one scope
// per loader and at most workers loaders at once.
func loadShared(ctx context.Context, w knowledgeWriter, tenant string, ms []sharedMemory, batch, workers int, progress io.Writer) (SharedLoadReport, error) {
	rep := SharedLoadReport{Memories: len(ms), ByScope: map[string]int{}, Outcomes: map[string]int{}, Superseded: sharedSuperseded(ms)}
	for _, s := range ms {
		rep.ByScope[scopeName(*s.memory.Scope)]++
	}
	batch = min(batch, memory.MaxBatch)
	var (
		mu        sync.Mutex
		latencies []time.Duration
		retries   atomic.Int64
	)
	start := time.Now()
	shown := &tenths{total: int64(len(ms)), start: start, w: progress}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for _, st := range sharedStreams(tenant, ms) {
		g.Go(func() error {
			for lo := 0; lo < len(st.ms); lo += batch {
				chunk := st.ms[lo:min(lo+batch, len(st.ms))]
				t0 := time.Now()
				results, err := writeWithRetry(gctx, w, st.writer, chunk, &retries)
				if err != nil {
					return err
				}
				d := time.Since(t0)
				mu.Lock()
				latencies = append(latencies, d)
				for _, r := range results {
					rep.Outcomes[r.Outcome]++
				}
				mu.Unlock()
				shown.add(len(chunk))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return SharedLoadReport{}, err
	}
	rep.Seconds = time.Since(start).Seconds()
	rep.PerSecond = ratio(float64(len(ms)), rep.Seconds)
	rep.Retries = int(retries.Load())
	rep.Batches = len(latencies)
	rep.Batch = summarize(latencies)
	return rep, nil
}

// writeWithRetry writes one batch, trying again after ErrUnavailable. Each
// memory carries an idempotency key, so a batch that committed although
// the client gave up on it answers the same when written again.
func writeWithRetry(ctx context.Context, w knowledgeWriter, p memory.Principal, batch []memory.NewMemory, retries *atomic.Int64) ([]memory.WriteResult, error) {
	for attempt := 1; ; attempt++ {
		results, err := w.Write(ctx, p, batch)
		if err == nil {
			return results, nil
		}
		if !errors.Is(err, memory.ErrUnavailable) || attempt == batchAttempts {
			return nil, fmt.Errorf("write shared knowledge as %s %s (attempt %d): %w", p.Kind, p.ID, attempt, err)
		}
		retries.Add(1)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
		}
	}
}

// tenths reports the progress of writing shared knowledge once at each
// tenth of the way.
type tenths struct {
	total          int64
	start          time.Time
	w              io.Writer
	done, reported atomic.Int64
}

func (t *tenths) add(n int) {
	d := t.done.Add(int64(n))
	tenth := d * 10 / t.total
	for old := t.reported.Load(); tenth > old; old = t.reported.Load() {
		if t.reported.CompareAndSwap(old, tenth) {
			fmt.Fprintf(t.w, "bench: wrote %d/%d shared memories (%.0f/s)\n", d, t.total, float64(d)/time.Since(t.start).Seconds())
			return
		}
	}
}
