package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"mneme/app"
	"mneme/calibration"
	"mneme/seed"
)

// runCalibrate calibrates the configured embedder and prints the result; it
// stores it when -calibrations names a directory. -data replaces the
// built-in labelled data.
func runCalibrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	data, rest, err := dataFlag(args)
	if err != nil {
		return err
	}
	cfg, err := app.Load(rest, getenv, stderr)
	if err != nil {
		return err
	}
	c, path, err := calibrate(ctx, cfg, data)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return err
	}
	if path == "" {
		fmt.Fprintf(stderr, "memoryd calibrate: not stored; pass -calibrations DIR (MNEME_CALIBRATIONS) to store it for memoryd\n")
	} else {
		fmt.Fprintf(stderr, "memoryd calibrate: stored in %s\n", path)
	}
	return nil
}

// dataFlag takes -data FILE (or -data=FILE) out of args.
func dataFlag(args []string) (string, []string, error) {
	var rest []string
	data := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-data" || a == "--data":
			if i+1 >= len(args) {
				return "", nil, errors.New("-data needs a file")
			}
			data = args[i+1]
			i++
		case len(a) > 6 && (a[:6] == "-data=" || (len(a) > 7 && a[:7] == "--data=")):
			data = a[len("-data="):]
			if a[1] == '-' {
				data = a[len("--data="):]
			}
		default:
			rest = append(rest, a)
		}
	}
	return data, rest, nil
}

// calibrate runs the calibration of cfg's embedder on the labelled data
// (file data, or the built-in set) and stores it in cfg's calibrations
// directory when one is set, returning where.
func calibrate(ctx context.Context, cfg app.Config, data string) (calibration.Calibration, string, error) {
	raw, name := seed.CalibrationJSON, "seed/calibration.json"
	if data != "" {
		var err error
		if raw, err = os.ReadFile(data); err != nil {
			return calibration.Calibration{}, "", err
		}
		name = data
	}
	d, err := calibration.ParseData(name, raw)
	if err != nil {
		return calibration.Calibration{}, "", err
	}
	e, err := app.NewEmbedder(ctx, cfg)
	if err != nil {
		return calibration.Calibration{}, "", err
	}
	c, err := calibration.Run(ctx, e, d)
	if err != nil {
		return c, "", err
	}
	if cfg.Embedding.Calibrations == "" {
		return c, "", nil
	}
	path, err := calibration.Save(cfg.Embedding.Calibrations, c)
	return c, path, err
}

// ensureCalibration makes sure the target model of a re-embedding has a
// calibration before any vector changes: a re-embedded store whose server
// then refuses to start, or runs on another model's thresholds, would be
// worse than the old model.
func ensureCalibration(ctx context.Context, cfg app.Config, log *slog.Logger) error {
	e, err := app.NewEmbedder(ctx, cfg)
	if err != nil {
		return err
	}
	c, err := app.Calibration(cfg, e)
	if err == nil {
		log.InfoContext(ctx, "target model calibrated", "model", c.Model, "vector_floor", c.VectorFloor, "duplicate_threshold", c.DuplicateThreshold)
		return nil
	}
	if !errors.Is(err, calibration.ErrMissing) {
		return err
	}
	if cfg.Embedding.Calibrations == "" {
		return fmt.Errorf("model %s has no calibration and there is nowhere to store one: pass -calibrations DIR (MNEME_CALIBRATIONS), "+
			"which memoryd must then be started with", e.Model())
	}
	log.InfoContext(ctx, "calibrating the target model", "model", e.Model())
	c, path, err := calibrate(ctx, cfg, "")
	if err != nil {
		return fmt.Errorf("calibrating %s: %w", e.Model(), err)
	}
	log.InfoContext(ctx, "target model calibrated", "model", c.Model, "stored", path, "vector_floor", c.VectorFloor,
		"duplicate_threshold", c.DuplicateThreshold)
	return nil
}
