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

// memoryWriter is what loading needs from the graph store.
type memoryWriter interface {
	CreateMemories(ctx context.Context, ms []memory.Memory) ([]memory.Memory, error)
}

// LoadReport is what loading the tenant took.
type LoadReport struct {
	Memories   int `json:"memories"`
	Users      int `json:"users"`
	Agents     int `json:"agents"`
	Batches    int `json:"batches"`
	Workers    int `json:"workers"`
	Superseded int `json:"superseded"` // keyed memories replaced by a later one of the same slot
	// Retries counts batches written again after the store gave up on them
	// as unavailable.
	Retries   int     `json:"retries"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"memories_per_second"`
	// EmbedSeconds is the CPU time spent embedding, summed over workers.
	EmbedSeconds float64 `json:"embed_seconds"`
	// Batch describes the CreateMemories calls alone.
	Batch Summary `json:"batch"`
}

// load embeds and writes byUser[i] for every user in batches of at most
// batch, with workers loaders. A user's memories all go through one loader,
// in order, so that supersession follows creation time; loaders never share
// a user, so they never wait on each other's user locks.
func load(ctx context.Context, w memoryWriter, emb memory.Embedder, byUser [][]memory.Memory, batch, workers int, progress io.Writer) (LoadReport, error) {
	var total int
	for _, ms := range byUser {
		total += len(ms)
	}
	rep := LoadReport{Memories: total, Users: len(byUser), Workers: workers, Superseded: superseded(byUser)}

	var (
		mu        sync.Mutex
		latencies []time.Duration
		embedNs   atomic.Int64
		done      atomic.Int64
		reported  atomic.Int64
		retries   atomic.Int64
	)
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for wi := range workers {
		g.Go(func() error {
			var mine []memory.Memory
			for u := wi; u < len(byUser); u += workers {
				mine = append(mine, byUser[u]...)
			}
			for lo := 0; lo < len(mine); lo += batch {
				chunk := mine[lo:min(lo+batch, len(mine))]
				t0 := time.Now()
				if err := embedInto(gctx, emb, chunk); err != nil {
					return err
				}
				t1 := time.Now()
				if err := createWithRetry(gctx, w, chunk, &retries); err != nil {
					return err
				}
				d := time.Since(t1)
				embedNs.Add(int64(t1.Sub(t0)))
				mu.Lock()
				latencies = append(latencies, d)
				mu.Unlock()
				// Report each tenth of the way once.
				n := done.Add(int64(len(chunk)))
				tenth := n * 10 / int64(total)
				for old := reported.Load(); tenth > old; old = reported.Load() {
					if reported.CompareAndSwap(old, tenth) {
						fmt.Fprintf(progress, "bench: loaded %d/%d memories (%.0f/s)\n", n, total, float64(n)/time.Since(start).Seconds())
						break
					}
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return LoadReport{}, err
	}
	rep.Seconds = time.Since(start).Seconds()
	rep.PerSecond = float64(total) / rep.Seconds
	rep.EmbedSeconds = time.Duration(embedNs.Load()).Seconds()
	rep.Retries = int(retries.Load())
	rep.Batches = len(latencies)
	rep.Batch = summarize(latencies)
	return rep, nil
}

// batchAttempts bounds how often one batch is tried after the store gave up
// on it as unavailable (a loaded server can time out). A batch commits all or
// nothing, so trying it again is safe.
const batchAttempts = 4

// createWithRetry writes one batch, trying again after ErrUnavailable. An
// attempt that timed out on the client may still have committed on the
// server; the batch's ids are fresh, so a conflict on a later attempt means
// exactly that, and the batch is written.
func createWithRetry(ctx context.Context, w memoryWriter, batch []memory.Memory, retries *atomic.Int64) error {
	for attempt := 1; ; attempt++ {
		_, err := w.CreateMemories(ctx, batch)
		if err == nil || (attempt > 1 && errors.Is(err, memory.ErrConflict)) {
			return nil
		}
		if !errors.Is(err, memory.ErrUnavailable) || attempt == batchAttempts {
			return fmt.Errorf("create memories (attempt %d): %w", attempt, err)
		}
		retries.Add(1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
		}
	}
}

// embedInto sets the embedding of each memory of ms.
func embedInto(ctx context.Context, emb memory.Embedder, ms []memory.Memory) error {
	texts := make([]string, len(ms))
	for i, m := range ms {
		texts[i] = m.Content
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	for i := range ms {
		ms[i].Embedding = vecs[i]
	}
	return nil
}

// superseded counts the keyed memories that a later memory of the same
// (user, key) slot replaces: every keyed memory but the last of its slot.
func superseded(byUser [][]memory.Memory) int {
	n := 0
	for _, ms := range byUser {
		seen := map[string]bool{}
		for _, m := range ms {
			if m.Key == "" {
				continue
			}
			if seen[m.Key] {
				n++
			}
			seen[m.Key] = true
		}
	}
	return n
}
