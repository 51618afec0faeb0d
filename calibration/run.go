package calibration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"mneme/facts"
)

// Data is labelled data: pairs for the dedup threshold; memories, questions
// each answered by one memory, and unrelated questions for the floor.
type Data struct {
	Name      string   `json:"-"`
	Pairs     []Pair   `json:"pairs"`
	Memories  []string `json:"memories"`
	Queries   []Query  `json:"queries"`
	Unrelated []string `json:"unrelated"`
}

// Pair is two texts and whether the second restates the first.
type Pair struct {
	Lang      string `json:"lang"`
	Kind      string `json:"kind"`
	A         string `json:"a"`
	B         string `json:"b"`
	Duplicate bool   `json:"duplicate"`
}

// Query is a question and the index of the memory that answers it.
type Query struct {
	Query  string `json:"query"`
	Memory int    `json:"memory"`
}

// ParseData reads labelled data and checks that it can decide anything.
func ParseData(name string, raw []byte) (Data, error) {
	var d Data
	if err := json.Unmarshal(raw, &d); err != nil {
		return Data{}, fmt.Errorf("%s: %w", name, err)
	}
	d.Name = name
	dup := 0
	for _, p := range d.Pairs {
		if p.Duplicate {
			dup++
		}
	}
	for _, q := range d.Queries {
		if q.Memory < 0 || q.Memory >= len(d.Memories) {
			return Data{}, fmt.Errorf("%s: question %q names memory %d of %d", name, q.Query, q.Memory, len(d.Memories))
		}
	}
	if dup == 0 || dup == len(d.Pairs) || len(d.Queries) == 0 || len(d.Unrelated) == 0 {
		return Data{}, fmt.Errorf("%s: needs duplicate and distinct pairs, questions and unrelated questions", name)
	}
	return d, nil
}

// Run measures e on d and picks the model's numbers: the floor that finds
// the most questions' memories while at least MinUnrelatedEmpty of the
// unrelated questions find nothing, and the lowest dedup threshold whose
// merges are at least MinDedupPrecision duplicates; each is then put halfway
// to the next score so that it does not sit on a measured one.
func Run(ctx context.Context, e Embedder, d Data) (Calibration, error) {
	if e == nil {
		return Calibration{}, errors.New("calibration: no embedder")
	}
	c := Calibration{Model: e.Model(), Dimension: e.Dimension(), Fusion: DefaultFusion, Data: d.Name, CreatedAt: time.Now().UTC().Truncate(time.Second)}
	pairs, err := pairCosines(ctx, e, d.Pairs)
	if err != nil {
		return Calibration{}, err
	}
	c.DuplicateThreshold = duplicateThreshold(pairs)
	rel, unrel, typical, err := queryScores(ctx, e, d)
	if err != nil {
		return Calibration{}, err
	}
	c.VectorFloor = floor(rel, unrel)
	c.ExpansionFloor = min(math.Round(typical*1e4)/1e4, c.VectorFloor)
	c.Measured = measure(c, pairs, rel, unrel)
	return c, c.Check()
}

// scoredPair is a pair's label, the cosine of its texts and whether dedup
// decides it without the cosine: the same text once normalised always
// merges, different numbers never do (facts.Same).
type scoredPair struct {
	duplicate     bool
	cosine        float64
	always, never bool
}

// merged reports whether dedup at threshold t merges the pair.
func (p scoredPair) merged(t float64) bool {
	return p.always || (!p.never && p.cosine >= t)
}

func pairCosines(ctx context.Context, e Embedder, pairs []Pair) ([]scoredPair, error) {
	texts := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		texts = append(texts, p.A, p.B)
	}
	vecs, err := embedAll(ctx, e, texts)
	if err != nil {
		return nil, err
	}
	out := make([]scoredPair, len(pairs))
	for i, p := range pairs {
		out[i] = scoredPair{duplicate: p.Duplicate, cosine: facts.Cosine(vecs[2*i], vecs[2*i+1]),
			always: facts.Same(p.A, p.B, -2, 2), never: !facts.Same(p.A, p.B, 1, 1)}
	}
	return out, nil
}

func embedAll(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("calibration: embed: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("calibration: %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs, nil
}

// duplicateThreshold is the lowest cosine at which merging every pair at or
// above it keeps precision at MinDedupPrecision, moved halfway down to the
// next lower score.
func duplicateThreshold(pairs []scoredPair) float64 {
	var sorted []scoredPair
	tp, fp := 0, 0
	for _, p := range pairs {
		switch {
		case p.always && p.duplicate:
			tp++
		case p.always:
			fp++
		case !p.never:
			sorted = append(sorted, p)
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].cosine > sorted[j].cosine })
	best := math.Inf(1)
	for i, p := range sorted {
		if p.duplicate {
			tp++
		} else {
			fp++
		}
		// A threshold between this score and the next lower merges exactly
		// sorted[:i+1].
		if i+1 < len(sorted) && sorted[i+1].cosine == p.cosine {
			continue
		}
		if tp > 0 && float64(tp)/float64(tp+fp) >= MinDedupPrecision {
			best = p.cosine
			if i+1 < len(sorted) {
				best = (p.cosine + sorted[i+1].cosine) / 2
			}
		}
	}
	if math.IsInf(best, 1) {
		return 1.01 // no threshold is precise enough: merge nothing
	}
	return min(math.Ceil(best*1e4)/1e4, 1.01)
}

// queryScores returns, per question, the cosine of its memory if it ranks in
// the top TopK (else -1, never found); per unrelated question its best
// cosine; and the median cosine of unrelated questions to memories.
func queryScores(ctx context.Context, e Embedder, d Data) (rel, unrel []float64, typical float64, err error) {
	mems, err := embedAll(ctx, e, d.Memories)
	if err != nil {
		return nil, nil, 0, err
	}
	var all []float64
	for _, q := range d.Queries {
		v, err := e.EmbedQuery(ctx, q.Query)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("calibration: embed query: %w", err)
		}
		scores := make([]float64, len(mems))
		for i, m := range mems {
			scores[i] = facts.Cosine(v, m)
		}
		own, rank := scores[q.Memory], 0
		for i, s := range scores {
			if i != q.Memory && s >= own {
				rank++
			}
		}
		if rank < TopK {
			rel = append(rel, own)
		} else {
			rel = append(rel, -1)
		}
	}
	for _, u := range d.Unrelated {
		v, err := e.EmbedQuery(ctx, u)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("calibration: embed query: %w", err)
		}
		best := -1.0
		for _, m := range mems {
			s := facts.Cosine(v, m)
			best = max(best, s)
			all = append(all, s)
		}
		unrel = append(unrel, best)
	}
	slices.Sort(all)
	return rel, unrel, all[len(all)/2], nil
}

// floor is the lowest floor that leaves at least MinUnrelatedEmpty of the
// unrelated questions empty (a score counts at or above the floor), moved
// halfway up to the next relevant score, which it keeps.
func floor(rel, unrel []float64) float64 {
	u := slices.Clone(unrel)
	slices.Sort(u)
	// At most allowed unrelated questions may reach the floor.
	allowed := int(math.Floor(float64(len(u))*(1-MinUnrelatedEmpty) + 1e-9))
	lowest := u[len(u)-1-allowed] // the floor must be above this score
	next := 1.0
	for _, r := range rel {
		if r > lowest && r < next {
			next = r
		}
	}
	f := (lowest + next) / 2
	// A margin bounded by the measured gap: never more than 0.05 above the
	// unrelated score, so the floor does not drift up to the first relevant
	// one on small data.
	return math.Round(min(f, lowest+0.05)*1e4) / 1e4
}

func measure(c Calibration, pairs []scoredPair, rel, unrel []float64) Report {
	r := Report{Queries: len(rel), Unrelated: len(unrel), Pairs: len(pairs)}
	tp, fp, dups := 0, 0, 0
	var dupSum, disSum float64
	for _, p := range pairs {
		merged := p.merged(c.DuplicateThreshold)
		if p.duplicate {
			dups++
			dupSum += p.cosine
			if merged {
				tp++
			}
		} else {
			disSum += p.cosine
			if merged {
				fp++
			}
		}
	}
	r.FalseMerges = fp
	r.DedupPrecision = 1
	if tp+fp > 0 {
		r.DedupPrecision = float64(tp) / float64(tp+fp)
	}
	r.DedupRecall = float64(tp) / float64(max(dups, 1))
	r.DuplicateMean = dupSum / float64(max(dups, 1))
	r.DistinctMean = disSum / float64(max(len(pairs)-dups, 1))
	found, empty := 0, 0
	var relSum, unrelSum float64
	for _, s := range rel {
		if s >= c.VectorFloor {
			found++
		}
		relSum += max(s, 0)
	}
	for _, s := range unrel {
		if s < c.VectorFloor {
			empty++
		}
		unrelSum += s
	}
	r.Recall = float64(found) / float64(len(rel))
	r.UnrelatedEmpty = float64(empty) / float64(len(unrel))
	r.RelevantMean = relSum / float64(len(rel))
	r.UnrelatedMean = unrelSum / float64(len(unrel))
	for _, f := range []*float64{&r.Recall, &r.UnrelatedEmpty, &r.DedupPrecision, &r.DedupRecall, &r.DuplicateMean, &r.DistinctMean, &r.RelevantMean, &r.UnrelatedMean} {
		*f = math.Round(*f*1e4) / 1e4
	}
	return r
}
