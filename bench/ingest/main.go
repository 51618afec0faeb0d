// Command ingest measures Mneme's asynchronous write path and the graph's
// storage growth. It wires the real stores like memoryd (NEO4J_URI,
// REDIS_URL, …) under a queue prefix of its own, warms the queries up as
// memoryd does before it starts its workers, and per run:
//
//  0. embeds the run's texts with the model alone, in the workers' batches
//     and one batch at a time: the ceiling the drain is compared with
//     (applied/model);
//  1. accepts -jobs asynchronous writes of one memory each through
//     memory.Service.CreateAsync (validation, policy, enqueue) from
//     -producers goroutines, with the workers off: the accept rate;
//  2. starts the worker pool and times how fast it drains that backlog into
//     Neo4j: memories per second, per second of the run (printed with
//     -series) and overall;
//  3. with -data DIR (the Neo4j data folder of a server of your own), reads
//     the store size before and after: bytes per memory.
//
// With -conversations N it also ingests N generated conversations through
// memory.Service.Ingest and reports memories and bytes per 1,000.
//
//	go run ./bench/ingest -jobs 150000 -runs 3 -data /tmp/ingest-srv/neo4j/data
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"mneme/app"
	"mneme/memory"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ingest bench:", err)
		os.Exit(1)
	}
}

type config struct {
	jobs, producers, users, runs, conversations, batch, shards int
	data                                                       string
	series                                                     bool
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var c config
	fset := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.IntVar(&c.jobs, "jobs", 150000, "asynchronous writes per run (one memory each)")
	fset.IntVar(&c.producers, "producers", 8, "goroutines accepting writes")
	fset.IntVar(&c.users, "users", 1000, "users the writes are about")
	fset.IntVar(&c.runs, "runs", 3, "runs")
	fset.IntVar(&c.batch, "batch", 256, "queued jobs a worker applies at once")
	fset.IntVar(&c.shards, "shards", 8, "queue shards")
	fset.IntVar(&c.conversations, "conversations", 0, "conversations to ingest after the runs (sync Ingest)")
	fset.StringVar(&c.data, "data", "", "Neo4j data folder, to measure the store size")
	fset.BoolVar(&c.series, "series", false, "print the memories applied in each second of each run")
	if err := fset.Parse(args); err != nil {
		return err
	}
	cfg, err := app.Load(nil, getenv, stderr)
	if err != nil {
		return err
	}
	cfg.Queue.Prefix = "bench-" + randomHex()
	cfg.Queue.Batch, cfg.Queue.Shards = c.batch, c.shards
	// A benchmark on a busy machine must not turn slow policy decisions
	// into refused writes.
	cfg.Policy.Timeout = max(cfg.Policy.Timeout, 5*time.Second)
	// Each run starts and stops the queue workers itself, to time the
	// drain; the other workers run throughout, as in memoryd.
	cfg.Queue.Workers = false
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	// As memoryd does before it starts its workers.
	a.WarmUp(ctx, log)
	defer a.StartWorkers(ctx)()
	fmt.Fprintf(stdout, "mneme async ingestion benchmark on %s: %d writes × %d runs, %d producers, %d users, batch %d, %d shards\n",
		cfg.Neo4j.URI, c.jobs, c.runs, c.producers, c.users, c.batch, c.shards)

	var rates, accepts, perMemory, models []float64
	for r := 1; r <= c.runs; r++ {
		// The model alone, on the same texts in the workers' batches, just
		// before each run: the ceiling the write path is compared with.
		model, err := embedRate(ctx, a.Embed, c)
		if err != nil {
			return fmt.Errorf("run %d: embedding alone: %w", r, err)
		}
		models = append(models, model)
		res, err := oneRun(ctx, a, c, stdout)
		if err != nil {
			return fmt.Errorf("run %d: %w", r, err)
		}
		rates, accepts = append(rates, res.rate), append(accepts, res.acceptRate)
		if res.bytesPerMemory > 0 {
			perMemory = append(perMemory, res.bytesPerMemory)
		}
		fmt.Fprintf(stdout, "run %d: accepted %d in %.1f s (%.0f/s); applied %d memories in %.1f s: %.0f memories/s (steady-state seconds: min %.0f, median %.0f, max %.0f/s); the model alone %.0f texts/s, applied/model %.2f%s\n",
			r, c.jobs, res.acceptSecs, res.acceptRate, res.applied, res.applySecs, res.rate, res.minSec, res.medSec, res.maxSec, model, res.rate/model, res.storage)
	}
	fmt.Fprintf(stdout, "median of %d runs: %.0f memories/s applied, %.0f writes/s accepted; %s alone %.0f texts/s, applied/model %.2f",
		c.runs, median(rates), median(accepts), a.Embed.Model(), median(models), median(rates)/median(models))
	if len(perMemory) > 0 {
		fmt.Fprintf(stdout, ", %.0f bytes per memory in the store", median(perMemory))
	}
	fmt.Fprintln(stdout)
	if c.conversations > 0 {
		return ingestConversations(ctx, a, c, stdout)
	}
	return nil
}

// embedSample bounds the texts embedRate times: enough batches for a steady
// rate without a slow model taking longer than the run it is compared with.
const embedSample = 4096

// embedRate embeds the run's texts (the first embedSample of them) in
// batches of the workers' size, one batch at a time as one worker does, and
// returns texts per second.
func embedRate(ctx context.Context, e memory.Embedder, c config) (float64, error) {
	n := min(c.jobs, embedSample)
	texts := make([]string, n)
	for i := range texts {
		texts[i] = job(int64(i), c.users).Content
	}
	start := time.Now()
	for batch := range slices.Chunk(texts, max(c.batch, 1)) {
		if _, err := e.Embed(ctx, batch); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// job is the i-th write of a run: an episode about an order, or every
// fifth time a contact preference.
func job(i int64, users int) memory.NewMemory {
	n := memory.NewMemory{
		UserID: fmt.Sprintf("user-%d", i%int64(users)), Type: memory.TypeEpisodic,
		Content:  fmt.Sprintf("Customer called about order %d and asked for delivery before Friday", i),
		Entities: []memory.Entity{{ID: fmt.Sprintf("order:%d", i), Kind: "order", Name: fmt.Sprint(i)}},
	}
	if i%5 == 0 {
		n.Type, n.Kind, n.Key = memory.TypeProfile, "preference", "contact_channel"
		n.Content = fmt.Sprintf("Prefers to be contacted by e-mail (noted in call %d)", i)
	}
	return n
}

type runResult struct {
	acceptSecs, acceptRate, applySecs, rate float64
	minSec, medSec, maxSec                  float64
	applied                                 int64
	bytesPerMemory                          float64
	storage                                 string
}

func oneRun(ctx context.Context, a *app.App, c config, stdout io.Writer) (runResult, error) {
	var res runResult
	tenant := "bench-" + randomHex()
	agent := memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: "agent-0"}
	before, err := storeSize(c.data)
	if err != nil {
		return res, err
	}

	// 1. Accept the backlog with the workers off.
	start := time.Now()
	err = parallel(ctx, c.jobs, c.producers, func(ctx context.Context, i int64) error {
		_, err := a.Service.CreateAsync(ctx, agent, []memory.NewMemory{job(i, c.users)}, "")
		return err
	})
	if err != nil {
		return res, err
	}
	res.acceptSecs = time.Since(start).Seconds()
	res.acceptRate = float64(c.jobs) / res.acceptSecs

	// 2. Drain it with the pool, sampling the applied count every second.
	stats := a.QueueWorkers.Stats()
	base := stats.Memories.Load()
	start = time.Now()
	if err := a.QueueWorkers.Start(ctx); err != nil {
		return res, err
	}
	var perSec []float64
	last := base
	tick := time.NewTicker(time.Second)
	baseJobs := stats.Jobs.Load() + stats.DeadLettered.Load()
	for stats.Jobs.Load()+stats.DeadLettered.Load()-baseJobs < int64(c.jobs) {
		select {
		case <-ctx.Done():
			tick.Stop()
			return res, ctx.Err()
		case <-tick.C:
		}
		now := stats.Memories.Load()
		perSec = append(perSec, float64(now-last))
		last = now
	}
	tick.Stop()
	res.applySecs = time.Since(start).Seconds()
	res.applied = stats.Memories.Load() - base
	res.rate = float64(res.applied) / res.applySecs
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := a.QueueWorkers.Stop(stopCtx); err != nil {
		return res, err
	}
	if c.series {
		fmt.Fprintf(stdout, "applied per second: %v\n", perSec)
	}
	// The first seconds warm up and the last is partial: leave them out.
	if len(perSec) > 7 {
		steady := slices.Clone(perSec[5 : len(perSec)-1])
		slices.Sort(steady)
		res.minSec, res.medSec, res.maxSec = steady[0], steady[len(steady)/2], steady[len(steady)-1]
	}
	if d := stats.DeadLettered.Load(); d > 0 {
		return res, fmt.Errorf("%d jobs dead-lettered", d)
	}

	// 3. Store size.
	if c.data != "" {
		after, err := waitStoreSize(ctx, c.data)
		if err != nil {
			return res, err
		}
		res.bytesPerMemory = float64(after.store-before.store) / float64(res.applied)
		res.storage = fmt.Sprintf("; store +%d bytes (%.0f per memory), transaction logs +%d bytes (%.0f per memory)",
			after.store-before.store, res.bytesPerMemory, after.txlogs-before.txlogs, float64(after.txlogs-before.txlogs)/float64(res.applied))
	}
	return res, nil
}

// ingestConversations ingests generated conversations through the
// synchronous Ingest and reports what 1,000 of them cost.
func ingestConversations(ctx context.Context, a *app.App, c config, stdout io.Writer) error {
	tenant := "bench-" + randomHex()
	agent := memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: "agent-0"}
	before, err := storeSize(c.data)
	if err != nil {
		return err
	}
	start := time.Now()
	var memories atomic.Int64
	err = parallel(ctx, c.conversations, c.producers, func(ctx context.Context, i int64) error {
		res, err := a.Working.Ingest(ctx, agent, conversation(i, c.users), "")
		memories.Add(int64(len(res.Memories)))
		return err
	})
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	per1000 := float64(memories.Load()) * 1000 / float64(c.conversations)
	fmt.Fprintf(stdout, "ingested %d conversations in %.1f s (%.0f/s): %d memories, %.0f per 1,000 conversations",
		c.conversations, secs, float64(c.conversations)/secs, memories.Load(), per1000)
	if c.data != "" {
		after, err := waitStoreSize(ctx, c.data)
		if err != nil {
			return err
		}
		grow := float64(after.store-before.store) * 1000 / float64(c.conversations)
		fmt.Fprintf(stdout, "; store +%d bytes: %.0f bytes per 1,000 conversations (%.0f per memory)",
			after.store-before.store, grow, float64(after.store-before.store)/float64(max(memories.Load(), 1)))
	}
	fmt.Fprintln(stdout)
	return nil
}

// conversation returns the i-th generated support conversation: a budget,
// a preference, an order and a date, in English or Chinese.
func conversation(i int64, users int) memory.IngestRequest {
	user := fmt.Sprintf("user-%d", i%int64(users))
	turns := []memory.Turn{
		{Role: memory.RoleUser, Content: fmt.Sprintf("Hi, my order %d has not arrived yet.", 100000+i)},
		{Role: memory.RoleAssistant, Content: "Sorry to hear that, let me check."},
		{Role: memory.RoleUser, Content: fmt.Sprintf("My budget for the replacement is %dk, and I prefer delivery by courier.", 50+i%100)},
		{Role: memory.RoleUser, Content: "Remember that I work from home on Fridays."},
	}
	if i%2 == 1 {
		turns = []memory.Turn{
			{Role: memory.RoleUser, Content: fmt.Sprintf("我的订单%d还没有到。", 100000+i)},
			{Role: memory.RoleAssistant, Content: "抱歉，我来查一下。"},
			{Role: memory.RoleUser, Content: fmt.Sprintf("我的预算是%d万，我喜欢用邮件联系。", 10+i%20)},
		}
	}
	return memory.IngestRequest{UserID: user, SessionID: fmt.Sprintf("conv-%d", i), Turns: turns}
}

type sizes struct{ store, txlogs int64 }

// storeSize measures the neo4j database of a Neo4j data folder: its store
// files (records and indexes, databases/neo4j) and, apart, its transaction
// logs (transactions/neo4j).
func storeSize(dir string) (sizes, error) {
	if dir == "" {
		return sizes{}, nil
	}
	store, err := dirSize(filepath.Join(dir, "databases", "neo4j"))
	if err != nil {
		return sizes{}, err
	}
	txlogs, err := dirSize(filepath.Join(dir, "transactions", "neo4j"))
	return sizes{store: store, txlogs: txlogs}, err
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a file Neo4j removed while we walked
			}
			return err
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// waitStoreSize lets Neo4j flush (it checkpoints on its own schedule) and
// reads the size when it stops changing.
func waitStoreSize(ctx context.Context, dir string) (sizes, error) {
	prev, err := storeSize(dir)
	if err != nil {
		return prev, err
	}
	for range 30 {
		select {
		case <-ctx.Done():
			return prev, ctx.Err()
		case <-time.After(2 * time.Second):
		}
		cur, err := storeSize(dir)
		if err != nil {
			return cur, err
		}
		if cur == prev {
			return cur, nil
		}
		prev = cur
	}
	return prev, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func randomHex() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// parallel calls f for every i in [0, n) from workers goroutines and returns
// the first error; after one, the others take no more work.
func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int64) error) error {
	g, ctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range workers {
		g.Go(func() error {
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return nil
				}
				if err := f(ctx, i); err != nil {
					return err
				}
			}
			return ctx.Err()
		})
	}
	return g.Wait()
}
