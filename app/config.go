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
	"mneme/identity"
	"mneme/journal"
	"mneme/memory"
	"mneme/rerank"
	"mneme/session"
	"mneme/tracing"
)

// Embedder kinds: the default model in-process (USE multilingual v3, whose
// weights scripts/model.sh fetches), the dependency-free lexical fallback,
// or a model served over HTTP.
const (
	EmbedderUSE     = "use"
	EmbedderBuiltin = "builtin"
	EmbedderHTTP    = "http"
)

// Config is everything memoryd needs to start, in one section per part.
// Defaults gives every field its default; Load reads flags and the
// environment over them; Validate checks the result.
//
// To add a setting: add the field to its section, its default to Defaults,
// one bind line to Load (flag name, environment variable or both), and its
// check to Validate, naming the flag or variable in the message; then add a
// good and a bad case to config_test.go.
type Config struct {
	Server    ServerConfig
	Neo4j     Neo4jConfig
	Redis     RedisConfig
	Embedding EmbeddingConfig
	Recall    RecallConfig
	Rerank    RerankConfig
	Queue     QueueConfig
	Sessions  SessionsConfig
	Lifecycle Lifecycle
	Policy    PolicyConfig
	// Audit is the admin audit trail's retention, apart from the
	// decision log's.
	Audit AuditConfig
	// Extract is the optional chat model that extracts memories from
	// conversations; with no URL the rule-based extractor does it alone.
	Extract extract.LLMConfig
	Log     LogConfig
	// Seed loads the demo dataset at start-up.
	Seed bool

	// Identity is how API keys are stored and looked up.
	Identity IdentityConfig
	// OIDC accepts JWT bearer tokens of one issuer besides API keys;
	// Limits are the per-caller rate limit and the per-tenant quotas.
	OIDC   OIDCConfig
	Limits LimitsConfig
}

// IdentityConfig is the API keys' part.
type IdentityConfig struct {
	// KeySecret keys the HMAC under which API keys are stored; from
	// MNEME_KEY_SECRET only, never a flag (flags show in process lists).
	KeySecret string
	// NoCache looks every key up in the store, for measuring what the
	// cache saves; no flag sets it.
	NoCache bool
}

// ServerConfig is the HTTP server's part.
type ServerConfig struct {
	Addr         string        // where the HTTP API listens
	MaxBody      int64         // request body limit in bytes
	StartTimeout time.Duration // how long start-up waits for the stores
	// StallTimeout is how long a store may leave a ping unanswered before
	// it counts as stalled and API requests are refused with 503 until it
	// answers; 0 watches nothing.
	StallTimeout time.Duration
	// OTLPEndpoint receives the traces by OTLP over HTTP; "" turns
	// tracing off.
	OTLPEndpoint string
}

// Neo4jConfig is the graph store's part.
type Neo4jConfig struct {
	URI      string        // bolt://, neo4j:// or neo4j+s://
	User     string        // empty: no authentication
	Password string        //
	Database string        // empty: the server's default
	Timeout  time.Duration // deadline of one store call
}

// RedisConfig is Redis's part.
type RedisConfig struct {
	URL string // redis://host:port/db
	// Cluster, when set, lists a Redis Cluster's nodes (host:port,
	// comma-separated); URL then gives only the credentials and TLS.
	Cluster string
}

// EmbeddingConfig chooses and tunes the embedder.
type EmbeddingConfig struct {
	Kind     string        // EmbedderUSE, EmbedderBuiltin or EmbedderHTTP
	ModelDir string        // use embedder: where scripts/model.sh put the weights; empty: the user's cache
	URL      string        // http embedder: API root such as http://host:port/v1
	Model    string        // http embedder: model name
	APIKey   string        // http embedder: bearer token, optional; environment only
	Dim      int           // vector size of the embedder and the vector index
	Batch    int           // http embedder: most inputs per request
	Timeout  time.Duration // http embedder: deadline of one request
	Retries  int           // http embedder: repeats after 429, 5xx or a network error
	// QueryPrefix and PassagePrefix: http embedder, text put before a
	// question and before a stored text ("query: ", "passage: " for e5).
	QueryPrefix, PassagePrefix string
	// Calibrations is a directory of model calibrations that win over the
	// built-in ones; memoryd calibrate writes there. Empty: built-in only.
	Calibrations string
	// DuplicateThreshold overrides the model's calibrated dedup threshold
	// when positive.
	DuplicateThreshold float64
}

// Vector sizes of the embedders that have one.
const (
	USEDim     = 512
	BuiltinDim = 256
)

// RecallConfig is recall's tuning.
type RecallConfig struct {
	VectorFloor float64 // relevance floor for cosine similarity; 0: the model's calibrated floor
	ExactMax    int     // partitions up to this many memories are searched by exact cosine; 0: by the vector index (exactMaxFor)
	LogCap      int     // recalls the recall log keeps per user
}

// RerankConfig turns on the cross-encoder rerank when URL is set.
type RerankConfig struct {
	URL     string
	Model   string
	Timeout time.Duration
}

// QueueConfig is the write queue's part.
type QueueConfig struct {
	Prefix      string        // Redis key prefix; replicas that share work share it
	Shards      int           // streams; must not change while writes are queued
	Batch       int           // entries a worker applies at once
	MaxAttempts int           // tries before a job is dead-lettered
	Workers     bool          // apply queued jobs in this process
	LeaseTTL    time.Duration // how long a dead process holds its shards
}

// SessionsConfig is working memory's part: how long an idle session lives,
// its caps, and how often the expiry worker looks for sessions whose time
// is up.
type SessionsConfig struct {
	TTL      time.Duration
	MaxTurns int
	MaxBytes int
	Scan     time.Duration
}

// AuditConfig is how much of the admin audit trail each tenant keeps: at
// most Cap events, none older than Retention.
type AuditConfig struct {
	Cap       int64
	Retention time.Duration
}

// PolicyConfig is the policy engine's part.
type PolicyConfig struct {
	Timeout time.Duration // deadline of one policy evaluation
}

// LogConfig is the log's part.
type LogConfig struct {
	Level slog.Level
}

// Defaults returns the configuration used when nothing is set.
func Defaults() Config {
	return Config{
		Server: ServerConfig{Addr: "127.0.0.1:8080", MaxBody: 1 << 20, StartTimeout: 60 * time.Second, StallTimeout: 2 * time.Second},
		Neo4j:  Neo4jConfig{URI: "bolt://127.0.0.1:7687", Timeout: 15 * time.Second},
		Redis:  RedisConfig{URL: "redis://127.0.0.1:6379/0"},
		Embedding: EmbeddingConfig{
			Kind: EmbedderUSE, Dim: USEDim, Batch: 64, Timeout: 30 * time.Second, Retries: 3,
		},
		Recall: RecallConfig{LogCap: 200},
		Rerank: RerankConfig{Timeout: 2 * time.Second},
		Queue: QueueConfig{
			Prefix: "mneme", Shards: 8, Batch: 256, MaxAttempts: 5, Workers: true, LeaseTTL: 10 * time.Second,
		},
		Sessions: SessionsConfig{
			TTL: session.DefaultTTL, MaxTurns: session.DefaultMaxTurns, MaxBytes: session.DefaultMaxBytes, Scan: 5 * time.Second,
		},
		Lifecycle: defaultLifecycle(),
		Audit:     AuditConfig{Cap: journal.DefaultAuditCap, Retention: journal.DefaultAuditRetention},
		Policy:    PolicyConfig{Timeout: 200 * time.Millisecond},
		Extract:   extract.LLMConfig{Timeout: extract.DefaultLLMTimeout},
		Log:       LogConfig{Level: slog.LevelInfo},

		OIDC:   defaultOIDC(),
		Limits: defaultLimits(),
	}
}

// Load reads the environment through getenv and then flags from args over
// Defaults; a flag set explicitly wins over the environment. It reports
// every problem at once, each naming its flag or variable.
func Load(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	cfg := Defaults()
	fs := flag.NewFlagSet("memoryd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	b := &binder{fs: fs, getenv: getenv}

	s := &cfg.Server
	b.bind(stringValue(&s.Addr), "addr", "MNEME_ADDR", "HTTP listen address")
	b.bind(int64Value(&s.MaxBody), "max-body", "", "request body limit in bytes")
	b.bind(durationValue(&s.StartTimeout), "start-timeout", "", "how long start-up waits for Neo4j and Redis")
	b.bind(durationValue(&s.StallTimeout), "stall-timeout", "", "how long Neo4j or Redis may leave a ping unanswered before API requests get 503 until it answers; 0 = never")
	b.bind(stringValue(&s.OTLPEndpoint), "otlp-endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTLP/HTTP endpoint that receives traces, e.g. http://127.0.0.1:4318; empty = no tracing")

	n := &cfg.Neo4j
	b.bind(stringValue(&n.URI), "neo4j-uri", "NEO4J_URI", "Neo4j URI")
	b.bind(stringValue(&n.User), "", "NEO4J_USER", "")
	b.bind(stringValue(&n.Password), "", "NEO4J_PASSWORD", "")
	b.bind(stringValue(&n.Database), "", "NEO4J_DATABASE", "")
	b.bind(durationValue(&n.Timeout), "neo4j-timeout", "", "deadline of one Neo4j store call")

	b.bind(stringValue(&cfg.Redis.URL), "redis-url", "REDIS_URL", "Redis URL")
	b.bind(stringValue(&cfg.Redis.Cluster), "redis-cluster", "MNEME_REDIS_CLUSTER", "Redis Cluster nodes, host:port,host:port (URL then gives credentials only)")

	e := &cfg.Embedding
	b.bind(stringValue(&e.Kind), "embedder", "MNEME_EMBEDDER", "embedder: use (the multilingual model, default), builtin (lexical, no model) or http")
	b.bind(stringValue(&e.ModelDir), "model-dir", "MNEME_MODEL_DIR", "use embedder: directory of the model weights scripts/model.sh fetches (default: ~/.cache/mneme/models)")
	b.bind(stringValue(&e.Calibrations), "calibrations", "MNEME_CALIBRATIONS", "directory of model calibrations that win over the built-in ones (memoryd calibrate writes there)")
	b.bind(float64Value(&e.DuplicateThreshold), "dedup-threshold", "MNEME_DEDUP_THRESHOLD", "cosine at which a new memory restates a stored one; 0: the model's calibrated threshold")
	b.bind(stringValue(&e.QueryPrefix), "embed-query-prefix", "MNEME_EMBED_QUERY_PREFIX", "http embedder: text put before a question, e.g. \"query: \" for e5 models")
	b.bind(stringValue(&e.PassagePrefix), "embed-passage-prefix", "MNEME_EMBED_PASSAGE_PREFIX", "http embedder: text put before a stored text, e.g. \"passage: \" for e5 models")
	b.bind(stringValue(&e.URL), "embed-url", "MNEME_EMBED_URL", "http embedder: OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1")
	b.bind(stringValue(&e.Model), "embed-model", "MNEME_EMBED_MODEL", "http embedder: model name; the key comes from MNEME_EMBED_API_KEY")
	b.bind(stringValue(&e.APIKey), "", "MNEME_EMBED_API_KEY", "")
	// The built-in embedder has a sensible default size; a model's size
	// is a fact about the model that only the operator knows.
	dimSet := false
	b.bind(&setInt{v: &e.Dim, set: &dimSet}, "embed-dim", "MNEME_EMBED_DIM", "embedding dimension; required for the http embedder (use: 512, builtin: 256 by default)")
	b.bind(intValue(&e.Batch), "embed-batch", "MNEME_EMBED_BATCH", "http embedder: most inputs per request")
	b.bind(durationValue(&e.Timeout), "embed-timeout", "MNEME_EMBED_TIMEOUT", "http embedder: deadline of one request")
	b.bind(intValue(&e.Retries), "embed-retries", "MNEME_EMBED_RETRIES", "http embedder: retries after 429, 5xx or network errors")

	r := &cfg.Recall
	b.bind(float64Value(&r.VectorFloor), "vector-floor", "", "recall relevance floor (cosine); 0: the model's calibrated floor")
	b.bind(intValue(&r.ExactMax), "recall-exact-max", "", "largest user partition recall searches by exact cosine (0: 1,000 where the vector index holds partitions, 20,000 on Neo4j 5.26)")
	b.bind(intValue(&r.LogCap), "recall-log-cap", "", "recalls the recall log keeps per user")

	rr := &cfg.Rerank
	b.bind(stringValue(&rr.URL), "rerank-url", "MNEME_RERANK_URL", "cross-encoder rerank endpoint; empty: no rerank")
	b.bind(stringValue(&rr.Model), "rerank-model", "MNEME_RERANK_MODEL", "model name sent to the rerank endpoint")
	b.bind(durationValue(&rr.Timeout), "rerank-timeout", "", "deadline of one rerank call")

	q := &cfg.Queue
	b.bind(stringValue(&q.Prefix), "queue-prefix", "MNEME_QUEUE_PREFIX", "Redis key prefix of the write queue")
	b.bind(intValue(&q.Shards), "queue-shards", "MNEME_QUEUE_SHARDS", "write queue streams")
	b.bind(intValue(&q.Batch), "queue-batch", "MNEME_QUEUE_BATCH", "queued jobs a worker applies at once")
	b.bind(intValue(&q.MaxAttempts), "", "MNEME_QUEUE_ATTEMPTS", "")
	b.bind(durationValue(&q.LeaseTTL), "", "MNEME_QUEUE_LEASE", "")
	// MNEME_WORKERS turns the workers off only with "0" or "false".
	b.bind(&lenientBool{v: &q.Workers, env: func(s string) bool { return !(s == "0" || strings.EqualFold(s, "false")) }},
		"workers", "MNEME_WORKERS", "apply queued writes in this process")

	ss := &cfg.Sessions
	b.bind(durationValue(&ss.TTL), "session-ttl", "MNEME_SESSION_TTL", "how long an idle session lives")
	b.bind(intValue(&ss.MaxTurns), "session-max-turns", "", "turns one session may hold")
	b.bind(intValue(&ss.MaxBytes), "session-max-bytes", "", "bytes of turn text one session may hold")
	b.bind(durationValue(&ss.Scan), "session-scan", "MNEME_SESSION_SCAN", "how often expired sessions are looked for")

	lifecycleFlags(b, &cfg.Lifecycle)

	b.bind(durationValue(&cfg.Policy.Timeout), "policy-timeout", "", "deadline of one policy evaluation")

	au := &cfg.Audit
	b.bind(int64Value(&au.Cap), "audit-cap", "MNEME_AUDIT_CAP", "audit events kept per tenant")
	b.bind((*days)(&au.Retention), "audit-retention", "MNEME_AUDIT_RETENTION", "how long audit events are kept, e.g. 365d")

	x := &cfg.Extract
	b.bind(stringValue(&x.URL), "", "MNEME_EXTRACT_LLM_URL", "")
	b.bind(stringValue(&x.Model), "", "MNEME_EXTRACT_LLM_MODEL", "")
	b.bind(stringValue(&x.APIKey), "", "MNEME_EXTRACT_LLM_KEY", "")
	b.bind(durationValue(&x.Timeout), "", "MNEME_EXTRACT_LLM_TIMEOUT", "")

	b.bind((*levelValue)(&cfg.Log.Level), "", "MNEME_LOG_LEVEL", "")

	// MNEME_SEED turns seeding on only with "1" or "true".
	b.bind(&lenientBool{v: &cfg.Seed, env: func(s string) bool { return s == "1" || strings.EqualFold(s, "true") }},
		"seed", "MNEME_SEED", "load the demo dataset at start-up")

	b.bind(stringValue(&cfg.Identity.KeySecret), "", "MNEME_KEY_SECRET", "")
	oidcFlags(b, &cfg.OIDC)
	limitsFlags(b, &cfg.Limits)

	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	errs := b.errs
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	if e.Kind == EmbedderHTTP && !dimSet {
		errs = append(errs, errors.New("-embed-dim (MNEME_EMBED_DIM): the http embedder needs the size of the model's vectors"))
	}
	if e.Kind == EmbedderBuiltin && !dimSet {
		e.Dim = BuiltinDim
	}
	if err := errors.Join(append(errs, cfg.Validate())...); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate reports every problem with c at once, each naming the flag or
// environment variable that sets it.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if e := c.Server.OTLPEndpoint; e != "" && tracing.CheckEndpoint(e) != nil {
		bad("-otlp-endpoint (OTEL_EXPORTER_OTLP_ENDPOINT): %q is not an http(s) URL", e)
	}
	if _, _, err := net.SplitHostPort(c.Server.Addr); err != nil {
		bad("-addr (MNEME_ADDR): %q is not host:port", c.Server.Addr)
	}
	if c.Server.MaxBody < 1024 {
		bad("-max-body: %d bytes is too small (at least 1024)", c.Server.MaxBody)
	}
	if c.Server.StartTimeout <= 0 {
		bad("-start-timeout: %s must be positive", c.Server.StartTimeout)
	}
	if c.Server.StallTimeout < 0 {
		bad("-stall-timeout: %s must not be negative (0 turns the watch off)", c.Server.StallTimeout)
	}
	if u, err := url.Parse(c.Neo4j.URI); err != nil || !oneOf(u.Scheme, "bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc") || u.Host == "" {
		bad("-neo4j-uri (NEO4J_URI): %q is not a bolt:// or neo4j:// URI", c.Neo4j.URI)
	}
	if c.Neo4j.Timeout <= 0 {
		bad("-neo4j-timeout: %s must be positive", c.Neo4j.Timeout)
	}
	if u, err := url.Parse(c.Redis.URL); err != nil || !oneOf(u.Scheme, "redis", "rediss") || u.Host == "" {
		bad("-redis-url (REDIS_URL): %q is not a redis:// URL", c.Redis.URL)
	}
	for _, addr := range c.Redis.clusterAddrs() {
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			bad("-redis-cluster (MNEME_REDIS_CLUSTER): %q is not host:port", addr)
		}
	}
	errs = append(errs, c.Embedding.validate()...)
	if c.Recall.VectorFloor < 0 || c.Recall.VectorFloor >= 1 {
		bad("-vector-floor: %v must be between 0 and 1 (0: the model's calibrated floor)", c.Recall.VectorFloor)
	}
	if c.Recall.ExactMax < 0 {
		bad("-recall-exact-max: %d must not be negative", c.Recall.ExactMax)
	}
	if c.Recall.LogCap < 1 || c.Recall.LogCap > 100_000 {
		bad("-recall-log-cap: %d is outside 1..100000", c.Recall.LogCap)
	}
	if c.Rerank.URL != "" {
		if u, err := url.Parse(c.Rerank.URL); err != nil || !oneOf(u.Scheme, "http", "https") || u.Host == "" {
			bad("-rerank-url (MNEME_RERANK_URL): %q is not an http:// or https:// URL", c.Rerank.URL)
		}
	}
	if c.Rerank.Timeout <= 0 {
		bad("-rerank-timeout: %s must be positive", c.Rerank.Timeout)
	}
	if c.Queue.Prefix == "" || strings.ContainsAny(c.Queue.Prefix, "{} ") {
		bad("-queue-prefix (MNEME_QUEUE_PREFIX): %q must be non-empty, without braces or spaces", c.Queue.Prefix)
	}
	if c.Queue.Shards < 1 || c.Queue.Shards > 1024 {
		bad("-queue-shards (MNEME_QUEUE_SHARDS): %d is outside 1..1024", c.Queue.Shards)
	}
	if c.Queue.Batch < 1 || c.Queue.Batch > 10000 {
		bad("-queue-batch (MNEME_QUEUE_BATCH): %d is outside 1..10000", c.Queue.Batch)
	}
	if c.Queue.MaxAttempts < 1 {
		bad("MNEME_QUEUE_ATTEMPTS: %d must be at least 1", c.Queue.MaxAttempts)
	}
	if c.Queue.LeaseTTL < time.Second {
		bad("MNEME_QUEUE_LEASE: %s is shorter than 1s", c.Queue.LeaseTTL)
	}
	if c.Sessions.TTL < time.Second || c.Sessions.TTL > memory.MaxSessionTTL {
		bad("-session-ttl (MNEME_SESSION_TTL): %s is outside 1s..%s", c.Sessions.TTL, memory.MaxSessionTTL)
	}
	if c.Sessions.MaxTurns < 1 {
		bad("-session-max-turns: %d must be at least 1", c.Sessions.MaxTurns)
	}
	if c.Sessions.MaxBytes < 1024 {
		bad("-session-max-bytes: %d must be at least 1024", c.Sessions.MaxBytes)
	}
	if c.Sessions.Scan <= 0 {
		bad("-session-scan (MNEME_SESSION_SCAN): %s must be positive", c.Sessions.Scan)
	}
	if err := c.Lifecycle.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Policy.Timeout <= 0 {
		bad("-policy-timeout: %s must be positive", c.Policy.Timeout)
	}
	if c.Audit.Cap < 1 || c.Audit.Cap > 10_000_000 {
		bad("-audit-cap (MNEME_AUDIT_CAP): %d is outside 1..10000000", c.Audit.Cap)
	}
	if c.Audit.Retention < time.Hour {
		bad("-audit-retention (MNEME_AUDIT_RETENTION): %s is shorter than 1h", c.Audit.Retention)
	}
	if u := c.Extract.URL; u != "" {
		if p, err := url.Parse(u); err != nil || !oneOf(p.Scheme, "http", "https") || p.Host == "" {
			bad("MNEME_EXTRACT_LLM_URL: %q is not an http(s) URL", u)
		}
		if c.Extract.Model == "" {
			bad("MNEME_EXTRACT_LLM_MODEL: required with MNEME_EXTRACT_LLM_URL")
		}
	}
	if c.Extract.Timeout <= 0 {
		bad("MNEME_EXTRACT_LLM_TIMEOUT: %s must be positive", c.Extract.Timeout)
	}
	if len(c.Identity.KeySecret) < identity.MinSecretLen {
		bad("MNEME_KEY_SECRET: API keys are stored under an HMAC with this server secret; set it to at least %d bytes (e.g. `openssl rand -hex 32`), the same on every replica", identity.MinSecretLen)
	}

	errs = append(errs, c.OIDC.validate()...)
	errs = append(errs, c.Limits.validate()...)
	return errors.Join(errs...)
}

// validate checks the embedder's settings; the http settings are checked
// only for the http embedder, and setting them for the built-in one is a
// mistake worth reporting rather than ignoring.
func (e EmbeddingConfig) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if e.Dim < 8 || e.Dim > 4096 {
		bad("-embed-dim (MNEME_EMBED_DIM): %d is outside 8..4096", e.Dim)
	}
	if e.DuplicateThreshold < 0 || e.DuplicateThreshold > 1.01 {
		bad("-dedup-threshold (MNEME_DEDUP_THRESHOLD): %v is outside 0..1.01 (0: the model's calibrated threshold)", e.DuplicateThreshold)
	}
	switch e.Kind {
	case EmbedderUSE, EmbedderBuiltin:
		if e.URL != "" || e.Model != "" {
			bad("-embedder (MNEME_EMBEDDER): embed url and model are set but the embedder is %s; add -embedder http (MNEME_EMBEDDER=http)", e.Kind)
		}
		if e.Kind == EmbedderUSE && e.Dim != USEDim {
			bad("-embed-dim (MNEME_EMBED_DIM): the use embedder makes vectors of dimension %d, not %d", USEDim, e.Dim)
		}
		return errs
	case EmbedderHTTP:
	default:
		bad("-embedder (MNEME_EMBEDDER): %q is none of use, builtin and http", e.Kind)
		return errs
	}
	if u, err := url.Parse(e.URL); err != nil || !oneOf(u.Scheme, "http", "https") || u.Host == "" {
		bad("-embed-url (MNEME_EMBED_URL): %q is not an http:// or https:// URL such as http://127.0.0.1:8000/v1", e.URL)
	}
	if strings.TrimSpace(e.Model) == "" {
		bad("-embed-model (MNEME_EMBED_MODEL): the http embedder needs a model name")
	}
	if e.Batch < 1 || e.Batch > 2048 {
		bad("-embed-batch (MNEME_EMBED_BATCH): %d is outside 1..2048", e.Batch)
	}
	if e.Timeout <= 0 {
		bad("-embed-timeout (MNEME_EMBED_TIMEOUT): %s must be positive", e.Timeout)
	}
	if e.Retries < 0 || e.Retries > 10 {
		bad("-embed-retries (MNEME_EMBED_RETRIES): %d is outside 0..10", e.Retries)
	}
	return errs
}

// MemoryRecall is recall's tuning for memory.Service: the relevance floor,
// the exact-scan limit and, when a URL is set, the reranker.
func (c Config) MemoryRecall() (memory.RecallConfig, error) {
	rc := memory.RecallConfig{VectorFloor: c.Recall.VectorFloor, ExactMax: c.Recall.ExactMax}
	if c.Rerank.URL != "" {
		r, err := rerank.New(rerank.Options{URL: c.Rerank.URL, Model: c.Rerank.Model, Timeout: c.Rerank.Timeout})
		if err != nil {
			return memory.RecallConfig{}, err
		}
		rc.Reranker = r
	}
	return rc, nil
}

// binder registers each setting once: its flag, its environment variable,
// or both. The environment is read at once (flags parsed later win over
// it); its errors, each naming the variable, collect in errs.
type binder struct {
	fs     *flag.FlagSet
	getenv func(string) string
	errs   []error
}

func (b *binder) bind(v flag.Value, name, env, usage string) {
	if env != "" {
		if s := b.getenv(env); s != "" {
			if ev, ok := v.(envSetter); ok {
				ev.setEnv(s)
			} else if err := v.Set(s); err != nil {
				b.errs = append(b.errs, fmt.Errorf("%s: %w", env, err))
			}
		}
		usage += " (" + env + ")"
	}
	if name != "" {
		b.fs.Var(v, name, usage)
	}
}

// envSetter is a value that reads the environment by rules of its own.
type envSetter interface{ setEnv(string) }

// Typed flag.Values over a Config's fields.
func stringValue(p *string) flag.Value          { return (*stringVal)(p) }
func intValue(p *int) flag.Value                { return (*intVal)(p) }
func int64Value(p *int64) flag.Value            { return (*int64Val)(p) }
func float64Value(p *float64) flag.Value        { return (*float64Val)(p) }
func durationValue(p *time.Duration) flag.Value { return (*durationVal)(p) }

type stringVal string

func (v *stringVal) String() string     { return string(*v) }
func (v *stringVal) Set(s string) error { *v = stringVal(s); return nil }

type intVal int

func (v *intVal) String() string { return strconv.Itoa(int(*v)) }
func (v *intVal) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*v = intVal(n)
	return nil
}

type int64Val int64

func (v *int64Val) String() string { return strconv.FormatInt(int64(*v), 10) }
func (v *int64Val) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*v = int64Val(n)
	return nil
}

type float64Val float64

func (v *float64Val) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }
func (v *float64Val) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	*v = float64Val(f)
	return nil
}

type durationVal time.Duration

func (v *durationVal) String() string { return time.Duration(*v).String() }
func (v *durationVal) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 10s", s)
	}
	*v = durationVal(d)
	return nil
}

// setInt is an int that remembers it was set.
type setInt struct {
	v   *int
	set *bool
}

func (i *setInt) String() string {
	if i.v == nil {
		return "0"
	}
	return strconv.Itoa(*i.v)
}
func (i *setInt) Set(s string) error {
	if err := (*intVal)(i.v).Set(s); err != nil {
		return err
	}
	*i.set = true
	return nil
}

// lenientBool is a bool flag whose environment variable is read by env,
// as memoryd always has, and never fails.
type lenientBool struct {
	v   *bool
	env func(string) bool
}

func (b *lenientBool) String() string   { return strconv.FormatBool(b.v != nil && *b.v) }
func (b *lenientBool) IsBoolFlag() bool { return true }
func (b *lenientBool) setEnv(s string)  { *b.v = b.env(s) }
func (b *lenientBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q is not true or false", s)
	}
	*b.v = v
	return nil
}

type levelValue slog.Level

func (l *levelValue) String() string { return slog.Level(*l).String() }
func (l *levelValue) Set(s string) error {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(s)); err != nil {
		return fmt.Errorf("%q is not debug, info, warn or error", s)
	}
	*l = levelValue(lv)
	return nil
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

// clusterAddrs returns the cluster's nodes, none without a cluster.
func (r RedisConfig) clusterAddrs() []string {
	var out []string
	for _, a := range strings.Split(r.Cluster, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
