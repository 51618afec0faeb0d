package calibration

import (
	"context"
	"errors"
	"testing"
)

func TestTuneGate(t *testing.T) {
	// A subject floor no score depends on goes to the lowest tried: 0.2 of
	// the vector floor.
	const lowestSubject = 0.08
	base := Calibration{Model: "m", Dimension: 8, VectorFloor: 0.4, ExpansionFloor: 0.1, DuplicateThreshold: 1.01, Fusion: DefaultFusion}
	cases := []struct {
		name  string
		score func(c Calibration) GateScores
		// want is the gate and fusion picked; measured whether a report is
		// attached (something met the targets).
		wantGate   Gate
		wantFusion Fusion
		measured   bool
	}{
		{
			// Recall grows as the strong floor falls, but unrelated
			// questions stop being empty below 0.45: the lowest safe floor
			// wins, and the strictest unseen max keeps the tie.
			name: "highest recall that keeps unrelated empty",
			score: func(c Calibration) GateScores {
				s := GateScores{Recall: 1 - c.effectiveStrong(), UnrelatedEmpty: 1}
				if c.effectiveStrong() < 0.45 {
					s.UnrelatedEmpty = 0.9
				}
				return s
			},
			wantGate: Gate{StrongFloor: 0.45, UnseenMax: 0.25, SubjectFloor: lowestSubject}, wantFusion: DefaultFusion, measured: true,
		},
		{
			name: "forbidden memories disqualify",
			score: func(c Calibration) GateScores {
				s := GateScores{Recall: c.Gate.UnseenMax, UnrelatedEmpty: 1}
				if c.Gate.UnseenMax > 0.55 {
					s.Forbidden = 1
				}
				return s
			},
			wantGate: Gate{StrongFloor: 1.01, UnseenMax: 0.5, SubjectFloor: lowestSubject}, wantFusion: DefaultFusion, measured: true,
		},
		{
			// The gate ties everywhere, so the calibration's own rule
			// stays; then the full-text weight is raised as far as it
			// helps and the others stay.
			name: "fusion weights one at a time",
			score: func(c Calibration) GateScores {
				return GateScores{Recall: c.Fusion.FullText / 10, UnrelatedEmpty: 1}
			},
			wantGate:   Gate{SubjectFloor: lowestSubject},
			wantFusion: Fusion{Vector: 1, FullText: 1.5, Graph: 0.8, Session: 0.5}, measured: true,
		},
		{
			// Recall grows as the subject floor falls; below 0.15 of
			// similarity, chit-chat about the user starts to pass. The
			// lowest safe share of the vector floor (0.4 × 0.4) wins.
			name: "lowest subject floor that keeps unrelated empty",
			score: func(c Calibration) GateScores {
				s := GateScores{Recall: 0.5, UnrelatedEmpty: 1}
				if f := c.Gate.SubjectFloor; f > 0 {
					s.Recall = 1 - f
					if f < 0.15 {
						s.UnrelatedEmpty = 0.9
					}
				}
				return s
			},
			wantGate: Gate{SubjectFloor: 0.16}, wantFusion: DefaultFusion, measured: true,
		},
		{
			// The tuning questions' recall does not move with the subject
			// floor until it drops below 0.12 (0.4 × 0.3); MRR falls as the
			// floor does. The lowest floor that keeps recall wins all the
			// same.
			name: "a lower subject floor wins a tie in recall",
			score: func(c Calibration) GateScores {
				f := c.Gate.SubjectFloor
				s := GateScores{Recall: 0.9, MRR: 0.9, UnrelatedEmpty: 1}
				if f > 0 {
					s.MRR = 0.5 + f
				}
				if f > 0 && f < 0.12 {
					s.Recall = 0.8
				}
				return s
			},
			wantGate: Gate{SubjectFloor: 0.12}, wantFusion: DefaultFusion, measured: true,
		},
		{
			// Recall grows as the lead floor and margin fall; below a
			// floor of 0.24 (0.4 × 0.6) unrelated questions start to pass.
			// The lowest safe floor wins, with the lowest margin that
			// still adds recall.
			name: "lead floor and margin that add recall and keep unrelated empty",
			score: func(c Calibration) GateScores {
				s := GateScores{Recall: 0.5, UnrelatedEmpty: 1}
				if f := c.Gate.LeadFloor; f > 0 {
					s.Recall = 1 - f - c.Gate.LeadMargin
					if f < 0.24 {
						s.UnrelatedEmpty = 0.9
					}
				}
				return s
			},
			wantGate: Gate{SubjectFloor: lowestSubject, LeadFloor: 0.24, LeadMargin: 0.05}, wantFusion: DefaultFusion, measured: true,
		},
		{
			// Recall grows with the lead gate, but so do the unrelated
			// questions answered, though fewer than the targets allow: it
			// stays off.
			name: "a lead gate that answers unrelated questions stays off",
			score: func(c Calibration) GateScores {
				s := GateScores{Recall: 0.9, UnrelatedEmpty: 1}
				if c.Gate.LeadFloor > 0 {
					s.Recall, s.UnrelatedEmpty = 0.95, 0.98
				}
				return s
			},
			wantGate: Gate{SubjectFloor: lowestSubject}, wantFusion: DefaultFusion, measured: true,
		},
		{
			// The lead gate adds nothing: it stays off.
			name: "a lead gate that adds no recall stays off",
			score: func(c Calibration) GateScores {
				s := GateScores{Recall: 0.9, UnrelatedEmpty: 1}
				if c.Gate.LeadFloor > 0 {
					s.MRR = -0.1
				}
				return s
			},
			wantGate: Gate{SubjectFloor: lowestSubject}, wantFusion: DefaultFusion, measured: true,
		},
		{
			name:       "nothing meets the targets: the calibration stays",
			score:      func(Calibration) GateScores { return GateScores{Recall: 0.9, UnrelatedEmpty: 0.5} },
			wantFusion: DefaultFusion,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, trials, err := TuneGate(context.Background(), base, "d", 10, func(_ context.Context, c Calibration) (GateScores, error) {
				return tc.score(c), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got.Gate != tc.wantGate || got.Fusion != tc.wantFusion {
				t.Errorf("picked gate %+v fusion %+v, want %+v %+v", got.Gate, got.Fusion, tc.wantGate, tc.wantFusion)
			}
			if (got.GateMeasured != nil) != tc.measured {
				t.Fatalf("gate report %+v, want one: %v", got.GateMeasured, tc.measured)
			}
			if got.GateMeasured != nil && (got.GateMeasured.Trials != len(trials) || got.GateMeasured.Scores != tc.score(got)) {
				t.Errorf("report %+v does not match the %d trials or the picked scores", got.GateMeasured, len(trials))
			}
			if err := got.Check(); err != nil {
				t.Error(err)
			}
		})
	}
}

// effectiveStrong is the similarity that passes whatever the question's
// words, with recall's default (vector floor + 0.1) for zero.
func (c Calibration) effectiveStrong() float64 {
	if c.Gate.StrongFloor == 0 {
		return c.VectorFloor + 0.1
	}
	return c.Gate.StrongFloor
}

func TestTuneGateError(t *testing.T) {
	boom := errors.New("boom")
	base := Calibration{Model: "m", Dimension: 8, VectorFloor: 0.4, DuplicateThreshold: 1.01, Fusion: DefaultFusion}
	n := 0
	got, _, err := TuneGate(context.Background(), base, "d", 1, func(context.Context, Calibration) (GateScores, error) {
		if n++; n == 3 {
			return GateScores{}, boom
		}
		return GateScores{Recall: 1, UnrelatedEmpty: 1}, nil
	})
	if !errors.Is(err, boom) || got.Gate != base.Gate {
		t.Fatalf("error %v, gate %+v: want the scorer's error and the calibration unchanged", err, got.Gate)
	}
	if _, _, err := TuneGate(context.Background(), base, "d", 1, nil); err == nil {
		t.Fatal("no scorer: want an error")
	}
}
