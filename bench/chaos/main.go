// Command chaos runs Mneme under load on three replicas behind a
// round-robin proxy of its own while it breaks the replicas, Neo4j and Redis
// on a schedule, and checks every answer against an oracle of what was
// acknowledged, who may read what, and what was erased. It prints a report
// and exits 1 when any check fails.
//
//	go run ./bench/chaos -duration 2m
//	go run ./bench/chaos -duration 30s -break forget-ack   # must fail
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, errChecksFailed) {
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
}

// errChecksFailed says the run finished and at least one check failed.
var errChecksFailed = errors.New("checks failed")

type config struct {
	duration    time.Duration
	dir         string
	repo        string
	memoryd     string
	workers     int
	faults      []string
	faultEvery  time.Duration
	firstFault  time.Duration
	grace       time.Duration
	maxRecovery time.Duration
	pause       time.Duration
	breakMode   string
	keep        bool
}

var faultKinds = []string{"kill-replica", "restart-neo4j", "restart-redis", "pause-redis"}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&c.duration, "duration", 10*time.Minute, "how long the load runs")
	fs.StringVar(&c.dir, "dir", "", "work folder for Neo4j, Redis and replica logs (default: a new temporary folder)")
	fs.StringVar(&c.repo, "repo", "", "the module's root (default: found from the working folder)")
	fs.StringVar(&c.memoryd, "memoryd", "", "a built memoryd binary (default: go build ./cmd/memoryd)")
	fs.IntVar(&c.workers, "workers", 8, "concurrent agents and users")
	faults := fs.String("faults", strings.Join(faultKinds, ","), "faults injected in turn: "+strings.Join(faultKinds, ",")+" (empty: none)")
	fs.DurationVar(&c.faultEvery, "fault-every", 0, "time between fault starts (default: spread over the run)")
	fs.DurationVar(&c.firstFault, "first-fault", 10*time.Second, "when the first fault starts")
	fs.DurationVar(&c.grace, "grace", 5*time.Second, "how long after recovery a fault window stays open")
	fs.DurationVar(&c.maxRecovery, "max-recovery", 10*time.Second, "longest allowed time from a store's return to the first success on every replica")
	fs.DurationVar(&c.pause, "pause", 10*time.Second, "how long pause-redis keeps Redis stopped")
	fs.StringVar(&c.breakMode, "break", "", "forget-ack: drop one acknowledged write from the oracle, so the run must fail")
	fs.BoolVar(&c.keep, "keep", false, "keep the work folder")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if *faults != "" {
		for _, f := range strings.Split(*faults, ",") {
			if !contains(faultKinds, f) {
				return c, fmt.Errorf("-faults: unknown fault %q", f)
			}
			c.faults = append(c.faults, f)
		}
	}
	switch {
	case c.duration < 10*time.Second:
		return c, errors.New("-duration must be at least 10s")
	case c.workers < 1:
		return c, errors.New("-workers must be at least 1")
	case c.breakMode != "" && c.breakMode != "forget-ack":
		return c, fmt.Errorf("-break: unknown mode %q (forget-ack)", c.breakMode)
	}
	if c.faultEvery == 0 && len(c.faults) > 0 {
		// Leave the last fifth quiet so the last fault recovers before the end.
		c.faultEvery = max((c.duration*4/5-c.firstFault)/time.Duration(len(c.faults)), 15*time.Second)
	}
	if c.repo == "" {
		r, err := moduleRoot()
		if err != nil {
			return c, err
		}
		c.repo = r
	}
	return c, nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "scripts", "neo4j.sh")); err == nil {
				return dir, nil
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no module root with scripts/neo4j.sh above the working folder: give -repo")
		}
		dir = up
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	if cfg.dir == "" {
		d, err := os.MkdirTemp("", "mneme-chaos-")
		if err != nil {
			return err
		}
		cfg.dir = d
		if !cfg.keep {
			defer func() {
				if err == nil {
					os.RemoveAll(d)
				}
			}()
		}
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "%s chaos: %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, a...))
	}
	cl := newCluster(cfg, logf)
	defer cl.stop()
	if err := cl.start(ctx); err != nil {
		return err
	}
	px, err := newProxy(cl.replicaURLs())
	if err != nil {
		return err
	}
	defer px.close()
	logf("proxy on %s over %s", px.url, strings.Join(cl.replicaURLs(), " "))

	rec := newRecorder()
	demo, err := loadDemo(filepath.Join(cfg.repo, "seed", "demo.json"))
	if err != nil {
		return err
	}
	o := newOracle(demo)
	ld := newLoad(px.url, demo, o, rec, cfg, logf)
	if err := ld.setup(ctx); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	fi := newFaults(ctx, cl, cfg, demo.adminKey, logf)

	// The load runs for -duration and, on a slow machine, on until every
	// kind of fault has run once while it was running (at most 3× as long).
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	covered := make(chan struct{})
	go func() {
		defer cancel()
		select {
		case <-time.After(cfg.duration):
		case <-runCtx.Done():
			return
		}
		select {
		case <-covered:
		case <-time.After(2 * cfg.duration):
		case <-runCtx.Done():
		}
	}()
	done := make(chan struct{})
	go func() { fi.run(runCtx, start, covered); close(done) }()
	ld.run(runCtx)
	<-done
	interrupted := ctx.Err() != nil
	if interrupted {
		// Still check and report what ran, with a little time of its own.
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer stop()
	}
	logf("load finished after %s; checking", time.Since(start).Round(time.Second))

	rep := &report{cfg: cfg, rec: rec, faults: fi.windows(), begin: start, elapsed: time.Since(start)}
	if interrupted {
		rep.add("run completed", false, "interrupted after %s", rep.elapsed.Round(time.Second))
	}
	if cfg.breakMode == "forget-ack" {
		m, ok := o.forgetOneAck()
		rep.add("-break forget-ack found a write to forget", ok, "%s", m)
		logf("-break forget-ack: the oracle forgets acknowledged write %q", m)
	}
	if err := ld.finalChecks(ctx, cl.redisURL, rep); err != nil {
		return fmt.Errorf("final checks: %w", err)
	}
	rep.serverLog = serverLines(cfg.dir, rep.failedIDs, 20)
	rep.print(stdout)
	if rep.failed() {
		return errChecksFailed
	}
	return nil
}
