package memory_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"mneme/app"
	"mneme/embedding"
	"mneme/facts"
	"mneme/memory"
)

type labelledPair struct {
	Lang      string `json:"lang"`
	Kind      string `json:"kind"`
	A         string `json:"a"`
	B         string `json:"b"`
	Duplicate bool   `json:"duplicate"`
}

// scoredPair is a labelled pair with the cosine of its embeddings.
type scoredPair struct {
	labelledPair
	cosine float64
}

func loadPairs(t *testing.T) []scoredPair {
	t.Helper()
	raw, err := os.ReadFile("../seed/eval/dedup_pairs.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Pairs []labelledPair }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// The embedder memoryd runs with by default.
	e := embedding.NewBuiltin(app.Defaults().Embedding.Dim)
	out := make([]scoredPair, len(doc.Pairs))
	for i, p := range doc.Pairs {
		vs, err := e.Embed(context.Background(), []string{p.A, p.B})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = scoredPair{p, cos(vs[0], vs[1])}
	}
	return out
}

func cos(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// precisionRecall scores memory.SameFact at threshold against the labels.
func precisionRecall(pairs []scoredPair, threshold float64) (p, r float64, fp []scoredPair) {
	var tp, fn int
	for _, x := range pairs {
		got := facts.Same(x.A, x.B, x.cosine, threshold)
		switch {
		case got && x.Duplicate:
			tp++
		case got && !x.Duplicate:
			fp = append(fp, x)
		case !got && x.Duplicate:
			fn++
		}
	}
	p, r = 1, 0
	if tp+len(fp) > 0 {
		p = float64(tp) / float64(tp+len(fp))
	}
	if tp+fn > 0 {
		r = float64(tp) / float64(tp+fn)
	}
	return p, r, fp
}

// TestDedupCalibration measures SameFact on the labelled pairs of
// seed/eval/dedup_pairs.json across thresholds and holds the default to
// what it was chosen for: no false duplicate (a near-miss such as "budget
// 100k" / "budget 150k" must never reinforce), and the best recall that
// allows. Run with -v to see the table:
//
//	go test -count=1 -v -run TestDedupCalibration ./memory
func TestDedupCalibration(t *testing.T) {
	pairs := loadPairs(t)
	best := -1.0
	bestRecall := -1.0
	for th := 0.50; th < 1.0001; th += 0.01 {
		p, r, _ := precisionRecall(pairs, th)
		t.Logf("threshold %.2f: precision %.3f recall %.3f", th, p, r)
		if p == 1 && r > bestRecall {
			best, bestRecall = th, r
		}
	}
	p, r, fp := precisionRecall(pairs, memory.DefaultDuplicateThreshold)
	t.Logf("default threshold %.2f on %d pairs: precision %.3f recall %.3f (best recall at precision 1: %.3f from %.2f)",
		memory.DefaultDuplicateThreshold, len(pairs), p, r, bestRecall, best)
	for _, x := range fp {
		t.Errorf("false duplicate at the default threshold (cosine %.3f): %q / %q", x.cosine, x.A, x.B)
	}
	if r < bestRecall {
		t.Errorf("recall %.3f at the default threshold is below the %.3f reachable at precision 1 (from %.2f)", r, bestRecall, best)
	}
	// Different numbers are different facts whatever the similarity.
	for _, x := range pairs {
		if x.Kind == "number" && facts.Same(x.A, x.B, 1, 0) {
			t.Errorf("%q / %q differ in a number but count as one fact", x.A, x.B)
		}
	}
}
