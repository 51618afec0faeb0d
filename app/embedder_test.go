package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mneme/embedding"
	"mneme/memory"
)

func TestNewEmbedder(t *testing.T) {
	// An endpoint whose model returns vectors of size 3.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"data":[`)
		for i := range req.Input {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `{"index":%d,"embedding":[0.6,0.8,0]}`, i)
		}
		fmt.Fprint(w, `]}`)
	}))
	defer srv.Close()

	httpCfg := func(dim int) Config {
		c := Defaults()
		c.Embedding.Kind, c.Embedding.URL, c.Embedding.Model, c.Embedding.Dim = EmbedderHTTP, srv.URL+"/v1", "three", dim
		return c
	}
	builtinCfg, missingCfg := Defaults(), Defaults()
	builtinCfg.Embedding.Kind, builtinCfg.Embedding.Dim = EmbedderBuiltin, BuiltinDim
	missingCfg.Embedding.ModelDir = t.TempDir()
	tests := []struct {
		name      string
		cfg       Config
		wantModel string
		wantDim   int
		wantErr   string
	}{
		{name: "default: the multilingual model", cfg: Defaults(), wantModel: embedding.USEModel, wantDim: 512},
		{name: "builtin", cfg: builtinCfg, wantModel: embedding.BuiltinModel, wantDim: 256},
		{name: "the model's weights missing", cfg: missingCfg, wantErr: "scripts/model.sh"},
		{name: "http of the right size", cfg: httpCfg(3), wantModel: "three", wantDim: 3},
		{name: "http of the wrong size", cfg: httpCfg(8), wantErr: "embedder three at " + srv.URL + "/v1: embed: bad embeddings response: model three returned a vector of dimension 3, configured dimension is 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := NewEmbedder(context.Background(), tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewEmbedder error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewEmbedder: %v", err)
			}
			if e.Model() != tt.wantModel || e.Dimension() != tt.wantDim {
				t.Errorf("embedder = %s/%d, want %s/%d", e.Model(), e.Dimension(), tt.wantModel, tt.wantDim)
			}
		})
	}
}

func TestCalibrationRefusesAnUncalibratedModel(t *testing.T) {
	cfg := Defaults()
	for _, e := range []memory.Embedder{embedding.NewBuiltin(256), &embedding.USE{}} {
		c, err := Calibration(cfg, e)
		if err != nil || c.Model != e.Model() || c.VectorFloor <= 0 {
			t.Errorf("%s: calibration %+v, %v; want the built-in one", e.Model(), c, err)
		}
	}
	_, err := Calibration(cfg, embedding.NewBuiltin(64))
	for _, want := range []string{embedding.BuiltinModel, "dimension 64", "memoryd calibrate", "-calibrations"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("an uncalibrated model = %v, want an error naming %q", err, want)
		}
	}
	// Calibrated numbers reach recall and writes; explicit settings win.
	c, _ := Calibration(cfg, embedding.NewBuiltin(256))
	rc, wc := cfg.Tuned(c, memory.RecallConfig{})
	if rc.VectorFloor != c.VectorFloor || wc.DuplicateThreshold != c.DuplicateThreshold || rc.GraphWeight != c.Fusion.Graph ||
		rc.StrongFloor != c.Gate.StrongFloor || rc.UnseenMax != c.Gate.UnseenMax || rc.IntentWeight != c.Fusion.Intent {
		t.Errorf("tuned %+v %+v from %+v", rc, wc, c)
	}
	cfg.Recall.VectorFloor, cfg.Embedding.DuplicateThreshold = 0.5, 0.9
	if rc, wc := cfg.Tuned(c, memory.RecallConfig{}); rc.VectorFloor != 0.5 || wc.DuplicateThreshold != 0.9 || rc.StrongFloor != 0 && rc.StrongFloor < 0.5 {
		t.Errorf("explicit settings lost: %v %v", rc.VectorFloor, wc.DuplicateThreshold)
	}
}
