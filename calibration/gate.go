package calibration

import (
	"context"
	"errors"
	"math"
	"time"
)

// GateScores are what recall, with one calibration's gate and fusion
// weights, scored on labelled questions.
type GateScores struct {
	Recall         float64 `json:"recall_at_5"`
	MRR            float64 `json:"mrr"`
	UnrelatedEmpty float64 `json:"unrelated_empty"`
	Forbidden      int     `json:"forbidden"`
}

// acceptable reports whether scores meet the gate's targets: unrelated
// questions stay empty and nothing forbidden comes back, whatever the
// recall.
func (s GateScores) acceptable() bool {
	return s.UnrelatedEmpty >= MinUnrelatedEmpty && s.Forbidden == 0
}

// better reports whether s beats t: more recall, then a better first rank,
// then more unrelated questions left empty. Equal scores are not better, so
// the first candidate tried (the strictest) keeps a tie.
func (s GateScores) better(t GateScores) bool {
	const eps = 1e-9
	switch {
	case math.Abs(s.Recall-t.Recall) > eps:
		return s.Recall > t.Recall
	case math.Abs(s.MRR-t.MRR) > eps:
		return s.MRR > t.MRR
	}
	return s.UnrelatedEmpty > t.UnrelatedEmpty+eps
}

// GateReport is what TuneGate measured at the numbers it picked.
type GateReport struct {
	// Data names the questions, Questions how many it asked each time,
	// Trials how many calibrations it tried.
	Data      string     `json:"data"`
	Questions int        `json:"questions"`
	Trials    int        `json:"trials"`
	Scores    GateScores `json:"scores"`
	// Default is what the calibration scored before TuneGate changed it.
	Default GateScores `json:"default"`
}

// Trial is one calibration TuneGate tried and its scores.
type Trial struct {
	Gate   Gate
	Fusion Fusion
	Scores GateScores
}

// ScoreFunc runs recall with calibration c over labelled questions.
type ScoreFunc func(ctx context.Context, c Calibration) (GateScores, error)

// Gate grids, strictest first so that a tie keeps the stricter rule.
var (
	// strongOffsets are tried above the vector floor; 1.01 - floor never
	// lets a similarity pass without the question's words being known.
	strongOffsets = []float64{math.Inf(1), 0.2, 0.1, 0.05, 0}
	unseenMaxes   = []float64{0.25, 0.4, 0.5, 0.6, 0.75, 1.01}
	// subjectShares of the vector floor are tried as the subject floor,
	// after the gate rule; none (0) comes first.
	subjectShares = []float64{0.8, 0.6, 0.4, 0.3, 0.2}
	// leadShares of the vector floor are tried as the lead floor with
	// each of leadMargins, after the subject floor; none (0) comes first.
	leadShares  = []float64{0.8, 0.7, 0.6, 0.5}
	leadMargins = []float64{0.12, 0.08, 0.05}
	// Fusion weights are tried one at a time, the vector one fixed at 1.
	fusionSteps = []float64{0.5, 1, 1.5}
)

// TuneGate picks c's gate rule (StrongFloor, UnseenMax), then its subject
// floor, its lead floor and margin, and then its fusion weights (full text, graph, intent) by running recall with each
// candidate through score: the candidate with the highest recall whose
// unrelated questions stay empty (MinUnrelatedEmpty) and that returns
// nothing forbidden. It starts from c as it is; when nothing tried meets the
// targets, c's own numbers are kept. The questions score sees must not be
// those the result is reported on.
func TuneGate(ctx context.Context, c Calibration, data string, questions int, score ScoreFunc) (Calibration, []Trial, error) {
	if score == nil {
		return c, nil, errors.New("calibration: no scorer")
	}
	var trials []Trial
	try := func(cand Calibration) (GateScores, error) {
		s, err := score(ctx, cand)
		if err == nil {
			trials = append(trials, Trial{Gate: cand.Gate, Fusion: cand.Fusion, Scores: s})
		}
		return s, err
	}
	start, err := try(c)
	if err != nil {
		return c, trials, err
	}
	best, bestScores, found := c, start, start.acceptable()
	// consider keeps cand when it beats the best so far and leaves at
	// least minUnrelated of the unrelated questions empty.
	consider := func(cand Calibration, minUnrelated float64) error {
		if cand.Check() != nil {
			return nil
		}
		s, err := try(cand)
		if err != nil {
			return err
		}
		if s.acceptable() && s.UnrelatedEmpty >= minUnrelated-1e-9 && (!found || s.better(bestScores)) {
			best, bestScores, found = cand, s, true
		}
		return nil
	}
	for _, off := range strongOffsets {
		for _, um := range unseenMaxes {
			cand := c
			cand.Gate = Gate{StrongFloor: min(math.Round((c.VectorFloor+off)*1e4)/1e4, 1.01), UnseenMax: um}
			if err := consider(cand, 0); err != nil {
				return c, trials, err
			}
		}
	}
	// The subject floor is the lowest that keeps unrelated questions empty
	// without losing recall; a tie goes to the lower floor. The tuning
	// questions about the user are answered through intent words drawn from
	// them, so their recall cannot show what the subject gate adds for
	// phrasings nobody tuned for.
	base := best
	for _, share := range subjectShares {
		cand := base
		cand.Gate.SubjectFloor = math.Round(c.VectorFloor*share*1e4) / 1e4
		s, err := try(cand)
		if err != nil {
			return c, trials, err
		}
		if s.acceptable() && (!found || s.Recall >= bestScores.Recall-1e-9) {
			best, bestScores, found = cand, s, true
		}
	}
	// The lead gate must earn its place: a candidate replaces the best so
	// far only with more recall (or a better first rank) and without an
	// unrelated question more answered, the strictest first. It is there
	// for paraphrases, not to trade chit-chat for them.
	base, baseScores := best, bestScores
	for _, share := range leadShares {
		for _, margin := range leadMargins {
			cand := base
			cand.Gate.LeadFloor, cand.Gate.LeadMargin = math.Round(c.VectorFloor*share*1e4)/1e4, margin
			if err := consider(cand, baseScores.UnrelatedEmpty); err != nil {
				return c, trials, err
			}
		}
	}
	weights := []func(*Fusion) *float64{
		func(f *Fusion) *float64 { return &f.FullText },
		func(f *Fusion) *float64 { return &f.Graph },
		func(f *Fusion) *float64 { return &f.Intent },
	}
	for _, w := range weights {
		base := best
		for _, v := range fusionSteps {
			cand := base
			if *w(&cand.Fusion) == v {
				continue
			}
			*w(&cand.Fusion) = v
			if err := consider(cand, 0); err != nil {
				return c, trials, err
			}
		}
	}
	if !found {
		return c, trials, nil
	}
	best.GateMeasured = &GateReport{Data: data, Questions: questions, Trials: len(trials), Scores: bestScores, Default: start}
	best.CreatedAt = time.Now().UTC().Truncate(time.Second)
	return best, trials, nil
}
