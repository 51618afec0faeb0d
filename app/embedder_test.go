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
	tests := []struct {
		name      string
		cfg       Config
		wantModel string
		wantDim   int
		wantErr   string
	}{
		{name: "builtin", cfg: Defaults(), wantModel: embedding.BuiltinModel, wantDim: 256},
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
