package main

import (
	"math"
	"slices"
	"time"
)

// percentile returns the p-th percentile (0 ≤ p ≤ 100) of sorted, which must
// be in ascending order, interpolating linearly between the two nearest ranks
// (the "R-7" definition of numpy and spreadsheets): p=0 is the minimum, p=100
// the maximum, p=50 of an even count the mean of the middle two. An empty
// sample, or p outside [0, 100], gives NaN.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 || math.IsNaN(p) || p < 0 || p > 100 {
		return math.NaN()
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(sorted)-1)
	frac := rank - float64(lo)
	return sorted[lo] + frac*(sorted[hi]-sorted[lo])
}

// median returns the middle of xs (the mean of the middle two for an even
// count), NaN when empty. It does not modify xs.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return percentile(s, 50)
}

// Summary describes one sample of latencies, in milliseconds.
type Summary struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50_ms"`
	P95  float64 `json:"p95_ms"`
	P99  float64 `json:"p99_ms"`
	Mean float64 `json:"mean_ms"`
	Max  float64 `json:"max_ms"`
}

// summarize describes latencies, which it does not modify. An empty sample
// is the zero Summary.
func summarize(latencies []time.Duration) Summary {
	if len(latencies) == 0 {
		return Summary{}
	}
	ms := make([]float64, len(latencies))
	var sum float64
	for i, d := range latencies {
		ms[i] = float64(d) / float64(time.Millisecond)
		sum += ms[i]
	}
	slices.Sort(ms)
	return Summary{
		N: len(ms), P50: percentile(ms, 50), P95: percentile(ms, 95), P99: percentile(ms, 99),
		Mean: sum / float64(len(ms)), Max: ms[len(ms)-1],
	}
}

// ratio is a/b, or 0 when b is not positive.
func ratio(a, b float64) float64 {
	if !(b > 0) {
		return 0
	}
	return a / b
}

// medianSummary is the field-by-field median of summaries, for reporting the
// typical run. N is the median count.
func medianSummary(ss []Summary) Summary {
	field := func(f func(Summary) float64) float64 {
		xs := make([]float64, len(ss))
		for i, s := range ss {
			xs[i] = f(s)
		}
		return median(xs)
	}
	return Summary{
		N:    int(field(func(s Summary) float64 { return float64(s.N) })),
		P50:  field(func(s Summary) float64 { return s.P50 }),
		P95:  field(func(s Summary) float64 { return s.P95 }),
		P99:  field(func(s Summary) float64 { return s.P99 }),
		Mean: field(func(s Summary) float64 { return s.Mean }),
		Max:  field(func(s Summary) float64 { return s.Max }),
	}
}
