package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// SharedReport is the second half of a run with -shared: the shared
// knowledge written, the same runs again, and each mode with it against
// without it.
type SharedReport struct {
	// Team is the recalling agent's team, whose knowledge it reads.
	Team   string           `json:"team"`
	Load   SharedLoadReport `json:"load"`
	Runs   []RunReport      `json:"runs"`
	Median RunReport        `json:"median"`
	// Stages and VectorPaths are those of the policy recalls of these runs.
	Stages      []ModeReport   `json:"stages,omitempty"`
	VectorPaths map[string]int `json:"vector_paths,omitempty"`
	// Versus compares run i with shared knowledge with run i without, and
	// last (run 0) the median runs of both.
	Versus []Versus `json:"versus"`
}

// Versus is one run with shared knowledge against the same run without.
type Versus struct {
	Run   int          `json:"run"` // 1-based; 0 for the medians
	Modes []ModeVersus `json:"modes"`
}

// ModeVersus is one mode with shared knowledge against without. A ratio is
// with over without; SharedRecalls counts the queries whose answer held at
// least one memory of shared knowledge, in each phase.
type ModeVersus struct {
	Mode     string  `json:"mode"`
	Without  Summary `json:"without"`
	With     Summary `json:"with"`
	RatioP50 float64 `json:"ratio_p50"`
	RatioP95 float64 `json:"ratio_p95"`
	RatioP99 float64 `json:"ratio_p99"`
	// BareRatioP50 … are the ratios over bare-exact's ratios of the same
	// runs: what is left of a change once the machine's drift between the
	// two phases, which the bare query sees too, is taken out. 0 without
	// bare-exact.
	BareRatioP50         float64 `json:"ratio_over_bare_exact_p50"`
	BareRatioP95         float64 `json:"ratio_over_bare_exact_p95"`
	BareRatioP99         float64 `json:"ratio_over_bare_exact_p99"`
	MeanHitsWithout      float64 `json:"mean_hits_without"`
	MeanHitsWith         float64 `json:"mean_hits_with"`
	SharedRecallsWithout int     `json:"shared_recalls_without"`
	SharedRecalls        int     `json:"shared_recalls"`
}

// versus pairs the modes of with and without by name, in with's order.
func versus(run int, without, with RunReport) Versus {
	v := Versus{Run: run}
	for _, w := range with.Modes {
		i := slices.IndexFunc(without.Modes, func(m ModeReport) bool { return m.Mode == w.Mode })
		if i < 0 {
			continue
		}
		o := without.Modes[i]
		v.Modes = append(v.Modes, ModeVersus{
			Mode: w.Mode, Without: o.Summary, With: w.Summary,
			RatioP50: ratio(w.P50, o.P50), RatioP95: ratio(w.P95, o.P95), RatioP99: ratio(w.P99, o.P99),
			MeanHitsWithout: o.MeanHits, MeanHitsWith: w.MeanHits,
			SharedRecallsWithout: o.SharedRecalls, SharedRecalls: w.SharedRecalls,
		})
	}
	if b := slices.IndexFunc(v.Modes, func(m ModeVersus) bool { return m.Mode == modeBareExact }); b >= 0 {
		bare := v.Modes[b]
		for i := range v.Modes {
			m := &v.Modes[i]
			m.BareRatioP50, m.BareRatioP95, m.BareRatioP99 = ratio(m.RatioP50, bare.RatioP50), ratio(m.RatioP95, bare.RatioP95), ratio(m.RatioP99, bare.RatioP99)
		}
	}
	return v
}

func printSharedLoad(w io.Writer, l SharedLoadReport, team string) {
	how := map[string]string{
		sharedViaService: "memory.Service.Write, the write path of POST /v1/memories",
		sharedViaStore:   "graph.Store.CreateMemories, as the user memories",
	}[l.Path]
	fmt.Fprintf(w, "shared knowledge: %d memories through %s (%d superseded by key), %d batches, %d retried; recaller %s of team %s\n",
		l.Memories, how, l.Superseded, l.Batches, l.Retries, recaller, team)
	fmt.Fprintf(w, "      by scope: %s\n", counts(l.ByScope))
	fmt.Fprintf(w, "      outcomes: %s\n", counts(l.Outcomes))
	fmt.Fprintf(w, "      %.1f s, %.0f memories/s; Write per batch p50 %.0f ms, p95 %.0f ms\n\n", l.Seconds, l.PerSecond, l.Batch.P50, l.Batch.P95)
}

// counts lists m as "a 1, b 2", by key.
func counts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// printVersus prints each comparison, the medians last, as one table of
// latencies without and with shared knowledge and their ratio.
func printVersus(w io.Writer, vs []Versus, queries int) {
	for _, v := range vs {
		title := fmt.Sprintf("run %d", v.Run)
		if v.Run == 0 {
			title = "median of the runs (ratios of the medians)"
		}
		fmt.Fprintf(w, "shared knowledge against none, %s: latency in ms without → with (ratio with/without); recalls that returned shared knowledge, of %d\n", title, queries)
		fmt.Fprintf(w, "  %-16s %23s %23s %23s %11s %9s\n", "mode", "p50", "p95", "p99", "hits", "w/shared")
		for _, m := range v.Modes {
			fmt.Fprintf(w, "  %-16s %23s %23s %23s %11s %9s\n", m.Mode,
				change(m.Without.P50, m.With.P50, m.RatioP50), change(m.Without.P95, m.With.P95, m.RatioP95),
				change(m.Without.P99, m.With.P99, m.RatioP99),
				fmt.Sprintf("%.1f → %.1f", m.MeanHitsWithout, m.MeanHitsWith),
				fmt.Sprintf("%d → %d", m.SharedRecallsWithout, m.SharedRecalls))
		}
		if v.Modes[0].BareRatioP50 > 0 {
			fmt.Fprintf(w, "  the ratios over bare-exact's, which takes out the machine's drift between the phases:\n")
			for _, m := range v.Modes {
				fmt.Fprintf(w, "  %-16s p50 %.2f  p95 %.2f  p99 %.2f\n", m.Mode, m.BareRatioP50, m.BareRatioP95, m.BareRatioP99)
			}
		}
		fmt.Fprintln(w)
	}
}

// change shows a latency without and with shared knowledge and their ratio.
func change(without, with, r float64) string {
	return fmt.Sprintf("%.2f → %.2f (%.2f)", without, with, r)
}
