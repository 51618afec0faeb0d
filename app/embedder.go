package app

import (
	"context"
	"fmt"

	"mneme/embedding"
	"mneme/memory"
)

// NewEmbedder builds the configured embedder. An HTTP embedder is asked to
// embed one short text first, so that a wrong URL, key, model or dimension
// stops start-up with the endpoint's own answer instead of failing the first
// write.
func NewEmbedder(ctx context.Context, cfg Config) (memory.Embedder, error) {
	if cfg.Embedding.Kind != EmbedderHTTP {
		return embedding.NewBuiltin(cfg.Embedding.Dim), nil
	}
	retries := cfg.Embedding.Retries
	if retries == 0 {
		retries = -1 // embedding.HTTPConfig reads 0 as "the default"
	}
	h, err := embedding.NewHTTP(embedding.HTTPConfig{
		BaseURL: cfg.Embedding.URL, Model: cfg.Embedding.Model, APIKey: cfg.Embedding.APIKey, Dimension: cfg.Embedding.Dim,
		BatchSize: cfg.Embedding.Batch, Timeout: cfg.Embedding.Timeout, Retries: retries,
	})
	if err != nil {
		return nil, err
	}
	if _, err := h.Embed(ctx, []string{"dimension check"}); err != nil {
		return nil, fmt.Errorf("embedder %s at %s: %w", cfg.Embedding.Model, cfg.Embedding.URL, err)
	}
	return h, nil
}
