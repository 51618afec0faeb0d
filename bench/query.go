package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"mneme/memory"
)

// query is one recall to time: a user, a question and the question's
// embedding, computed beforehand for the bare modes.
type query struct {
	user string
	text string
	// session is one of the user's sessions, so that recall's session
	// source runs too.
	session string
	vec     []float32
	// resources are memories of the user that the breakdown's decide step
	// asks policy about.
	resources []memory.Resource
}

// mode is one way of answering a query.
type mode struct {
	name string
	do   func(ctx context.Context, q query) (answer, error)
}

// answer is what one query found: how many memories, and how many of them
// are shared knowledge rather than memories about the user.
type answer struct{ hits, shared int }

// counted is the answer of a mode that finds n things, none shared.
func counted(n int, err error) (answer, error) { return answer{hits: n}, err }

// sample is what one pass over the queries measured: per mode, the latency
// and answer of each query, in query order.
type sample struct {
	modes     []string
	latencies [][]time.Duration
	answers   [][]answer
	wall      time.Duration
}

// measure runs every query in every mode with workers workers. The modes of
// one query run back to back, starting from a different mode for each query
// (round robin), so that cache warming and machine noise fall on all modes
// alike. The first error stops the pass.
func measure(ctx context.Context, modes []mode, queries []query, workers int) (sample, error) {
	s := sample{modes: make([]string, len(modes)), latencies: make([][]time.Duration, len(modes)), answers: make([][]answer, len(modes))}
	for i, m := range modes {
		s.modes[i] = m.name
		s.latencies[i] = make([]time.Duration, len(queries))
		s.answers[i] = make([]answer, len(queries))
	}
	next := make(chan int)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(next)
		for i := range queries {
			select {
			case next <- i:
			case <-gctx.Done():
				return nil
			}
		}
		return nil
	})
	start := time.Now()
	for range workers {
		g.Go(func() error {
			for i := range next {
				for j := range modes {
					mi := (i + j) % len(modes)
					t0 := time.Now()
					a, err := modes[mi].do(gctx, queries[i])
					d := time.Since(t0)
					if err != nil {
						return fmt.Errorf("%s, query %d (%s: %q): %w", modes[mi].name, i, queries[i].user, queries[i].text, err)
					}
					s.latencies[mi][i], s.answers[mi][i] = d, a
				}
			}
			return nil
		})
	}
	err := g.Wait()
	s.wall = time.Since(start)
	return s, err
}

// ModeReport is the latency of one mode over one pass.
type ModeReport struct {
	Mode string `json:"mode"`
	Summary
	// MeanHits is the mean number of memories returned per query.
	MeanHits float64 `json:"mean_hits"`
	// SharedRecalls counts the queries whose answer held at least one
	// memory of shared knowledge.
	SharedRecalls int `json:"shared_recalls"`
}

// report summarises the sample mode by mode.
func (s sample) report() []ModeReport {
	out := make([]ModeReport, len(s.modes))
	for i, name := range s.modes {
		total := 0
		out[i] = ModeReport{Mode: name, Summary: summarize(s.latencies[i])}
		for _, a := range s.answers[i] {
			total += a.hits
			if a.shared > 0 {
				out[i].SharedRecalls++
			}
		}
		if n := len(s.answers[i]); n > 0 {
			out[i].MeanHits = float64(total) / float64(n)
		}
	}
	return out
}
