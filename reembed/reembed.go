// Package reembed renews stored vectors after a change of embedding model:
// every memory of every tenant whose vector another model (or size) made is
// embedded again, batch by batch, resumably. It is an operator's job
// (`memoryd reembed`), not a principal's.
package reembed

import (
	"context"
	"fmt"

	"mneme/memory"
)

// Store is what re-embedding needs from the system of record. It
// spans every tenant: re-embedding is an operator's job, not a principal's.
type Store interface {
	// EmbeddingTenants returns every tenant that holds memories.
	EmbeddingTenants(ctx context.Context) ([]string, error)
	// CountMemories returns how many memories, of any status, a tenant holds.
	CountMemories(ctx context.Context, tenant string) (int, error)
	// StaleEmbeddings returns up to limit memories of the tenant with an id
	// greater than after, by id, whose vector was not made by model at dim.
	StaleEmbeddings(ctx context.Context, tenant, after, model string, dim, limit int) ([]Text, error)
	// SetEmbeddings stores vectors made by model on memories of the tenant
	// and returns how many memories it updated.
	SetEmbeddings(ctx context.Context, tenant, model string, vecs []Vector) (int, error)
}

// Text is a memory's id and the text its vector is made from.
type Text struct {
	ID      string
	Content string
}

// Vector is a memory's new vector.
type Vector struct {
	ID        string
	Embedding []float32
}

// Report counts what Run did.
type Report struct {
	Model      string `json:"model"`
	Dimension  int    `json:"dimension"`
	Tenants    int    `json:"tenants"`
	Memories   int    `json:"memories"`   // every memory, any status
	Reembedded int    `json:"reembedded"` // vectors renewed by this run
	Skipped    int    `json:"skipped"`    // already made by this model and size
}

// DefaultBatch is how many memories Run embeds at a time when the
// caller does not say.
const DefaultBatch = 64

// Run renews the vector of every memory of every tenant, of any status
// (as_of questions read superseded versions too), whose vector was not made
// by e's model at e's dimension, batch memories at a time. A memory already
// on the model is skipped, so a run that stopped half-way is finished by
// running it again, and a second run changes nothing. progress, if not nil,
// sees the report after each batch.
func Run(ctx context.Context, store Store, e memory.Embedder, batch int, progress func(Report)) (Report, error) {
	rep := Report{Model: e.Model(), Dimension: e.Dimension()}
	if batch <= 0 {
		batch = DefaultBatch
	}
	tenants, err := store.EmbeddingTenants(ctx)
	if err != nil {
		return rep, fmt.Errorf("reembed: listing tenants: %w", err)
	}
	for _, tenant := range tenants {
		total, err := store.CountMemories(ctx, tenant)
		if err != nil {
			return rep, fmt.Errorf("reembed: tenant %s: %w", tenant, err)
		}
		done, err := reembedTenant(ctx, store, e, tenant, batch, func(n int) {
			rep.Reembedded += n
			if progress != nil {
				progress(rep)
			}
		})
		if err != nil {
			return rep, fmt.Errorf("reembed: tenant %s: %w", tenant, err)
		}
		rep.Tenants++
		rep.Memories += total
		rep.Skipped += max(total-done, 0)
	}
	return rep, nil
}

// reembedTenant walks one tenant's stale memories by id and returns how many
// it renewed.
func reembedTenant(ctx context.Context, store Store, e memory.Embedder, tenant string, batch int, onBatch func(int)) (int, error) {
	done, after := 0, ""
	for {
		page, err := store.StaleEmbeddings(ctx, tenant, after, e.Model(), e.Dimension(), batch)
		if err != nil || len(page) == 0 {
			return done, err
		}
		texts := make([]string, len(page))
		for i, m := range page {
			texts[i] = m.Content
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			return done, fmt.Errorf("embed: %w", err)
		}
		if len(vecs) != len(page) {
			return done, fmt.Errorf("embed: %d vectors for %d texts", len(vecs), len(page))
		}
		update := make([]Vector, len(page))
		for i, m := range page {
			if len(vecs[i]) != e.Dimension() {
				return done, fmt.Errorf("embed: a vector of dimension %d from model %s of dimension %d", len(vecs[i]), e.Model(), e.Dimension())
			}
			update[i] = Vector{ID: m.ID, Embedding: vecs[i]}
		}
		// n may fall short of the page when a memory was deleted meanwhile;
		// that is not an error.
		n, err := store.SetEmbeddings(ctx, tenant, e.Model(), update)
		if err != nil {
			return done, err
		}
		done += n
		onBatch(n)
		after = page[len(page)-1].ID
	}
}
