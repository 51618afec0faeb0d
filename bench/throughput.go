package main

import (
	"context"
	"fmt"
	"io"
	"slices"
)

// Level is one mode's throughput at one concurrency.
type Level struct {
	Mode        string  `json:"mode"`
	Concurrency int     `json:"concurrency"`
	QPS         float64 `json:"queries_per_second"`
	Summary
	// OverBareQPS is this mode's throughput over the bare exact query's at
	// the same concurrency; P95OverSingle its P95 over its own at the
	// lowest level.
	OverBareQPS   float64 `json:"over_bare_qps"`
	P95OverSingle float64 `json:"p95_over_lowest_level"`
}

// throughput runs the measured queries through recall (with policy) and the
// bare exact vector query, one mode at a time so that each has the
// machine to itself, at each concurrency level in turn.
func throughput(ctx context.Context, modes []mode, queries []query, levels []int, stderr io.Writer) ([]Level, error) {
	var picked []mode
	for _, m := range modes {
		if m.name == modePolicy || m.name == modeBareExact {
			picked = append(picked, m)
		}
	}
	var out []Level
	lowest := map[string]float64{}
	for _, c := range levels {
		bare := 0.0
		var here []Level
		for _, m := range slices.Backward(picked) { // bare first, for the ratio
			fmt.Fprintf(stderr, "bench: throughput of %s at concurrency %d\n", m.name, c)
			s, err := measure(ctx, []mode{m}, queries, c)
			if err != nil {
				return nil, fmt.Errorf("throughput %s ×%d: %w", m.name, c, err)
			}
			l := Level{Mode: m.name, Concurrency: c, QPS: ratio(float64(len(queries)), s.wall.Seconds()), Summary: s.report()[0].Summary}
			if m.name == modeBareExact {
				bare = l.QPS
			}
			l.OverBareQPS = ratio(l.QPS, bare)
			if _, ok := lowest[m.name]; !ok {
				lowest[m.name] = l.P95
			}
			l.P95OverSingle = ratio(l.P95, lowest[m.name])
			here = append(here, l)
		}
		slices.Reverse(here)
		out = append(out, here...)
	}
	return out, nil
}

func printThroughput(w io.Writer, levels []Level, queries int) {
	fmt.Fprintf(w, "throughput: %d queries per mode and level, each mode alone\n", queries)
	fmt.Fprintf(w, "  %-12s %5s %9s %8s %8s %8s %10s %12s\n", "mode", "conc", "queries/s", "p50 ms", "p95 ms", "p99 ms", "qps/bare", "p95/lowest")
	for _, l := range levels {
		fmt.Fprintf(w, "  %-12s %5d %9.1f %8.2f %8.2f %8.2f %10.2f %12.2f\n", l.Mode, l.Concurrency, l.QPS, l.P50, l.P95, l.P99, l.OverBareQPS, l.P95OverSingle)
	}
	fmt.Fprintln(w)
}
