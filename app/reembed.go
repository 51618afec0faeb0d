package app

import (
	"context"
	"fmt"
	"log/slog"

	"mneme/graph"
	"mneme/graph/upkeep"
	"mneme/memory"
	"mneme/reembed"
)

// ReembedCommand is how an operator renews every vector; start-up errors
// name it.
const ReembedCommand = "memoryd reembed"

// checkVectorIndex refuses an embedder whose vectors do not fit the existing
// vector index: every stored vector would be unsearchable, and new ones
// would be left out of the index.
func checkVectorIndex(ctx context.Context, store *graph.Store, e memory.Embedder) error {
	got, err := store.VectorIndexDimension(ctx)
	if err != nil {
		return err
	}
	if got != 0 && got != e.Dimension() {
		return fmt.Errorf("%w: the vector index holds vectors of dimension %d, but embedder %s makes vectors of dimension %d; "+
			"run `%s` with the same embedder settings to rebuild the index at dimension %d and re-embed every memory, "+
			"or configure an embedder of dimension %d",
			graph.ErrSchemaMismatch, got, e.Model(), e.Dimension(), ReembedCommand, e.Dimension(), got)
	}
	return nil
}

// ReembedResult is what a re-embedding did, index included.
type ReembedResult struct {
	reembed.Report
	// IndexFrom is the vector index's dimension before (0: there was none);
	// IndexRebuilt says whether it was dropped and built again.
	IndexFrom    int  `json:"index_from"`
	IndexRebuilt bool `json:"index_rebuilt"`
}

// Reembed makes every memory's vector with the configured embedder: it
// rebuilds the vector index when its dimension differs, then renews, batch by
// batch, the vectors another model made. Memories already on the model are
// skipped, so an interrupted run is finished by running it again. Stop
// memoryd first: a server still on the old model writes vectors that this
// run would have to renew again.
func Reembed(ctx context.Context, cfg Config, log *slog.Logger) (ReembedResult, error) {
	var res ReembedResult
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	startCtx, cancel := context.WithTimeout(ctx, cfg.Server.StartTimeout)
	defer cancel()
	store, err := openGraph(startCtx, cfg, log)
	if err != nil {
		return res, err
	}
	defer store.Close(context.WithoutCancel(ctx))
	e, err := NewEmbedder(startCtx, cfg)
	if err != nil {
		return res, err
	}
	if res.IndexFrom, err = store.VectorIndexDimension(startCtx); err != nil {
		return res, err
	}
	if res.IndexFrom != 0 && res.IndexFrom != e.Dimension() {
		log.InfoContext(ctx, "rebuilding the vector index", "from", res.IndexFrom, "to", e.Dimension())
		if err := store.RecreateVectorIndex(ctx, e.Dimension()); err != nil {
			return res, err
		}
		res.IndexRebuilt = true
	}
	if err := store.EnsureSchema(ctx, e.Dimension()); err != nil {
		return res, fmt.Errorf("neo4j schema: %w", err)
	}
	res.Report, err = reembed.Run(ctx, upkeep.New(store.Runner()), e, cfg.Embedding.Batch, func(r reembed.Report) {
		log.InfoContext(ctx, "reembed progress", "tenants_done", r.Tenants, "reembedded", r.Reembedded)
	})
	return res, err
}
