package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
)

// Report is everything one invocation measured; -json writes it.
type Report struct {
	Tenant   string      `json:"tenant"`
	Neo4jURI string      `json:"neo4j_uri"`
	Config   Config      `json:"config"`
	Load     LoadReport  `json:"load"`
	Runs     []RunReport `json:"runs"`
	// Median is the field-by-field median of the runs.
	Median RunReport `json:"median"`
	// Breakdown times the parts of a policy recall, each alone.
	Breakdown []ModeReport `json:"breakdown,omitempty"`
	// Stages are the parts of the measured policy recalls, as each answer
	// timed them; VectorPaths counts the vector path they took.
	Stages      []ModeReport   `json:"stages,omitempty"`
	VectorPaths map[string]int `json:"vector_paths,omitempty"`
	// Throughput is recall and the bare exact vector query, each alone,
	// at every -concurrency level.
	Throughput []Level `json:"throughput,omitempty"`
	// Kept is true when the grants were left in place (-keep).
	Kept bool `json:"kept"`
	// Shared is the same runs again after writing -shared memories of
	// shared knowledge, and the comparison; absent without -shared.
	Shared *SharedReport `json:"shared,omitempty"`
}

// RunReport is one pass over the measured queries.
type RunReport struct {
	Run            int          `json:"run"` // 1-based; 0 for the median
	Seconds        float64      `json:"seconds"`
	CallsPerSecond float64      `json:"calls_per_second"` // queries × modes / seconds
	Modes          []ModeReport `json:"modes"`
	Ratios         Ratios       `json:"ratios"`
	// HitMismatches counts queries where policy and nopolicy returned a
	// different number of memories; the grants make it 0 unless policy
	// drops something.
	HitMismatches int `json:"hit_mismatches"`
}

// Ratios compare policy recall with its baselines.
type Ratios struct {
	PolicyOverNoPolicyP50  float64 `json:"policy_over_nopolicy_p50"`
	PolicyOverNoPolicyP95  float64 `json:"policy_over_nopolicy_p95"`
	PolicyOverBareExactP50 float64 `json:"policy_over_bare_exact_p50"`
	PolicyOverBareExactP95 float64 `json:"policy_over_bare_exact_p95"`
	// The same for recall with scope.rego's clauses instead of the filter.
	ClausesOverNoPolicyP50 float64 `json:"clauses_over_nopolicy_p50"`
	ClausesOverNoPolicyP95 float64 `json:"clauses_over_nopolicy_p95"`
}

// runReport summarises one pass.
func runReport(run int, s sample) RunReport {
	rr := RunReport{Run: run, Seconds: s.wall.Seconds(), Modes: s.report()}
	calls := 0
	for _, l := range s.latencies {
		calls += len(l)
	}
	rr.CallsPerSecond = ratio(float64(calls), rr.Seconds)
	rr.Ratios = ratios(rr.Modes)
	pol, nopol := slices.Index(s.modes, modePolicy), slices.Index(s.modes, modeNoPolicy)
	if pol >= 0 && nopol >= 0 {
		for i := range s.answers[pol] {
			if s.answers[pol][i].hits != s.answers[nopol][i].hits {
				rr.HitMismatches++
			}
		}
	}
	return rr
}

func ratios(modes []ModeReport) Ratios {
	get := func(name string) Summary {
		for _, m := range modes {
			if m.Mode == name {
				return m.Summary
			}
		}
		return Summary{}
	}
	pol, clauses, nopol, bare := get(modePolicy), get(modePolicyClauses), get(modeNoPolicy), get(modeBareExact)
	return Ratios{
		PolicyOverNoPolicyP50: ratio(pol.P50, nopol.P50), PolicyOverNoPolicyP95: ratio(pol.P95, nopol.P95),
		PolicyOverBareExactP50: ratio(pol.P50, bare.P50), PolicyOverBareExactP95: ratio(pol.P95, bare.P95),
		ClausesOverNoPolicyP50: ratio(clauses.P50, nopol.P50), ClausesOverNoPolicyP95: ratio(clauses.P95, nopol.P95),
	}
}

// medianRun is the field-by-field median of runs, which all measured the
// same modes in the same order. Its ratios are the medians of the runs'
// ratios, not ratios of medians.
func medianRun(runs []RunReport) RunReport {
	if len(runs) == 0 {
		return RunReport{}
	}
	of := func(f func(RunReport) float64) float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r)
		}
		return median(xs)
	}
	m := RunReport{
		Seconds:        of(func(r RunReport) float64 { return r.Seconds }),
		CallsPerSecond: of(func(r RunReport) float64 { return r.CallsPerSecond }),
		HitMismatches:  int(of(func(r RunReport) float64 { return float64(r.HitMismatches) })),
		Ratios: Ratios{
			PolicyOverNoPolicyP50:  of(func(r RunReport) float64 { return r.Ratios.PolicyOverNoPolicyP50 }),
			PolicyOverNoPolicyP95:  of(func(r RunReport) float64 { return r.Ratios.PolicyOverNoPolicyP95 }),
			PolicyOverBareExactP50: of(func(r RunReport) float64 { return r.Ratios.PolicyOverBareExactP50 }),
			PolicyOverBareExactP95: of(func(r RunReport) float64 { return r.Ratios.PolicyOverBareExactP95 }),
			ClausesOverNoPolicyP50: of(func(r RunReport) float64 { return r.Ratios.ClausesOverNoPolicyP50 }),
			ClausesOverNoPolicyP95: of(func(r RunReport) float64 { return r.Ratios.ClausesOverNoPolicyP95 }),
		},
	}
	for i, mode := range runs[0].Modes {
		sums := make([]Summary, len(runs))
		for r := range runs {
			sums[r] = runs[r].Modes[i].Summary
		}
		m.Modes = append(m.Modes, ModeReport{
			Mode: mode.Mode, Summary: medianSummary(sums),
			MeanHits:      of(func(r RunReport) float64 { return r.Modes[i].MeanHits }),
			SharedRecalls: int(of(func(r RunReport) float64 { return float64(r.Modes[i].SharedRecalls) })),
		})
	}
	return m
}

func printLoad(w io.Writer, l LoadReport) {
	fmt.Fprintf(w, "load: %d memories (%d users, %d agents, %d superseded by key) in %d batches with %d workers, %d retried\n",
		l.Memories, l.Users, l.Agents, l.Superseded, l.Batches, l.Workers, l.Retries)
	fmt.Fprintf(w, "      %.1f s, %.0f memories/s; CreateMemories per batch p50 %.0f ms, p95 %.0f ms; embedding %.2f s CPU\n\n",
		l.Seconds, l.PerSecond, l.Batch.P50, l.Batch.P95, l.EmbedSeconds)
}

func printRun(w io.Writer, title string, r RunReport) {
	fmt.Fprintln(w, title)
	printModes(w, r.Modes)
	// A ratio is 0 when -modes left one of its modes out.
	lines := []struct {
		name     string
		p50, p95 float64
	}{
		{"policy/nopolicy", r.Ratios.PolicyOverNoPolicyP50, r.Ratios.PolicyOverNoPolicyP95},
		{"policy/bare-exact", r.Ratios.PolicyOverBareExactP50, r.Ratios.PolicyOverBareExactP95},
		{"policy-clauses/nopolicy", r.Ratios.ClausesOverNoPolicyP50, r.Ratios.ClausesOverNoPolicyP95},
	}
	fmt.Fprintf(w, "  %-22s %8s %8s\n", "ratio", "p50", "p95")
	for _, l := range lines {
		if l.p50 > 0 {
			fmt.Fprintf(w, "  %-22s %8.2f %8.2f\n", l.name, l.p50, l.p95)
		}
	}
	fmt.Fprintf(w, "  queries where policy and nopolicy recalled different counts: %d\n\n", r.HitMismatches)
}

func printBreakdown(w io.Writer, parts []ModeReport, k int) {
	fmt.Fprintf(w, "parts of a policy recall, each timed alone (k %d)\n", k)
	printModes(w, parts)
	fmt.Fprintln(w)
}

func printModes(w io.Writer, modes []ModeReport) {
	fmt.Fprintf(w, "  %-22s %8s %8s %8s %8s %8s %6s\n", "mode", "p50 ms", "p95 ms", "p99 ms", "mean ms", "max ms", "hits")
	for _, m := range modes {
		fmt.Fprintf(w, "  %-22s %8.2f %8.2f %8.2f %8.2f %8.2f %6.1f\n", m.Mode, m.P50, m.P95, m.P99, m.Mean, m.Max, m.MeanHits)
	}
}

func writeJSON(path string, r Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}
