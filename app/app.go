// Package app is Mneme's composition root. New turns a Config into a wired
// App (stores, policy engine, embedder, services, HTTP handler) and starts
// nothing; Run runs every worker and the HTTP server in one group until its
// context ends; Close releases the connections. memoryd, memctl, memeval,
// bench and the end-to-end tests share it so that they wire the same thing.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/calibration"
	"mneme/census"
	"mneme/documents"
	"mneme/export"
	"mneme/extract"
	"mneme/graph"
	"mneme/graph/analysis"
	graphdocs "mneme/graph/documents"
	"mneme/graph/exportstore"
	"mneme/graph/keystore"
	"mneme/graph/policystore"
	graphsessions "mneme/graph/sessions"
	"mneme/graph/tally"
	"mneme/graphquery"
	"mneme/handlers"
	"mneme/identity"
	"mneme/janitor"
	"mneme/journal"
	"mneme/leader"
	"mneme/mcp"
	"mneme/memory"
	"mneme/metrics"
	"mneme/partitions"
	"mneme/policy"
	"mneme/policyadmin"
	"mneme/policysync"
	"mneme/queue"
	"mneme/quota"
	"mneme/ratelimit"
	"mneme/recalllog"
	"mneme/session"
	"mneme/sessionowners"
	"mneme/signouts"
	"mneme/stall"
	"mneme/tracing"
	"mneme/usernames"
	"mneme/web"
	"mneme/workingmemory"
)

// App is a wired Mneme: its handler and the parts tests and tools reach for.
type App struct {
	Handler http.Handler
	Service *memory.Service
	// MemoryOptions are the parts Service was built with, for tools that
	// build a variant of it (the recall benchmark).
	MemoryOptions memory.Options
	Store         *graph.Store
	// Keys keeps tenants, principals and their keys, and the agents and
	// users memories are linked to.
	Keys   *keystore.Store
	Redis  redis.UniversalClient
	Policy *policy.Engine
	Embed  memory.Embedder
	// Calibration is the embedding model's floor, dedup threshold and
	// fusion weights.
	Calibration calibration.Calibration
	// Admin administers policies and grants and keeps this replica's
	// engine in step; Identity authenticates API keys.
	Admin    *policyadmin.Service
	Identity *identity.Service
	// Erasers are the places outside the graph an erase reaches.
	Erasers []memory.Eraser
	// Janitor expires, archives and caps memories.
	Janitor *janitor.Janitor
	// RecallLog is the recall log in Redis.
	RecallLog *journal.RecallLog
	// Census counts memories under the read policy for the panel's
	// overview, keeping each count for panelCountReuse.
	Census *census.Service
	// Tallies are the census's counts kept by every write (reconciling
	// builds them for older memories and mends any drift), and the
	// quotas' usage.
	Tallies *tally.Store
	// Partitions is recall's cache of partition sizes. A tool that writes
	// around the service (the recall benchmark) forgets what it grew, or
	// recall picks its path by the old size for up to partitions.DefaultTTL.
	Partitions *partitions.Sizes
	// Names are users' names as recall reads them, kept a while per
	// replica; an erase or a rename through this App forgets one at once.
	Names *usernames.Cache
	// Recorder writes access counts and the recall log off the request
	// path while Run runs; until then recalls only queue. It is the
	// memory.Eraser of the "recall_log" place: it writes its queue before
	// it erases, so no queued recall lands after an erase.
	Recorder *journal.Recorder

	// Sessions is working memory; SessionExpiry ends the sessions whose
	// time is up while Run runs.
	Sessions      *session.Store
	SessionExpiry *session.Expirer
	// Working serves working memory over Sessions: turns, reads, closing.
	Working *workingmemory.Service

	// janitorRunner sweeps on the leading replica; nil when the periodic
	// janitor is off.
	janitorRunner *leader.Runner
	// Decisions is the policy decision log; Run writes it.
	Decisions *journal.Decisions
	// Audit is the admin audit trail every administrative act is recorded in.
	Audit *journal.Audit
	// Trail records in Audit each failed act under the code the API
	// answered it with (answeredAudit); the services record through it.
	Trail memory.Auditor
	// Bus carries policy and grant revisions between replicas.
	Bus *policysync.Bus

	// Export answers data-subject exports for admins.
	Export *export.Service
	// Graph answers analysts' graph queries.
	Graph *graphquery.Service
	// Documents imports knowledge-base documents as shared knowledge.
	Documents *documents.Service

	// Queue holds asynchronous writes; QueueWorkers applies them while Run
	// runs, unless the configuration turned them off.
	Queue        *queue.Queue
	QueueWorkers *queue.Pool

	// Metrics counts what the service does for /metrics and the panel;
	// Tracing starts the spans of requests and their stages.
	Metrics *metrics.Metrics
	Tracing *tracing.Tracing

	// Tokens verifies JWT bearer tokens, nil when they are off; Limiter
	// rate-limits callers and Quota holds tenants to their quotas, each
	// nil when off.
	Tokens  *identity.JWTVerifier
	Limiter *ratelimit.Limiter
	Quota   *quota.Tracker

	// Stalls pings Neo4j and Redis while Run runs, and the handler refuses
	// API requests with 503 while one is stalled; nil when
	// -stall-timeout is 0.
	Stalls *stall.Watcher

	cfg Config
	log *slog.Logger
	// tool marks an App of a short-lived command: its Run leaves the
	// deployment's shared jobs (queue, session expiry, janitor) to memoryd.
	tool bool
}

// NewTool is New for command-line tools: the configuration comes from the
// environment alone, and only warnings are logged, to stderr. Its workers
// (StartWorkers) are the ones that finish the tool's own calls: the decision
// log, the recall recorder and the policy listener.
func NewTool(ctx context.Context, getenv func(string) string, stderr io.Writer) (*App, error) {
	cfg, err := Load(nil, getenv, stderr)
	if err != nil {
		return nil, err
	}
	a, err := New(ctx, cfg, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return nil, err
	}
	a.tool = true
	return a, nil
}

// New connects to the stores (waiting up to cfg.Server.StartTimeout for them),
// bootstraps the schema, loads the grants into the policy engine and builds
// the services and the HTTP handler. It starts nothing: Run does. Close
// releases what New opened.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, cfg.Server.StartTimeout)
	defer cancel()

	store, err := openGraph(startCtx, cfg, log)
	if err != nil {
		return nil, err
	}
	a := &App{Store: store, cfg: cfg, log: log}
	// Tenants, principals, keys and users' names, in the graph's database.
	keys := keystore.New(store.Runner())
	a.Keys = keys
	ok := false
	defer func() {
		if !ok {
			a.Close(context.WithoutCancel(ctx))
		}
	}()

	if a.Embed, err = NewEmbedder(startCtx, cfg); err != nil {
		return nil, err
	}
	if err := checkVectorIndex(startCtx, store, a.Embed); err != nil {
		return nil, err
	}
	if a.Calibration, err = Calibration(cfg, a.Embed); err != nil {
		return nil, err
	}
	// Not bounded by the start timeout: on a large database the first start
	// of a new version may rewrite every memory (a backfill, 10,000 per
	// transaction), which takes as long as it takes; an interrupt stops it,
	// and the next start goes on where it stopped.
	if err := store.EnsureSchema(ctx, a.Embed.Dimension()); err != nil {
		return nil, fmt.Errorf("neo4j schema: %w", err)
	}
	// Users stored before folded ids, by which a write finds a user whose
	// id differs from its own only by case, get theirs.
	if err := keys.EnsureUserFolds(ctx); err != nil {
		return nil, err
	}
	if a.Redis, err = openRedis(startCtx, cfg, log); err != nil {
		return nil, err
	}
	if cfg.Server.StallTimeout > 0 {
		if a.Stalls, err = stall.New(stall.Options{
			Stores: []stall.Store{
				// Under a burst its ping may wait behind the requests it is
				// answering: those answers keep it from counting as stalled.
				{Name: "neo4j", Ping: store.Answer, Answered: store.Runner().Answered},
				{Name: "redis", Ping: func(ctx context.Context) error { return a.Redis.Ping(ctx).Err() }},
			},
			Timeout: cfg.Server.StallTimeout, Logger: log,
		}); err != nil {
			return nil, err
		}
	}
	a.Metrics = metrics.New(metrics.Options{Queue: a.queueProbe})
	if a.Tracing, err = tracing.New(ctx, cfg.Server.OTLPEndpoint, "memoryd"); err != nil {
		return nil, err
	}
	a.Redis.AddHook(a.Metrics.RedisHook())
	a.Decisions = journal.NewDecisions(a.Redis, journal.DecisionOptions{Logger: log})
	// The trail names an erased user by their tombstone's hash, which the
	// graph keeps.
	a.Audit = journal.NewAudit(a.Redis, journal.AuditOptions{
		Cap: cfg.Audit.Cap, Retention: cfg.Audit.Retention, Erased: exportstore.New(store.Runner()), Logger: log,
	})
	a.Trail = answeredAudit{a.Audit}
	a.Bus = policysync.New(a.Redis, log)
	if a.Policy, err = policy.New(ctx, policy.Options{Logger: log, Timeout: cfg.Policy.Timeout, Decisions: a.Metrics.Decisions(a.Decisions)}); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if err := a.buildJanitor(cfg.Lifecycle, log); err != nil {
		return nil, fmt.Errorf("janitor: %w", err)
	}
	a.RecallLog = journal.NewRecallLog(a.Redis, cfg.Recall.LogCap, 0)
	a.Recorder = journal.NewRecorder(journal.RecorderOptions{Log: a.RecallLog, Touch: store, Logger: log})
	recallCfg, err := cfg.MemoryRecall()
	if err != nil {
		return nil, err
	}
	if recallCfg.ExactMax == 0 {
		if recallCfg.ExactMax, err = exactMaxFor(startCtx, store); err != nil {
			return nil, err
		}
	}
	recallCfg, writeCfg := cfg.Tuned(a.Calibration, recallCfg)
	// Every place outside the graph that holds user data: erasing a user
	// (and deleting a memory, where the place can) asks each of them.
	a.Sessions = session.New(session.Options{
		Redis: a.Redis, TTL: cfg.Sessions.TTL, MaxTurns: cfg.Sessions.MaxTurns, MaxBytes: cfg.Sessions.MaxBytes,
	})
	a.Queue = queue.New(a.Redis, queue.Options{Prefix: cfg.Queue.Prefix, Shards: cfg.Queue.Shards, Logger: log})
	a.Erasers = []memory.Eraser{a.Sessions, a.Queue, a.Recorder, a.Decisions}
	// Identity: keys stored under an HMAC, cached per replica behind a
	// per-tenant epoch in Redis; erasing a user removes their keys.
	// Users' names, kept a while per replica for recall; a rename here
	// forgets the old one at once.
	a.Names = usernames.New(keys, nil)
	// graph.Store is the store of most parts; it is passed for each. Policy
	// revisions and settings live beside it, on its runner.
	if a.Admin, err = policyadmin.New(policyadmin.Options{
		Policies: policystore.New(store.Runner()), Grants: store, Principals: keys, Engine: a.Policy, Authz: a.Policy, Bus: a.Bus, Decisions: a.Decisions, Logger: log,
		Audit: a.Trail, AuditLog: a.Audit,
	}); err != nil {
		return nil, err
	}
	if a.Identity, err = buildIdentity(cfg.Identity, keys, a.Redis, a.Policy, a.Trail, a.Names, a.Admin, log); err != nil {
		return nil, err
	}
	a.Erasers = append(a.Erasers, a.Identity)
	a.Limiter = cfg.Limits.limiter(a.Redis)
	a.Tallies = tally.New(store.Runner())
	a.Quota = cfg.Limits.quota(a.Tallies, log)
	if a.Tokens, err = cfg.OIDC.jwtVerifier(log); err != nil {
		return nil, err
	}
	var quotaPort memory.Quota // a nil *quota.Tracker must stay a nil interface
	if a.Quota != nil {
		quotaPort = a.Quota
	}
	// Recall picks its vector path by partition sizes, reused for a while
	// rather than counted on every call.
	sizes, err := partitions.New(partitions.Options{Counter: store})
	if err != nil {
		return nil, err
	}
	a.Partitions = sizes
	search := sizedSearch{SearchStore: store, sizes: sizes}
	// A session id stays one user's and its opener's for good: writes
	// that name it are checked against the open session and the graph.
	owners := sessionowners.New(graphsessions.New(store.Runner()), a.Sessions)
	a.MemoryOptions = memory.Options{
		// The graph's failures are counted, and each stage traced, as
		// they pass.
		Store:  a.Tracing.Graph(a.Metrics.Graph(owners.Store(store))),
		Authz:  a.Tracing.Authorizer(a.Policy),
		Embed:  a.Tracing.Embedder(a.Embed),
		Logger: log,
		Recall: recallCfg, Write: writeCfg, Search: a.Tracing.GraphSearch(a.Metrics.GraphSearch(search)), Recorder: a.Recorder,
		Guard: a.Policy, Writes: a.Tracing.GraphWrites(a.Metrics.GraphWrites(owners.Writes(store))), Warm: store, Confirm: store, Forget: store, Fence: a.Queue,
		Erasers: a.Erasers, Janitor: a.Metrics.Sweeper(a.Janitor),
		Sessions: a.Sessions,
		Queue:    a.Queue,
		Audit:    a.Trail,
		Quota:    quotaPort,
		Names:    a.Names,
	}
	a.Service, err = memory.NewService(a.MemoryOptions)
	if err != nil {
		return nil, err
	}
	if a.Working, err = workingmemory.New(workingmemory.Options{
		Memories: a.Metrics.ExtractedWrites(a.Service), Sessions: a.Sessions, Authz: a.Policy, Extract: extract.New(cfg.Extract, log, nil),
		Queue: a.Queue, Quota: quotaPort, Users: keys, Owners: owners, Logger: log,
	}); err != nil {
		return nil, err
	}
	a.SessionExpiry = session.NewExpirer(a.Sessions, session.ExpirerOptions{
		End: func(ctx context.Context, s memory.Session) error {
			// Outside a request: nothing else has synced the tenant.
			if err := a.Admin.Sync(ctx, s.Owner.Tenant); err != nil {
				return err
			}
			if _, err := a.Working.EndSession(ctx, s); err != nil {
				return err
			}
			a.Metrics.Conversation(s.Owner.Tenant)
			return nil
		},
		Interval: cfg.Sessions.Scan, Logger: log,
	})
	a.QueueWorkers = queue.NewPool(a.Queue, queue.PoolOptions{
		Batch: cfg.Queue.Batch, MaxAttempts: cfg.Queue.MaxAttempts, LeaseTTL: cfg.Queue.LeaseTTL,
		Describe: func(err error) (string, string) { _, code, msg := handlers.Classify(err); return code, msg },
	})
	a.QueueWorkers.Handle(memory.JobMemories, a.Metrics.Jobs(a.Service.ApplyMemoryJobs))
	a.QueueWorkers.Handle(workingmemory.JobIngest, a.Metrics.Jobs(a.Working.ApplyIngestJobs))
	// Every tenant's grants as of start-up, for work that decides outside a
	// request (which syncs its tenant first); announcements keep them fresh.
	if err := a.Admin.ReloadGrants(startCtx); err != nil {
		return nil, err
	}
	// Data-subject exports read the graph, open sessions and the recall log,
	// and are recorded in the admin audit trail.
	if a.Export, err = export.New(export.Options{
		Graph: exportstore.New(store.Runner()), Sessions: a.Sessions, Recalls: a.RecallLog, Names: keys, Authz: a.Policy, Audit: a.Trail, Logger: log,
	}); err != nil {
		return nil, err
	}
	// Analysts' graph queries read through the graph store's runner under
	// the same policy engine, and are recorded in the admin audit trail.
	if a.Graph, err = graphquery.New(graphquery.Options{
		Store: analysis.New(store.Runner(), analysis.Options{}), Authz: a.Tracing.Authorizer(a.Policy), Audit: a.Trail, Logger: log,
	}); err != nil {
		return nil, err
	}
	recalls, err := recalllog.New(recalllog.Options{Log: a.RecallLog, Authz: a.Tracing.Authorizer(a.Policy), Logger: log})
	if err != nil {
		return nil, err
	}
	// Knowledge-base documents are written through the memory write path;
	// large imports are queued.
	docStore := graphdocs.New(store.Runner())
	if err := docStore.EnsureSchema(startCtx); err != nil {
		return nil, fmt.Errorf("neo4j schema of documents: %w", err)
	}
	if a.Documents, err = documents.New(documents.Options{
		Store: docStore, Writer: a.Metrics.Writes(a.Service), Authz: a.Policy, Queue: a.Queue, Sync: a.Admin.Sync, Quota: quotaPort, Audit: a.Trail, Teams: keys,
	}); err != nil {
		return nil, err
	}
	// Its writer counts what an import writes, queued or not (Writes).
	a.QueueWorkers.Handle(documents.JobImport, a.Documents.ApplyJobs)
	hopts := handlers.Options{
		Service: a.Service, Recalls: recalls, Admin: a.Admin, Identity: a.Identity, Sessions: a.Working, Logger: log, Ready: a.Ready, MaxBody: cfg.Server.MaxBody,
		Export: userExports{a.Export}, Graph: a.Graph, Knowledge: a.Documents,
		Observer: a.Metrics, Metrics: a.Metrics.Handler(), Tracer: a.Tracing.Tracer(),
	}
	if a.Stalls != nil { // a nil *stall.Watcher must stay a nil interface
		hopts.Stalls = a.Stalls
	}
	// The panel seals its sessions under a key of its own derived from the
	// identity secret, which every replica shares.
	a.Census, err = census.New(census.Options{
		Store: a.Tallies, Authz: a.Tracing.Authorizer(a.Policy), Reuse: panelCountReuse,
	})
	if err != nil {
		return nil, err
	}
	if hopts.Panel, err = web.New(web.Options{
		Service: a.Service, Census: panelCounts{a.Census}, Recalls: recalls, Admin: a.Admin, Identity: a.Identity, Metrics: a.Metrics, Graph: a.Graph,
		Secret: []byte(cfg.Identity.KeySecret), Logger: log, Limiter: panelLimiter(a.Limiter), SignOuts: signouts.New(a.Redis, ""),
	}); err != nil {
		return nil, err
	}
	// Interfaces stay nil for parts that are off.
	if a.Tokens != nil {
		hopts.Tokens = a.Tokens
	}
	if a.Limiter != nil {
		hopts.Limiter = a.Limiter
	}
	// The MCP endpoint sits behind the router's authentication and speaks
	// the API's error codes.
	if hopts.MCP, err = mcp.New(mcp.Options{
		Service: a.Service, Ingest: a.Working, Principal: handlers.PrincipalFrom, Classify: handlers.Classify,
		Refusal: handlers.Refusal, Logger: log, MaxBody: cfg.Server.MaxBody, Observer: a.Metrics,
	}); err != nil {
		return nil, err
	}
	h, err := handlers.New(hopts)
	if err != nil {
		return nil, err
	}
	a.Handler = beginWrites(h, time.Now)
	ok = true
	return a, nil
}

// Ready reports whether Neo4j and Redis both answer: not while one is
// stalled, and not when a ping fails.
func (a *App) Ready(ctx context.Context) error {
	if a.Stalls != nil {
		if err := a.Stalls.Err(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return errors.Join(a.Store.Ping(ctx), a.Redis.Ping(ctx).Err())
}

// listenPolicy keeps this replica's policies and grants current: each
// announced tenant is synced at once rather than on its next request.
func (a *App) listenPolicy(ctx context.Context) error {
	a.Bus.Listen(ctx, func(ctx context.Context, tenant string) {
		if err := a.Admin.Sync(ctx, tenant); err != nil && ctx.Err() == nil {
			a.log.WarnContext(ctx, "policy sync after an announcement failed; the next request retries", "tenant", tenant, "err", err)
		}
	})
	return nil
}

// Close releases the connections; it is safe on a partly built App. Call it
// after Run has returned (or when Run never ran).
func (a *App) Close(ctx context.Context) {
	a.closeTokens(ctx)
	if a.Tracing != nil {
		_ = a.Tracing.Shutdown(ctx)
	}
	if a.Redis != nil {
		_ = a.Redis.Close()
	}
	if a.Census != nil {
		a.Census.Wait() // a count in the background ends within a minute
	}
	if a.Store != nil {
		_ = a.Store.Close(ctx)
	}
}

// openGraph connects to Neo4j, retrying until ctx ends so that memoryd can
// start alongside a database that is still coming up.
func openGraph(ctx context.Context, cfg Config, log *slog.Logger) (*graph.Store, error) {
	var last error
	for {
		store, err := graph.Open(ctx, graph.Config{
			URI: cfg.Neo4j.URI, User: cfg.Neo4j.User, Password: cfg.Neo4j.Password, Database: cfg.Neo4j.Database,
			Timeout: cfg.Neo4j.Timeout, Logger: log,
		})
		if err == nil {
			return store, nil
		}
		last = err
		log.WarnContext(ctx, "waiting for Neo4j", "uri", cfg.Neo4j.URI, "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("neo4j at %s did not answer within %s: %w", cfg.Neo4j.URI, cfg.Server.StartTimeout, last)
		case <-time.After(time.Second):
		}
	}
}

func openRedis(ctx context.Context, cfg Config, log *slog.Logger) (redis.UniversalClient, error) {
	client, addr, err := newRedis(cfg.Redis, redisReadTimeout(cfg.Server.StallTimeout))
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil { // Neo4j's start took the time
		_ = client.Close()
		return nil, fmt.Errorf("the start timeout (%s) ran out before Redis at %s was tried", cfg.Server.StartTimeout, addr)
	}
	for {
		err := client.Ping(ctx).Err()
		if err == nil {
			return client, nil
		}
		log.WarnContext(ctx, "waiting for Redis", "url", addr, "err", err)
		select {
		case <-ctx.Done():
			_ = client.Close()
			return nil, fmt.Errorf("redis at %s did not answer within %s: %w", addr, cfg.Server.StartTimeout, err)
		case <-time.After(time.Second):
		}
	}
}

// redisReadTimeout is how long a Redis call waits for an answer: longer
// than a stall takes to be noticed, so that the stall watcher, not a
// command's timeout, decides that a silent Redis is stalled; go-redis's
// default (0) with the watch off.
func redisReadTimeout(stallTimeout time.Duration) time.Duration {
	if stallTimeout <= 0 {
		return 0
	}
	return stallTimeout + 1500*time.Millisecond
}

// newRedis returns the Redis client cfg describes and the address it
// names, waiting readTimeout for an answer (go-redis's default when 0). A
// call ends at its context's deadline: go-redis otherwise waits out its
// read timeout, once for each retry, on a Redis that has stopped
// answering.
func newRedis(cfg RedisConfig, readTimeout time.Duration) (redis.UniversalClient, string, error) {
	opts, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, "", fmt.Errorf("redis url: %w", err)
	}
	opts.ContextTimeoutEnabled = true
	if readTimeout > 0 {
		opts.ReadTimeout = readTimeout
	}
	if nodes := cfg.clusterAddrs(); len(nodes) > 0 {
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: nodes, Username: opts.Username, Password: opts.Password, TLSConfig: opts.TLSConfig,
			ContextTimeoutEnabled: true, ReadTimeout: opts.ReadTimeout,
		}), strings.Join(nodes, ","), nil
	}
	return redis.NewClient(opts), opts.Addr, nil
}

// buildIdentity wires the identity service: tenants, principals and keys.
func buildIdentity(cfg IdentityConfig, keys *keystore.Store, rdb redis.UniversalClient, authz identity.Authorizer, audit memory.Auditor, names identity.NameCache, grants identity.GrantRevoker, log *slog.Logger) (*identity.Service, error) {
	hasher, err := identity.NewHasher(cfg.KeySecret)
	if err != nil {
		return nil, err
	}
	return identity.New(identity.Options{
		Store: keys, Epochs: identity.NewRedisEpochs(rdb), Hasher: hasher, Authz: authz, Audit: audit, Logger: log,
		NoCache: cfg.NoCache, Names: names, Grants: grants,
	})
}

// panelCountReuse is how long the overview shows a count again before it
// counts anew in the background. A count from tallies is cheap, but one
// under a policy the tallies cannot answer reads every memory of the
// tenant; the page says when it counted.
const panelCountReuse = 15 * time.Second

// panelCounts hands the census's counts to the panel in the panel's type.
type panelCounts struct{ census *census.Service }

func (c panelCounts) Count(ctx context.Context, p memory.Principal) ([]web.Count, time.Time, error) {
	t, err := c.census.Count(ctx, p)
	out := make([]web.Count, len(t.Counts))
	for i, n := range t.Counts {
		out[i] = web.Count{UserID: n.UserID, Type: n.Type, Status: n.Status, N: n.N}
	}
	return out, t.At, err
}

func (c panelCounts) Forget(tenant string) { c.census.Forget(tenant) }

// userExports hands a data-subject export to the handlers, which send the
// document as it is.
type userExports struct{ export *export.Service }

func (e userExports) UserDocument(ctx context.Context, p memory.Principal, userID string) (any, error) {
	return e.export.User(ctx, p, userID)
}

// The largest partitions recall searches by exact cosine by default. A
// partitioned vector index beats the exact scan from a few hundred memories;
// the whole-database index of Neo4j 5.26 returns mostly other users'
// neighbours, so there only large partitions try it first.
const (
	exactMaxPartitioned = 1_000
	exactMaxWhole       = 20_000
)

// exactMaxFor picks the exact-scan limit for the vector index store has.
func exactMaxFor(ctx context.Context, store *graph.Store) (int, error) {
	partitioned, err := store.VectorIndexPartitioned(ctx)
	if err != nil {
		return 0, fmt.Errorf("neo4j vector index: %w", err)
	}
	if partitioned {
		return exactMaxPartitioned, nil
	}
	return exactMaxWhole, nil
}

// sizedSearch is the graph's search with partition sizes from a cache.
type sizedSearch struct {
	memory.SearchStore
	sizes *partitions.Sizes
}

func (s sizedSearch) PartitionSize(ctx context.Context, tenant, userID string) (int, error) {
	return s.sizes.PartitionSize(ctx, tenant, userID)
}

// panelLimiter is the API's rate limiter for the panel, or none: a nil
// *ratelimit.Limiter must not become a non-nil interface.
func panelLimiter(l *ratelimit.Limiter) web.Limiter {
	if l == nil {
		return nil
	}
	return l
}
