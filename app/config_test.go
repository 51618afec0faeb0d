package app

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mneme/extract"
	"mneme/janitor"
	"mneme/memory"
	"mneme/ratelimit"
)

// fixture is one start of memoryd read from testdata: its environment, its
// flags and, for a bad one, the pieces its error must hold.
type fixture struct {
	env  map[string]string
	args []string
	want []string
}

func readFixture(t *testing.T, path string) fixture {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{env: map[string]string{}}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if want, ok := strings.CutPrefix(line, "# want: "); ok {
			f.want = append(f.want, want)
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=value", path, line)
		}
		if k == "ARGS" {
			f.args = strings.Fields(v)
			continue
		}
		f.env[k] = v
	}
	return f
}

func (f fixture) load() (Config, error) {
	return Load(f.args, func(k string) string { return f.env[k] }, io.Discard)
}

// fixtures returns the fixture files of testdata/dir by name.
func fixtures(t *testing.T, dir string) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.env"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in testdata/%s (%v)", dir, err)
	}
	out := map[string]string{}
	for _, p := range paths {
		out[strings.TrimSuffix(filepath.Base(p), ".env")] = p
	}
	return out
}

func TestLoadGood(t *testing.T) {
	// Each good fixture's configuration is Defaults() changed by its entry.
	want := map[string]func(c *Config){
		"defaults": func(c *Config) {},
		"environment": func(c *Config) {
			c.Neo4j = Neo4jConfig{URI: "neo4j://db:7687", User: "mneme", Password: "secret", Database: "memories", Timeout: c.Neo4j.Timeout}
			c.Redis.URL = "redis://cache:6380/1"
			c.Server.Addr = "0.0.0.0:9000"
			c.Embedding.Kind, c.Embedding.Dim = EmbedderBuiltin, 128
			c.Seed = true
			c.Log.Level = slog.LevelDebug
		},
		"flags-beat-environment": func(c *Config) {
			c.Server = ServerConfig{Addr: "127.0.0.1:9999", MaxBody: 2048, StartTimeout: 5 * time.Second, StallTimeout: 0}
			c.Policy.Timeout = 20 * time.Millisecond
			c.Neo4j.Timeout = time.Minute
			c.Queue.Workers = true
		},
		"lenient-switches": func(c *Config) {
			c.Seed = false
			c.Queue.Workers = true
		},
		"http-embedder-env": func(c *Config) {
			c.Embedding = EmbeddingConfig{Kind: EmbedderHTTP, URL: "http://127.0.0.1:8000/v1", Model: "all-MiniLM-L6-v2",
				APIKey: "sk-x", Dim: 384, Batch: 16, Timeout: 5 * time.Second, Retries: 0}
		},
		"http-embedder-flags": func(c *Config) {
			c.Embedding = EmbeddingConfig{Kind: EmbedderHTTP, URL: "https://emb.example/v1", Model: "m",
				Dim: 1024, Batch: 8, Timeout: 2 * time.Second, Retries: 5}
		},
		"use-embedder": func(c *Config) {
			c.Embedding.ModelDir, c.Embedding.Calibrations = "/opt/models", "/etc/mneme/calibrations"
			c.Embedding.DuplicateThreshold, c.Recall.VectorFloor = 0.97, 0.4
		},
		"builtin-embedder": func(c *Config) { c.Embedding.Kind, c.Embedding.Dim = EmbedderBuiltin, BuiltinDim },
		"http-embedder-prefixes": func(c *Config) {
			c.Embedding.Kind, c.Embedding.URL, c.Embedding.Model, c.Embedding.Dim = EmbedderHTTP, "http://127.0.0.1:8000/v1", "multilingual-e5-small", 384
			c.Embedding.QueryPrefix, c.Embedding.PassagePrefix = "query:", "passage:" // the fixture's lines are trimmed
		},
		"lifecycle": func(c *Config) {
			c.Lifecycle.TTL[memory.TypeSemantic] = 30 * janitor.Day
			c.Lifecycle.TTL[memory.TypeEpisodic] = 0
			c.Lifecycle.ArchiveAfter = 36 * time.Hour
			c.Lifecycle.Cap = 50
			c.Lifecycle.Every = 2 * time.Hour
			c.Lifecycle.LockTTL = time.Minute
		},
		"janitor-off": func(c *Config) { c.Lifecycle.Every = 0 },
		"audit": func(c *Config) {
			c.Audit = AuditConfig{Cap: 5000, Retention: 90 * janitor.Day}
		},
		"recall-and-rerank": func(c *Config) {
			c.Recall = RecallConfig{VectorFloor: 0.3, ExactMax: 500, LogCap: 50}
			c.Rerank = RerankConfig{URL: "http://127.0.0.1:8081/v1/rerank", Model: "bge-reranker", Timeout: 300 * time.Millisecond}
		},
		"queue": func(c *Config) {
			c.Queue = QueueConfig{Prefix: "blue", Shards: 16, Batch: 64, MaxAttempts: 3, Workers: true, LeaseTTL: 30 * time.Second}
		},
		"sessions": func(c *Config) {
			c.Sessions = SessionsConfig{TTL: 10 * time.Minute, MaxTurns: 20, MaxBytes: 4096, Scan: time.Second}
		},
		"extract-llm": func(c *Config) {
			c.Extract = extract.LLMConfig{URL: "https://llm.example/v1", Model: "m", APIKey: "sk", Timeout: 3 * time.Second}
		},

		"oidc": func(c *Config) {
			c.OIDC = OIDCConfig{
				Issuer: "https://idp.example", JWKSURL: "https://idp.example/.well-known/jwks.json", Audience: "mneme",
				TenantClaim: "org", KindClaim: "kind", Kind: "user", IDClaim: "email", RolesClaim: "",
				Algorithms: []string{"ES256", "PS256"}, Skew: time.Minute, JWKSRefresh: time.Hour,
			}
		},
		"limits": func(c *Config) {
			c.Limits = LimitsConfig{
				Rate: 50, Burst: 100,
				KindRates:     map[string]ratelimit.Rate{"user": {PerSecond: 2.5}, "admin": {}},
				QuotaMemories: 100_000, QuotaChars: 50_000_000, QuotaRefresh: 2 * time.Second,
			}
		},
	}
	for name, path := range fixtures(t, "good") {
		t.Run(name, func(t *testing.T) {
			change, ok := want[name]
			if !ok {
				t.Fatalf("testdata/good/%s.env has no expected configuration in TestLoadGood", name)
			}
			expected := Defaults()
			expected.Identity.KeySecret = fixtureSecret
			change(&expected)
			got, err := readFixture(t, path).load()
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if d := cmp.Diff(expected, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
		})
	}
}

// fixtureSecret is the MNEME_KEY_SECRET every good fixture sets.
const fixtureSecret = "fixture-secret-0123456789abcdef0123"

func TestLoadBad(t *testing.T) {
	for name, path := range fixtures(t, "bad") {
		t.Run(name, func(t *testing.T) {
			f := readFixture(t, path)
			if len(f.want) == 0 {
				t.Fatalf("testdata/bad/%s.env says nothing about its error: add a # want: line", name)
			}
			_, err := f.load()
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range f.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load error\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}

// TestSettingsKeepTheirNames guards the names the README, the scripts and
// deployments use: every flag and environment variable memoryd has read
// stays in its usage.
func TestSettingsKeepTheirNames(t *testing.T) {
	var usage bytes.Buffer
	if _, err := Load([]string{"-h"}, func(string) string { return "" }, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Load -h = %v, want flag.ErrHelp", err)
	}
	flags := []string{"addr", "neo4j-uri", "neo4j-timeout", "redis-url", "embedder", "embed-url", "embed-model",
		"model-dir", "calibrations", "dedup-threshold", "embed-query-prefix", "embed-passage-prefix",
		"embed-dim", "embed-batch", "embed-timeout", "embed-retries", "max-body", "vector-floor", "policy-timeout",
		"start-timeout", "stall-timeout", "session-ttl", "session-max-turns", "session-max-bytes", "session-scan", "recall-exact-max",
		"recall-log-cap", "rerank-url", "rerank-model", "rerank-timeout", "seed", "queue-prefix", "queue-shards",
		"queue-batch", "workers", "janitor-every", "ttl", "archive-after", "user-cap", "janitor-lock-ttl",
		"audit-cap", "audit-retention",
		"oidc-issuer", "oidc-jwks-url", "oidc-audience", "oidc-tenant-claim", "oidc-kind-claim", "oidc-kind",
		"oidc-id-claim", "oidc-roles-claim", "oidc-algorithms", "oidc-skew", "oidc-jwks-refresh",
		"rate-limit", "rate-burst", "rate-limit-kinds", "quota-memories", "quota-chars", "quota-refresh",
		"otlp-endpoint"}
	for _, f := range flags {
		if !strings.Contains(usage.String(), "  -"+f+" ") && !strings.Contains(usage.String(), "  -"+f+"\n") {
			t.Errorf("flag -%s is gone", f)
		}
	}
	// Variables without a flag are read straight from the environment.
	envOnly := map[string]func(Config) bool{
		"NEO4J_USER":                func(c Config) bool { return c.Neo4j.User == "v" },
		"NEO4J_PASSWORD":            func(c Config) bool { return c.Neo4j.Password == "v" },
		"NEO4J_DATABASE":            func(c Config) bool { return c.Neo4j.Database == "v" },
		"MNEME_EMBED_API_KEY":       func(c Config) bool { return c.Embedding.APIKey == "v" },
		"MNEME_EXTRACT_LLM_KEY":     func(c Config) bool { return c.Extract.APIKey == "v" },
		"MNEME_EXTRACT_LLM_TIMEOUT": nil, "MNEME_QUEUE_ATTEMPTS": nil, "MNEME_QUEUE_LEASE": nil, "MNEME_LOG_LEVEL": nil,
	}
	for env, check := range envOnly {
		if check == nil {
			continue // covered by the good and bad fixtures
		}
		c, err := Load(nil, func(k string) string {
			return map[string]string{env: "v", "MNEME_KEY_SECRET": fixtureSecret}[k]
		}, io.Discard)
		if err != nil || !check(c) {
			t.Errorf("%s is not read: %v", env, err)
		}
	}
	vars := []string{"MNEME_ADDR", "NEO4J_URI", "REDIS_URL", "MNEME_EMBEDDER", "MNEME_EMBED_URL", "MNEME_EMBED_MODEL",
		"MNEME_MODEL_DIR", "MNEME_CALIBRATIONS", "MNEME_DEDUP_THRESHOLD", "MNEME_EMBED_QUERY_PREFIX", "MNEME_EMBED_PASSAGE_PREFIX",
		"MNEME_EMBED_DIM", "MNEME_EMBED_BATCH", "MNEME_EMBED_TIMEOUT", "MNEME_EMBED_RETRIES", "MNEME_SESSION_TTL",
		"MNEME_SESSION_SCAN", "MNEME_RERANK_URL", "MNEME_RERANK_MODEL", "MNEME_SEED", "MNEME_QUEUE_PREFIX",
		"MNEME_QUEUE_SHARDS", "MNEME_QUEUE_BATCH", "MNEME_WORKERS", "MNEME_JANITOR_EVERY", "MNEME_TTL",
		"MNEME_ARCHIVE_AFTER", "MNEME_USER_CAP",
		"MNEME_AUDIT_CAP", "MNEME_AUDIT_RETENTION"}
	for _, v := range vars {
		if !strings.Contains(usage.String(), "("+v+")") {
			t.Errorf("the usage no longer names %s", v)
		}
	}
}
