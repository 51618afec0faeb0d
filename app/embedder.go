package app

import (
	"context"
	"errors"
	"fmt"

	"mneme/calibration"
	"mneme/embedding"
	"mneme/memory"
)

// CalibrateCommand is how an operator calibrates a model; start-up errors
// name it.
const CalibrateCommand = "memoryd calibrate"

// NewEmbedder builds the configured embedder. An HTTP embedder is asked to
// embed one short text first, so that a wrong URL, key, model or dimension
// stops start-up with the endpoint's own answer instead of failing the first
// write.
func NewEmbedder(ctx context.Context, cfg Config) (memory.Embedder, error) {
	switch cfg.Embedding.Kind {
	case EmbedderBuiltin:
		return embedding.NewBuiltin(cfg.Embedding.Dim), nil
	case EmbedderUSE:
		u, err := embedding.LoadUSE(cfg.Embedding.ModelDir)
		if err != nil {
			return nil, fmt.Errorf("embedder %s: %w; or start with -embedder builtin (MNEME_EMBEDDER=builtin), the lexical fallback", EmbedderUSE, err)
		}
		return u, nil
	}
	retries := cfg.Embedding.Retries
	if retries == 0 {
		retries = -1 // embedding.HTTPConfig reads 0 as "the default"
	}
	h, err := embedding.NewHTTP(embedding.HTTPConfig{
		BaseURL: cfg.Embedding.URL, Model: cfg.Embedding.Model, APIKey: cfg.Embedding.APIKey, Dimension: cfg.Embedding.Dim,
		BatchSize: cfg.Embedding.Batch, Timeout: cfg.Embedding.Timeout, Retries: retries,
		QueryPrefix: cfg.Embedding.QueryPrefix, PassagePrefix: cfg.Embedding.PassagePrefix,
	})
	if err != nil {
		return nil, err
	}
	if _, err := h.Embed(ctx, []string{"dimension check"}); err != nil {
		return nil, fmt.Errorf("embedder %s at %s: %w", cfg.Embedding.Model, cfg.Embedding.URL, err)
	}
	return h, nil
}

// Calibration returns the calibration of e's model: its relevance floor,
// dedup threshold and fusion weights. A model without one is refused, with
// the command that makes one.
func Calibration(cfg Config, e memory.Embedder) (calibration.Calibration, error) {
	c, err := calibration.Lookup(e.Model(), e.Dimension(), cfg.Embedding.Calibrations)
	if errors.Is(err, calibration.ErrMissing) {
		return c, fmt.Errorf("%w: its relevance floor and dedup threshold are unknown; run `%s` with the same embedder settings "+
			"(it writes the calibration into -calibrations, MNEME_CALIBRATIONS), then start again with that directory", err, CalibrateCommand)
	}
	return c, err
}

// Tuned applies a calibration to recall's and writes' settings, settings
// given explicitly (-vector-floor, -dedup-threshold) winning.
func (c Config) Tuned(cal calibration.Calibration, rc memory.RecallConfig) (memory.RecallConfig, memory.WriteConfig) {
	rc.VectorFloor = cal.VectorFloor
	if c.Recall.VectorFloor > 0 {
		rc.VectorFloor = c.Recall.VectorFloor
	}
	rc.ExpansionFloor = min(cal.ExpansionFloor, rc.VectorFloor)
	rc = TuneGate(cal, rc)
	if rc.StrongFloor != 0 {
		// An explicit floor above the calibrated one is not undercut.
		rc.StrongFloor = max(rc.StrongFloor, rc.VectorFloor)
	}
	w := memory.WriteConfig{DuplicateThreshold: cal.DuplicateThreshold}
	if c.Embedding.DuplicateThreshold > 0 {
		w.DuplicateThreshold = c.Embedding.DuplicateThreshold
	}
	return rc, w
}

// TuneGate applies a calibration's gate rule and fusion weights to recall's
// settings; the ones the calibration leaves at zero keep recall's defaults.
func TuneGate(cal calibration.Calibration, rc memory.RecallConfig) memory.RecallConfig {
	rc.VectorWeight, rc.FullTextWeight = cal.Fusion.Vector, cal.Fusion.FullText
	rc.GraphWeight, rc.SessionWeight = cal.Fusion.Graph, cal.Fusion.Session
	rc.IntentWeight = cal.Fusion.Intent
	rc.StrongFloor, rc.UnseenMax = cal.Gate.StrongFloor, cal.Gate.UnseenMax
	rc.SubjectFloor = cal.Gate.SubjectFloor
	rc.LeadFloor, rc.LeadMargin = cal.Gate.LeadFloor, cal.Gate.LeadMargin
	return rc
}
