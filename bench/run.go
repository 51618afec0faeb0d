package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"mneme/app"
	"mneme/memory"
	"mneme/policy"
	"mneme/policyadmin"
	"mneme/tokens"
)

// Mode names, in the order they are reported.
const (
	modePolicy        = "policy"
	modePolicyClauses = "policy-clauses"
	modeNoPolicy      = "nopolicy"
	modeBareExact     = "bare-exact"
	modeBareIndex     = "bare-index"
)

// allModes are the modes in report order.
var allModes = []string{modePolicy, modePolicyClauses, modeNoPolicy, modeBareExact, modeBareIndex}

// recaller is the agent everything is recalled as.
const recaller = "agent-0"

// run wires the stores like memoryd, loads a fresh tenant, measures, reports
// and cleans up what it can. It returns the first error.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	appCfg, err := app.Load(nil, getenv, stderr)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	// A reused large tenant may need a schema migration on the first start.
	appCfg.Server.StartTimeout = max(appCfg.Server.StartTimeout, 15*time.Minute)
	// A loaded machine must not turn a slow policy evaluation into a failed
	// run; the latency still counts.
	appCfg.Policy.Timeout = max(appCfg.Policy.Timeout, 5*time.Second)
	// Nor a slow store call on a Neo4j shared with other work.
	appCfg.Neo4j.Timeout = max(appCfg.Neo4j.Timeout, time.Minute)
	// Recall is measured with memoryd's recorder and decision log running,
	// but this process applies no queued writes of the deployment.
	appCfg.Queue.Workers = false
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: max(appCfg.Log.Level, slog.LevelWarn)}))
	a, err := app.New(ctx, appCfg, log)
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	defer a.StartWorkers(ctx)()

	tenant := cfg.Tenant
	if tenant == "" {
		if tenant, err = freshTenant(); err != nil {
			return err
		}
	}
	rep := Report{Tenant: tenant, Neo4jURI: appCfg.Neo4j.URI, Config: cfg, Kept: cfg.Keep}
	fmt.Fprintf(stdout, "mneme recall benchmark: tenant %s on %s\n", tenant, appCfg.Neo4j.URI)
	fmt.Fprintf(stdout, "%d memories, %d users, %d agents, %d shared; %d queries (+%d warm-up) × %d runs, concurrency %d (throughput at %v), k %d, seed %d\n\n",
		cfg.Memories, cfg.Users, cfg.Agents, cfg.Shared, cfg.Queries, cfg.Warmup, cfg.Runs, cfg.Concurrency, cfg.Levels, cfg.K, cfg.Seed)

	// Generate everything up front, so that neither loading nor querying
	// pays for it.
	gen := newGenerator(cfg.Seed, tenant, cfg.Agents, time.Now())
	users := gen.users(cfg.Users)
	byUser := make([][]memory.Memory, len(users))
	for i, u := range users {
		n := cfg.Memories / cfg.Users
		if i < cfg.Memories%cfg.Users {
			n++
		}
		byUser[i] = gen.memories(u, n)
	}
	queries, err := makeQueries(ctx, gen, a.Embed, users, byUser, cfg.Warmup+cfg.Queries, cfg.K)
	if err != nil {
		return err
	}

	if cfg.Tenant != "" {
		fmt.Fprintf(stdout, "reusing tenant %s as loaded by an earlier run with the same -memories, -users, -agents and -seed\n\n", tenant)
	} else {
		if rep.Load, err = load(ctx, a.Store, a.Embed, byUser, cfg.Batch, cfg.LoadWorkers, stderr); err != nil {
			return fmt.Errorf("load: %w (tenant %s may hold part of the data)", err, tenant)
		}
		rep.Load.Agents = cfg.Agents
		printLoad(stdout, rep.Load)
	}

	grants, err := putGrants(ctx, a.Admin, tenant, cfg.Agents)
	if err != nil {
		return err
	}
	defer func() {
		if err := cleanup(context.WithoutCancel(ctx), a.Admin, tenant, grants, cfg.Keep, stdout); err != nil {
			fmt.Fprintln(stderr, "bench: cleanup:", err)
		}
	}()

	// The same recall tuning and sources as app.New gives the real Service.
	opts := serviceOptions(a, log)
	opts.Authz = openAuthorizer{}
	open, err := memory.NewService(opts)
	if err != nil {
		return err
	}
	opts.Authz = clauseAuthorizer{a.Policy}
	clauses, err := memory.NewService(opts)
	if err != nil {
		return err
	}
	// The recaller has a team in every run, so that only the shared
	// knowledge written between them tells the runs apart.
	agent := memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: recaller, Roles: []string{"agent"}, Team: recallerTeam}
	stages := &stageLog{}
	modes := pickModes(queryModes(a, open, clauses, agent, cfg, stages), cfg.Modes)

	measured := queries[cfg.Warmup:]
	stopProfile, err := startProfile(cfg.CPUProfile)
	if err != nil {
		return err
	}
	rep.Runs, err = runPhase(ctx, modes, queries, cfg, stages, "", stdout, stderr)
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	rep.Median = medianRun(rep.Runs)
	rep.Stages, rep.VectorPaths = stages.report(), stages.paths
	printPhase(stdout, "", cfg.Runs, rep.Median, rep.Stages, rep.VectorPaths)

	if cfg.Shared > 0 {
		var w knowledgeWriter = storeWriter{a.Store, a.Embed}
		if cfg.SharedPath == sharedViaService {
			w = a.Service
		}
		if rep.Shared, err = sharedPhase(ctx, w, a.Partitions, modes, queries, cfg, tenant, stages, rep.Runs, stdout, stderr); err != nil {
			return err
		}
	}

	if cfg.Throughput {
		if rep.Throughput, err = throughput(ctx, modes, measured, cfg.Levels, stderr); err != nil {
			return err
		}
		printThroughput(stdout, rep.Throughput, len(measured))
	}

	if cfg.Breakdown {
		fmt.Fprintln(stderr, "bench: timing the parts of a recall")
		parts, err := breakdownModes(ctx, a, agent, cfg, users)
		if err != nil {
			return err
		}
		s, err := measure(ctx, parts, measured, cfg.Concurrency)
		if err != nil {
			return fmt.Errorf("breakdown: %w", err)
		}
		rep.Breakdown = s.report()
		printBreakdown(stdout, rep.Breakdown, cfg.K)
	}

	if cfg.JSON != "" {
		if err := writeJSON(cfg.JSON, rep); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "results written to %s\n", cfg.JSON)
	}
	return nil
}

// runPhase warms up with the first cfg.Warmup queries, then times the
// others cfg.Runs times in every mode and prints each run. phase names the
// runs in the output ("" for the first ones).
func runPhase(ctx context.Context, modes []mode, queries []query, cfg Config, stages *stageLog, phase string, stdout, stderr io.Writer) ([]RunReport, error) {
	if cfg.Warmup > 0 {
		fmt.Fprintf(stderr, "bench: warming up with %d queries%s\n", cfg.Warmup, phase)
		if _, err := measure(ctx, modes, queries[:cfg.Warmup], cfg.Concurrency); err != nil {
			return nil, fmt.Errorf("warm-up%s: %w", phase, err)
		}
	}
	measured := queries[cfg.Warmup:]
	stages.reset()
	var runs []RunReport
	for r := 1; r <= cfg.Runs; r++ {
		fmt.Fprintf(stderr, "bench: run %d of %d%s\n", r, cfg.Runs, phase)
		s, err := measure(ctx, modes, measured, cfg.Concurrency)
		if err != nil {
			return nil, fmt.Errorf("run %d%s: %w", r, phase, err)
		}
		rr := runReport(r, s)
		runs = append(runs, rr)
		printRun(stdout, fmt.Sprintf("run %d of %d%s: %d queries × %d modes in %.1f s (%.0f calls/s), concurrency %d",
			r, cfg.Runs, phase, len(measured), len(modes), rr.Seconds, rr.CallsPerSecond, cfg.Concurrency), rr)
	}
	return runs, nil
}

// printPhase prints the median of a phase's runs and the stages of its
// policy recalls.
func printPhase(w io.Writer, phase string, runs int, median RunReport, stages []ModeReport, paths map[string]int) {
	printRun(w, fmt.Sprintf("median of %d runs%s", runs, phase), median)
	fmt.Fprintf(w, "stages inside the policy recalls of all runs%s, from each answer's search.stages_ms (vector paths %v)\n", phase, paths)
	printModes(w, stages)
	fmt.Fprintln(w)
}

// sharedPhase writes the tenant's shared knowledge through the write path
// of POST /v1/memories, runs the same queries in the same modes again, and
// compares each run with its counterpart in without.
func sharedPhase(ctx context.Context, w knowledgeWriter, sizes partitionSizes, modes []mode, queries []query, cfg Config, tenant string, stages *stageLog, without []RunReport, stdout, stderr io.Writer) (*SharedReport, error) {
	const phase = " with shared knowledge"
	ms := sharedKnowledge(cfg.Seed, cfg.Shared, cfg.Agents)
	load, err := loadShared(ctx, w, tenant, ms, cfg.Batch, cfg.LoadWorkers, stderr)
	if err != nil {
		return nil, fmt.Errorf("shared knowledge: %w (tenant %s may hold part of it)", err, tenant)
	}
	// Recall would pick the shared partition's path by its size before the
	// load (0: an exact scan) until the cached size expires.
	sizes.Forget(tenant, "")
	load.Path = cfg.SharedPath
	printSharedLoad(stdout, load, recallerTeam)
	sr := &SharedReport{Team: recallerTeam, Load: load}
	if sr.Runs, err = runPhase(ctx, modes, queries, cfg, stages, phase, stdout, stderr); err != nil {
		return nil, err
	}
	sr.Median = medianRun(sr.Runs)
	sr.Stages, sr.VectorPaths = stages.report(), stages.paths
	printPhase(stdout, phase, cfg.Runs, sr.Median, sr.Stages, sr.VectorPaths)
	for i := range sr.Runs {
		sr.Versus = append(sr.Versus, versus(i+1, without[i], sr.Runs[i]))
	}
	sr.Versus = append(sr.Versus, versus(0, medianRun(without), sr.Median))
	printVersus(stdout, sr.Versus, len(queries)-cfg.Warmup)
	return sr, nil
}

// partitionSizes is recall's cache of partition sizes (app.App.Partitions).
type partitionSizes interface {
	Forget(tenant, userID string)
}

// freshTenant returns a tenant name no earlier run used.
func freshTenant() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("tenant name: %w", err)
	}
	return "bench-" + hex.EncodeToString(b[:]), nil
}

// makeQueries draws n queries for random users, embeds them, and picks k
// memories of each query's user for the breakdown's policy decisions.
func makeQueries(ctx context.Context, gen *generator, emb memory.Embedder, users []*user, byUser [][]memory.Memory, n, k int) ([]query, error) {
	qs := make([]query, n)
	texts := make([]string, n)
	for i := range qs {
		u := gen.pick(len(users))
		qs[i] = query{user: users[u].id, text: gen.question(users[u]), session: fmt.Sprintf("s-%s-%03d", users[u].id, i%4)}
		texts[i] = qs[i].text
		for range k {
			ms := byUser[u]
			qs[i].resources = append(qs[i].resources, memory.ResourceOf(ms[gen.pick(len(ms))]))
		}
	}
	// As recall does: a question is embedded as a query, not a passage.
	for i := range qs {
		vec, err := emb.EmbedQuery(ctx, texts[i])
		if err != nil {
			return nil, fmt.Errorf("embed queries: %w", err)
		}
		qs[i].vec = vec
	}
	return qs, nil
}

// putGrants lets the recalling agent read every other agent's memories of
// every type and sensitivity, so that policy and nopolicy find the same
// memories and differ only in the work policy does.
func putGrants(ctx context.Context, svc *policyadmin.Service, tenant string, agents int) ([]string, error) {
	var ids []string
	for i := 1; i < agents; i++ {
		g := memory.Grant{
			ID: fmt.Sprintf("bench-%s-reads-%s", recaller, agentID(i)), Tenant: tenant,
			Grantee: recaller, Source: agentID(i), Types: memory.Types, MaxSensitivity: memory.SensitivityRestricted,
		}
		if err := svc.PutGrant(ctx, g); err != nil {
			return ids, fmt.Errorf("grant %s: %w", g.ID, err)
		}
		ids = append(ids, g.ID)
	}
	return ids, nil
}

// cleanup removes the grants unless keep. The memories stay either way:
// graph.Store has no way to purge a tenant, and deleting memory by memory
// would leave a tombstone for each.
func cleanup(ctx context.Context, svc *policyadmin.Service, tenant string, grants []string, keep bool, stdout io.Writer) error {
	if keep {
		fmt.Fprintf(stdout, "kept tenant %s (memories and grants)\n", tenant)
		return nil
	}
	admin := memory.Principal{Tenant: tenant, Kind: memory.KindAdmin, ID: "bench", Roles: []string{"admin"}}
	var errs []error
	for _, id := range grants {
		if err := svc.DeleteGrant(ctx, admin, id); err != nil && !errors.Is(err, memory.ErrNotFound) {
			errs = append(errs, fmt.Errorf("grant %s: %w", id, err))
		}
	}
	fmt.Fprintf(stdout, "removed the grants of tenant %s; its memories remain in Neo4j (graph.Store has no tenant purge)\n", tenant)
	return errors.Join(errs...)
}

// userScope is the scope of one clause {UserID: user}: everything about the
// user, which is what recall reads when policy is out of the way.
func userScope(tenant, user string) memory.Scope {
	return memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{UserID: user}}}
}

// queryModes returns the measured modes, in report order: recall through
// the real Service (the policy compiled to a filter), through clauses (the
// same with scope.rego's clauses narrowing the queries instead) and through
// open (the same with an allow-all Authorizer), the exact vector query
// recall wraps, and the vector index.
func queryModes(a *app.App, open, clauses *memory.Service, agent memory.Principal, cfg Config, stages *stageLog) []mode {
	tenant := agent.Tenant
	recall := func(s *memory.Service, log *stageLog) func(context.Context, query) (answer, error) {
		return func(ctx context.Context, q query) (answer, error) {
			res, err := s.Recall(ctx, agent, memory.RecallRequest{UserID: q.user, Query: q.text, K: cfg.K, SessionID: q.session})
			if err == nil && log != nil {
				log.add(res.Search)
			}
			return answerOf(res), err
		}
	}
	return []mode{
		{modePolicy, recall(a.Service, stages)},
		{modePolicyClauses, recall(clauses, nil)},
		{modeNoPolicy, recall(open, nil)},
		{modeBareExact, func(ctx context.Context, q query) (answer, error) {
			hits, err := a.Store.SearchVector(ctx, userScope(tenant, q.user), memory.SearchQuery{
				UserID: q.user, Embedding: q.vec, Limit: cfg.Candidates,
			})
			return hitsAnswer(hits), err
		}},
		{modeBareIndex, func(ctx context.Context, q query) (answer, error) {
			hits, err := a.Store.SearchVectorIndex(ctx, tenant, q.user, q.vec, cfg.Candidates)
			return hitsAnswer(hits), err
		}},
	}
}

// answerOf counts a recall's memories and the shared ones among them.
func answerOf(r memory.RecallResult) answer {
	a := answer{hits: len(r.Memories)}
	for _, m := range r.Memories {
		if memory.ScopeOf(m.Memory) != memory.ScopeUser {
			a.shared++
		}
	}
	return a
}

// hitsAnswer counts a search's hits and the shared ones among them.
func hitsAnswer(hits []memory.Hit) answer {
	a := answer{hits: len(hits)}
	for _, h := range hits {
		if memory.ScopeOf(h.Memory) != memory.ScopeUser {
			a.shared++
		}
	}
	return a
}

// pickModes keeps the modes named in names, in the order of modes.
func pickModes(modes []mode, names []string) []mode {
	return slices.DeleteFunc(modes, func(m mode) bool { return !slices.Contains(names, m.name) })
}

// openAuthorizer allows everything and scopes a read to the requested user
// alone: recall with the policy engine taken out.
type openAuthorizer struct{}

var _ memory.Authorizer = openAuthorizer{}

func (openAuthorizer) Decide(context.Context, memory.Principal, string, memory.Resource, time.Time) (memory.Decision, error) {
	return memory.Decision{Allow: true, Reasons: []string{"policy bypassed"}}, nil
}

func (openAuthorizer) Covers(memory.Scope, memory.Resource) bool { return true }

func (openAuthorizer) ReadScope(_ context.Context, p memory.Principal, userID string, _ time.Time) (memory.Scope, error) {
	return memory.Scope{Tenant: p.Tenant, Clauses: []memory.Clause{{UserID: userID}}}, nil
}

// clauseAuthorizer is the policy engine with the read scope of scope.rego's
// clauses, which the filter compiled by partial evaluation replaced.
type clauseAuthorizer struct{ *policy.Engine }

func (c clauseAuthorizer) ReadScope(ctx context.Context, p memory.Principal, userID string, now time.Time) (memory.Scope, error) {
	return c.ClauseScope(ctx, p, userID, now)
}

// breakdownModes times the parts a policy recall is made of, each on its own:
// embedding the question, the policy scope, k policy decisions, the vector
// search under the policy's scope, the full-text search, the partition count
// that picks the vector path, and graph expansion from the entities the
// question names and from the session.
func breakdownModes(ctx context.Context, a *app.App, agent memory.Principal, cfg Config, users []*user) ([]mode, error) {
	tenant, now := agent.Tenant, time.Now()
	scopes := map[string]memory.Scope{}
	for _, u := range users {
		s, err := a.Policy.ReadScope(ctx, agent, u.id, now)
		if err != nil {
			return nil, fmt.Errorf("policy scope of %s: %w", u.id, err)
		}
		scopes[u.id] = s
	}
	return []mode{
		{"embed question", func(ctx context.Context, q query) (answer, error) {
			vec, err := a.Embed.EmbedQuery(ctx, q.text)
			return counted(len(vec), err)
		}},
		{"policy scope (filter)", func(ctx context.Context, q query) (answer, error) {
			s, err := a.Policy.ReadScope(ctx, agent, q.user, time.Now())
			return counted(len(s.Clauses), err)
		}},
		{"policy scope (clauses)", func(ctx context.Context, q query) (answer, error) {
			s, err := a.Policy.ClauseScope(ctx, agent, q.user, time.Now())
			return counted(len(s.Clauses), err)
		}},
		{fmt.Sprintf("policy decide ×%d", cfg.K), func(ctx context.Context, q query) (answer, error) {
			allowed, now := 0, time.Now()
			for _, r := range q.resources {
				d, err := a.Policy.Decide(ctx, agent, memory.ActionRead, r, now)
				if err != nil {
					return counted(allowed, err)
				}
				if d.Allow {
					allowed++
				}
			}
			return counted(allowed, nil)
		}},
		{"vector, user scope", func(ctx context.Context, q query) (answer, error) {
			hits, err := a.Store.SearchVector(ctx, userScope(tenant, q.user), memory.SearchQuery{
				UserID: q.user, Embedding: q.vec, Limit: cfg.Candidates,
			})
			return counted(len(hits), err)
		}},
		{"vector, policy scope", func(ctx context.Context, q query) (answer, error) {
			hits, err := a.Store.SearchVector(ctx, scopes[q.user], memory.SearchQuery{
				UserID: q.user, Embedding: q.vec, Limit: cfg.Candidates,
			})
			return counted(len(hits), err)
		}},
		{"fulltext, user scope", func(ctx context.Context, q query) (answer, error) {
			hits, err := a.Store.SearchFullText(ctx, userScope(tenant, q.user), memory.SearchQuery{
				UserID: q.user, Text: strings.Join(tokens.Keywords(q.text), " "), Limit: cfg.Candidates,
			})
			return counted(len(hits), err)
		}},
		{"fulltext, policy scope", func(ctx context.Context, q query) (answer, error) {
			hits, err := a.Store.SearchFullText(ctx, scopes[q.user], memory.SearchQuery{
				UserID: q.user, Text: strings.Join(tokens.Keywords(q.text), " "), Limit: cfg.Candidates,
			})
			return counted(len(hits), err)
		}},
		{"partition size", func(ctx context.Context, q query) (answer, error) {
			n, err := a.Store.PartitionSize(ctx, tenant, q.user)
			return counted(n, err)
		}},
		{"graph, named entities", func(ctx context.Context, q query) (answer, error) {
			xs, err := a.Store.Expand(ctx, scopes[q.user], memory.ExpandQuery{
				UserID: q.user, Text: q.text, Hops: 2, Limit: cfg.Candidates,
				Filters: memory.SearchQuery{UserID: q.user, Embedding: q.vec, Limit: cfg.Candidates},
			})
			return counted(len(xs), err)
		}},
		{"graph, session", func(ctx context.Context, q query) (answer, error) {
			xs, err := a.Store.Expand(ctx, scopes[q.user], memory.ExpandQuery{
				UserID: q.user, SessionID: q.session, Limit: cfg.Candidates,
				Filters: memory.SearchQuery{UserID: q.user, Embedding: q.vec, Limit: cfg.Candidates},
			})
			return counted(len(xs), err)
		}},
	}, nil
}

// serviceOptions are the parts app.New gives the real Service, its recall
// tuning included. It measures recall without its bookkeeping: recalls are
// not recorded.
func serviceOptions(a *app.App, log *slog.Logger) memory.Options {
	opts := a.MemoryOptions
	opts.Logger, opts.Recorder = log, unrecorded{}
	return opts
}

// unrecorded drops every recall record.
type unrecorded struct{}

func (unrecorded) Record(memory.RecallRecord) {}

// startProfile starts a CPU profile into path ("" profiles nothing) and
// returns what stops it and closes the file.
func startProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
