// Command memoryd is the Mneme server: it wires configuration, stores,
// policy, services and the HTTP API, and serves until interrupted.
//
// `memoryd reembed [flags]` instead renews every memory's vector with the
// configured embedder (after a change of model), rebuilding the vector index
// when the dimension changed, prints a JSON report and exits. It takes the
// same flags and environment as the server. The target model must have a
// calibration; when it has none, reembed makes one first (as calibrate does)
// and stores it in -calibrations.
//
// `memoryd calibrate [flags]` measures the configured embedding model on the
// labelled data built in (seed/calibration.json) or given by -data, picks its
// relevance floor and dedup threshold, prints them as JSON and, with
// -calibrations DIR, stores them there for memoryd to use.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"mneme/app"
	"mneme/handlers"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "memoryd:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "reembed" {
		return runReembed(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "calibrate" {
		return runCalibrate(ctx, args[1:], getenv, stdout, stderr)
	}
	cfg, err := app.Load(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := slog.New(handlers.LogHandler(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.Log.Level})))

	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))

	if cfg.Seed {
		report, err := a.LoadDemo(ctx)
		if err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		log.InfoContext(ctx, "demo data loaded", "report", report)
	}

	// Before listening and before the workers start: readiness probes, the
	// first clients and the first queued batches reach a server whose
	// recall and write queries are planned and whose connections are open.
	// It takes a few seconds and never stops the start.
	a.WarmUp(ctx, log)

	return a.Run(ctx)
}

// runReembed runs the re-embedding command and prints its report as JSON.
func runReembed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := app.Load(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.Log.Level}))
	if err := ensureCalibration(ctx, cfg, log); err != nil {
		return fmt.Errorf("reembed: %w", err)
	}
	res, err := app.Reembed(ctx, cfg, log)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if encErr := enc.Encode(res); encErr != nil && err == nil {
		return encErr
	}
	if err != nil {
		return fmt.Errorf("reembed: %w (run it again to finish: memories already re-embedded are skipped)", err)
	}
	return nil
}
