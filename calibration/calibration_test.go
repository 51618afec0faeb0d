package calibration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDuplicateThreshold(t *testing.T) {
	pos := func(c float64) scoredPair { return scoredPair{duplicate: true, cosine: c} }
	neg := func(c float64) scoredPair { return scoredPair{cosine: c} }
	cases := []struct {
		name  string
		pairs []scoredPair
		want  float64
	}{
		{"separable: halfway between the lowest duplicate and the highest distinct", []scoredPair{pos(0.95), pos(0.9), neg(0.8), neg(0.2)}, 0.85},
		{"a distinct pair above every duplicate: merge nothing", []scoredPair{neg(0.99), pos(0.95), pos(0.9)}, 1.01},
		{"a distinct pair among duplicates stops the threshold above it", []scoredPair{pos(0.97), neg(0.93), pos(0.9)}, 0.95},
		{"numbers differ: never merged, so it does not count", []scoredPair{pos(0.9), {cosine: 0.99, never: true}, neg(0.5)}, 0.7},
		{"the same text: always merged, the cosine decides nothing", []scoredPair{{duplicate: true, cosine: 0.2, always: true}, pos(0.8), neg(0.6)}, 0.7},
	}
	for _, tc := range cases {
		if got := duplicateThreshold(tc.pairs); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFloor(t *testing.T) {
	// 40 unrelated questions: at most one (2.5%) may reach the floor.
	unrel := make([]float64, 40)
	for i := range unrel {
		unrel[i] = 0.1
	}
	unrel[38], unrel[39] = 0.3, 0.6
	cases := []struct {
		name string
		rel  []float64
		want float64
	}{
		{"halfway to the next relevant score", []float64{0.34, 0.5, -1}, 0.32},
		{"at most 0.05 above the unrelated score it must beat", []float64{0.9}, 0.35},
	}
	for _, tc := range cases {
		if got := floor(tc.rel, unrel); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, m := range []struct {
		model string
		dim   int
	}{{"use-multilingual-v3", 512}, {"builtin-ngram-v2", 256}} {
		c, err := Lookup(m.model, m.dim, "")
		if err != nil {
			t.Fatalf("built-in %s: %v", m.model, err)
		}
		if c.Measured.UnrelatedEmpty < MinUnrelatedEmpty || c.Measured.DedupPrecision < MinDedupPrecision || c.Measured.FalseMerges != 0 {
			t.Errorf("built-in %s misses its targets: %+v", m.model, c.Measured)
		}
		if g := c.GateMeasured; g == nil || g.Scores.UnrelatedEmpty < MinUnrelatedEmpty || g.Scores.Forbidden != 0 || g.Scores.Recall < g.Default.Recall {
			t.Errorf("built-in %s: its gate was not tuned to the targets: %+v", m.model, g)
		}
	}
	if _, err := Lookup("use-multilingual-v3", 256, ""); !errors.Is(err, ErrMissing) {
		t.Errorf("another dimension = %v, want ErrMissing", err)
	}
	if _, err := Lookup("served-7", 7, ""); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "served-7") {
		t.Errorf("an unknown model = %v, want ErrMissing naming it", err)
	}
	// The override directory wins over the built-in file.
	dir := t.TempDir()
	c, _ := Lookup("builtin-ngram-v2", 256, "")
	c.VectorFloor, c.ExpansionFloor, c.Gate = 0.31, 0, Gate{}
	if _, err := Save(dir, c); err != nil {
		t.Fatal(err)
	}
	if got, err := Lookup("builtin-ngram-v2", 256, dir); err != nil || got.VectorFloor != 0.31 {
		t.Errorf("override = %v, %v; want floor 0.31", got.VectorFloor, err)
	}
	if err := os.WriteFile(filepath.Join(dir, File("bad/model")), []byte(`{"model":"bad/model","dimension":3,"vector_floor":2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup("bad/model", 3, dir); err == nil || errors.Is(err, ErrMissing) {
		t.Errorf("a calibration with a floor of 2 = %v, want it refused", err)
	}
}

// words embeds a text as the bag of its words: texts sharing words score
// high, others 0, so Run's choices can be predicted.
type words struct{}

func (words) Model() string  { return "words" }
func (words) Dimension() int { return 64 }
func (w words) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, f := range strings.Fields(strings.ToLower(t)) {
			h := 0
			for _, r := range f {
				h = (h*31 + int(r)) % 64
			}
			v[h]++
		}
		out[i] = v
	}
	return out, nil
}
func (w words) EmbedQuery(ctx context.Context, t string) ([]float32, error) {
	v, err := w.Embed(ctx, []string{t})
	return v[0], err
}

func TestRunOnLabelledData(t *testing.T) {
	d, err := ParseData("test", []byte(`{
		"pairs": [
			{"a": "alice likes green tea", "b": "alice likes green tea a lot", "duplicate": true},
			{"a": "bob owns a red car", "b": "bob owns a red car today", "duplicate": true},
			{"a": "alice likes green tea", "b": "carol hates black coffee", "duplicate": false},
			{"a": "budget is 100", "b": "budget is 150", "duplicate": false}
		],
		"memories": ["alice likes green tea", "bob owns a red car", "the office opens early"],
		"queries": [{"query": "what tea does alice like", "memory": 0}, {"query": "which car does bob own", "memory": 1}],
		"unrelated": ["hello there", "nice weather"]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Run(context.Background(), words{}, d)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Measured
	if c.Model != "words" || c.Dimension != 64 || m.Pairs != 4 || m.Queries != 2 || m.Unrelated != 2 {
		t.Errorf("calibration = %+v", c)
	}
	if m.FalseMerges != 0 || m.DedupRecall != 1 || m.UnrelatedEmpty != 1 || m.Recall != 1 {
		t.Errorf("measured %+v, want every duplicate merged, no false merge, every question found, every unrelated one empty", m)
	}
	if c.VectorFloor <= 0 || c.DuplicateThreshold >= 1 {
		t.Errorf("floor %v, threshold %v", c.VectorFloor, c.DuplicateThreshold)
	}
	if _, err := ParseData("bad", []byte(`{"pairs": [], "memories": ["a"], "queries": [{"query": "q", "memory": 3}], "unrelated": ["u"]}`)); err == nil {
		t.Error("a question naming a memory that does not exist was accepted")
	}
}
