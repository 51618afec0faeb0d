package app

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string // substring; empty means success
		check   func(t *testing.T, c Config)
	}{
		{name: "defaults", check: func(t *testing.T, c Config) {
			if c.Addr != "127.0.0.1:8080" || c.EmbedDim != 256 || c.Embedder != "builtin" {
				t.Errorf("defaults = %+v", c)
			}
		}},
		{name: "environment", env: map[string]string{
			"NEO4J_URI": "neo4j://db:7687", "REDIS_URL": "redis://cache:6380/1", "MNEME_EMBED_DIM": "128", "MNEME_SEED": "true",
		}, check: func(t *testing.T, c Config) {
			if c.Neo4jURI != "neo4j://db:7687" || c.RedisURL != "redis://cache:6380/1" || c.EmbedDim != 128 || !c.Seed {
				t.Errorf("config = %+v", c)
			}
		}},
		{name: "flag beats environment", args: []string{"-addr", "127.0.0.1:9999", "-policy-timeout", "20ms"},
			env: map[string]string{"MNEME_ADDR": "127.0.0.1:1"}, check: func(t *testing.T, c Config) {
				if c.Addr != "127.0.0.1:9999" || c.PolicyTimeout != 20*time.Millisecond {
					t.Errorf("config = %+v", c)
				}
			}},
		{name: "lifecycle defaults", check: func(t *testing.T, c Config) {
			l := c.Lifecycle
			if l.TTL["episodic"] != 365*24*time.Hour || l.TTL["semantic"] != 0 || l.ArchiveAfter != 90*24*time.Hour || l.Cap != 1000 || l.Every != time.Hour {
				t.Errorf("lifecycle = %+v", l)
			}
		}},
		{name: "lifecycle from environment and flags", args: []string{"-user-cap", "50", "-janitor-every", "0"},
			env: map[string]string{"MNEME_TTL": "semantic=30d, episodic=0", "MNEME_ARCHIVE_AFTER": "36h", "MNEME_USER_CAP": "7"},
			check: func(t *testing.T, c Config) {
				l := c.Lifecycle
				if l.TTL["semantic"] != 30*24*time.Hour || l.TTL["episodic"] != 0 || l.ArchiveAfter != 36*time.Hour || l.Cap != 50 || l.Every != 0 {
					t.Errorf("lifecycle = %+v", l)
				}
			}},
		{name: "bad ttl", env: map[string]string{"MNEME_TTL": "episodic:1d"}, wantErr: "MNEME_TTL"},
		{name: "ttl of no type", args: []string{"-ttl", "gossip=1d"}, wantErr: "not a memory type"},
		{name: "bad archive after", env: map[string]string{"MNEME_ARCHIVE_AFTER": "soon"}, wantErr: "MNEME_ARCHIVE_AFTER"},
		{name: "negative cap", args: []string{"-user-cap", "-1"}, wantErr: "cap"},
		{name: "http embedder from the environment", env: map[string]string{
			"MNEME_EMBEDDER": "http", "MNEME_EMBED_URL": "http://127.0.0.1:8000/v1", "MNEME_EMBED_MODEL": "all-MiniLM-L6-v2",
			"MNEME_EMBED_DIM": "384", "MNEME_EMBED_API_KEY": "sk-x", "MNEME_EMBED_BATCH": "16", "MNEME_EMBED_TIMEOUT": "5s",
			"MNEME_EMBED_RETRIES": "0",
		}, check: func(t *testing.T, c Config) {
			type embedder struct {
				kind, url, model, key string
				dim, batch, retries   int
				timeout               time.Duration
			}
			want := embedder{"http", "http://127.0.0.1:8000/v1", "all-MiniLM-L6-v2", "sk-x", 384, 16, 0, 5 * time.Second}
			got := embedder{c.Embedder, c.EmbedURL, c.EmbedModel, c.EmbedAPIKey, c.EmbedDim, c.EmbedBatch, c.EmbedRetries, c.EmbedTimeout}
			if got != want {
				t.Errorf("embedder config = %+v, want %+v", got, want)
			}
		}},
		{name: "http embedder from flags", args: []string{"-embedder", "http", "-embed-url", "https://emb.example/v1",
			"-embed-model", "m", "-embed-dim", "1024", "-embed-batch", "8", "-embed-timeout", "2s", "-embed-retries", "5"},
			check: func(t *testing.T, c Config) {
				if c.Embedder != "http" || c.EmbedURL != "https://emb.example/v1" || c.EmbedModel != "m" || c.EmbedDim != 1024 ||
					c.EmbedBatch != 8 || c.EmbedTimeout != 2*time.Second || c.EmbedRetries != 5 {
					t.Errorf("config = %+v", c)
				}
			}},
		{name: "http embedder needs a dimension", args: []string{"-embedder", "http", "-embed-url", "http://e/v1", "-embed-model", "m"},
			wantErr: "needs -embed-dim"},
		{name: "http embedder needs a url", args: []string{"-embedder", "http", "-embed-model", "m", "-embed-dim", "384"},
			wantErr: "embed url"},
		{name: "http embedder url must be http", env: map[string]string{"MNEME_EMBEDDER": "http", "MNEME_EMBED_URL": "grpc://e:1",
			"MNEME_EMBED_MODEL": "m", "MNEME_EMBED_DIM": "384"}, wantErr: "embed url"},
		{name: "http embedder needs a model", args: []string{"-embedder", "http", "-embed-url", "http://e/v1", "-embed-dim", "384"},
			wantErr: "embed model"},
		{name: "bad batch", args: []string{"-embedder", "http", "-embed-url", "http://e/v1", "-embed-model", "m", "-embed-dim", "384", "-embed-batch", "0"},
			wantErr: "embed batch"},
		{name: "bad retries", args: []string{"-embedder", "http", "-embed-url", "http://e/v1", "-embed-model", "m", "-embed-dim", "384", "-embed-retries", "-1"},
			wantErr: "embed retries"},
		{name: "bad timeout", env: map[string]string{"MNEME_EMBED_TIMEOUT": "soon"}, wantErr: "MNEME_EMBED_TIMEOUT"},
		{name: "unknown embedder", args: []string{"-embedder", "magic"}, wantErr: "neither builtin nor http"},
		{name: "url given to the builtin embedder", env: map[string]string{"MNEME_EMBED_URL": "http://e/v1"},
			wantErr: "add -embedder http"},
		{name: "neo4j timeout", args: []string{"-neo4j-timeout", "1m"}, check: func(t *testing.T, c Config) {
			if c.Neo4jTimeout != time.Minute {
				t.Errorf("neo4j timeout = %s", c.Neo4jTimeout)
			}
		}},
		{name: "bad neo4j timeout", args: []string{"-neo4j-timeout", "0s"}, wantErr: "neo4j timeout"},
		{name: "bad neo4j uri", env: map[string]string{"NEO4J_URI": "http://x"}, wantErr: "neo4j uri"},
		{name: "bad redis url", env: map[string]string{"REDIS_URL": "cache:6379"}, wantErr: "redis url"},
		{name: "bad dim", env: map[string]string{"MNEME_EMBED_DIM": "lots"}, wantErr: "MNEME_EMBED_DIM"},
		{name: "dim out of range", args: []string{"-embed-dim", "3"}, wantErr: "embed dim"},
		{name: "bad addr", args: []string{"-addr", "8080"}, wantErr: "addr"},
		{name: "bad floor", args: []string{"-vector-floor", "1.5"}, wantErr: "vector floor"},
		{name: "rerank", env: map[string]string{"MNEME_RERANK_URL": "http://127.0.0.1:8081/v1/rerank"},
			args: []string{"-rerank-timeout", "300ms", "-recall-exact-max", "500"}, check: func(t *testing.T, c Config) {
				if c.RerankURL != "http://127.0.0.1:8081/v1/rerank" || c.RerankTimeout != 300*time.Millisecond || c.RecallExactMax != 500 {
					t.Errorf("config = %+v", c)
				}
			}},
		{name: "bad rerank url", args: []string{"-rerank-url", "ftp://x"}, wantErr: "rerank url"},
		{name: "bad recall log cap", args: []string{"-recall-log-cap", "0"}, wantErr: "recall log cap"},
		{name: "stray argument", args: []string{"serve"}, wantErr: "unexpected arguments"},
		{name: "unknown flag", args: []string{"-nope"}, wantErr: "not defined"},
		{name: "extract llm", env: map[string]string{
			"MNEME_EXTRACT_LLM_URL": "https://llm.example/v1", "MNEME_EXTRACT_LLM_MODEL": "m", "MNEME_EXTRACT_LLM_KEY": "sk", "MNEME_EXTRACT_LLM_TIMEOUT": "3s",
		}, check: func(t *testing.T, c Config) {
			if l := c.ExtractLLM; l.URL != "https://llm.example/v1" || l.Model != "m" || l.APIKey != "sk" || l.Timeout != 3*time.Second {
				t.Errorf("extract llm = %+v", l)
			}
		}},
		{name: "extract llm without model", env: map[string]string{"MNEME_EXTRACT_LLM_URL": "https://llm.example/v1"}, wantErr: "extract llm model"},
		{name: "extract llm bad url", env: map[string]string{"MNEME_EXTRACT_LLM_URL": "llm.example", "MNEME_EXTRACT_LLM_MODEL": "m"}, wantErr: "extract llm url"},
		{name: "extract llm bad timeout", env: map[string]string{"MNEME_EXTRACT_LLM_TIMEOUT": "soon"}, wantErr: "MNEME_EXTRACT_LLM_TIMEOUT"},
		{name: "several problems at once", env: map[string]string{"NEO4J_URI": "x", "REDIS_URL": "y"}, wantErr: "redis url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			c, err := Load(tt.args, getenv, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load error = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, c)
		})
	}
}
