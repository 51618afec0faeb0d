// Package app builds a running Mneme from its configuration: stores, policy
// engine, embedder, services and the HTTP handler. memoryd, memctl and the
// end-to-end tests share it so that they wire the same thing.
package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"mneme/extract"
	"mneme/memory"
	"mneme/session"
)

// Embedder kinds.
const (
	EmbedderBuiltin = "builtin"
	EmbedderHTTP    = "http"
)

// Config is everything memoryd needs to start.
type Config struct {
	Addr          string        // where the HTTP API listens
	Neo4jURI      string        // bolt://, neo4j:// or neo4j+s://
	Neo4jUser     string        // empty: no authentication
	Neo4jPassword string        //
	Neo4jDatabase string        // empty: the server's default
	Neo4jTimeout  time.Duration // deadline of one store call
	RedisURL      string        // redis://host:port/db
	Embedder      string        // "builtin" or "http"
	EmbedURL      string        // http embedder: API root such as http://host:port/v1
	EmbedModel    string        // http embedder: model name
	EmbedAPIKey   string        // http embedder: bearer token, optional; environment only
	EmbedDim      int           // vector size of the embedder and the vector index
	EmbedBatch    int           // http embedder: most inputs per request
	EmbedTimeout  time.Duration // http embedder: deadline of one request
	EmbedRetries  int           // http embedder: repeats after 429, 5xx or a network error
	MaxBody       int64         // request body limit in bytes
	VectorFloor   float64       // recall relevance floor for cosine similarity
	PolicyTimeout time.Duration // deadline of one policy evaluation
	StartTimeout  time.Duration // how long start-up waits for the stores
	LogLevel      slog.Level
	Seed          bool // load the demo dataset at start-up
	Lifecycle     Lifecycle
	// ExtractLLM is the optional chat model that extracts memories from
	// conversations; with no URL the rule-based extractor does it alone.
	ExtractLLM extract.LLMConfig
	// Working memory: how long an idle session lives, its caps, and how
	// often the expiry worker looks for sessions whose time is up.
	SessionTTL      time.Duration
	SessionMaxTurns int
	SessionMaxBytes int
	SessionScan     time.Duration
	// Recall: partitions up to RecallExactMax memories are searched by exact
	// cosine; RecallLogCap is how many recalls the log keeps per user.
	RecallExactMax int
	RecallLogCap   int
	// RerankURL turns on the cross-encoder rerank (empty: off).
	RerankURL     string
	RerankModel   string
	RerankTimeout time.Duration
	Queue         QueueConfig
}

// QueueConfig is the write queue's part of the configuration.
type QueueConfig struct {
	Prefix      string        // Redis key prefix; replicas that share work share it
	Shards      int           // streams; must not change while writes are queued
	Batch       int           // entries a worker applies at once
	MaxAttempts int           // tries before a job is dead-lettered
	Workers     bool          // apply queued jobs in this process
	LeaseTTL    time.Duration // how long a dead process holds its shards
}

// Defaults returns the configuration used when nothing is set.
func Defaults() Config {
	return Config{
		Addr:            "127.0.0.1:8080",
		Neo4jURI:        "bolt://127.0.0.1:7687",
		RedisURL:        "redis://127.0.0.1:6379/0",
		Neo4jTimeout:    15 * time.Second,
		Embedder:        EmbedderBuiltin,
		EmbedDim:        256,
		EmbedBatch:      64,
		EmbedTimeout:    30 * time.Second,
		EmbedRetries:    3,
		MaxBody:         1 << 20,
		VectorFloor:     0.25,
		PolicyTimeout:   200 * time.Millisecond,
		StartTimeout:    60 * time.Second,
		LogLevel:        slog.LevelInfo,
		Lifecycle:       defaultLifecycle(),
		ExtractLLM:      extract.LLMConfig{Timeout: extract.DefaultLLMTimeout},
		SessionTTL:      session.DefaultTTL,
		SessionMaxTurns: session.DefaultMaxTurns,
		SessionMaxBytes: session.DefaultMaxBytes,
		SessionScan:     5 * time.Second,
		Queue: QueueConfig{
			Prefix: "mneme", Shards: 8, Batch: 256, MaxAttempts: 5, Workers: true, LeaseTTL: 10 * time.Second,
		},
		RecallExactMax: 20_000,
		RecallLogCap:   200,
		RerankTimeout:  2 * time.Second,
	}
}

// Load reads flags from args and then the environment through getenv; a flag
// set explicitly wins over the environment.
func Load(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	cfg := Defaults()
	env := func(name string, dst *string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
	}
	env("MNEME_ADDR", &cfg.Addr)
	env("NEO4J_URI", &cfg.Neo4jURI)
	env("NEO4J_USER", &cfg.Neo4jUser)
	env("NEO4J_PASSWORD", &cfg.Neo4jPassword)
	env("NEO4J_DATABASE", &cfg.Neo4jDatabase)
	env("REDIS_URL", &cfg.RedisURL)
	env("MNEME_EXTRACT_LLM_URL", &cfg.ExtractLLM.URL)
	env("MNEME_EXTRACT_LLM_MODEL", &cfg.ExtractLLM.Model)
	env("MNEME_EXTRACT_LLM_KEY", &cfg.ExtractLLM.APIKey)
	env("MNEME_RERANK_URL", &cfg.RerankURL)
	env("MNEME_RERANK_MODEL", &cfg.RerankModel)
	env("MNEME_EMBEDDER", &cfg.Embedder)
	env("MNEME_EMBED_URL", &cfg.EmbedURL)
	env("MNEME_EMBED_MODEL", &cfg.EmbedModel)
	env("MNEME_EMBED_API_KEY", &cfg.EmbedAPIKey)
	var errs []error
	duration := func(name string, dst *time.Duration) {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a duration such as 10s", name, v))
			}
			*dst = d
		}
	}
	duration("MNEME_EXTRACT_LLM_TIMEOUT", &cfg.ExtractLLM.Timeout)
	duration("MNEME_SESSION_TTL", &cfg.SessionTTL)
	duration("MNEME_SESSION_SCAN", &cfg.SessionScan)
	duration("MNEME_EMBED_TIMEOUT", &cfg.EmbedTimeout)
	envInt := func(name string, dst *int) {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a whole number", name, v))
			}
			*dst = n
		}
	}
	env("MNEME_QUEUE_PREFIX", &cfg.Queue.Prefix)
	for name, dst := range map[string]*int{
		"MNEME_QUEUE_SHARDS": &cfg.Queue.Shards, "MNEME_QUEUE_BATCH": &cfg.Queue.Batch, "MNEME_QUEUE_ATTEMPTS": &cfg.Queue.MaxAttempts,
	} {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a whole number", name, v))
			}
			*dst = n
		}
	}
	duration("MNEME_QUEUE_LEASE", &cfg.Queue.LeaseTTL)
	if v := getenv("MNEME_WORKERS"); v != "" {
		cfg.Queue.Workers = !(v == "0" || strings.EqualFold(v, "false"))
	}
	envInt("MNEME_EMBED_DIM", &cfg.EmbedDim)
	envInt("MNEME_EMBED_BATCH", &cfg.EmbedBatch)
	envInt("MNEME_EMBED_RETRIES", &cfg.EmbedRetries)
	if v := getenv("MNEME_LOG_LEVEL"); v != "" {
		if err := cfg.LogLevel.UnmarshalText([]byte(v)); err != nil {
			errs = append(errs, fmt.Errorf("MNEME_LOG_LEVEL: %q is not debug, info, warn or error", v))
		}
	}
	if v := getenv("MNEME_SEED"); v != "" {
		cfg.Seed = v == "1" || strings.EqualFold(v, "true")
	}

	fs := flag.NewFlagSet("memoryd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	errs = append(errs, lifecycleFlags(fs, getenv, &cfg.Lifecycle)...)
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "HTTP listen address (MNEME_ADDR)")
	fs.StringVar(&cfg.Neo4jURI, "neo4j-uri", cfg.Neo4jURI, "Neo4j URI (NEO4J_URI)")
	fs.DurationVar(&cfg.Neo4jTimeout, "neo4j-timeout", cfg.Neo4jTimeout, "deadline of one Neo4j store call")
	fs.StringVar(&cfg.RedisURL, "redis-url", cfg.RedisURL, "Redis URL (REDIS_URL)")
	fs.StringVar(&cfg.Embedder, "embedder", cfg.Embedder, "embedder: builtin or http (MNEME_EMBEDDER)")
	fs.StringVar(&cfg.EmbedURL, "embed-url", cfg.EmbedURL, "http embedder: OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1 (MNEME_EMBED_URL)")
	fs.StringVar(&cfg.EmbedModel, "embed-model", cfg.EmbedModel, "http embedder: model name (MNEME_EMBED_MODEL); the key comes from MNEME_EMBED_API_KEY")
	fs.IntVar(&cfg.EmbedDim, "embed-dim", cfg.EmbedDim, "embedding dimension; required for the http embedder (MNEME_EMBED_DIM)")
	fs.IntVar(&cfg.EmbedBatch, "embed-batch", cfg.EmbedBatch, "http embedder: most inputs per request (MNEME_EMBED_BATCH)")
	fs.DurationVar(&cfg.EmbedTimeout, "embed-timeout", cfg.EmbedTimeout, "http embedder: deadline of one request (MNEME_EMBED_TIMEOUT)")
	fs.IntVar(&cfg.EmbedRetries, "embed-retries", cfg.EmbedRetries, "http embedder: retries after 429, 5xx or network errors (MNEME_EMBED_RETRIES)")
	fs.Int64Var(&cfg.MaxBody, "max-body", cfg.MaxBody, "request body limit in bytes")
	fs.Float64Var(&cfg.VectorFloor, "vector-floor", cfg.VectorFloor, "recall relevance floor (cosine)")
	fs.DurationVar(&cfg.PolicyTimeout, "policy-timeout", cfg.PolicyTimeout, "deadline of one policy evaluation")
	fs.DurationVar(&cfg.StartTimeout, "start-timeout", cfg.StartTimeout, "how long start-up waits for Neo4j and Redis")
	fs.DurationVar(&cfg.SessionTTL, "session-ttl", cfg.SessionTTL, "how long an idle session lives (MNEME_SESSION_TTL)")
	fs.IntVar(&cfg.SessionMaxTurns, "session-max-turns", cfg.SessionMaxTurns, "turns one session may hold")
	fs.IntVar(&cfg.SessionMaxBytes, "session-max-bytes", cfg.SessionMaxBytes, "bytes of turn text one session may hold")
	fs.DurationVar(&cfg.SessionScan, "session-scan", cfg.SessionScan, "how often expired sessions are looked for (MNEME_SESSION_SCAN)")
	fs.IntVar(&cfg.RecallExactMax, "recall-exact-max", cfg.RecallExactMax, "largest user partition recall searches by exact cosine")
	fs.IntVar(&cfg.RecallLogCap, "recall-log-cap", cfg.RecallLogCap, "recalls the recall log keeps per user")
	fs.StringVar(&cfg.RerankURL, "rerank-url", cfg.RerankURL, "cross-encoder rerank endpoint; empty: no rerank (MNEME_RERANK_URL)")
	fs.StringVar(&cfg.RerankModel, "rerank-model", cfg.RerankModel, "model name sent to the rerank endpoint (MNEME_RERANK_MODEL)")
	fs.DurationVar(&cfg.RerankTimeout, "rerank-timeout", cfg.RerankTimeout, "deadline of one rerank call")
	fs.BoolVar(&cfg.Seed, "seed", cfg.Seed, "load the demo dataset at start-up (MNEME_SEED)")
	fs.StringVar(&cfg.Queue.Prefix, "queue-prefix", cfg.Queue.Prefix, "Redis key prefix of the write queue (MNEME_QUEUE_PREFIX)")
	fs.IntVar(&cfg.Queue.Shards, "queue-shards", cfg.Queue.Shards, "write queue streams (MNEME_QUEUE_SHARDS)")
	fs.IntVar(&cfg.Queue.Batch, "queue-batch", cfg.Queue.Batch, "queued jobs a worker applies at once (MNEME_QUEUE_BATCH)")
	fs.BoolVar(&cfg.Queue.Workers, "workers", cfg.Queue.Workers, "apply queued writes in this process (MNEME_WORKERS)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	// The built-in embedder has a sensible default size; a model's size is a
	// fact about the model that only the operator knows.
	dimSet := getenv("MNEME_EMBED_DIM") != ""
	fs.Visit(func(f *flag.Flag) { dimSet = dimSet || f.Name == "embed-dim" })
	if cfg.Embedder == EmbedderHTTP && !dimSet {
		errs = append(errs, errors.New("embed dim: the http embedder needs -embed-dim (or MNEME_EMBED_DIM), the size of the model's vectors"))
	}
	if err := errors.Join(append(errs, cfg.Validate())...); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate reports every problem with cfg at once.
func (c Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("addr: %q is not host:port", c.Addr))
	}
	if u, err := url.Parse(c.Neo4jURI); err != nil || !oneOf(u.Scheme, "bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc") || u.Host == "" {
		errs = append(errs, fmt.Errorf("neo4j uri: %q is not a bolt:// or neo4j:// URI", c.Neo4jURI))
	}
	if u, err := url.Parse(c.RedisURL); err != nil || !oneOf(u.Scheme, "redis", "rediss") || u.Host == "" {
		errs = append(errs, fmt.Errorf("redis url: %q is not a redis:// URL", c.RedisURL))
	}
	if c.EmbedDim < 8 || c.EmbedDim > 4096 {
		errs = append(errs, fmt.Errorf("embed dim: %d is outside 8..4096", c.EmbedDim))
	}
	errs = append(errs, c.validateEmbedder()...)
	if c.MaxBody < 1024 {
		errs = append(errs, fmt.Errorf("max body: %d bytes is too small (at least 1024)", c.MaxBody))
	}
	if c.VectorFloor <= 0 || c.VectorFloor >= 1 {
		errs = append(errs, fmt.Errorf("vector floor: %v must be between 0 and 1", c.VectorFloor))
	}
	if c.Neo4jTimeout <= 0 {
		errs = append(errs, errors.New("neo4j timeout must be positive"))
	}
	if c.PolicyTimeout <= 0 {
		errs = append(errs, errors.New("policy timeout must be positive"))
	}
	if c.StartTimeout <= 0 {
		errs = append(errs, errors.New("start timeout must be positive"))
	}
	if err := c.Lifecycle.validate(); err != nil {
		errs = append(errs, err)
	}
	if u := c.ExtractLLM.URL; u != "" {
		if p, err := url.Parse(u); err != nil || !oneOf(p.Scheme, "http", "https") || p.Host == "" {
			errs = append(errs, fmt.Errorf("extract llm url: %q is not an http(s) URL", u))
		}
		if c.ExtractLLM.Model == "" {
			errs = append(errs, errors.New("extract llm model: required with MNEME_EXTRACT_LLM_URL"))
		}
	}
	if c.SessionTTL < time.Second || c.SessionTTL > memory.MaxSessionTTL {
		errs = append(errs, fmt.Errorf("session ttl: %s is outside 1s..%s", c.SessionTTL, memory.MaxSessionTTL))
	}
	if c.SessionMaxTurns < 1 || c.SessionMaxBytes < 1024 {
		errs = append(errs, fmt.Errorf("session caps: %d turns, %d bytes; want at least 1 turn and 1024 bytes", c.SessionMaxTurns, c.SessionMaxBytes))
	}
	if c.SessionScan <= 0 {
		errs = append(errs, errors.New("session scan interval must be positive"))
	}
	if c.ExtractLLM.Timeout <= 0 {
		errs = append(errs, errors.New("extract llm timeout must be positive"))
	}
	if c.Queue.Prefix == "" || strings.ContainsAny(c.Queue.Prefix, "{} ") {
		errs = append(errs, fmt.Errorf("queue prefix: %q must be non-empty, without braces or spaces", c.Queue.Prefix))
	}
	if c.Queue.Shards < 1 || c.Queue.Shards > 1024 {
		errs = append(errs, fmt.Errorf("queue shards: %d is outside 1..1024", c.Queue.Shards))
	}
	if c.Queue.Batch < 1 || c.Queue.Batch > 10000 {
		errs = append(errs, fmt.Errorf("queue batch: %d is outside 1..10000", c.Queue.Batch))
	}
	if c.Queue.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("queue attempts: %d must be at least 1", c.Queue.MaxAttempts))
	}
	if c.Queue.LeaseTTL < time.Second {
		errs = append(errs, fmt.Errorf("queue lease: %s is shorter than 1s", c.Queue.LeaseTTL))
	}
	if c.RecallExactMax < 0 {
		errs = append(errs, fmt.Errorf("recall exact max: %d must not be negative", c.RecallExactMax))
	}
	if c.RecallLogCap < 1 || c.RecallLogCap > 100_000 {
		errs = append(errs, fmt.Errorf("recall log cap: %d is outside 1..100000", c.RecallLogCap))
	}
	if c.RerankURL != "" {
		if u, err := url.Parse(c.RerankURL); err != nil || !oneOf(u.Scheme, "http", "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("rerank url: %q is not an http:// or https:// URL", c.RerankURL))
		}
	}
	if c.RerankTimeout <= 0 {
		errs = append(errs, errors.New("rerank timeout must be positive"))
	}
	return errors.Join(errs...)
}

// validateEmbedder checks the embedder's settings; the http settings are
// checked only for the http embedder, and setting them for the built-in one
// is a mistake worth reporting rather than ignoring.
func (c Config) validateEmbedder() []error {
	var errs []error
	switch c.Embedder {
	case EmbedderBuiltin:
		if c.EmbedURL != "" || c.EmbedModel != "" {
			errs = append(errs, errors.New("embedder: embed url and model are set but the embedder is builtin; add -embedder http (MNEME_EMBEDDER=http)"))
		}
		return errs
	case EmbedderHTTP:
	default:
		return append(errs, fmt.Errorf("embedder: %q is neither builtin nor http", c.Embedder))
	}
	if u, err := url.Parse(c.EmbedURL); err != nil || !oneOf(u.Scheme, "http", "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("embed url: %q is not an http:// or https:// URL such as http://127.0.0.1:8000/v1", c.EmbedURL))
	}
	if strings.TrimSpace(c.EmbedModel) == "" {
		errs = append(errs, errors.New("embed model: the http embedder needs a model name (-embed-model or MNEME_EMBED_MODEL)"))
	}
	if c.EmbedBatch < 1 || c.EmbedBatch > 2048 {
		errs = append(errs, fmt.Errorf("embed batch: %d is outside 1..2048", c.EmbedBatch))
	}
	if c.EmbedTimeout <= 0 {
		errs = append(errs, errors.New("embed timeout must be positive"))
	}
	if c.EmbedRetries < 0 || c.EmbedRetries > 10 {
		errs = append(errs, fmt.Errorf("embed retries: %d is outside 0..10", c.EmbedRetries))
	}
	return errs
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}
