package main

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1) // 1 … 100
	}
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{"empty", nil, 50, nan},
		{"one value, p0", []float64{7}, 0, 7},
		{"one value, p50", []float64{7}, 50, 7},
		{"one value, p100", []float64{7}, 100, 7},
		{"two values, p50 is their mean", []float64{1, 3}, 50, 2},
		{"odd count, p50 is the middle", []float64{1, 2, 10}, 50, 2},
		{"even count, p50 interpolates", []float64{1, 2, 3, 10}, 50, 2.5},
		{"p0 is the minimum", []float64{1, 2, 3, 10}, 0, 1},
		{"p100 is the maximum", []float64{1, 2, 3, 10}, 100, 10},
		{"p25 between ranks", []float64{10, 20, 30, 40, 50}, 25, 20},
		{"p90 between ranks", []float64{10, 20, 30, 40, 50}, 90, 46},
		{"1..100, p50", hundred, 50, 50.5},
		{"1..100, p95", hundred, 95, 95.05},
		{"1..100, p99", hundred, 99, 99.01},
		{"ties", []float64{5, 5, 5, 5}, 95, 5},
		{"negative p", []float64{1, 2}, -1, nan},
		{"p above 100", []float64{1, 2}, 101, nan},
		{"NaN p", []float64{1, 2}, nan, nan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := percentile(tc.sorted, tc.p)
			if !approxEqual(got, tc.want) {
				t.Errorf("percentile(%v, %v) = %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

func TestMedianLeavesInputAlone(t *testing.T) {
	xs := []float64{3, 1, 2}
	if got := median(xs); got != 2 {
		t.Errorf("median = %v, want 2", got)
	}
	if diff := cmp.Diff([]float64{3, 1, 2}, xs); diff != "" {
		t.Errorf("median reordered its input (-want +got):\n%s", diff)
	}
}

func TestSummarize(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"unsorted input", []time.Duration{ms(4), ms(1), ms(3), ms(2)}, Summary{N: 4, P50: 2.5, P95: 3.85, P99: 3.97, Mean: 2.5, Max: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarize(tc.in), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("summarize (-want +got):\n%s", diff)
			}
		})
	}
}

func approxEqual(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) < 1e-9
}
