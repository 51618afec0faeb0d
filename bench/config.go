package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"mneme/memory"
)

// Config is what one benchmark run does. Where the servers are comes from the
// environment through app.Load, as for memoryd.
type Config struct {
	Memories    int `json:"memories"`     // memories to load
	Users       int `json:"users"`        // users they are about
	Agents      int `json:"agents"`       // agents that write them: agent-0 … agent-(n-1)
	Batch       int `json:"batch"`        // memories per CreateMemories call
	LoadWorkers int `json:"load_workers"` // concurrent loaders
	Queries     int `json:"queries"`      // measured queries per run
	Warmup      int `json:"warmup"`       // unmeasured queries before the first run
	Runs        int `json:"runs"`         // repetitions of the query phase
	Concurrency int `json:"concurrency"`  // query workers of the runs and the breakdown: the first of Levels
	// Levels are the concurrencies the throughput phase measures recall and
	// the bare vector query at, each alone.
	Levels     []int  `json:"concurrency_levels"`
	K          int    `json:"k"`          // memories a recall returns
	Candidates int    `json:"candidates"` // hits asked of the bare searches (recall's default per source)
	Seed       uint64 `json:"seed"`       // generator seed: same seed, same data and queries
	Keep       bool   `json:"keep"`       // keep the tenant's grants at the end
	Breakdown  bool   `json:"breakdown"`  // also time the parts of a recall
	Throughput bool   `json:"throughput"` // also measure throughput at each of Levels
	// Modes are the modes the runs measure, in report order; all by default.
	Modes []string `json:"modes"`
	JSON  string   `json:"-"` // file to write the results to
	// CPUProfile is a file for the CPU profile of this process during the
	// runs (not the load): where recall spends its client-side time.
	CPUProfile string `json:"-"`
	Tenant     string `json:"tenant"` // reuse this tenant, loaded by an earlier run with -keep, instead of loading
	// Shared is how many memories of shared knowledge to write after the
	// runs without it, before the same runs again with it; 0 writes none.
	Shared int `json:"shared"`
	// SharedPath is how it is written: sharedViaStore or sharedViaService.
	SharedPath string `json:"shared_path"`
}

func defaultConfig() Config {
	return Config{
		Memories: 10000, Users: 100, Agents: 3, Batch: 100, LoadWorkers: 1,
		Queries: 1000, Warmup: 100, Runs: 3, Concurrency: 1, Levels: []int{1}, K: 5, Candidates: 30,
		Seed: 1, Breakdown: true, Throughput: true, Modes: allModes, SharedPath: sharedViaStore,
	}
}

// parseFlags reads the benchmark's flags from args.
func parseFlags(args []string, stderr io.Writer) (Config, error) {
	c := defaultConfig()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.Memories, "memories", c.Memories, "memories to load")
	fs.IntVar(&c.Users, "users", c.Users, "users the memories are about")
	fs.IntVar(&c.Agents, "agents", c.Agents, "agents writing them (agent-0 … agent-N-1); agent-0 recalls")
	fs.IntVar(&c.Batch, "batch", c.Batch, "memories per CreateMemories call")
	fs.IntVar(&c.LoadWorkers, "load-workers", c.LoadWorkers, "concurrent loaders")
	fs.IntVar(&c.Queries, "queries", c.Queries, "measured queries per run")
	fs.IntVar(&c.Warmup, "warmup", c.Warmup, "unmeasured queries before the first run")
	fs.IntVar(&c.Runs, "runs", c.Runs, "repetitions of the query phase")
	fs.Func("concurrency", "query workers: a list such as 1,8,32; the runs use the first, the throughput phase each (default 1)", func(v string) error {
		levels, err := parseLevels(v)
		c.Levels = levels
		return err
	})
	fs.Func("modes", "modes the runs measure, a list such as policy,bare-exact (default "+strings.Join(allModes, ",")+")", func(v string) error {
		c.Modes = nil
		for _, m := range strings.Split(v, ",") {
			c.Modes = append(c.Modes, strings.TrimSpace(m))
		}
		return nil
	})
	fs.IntVar(&c.K, "k", c.K, "memories a recall returns")
	fs.IntVar(&c.Candidates, "candidates", c.Candidates, "hits asked of the bare vector searches")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "generator seed for data and queries")
	fs.BoolVar(&c.Keep, "keep", c.Keep, "keep the tenant's grants (memories always stay: graph has no tenant purge)")
	fs.BoolVar(&c.Breakdown, "breakdown", c.Breakdown, "also time the parts of a recall after the runs")
	fs.BoolVar(&c.Throughput, "throughput", c.Throughput, "also measure recall and the bare vector query alone at each -concurrency level after the runs")
	fs.StringVar(&c.JSON, "json", c.JSON, "write the results as JSON to this file")
	fs.StringVar(&c.CPUProfile, "cpuprofile", c.CPUProfile, "write a CPU profile of the runs (go tool pprof) to this file")
	fs.StringVar(&c.Tenant, "tenant", c.Tenant, "skip loading and query this tenant, loaded by an earlier run with -keep and the same -memories, -users, -agents and -seed")
	fs.IntVar(&c.Shared, "shared", c.Shared, "after the runs, write this many memories of shared knowledge (tenant rules, team and agent procedures) and run the same queries again; 0 skips")
	fs.StringVar(&c.SharedPath, "shared-path", c.SharedPath, "how to write the shared knowledge: store (graph.Store.CreateMemories, as the user memories) or service (memory.Service.Write, as POST /v1/memories: policy, guard and dedup per memory)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if len(c.Levels) > 0 {
		c.Concurrency = c.Levels[0]
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return c, c.Validate()
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	positive := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("-%s: %d must be positive", name, v))
		}
	}
	positive("memories", c.Memories)
	positive("users", c.Users)
	positive("agents", c.Agents)
	positive("batch", c.Batch)
	positive("load-workers", c.LoadWorkers)
	positive("queries", c.Queries)
	positive("runs", c.Runs)
	positive("concurrency", c.Concurrency)
	for _, n := range c.Levels {
		positive("concurrency", n)
	}
	positive("k", c.K)
	positive("candidates", c.Candidates)
	if c.Warmup < 0 {
		errs = append(errs, fmt.Errorf("-warmup: %d must not be negative", c.Warmup))
	}
	for _, m := range c.Modes {
		if !slices.Contains(allModes, m) {
			errs = append(errs, fmt.Errorf("-modes: %q is none of %s", m, strings.Join(allModes, ", ")))
		}
	}
	if len(c.Modes) == 0 {
		errs = append(errs, errors.New("-modes: at least one mode is needed"))
	}
	if c.SharedPath != sharedViaStore && c.SharedPath != sharedViaService {
		errs = append(errs, fmt.Errorf("-shared-path: %q is neither %s nor %s", c.SharedPath, sharedViaStore, sharedViaService))
	}
	if c.Shared < 0 {
		errs = append(errs, fmt.Errorf("-shared: %d must not be negative", c.Shared))
	}
	if c.Shared > 0 && c.Tenant != "" {
		errs = append(errs, errors.New("-shared with -tenant: the shared knowledge would stay in the reused tenant, and no later run could measure it without"))
	}
	if c.Users > c.Memories {
		errs = append(errs, fmt.Errorf("-users: %d users need at least as many memories (-memories %d)", c.Users, c.Memories))
	}
	if c.K > memory.MaxRecallK {
		errs = append(errs, fmt.Errorf("-k: %d is above recall's maximum of %d", c.K, memory.MaxRecallK))
	}
	if c.Candidates > 500 {
		errs = append(errs, fmt.Errorf("-candidates: %d is above the store's maximum of 500", c.Candidates))
	}
	return errors.Join(errs...)
}

// parseLevels reads a comma-separated list of concurrencies.
func parseLevels(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a list of whole numbers such as 1,8,32", v)
		}
		out = append(out, n)
	}
	return out, nil
}
