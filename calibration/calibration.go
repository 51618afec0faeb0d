// Package calibration holds what an embedding model's scores mean: the
// cosine a memory needs to count as relevant to a question (the relevance
// floor), the cosine at which two texts restate one fact (the dedup
// threshold) and recall's fusion weights. Each model spreads its cosines
// differently (one puts unrelated texts near 0, another near 0.8), so these
// numbers belong to the model, not to the code: Run picks them from labelled
// data, and they are stored per model, in files embedded in the binary
// (models/) or in an override directory that memoryd calibrate writes.
package calibration

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// Calibration is one model's numbers and how they were measured.
type Calibration struct {
	Model     string `json:"model"`
	Dimension int    `json:"dimension"`
	// VectorFloor is the cosine a memory needs to be relevant to a question.
	VectorFloor float64 `json:"vector_floor"`
	// ExpansionFloor is the cosine a memory reached through the graph needs:
	// what a question and an unrelated memory typically score.
	ExpansionFloor float64 `json:"expansion_floor"`
	// DuplicateThreshold is the cosine at or above which a new memory
	// restates a stored one.
	DuplicateThreshold float64 `json:"duplicate_threshold"`
	Fusion             Fusion  `json:"fusion"`
	// Gate is the relevance gate's rule for weak similarities; zero values
	// leave recall's defaults.
	Gate     Gate   `json:"gate,omitzero"`
	Measured Report `json:"measured"`
	// GateMeasured is what recall with the whole gate scored on the
	// labelled questions TuneGate picked Gate and Fusion on, if it ran.
	GateMeasured *GateReport `json:"gate_measured,omitempty"`
	// Data names the labelled data, CreatedAt when Run ran.
	Data      string    `json:"data"`
	CreatedAt time.Time `json:"created_at"`
}

// Fusion is recall's weight per retrieval source in rank fusion.
type Fusion struct {
	Vector   float64 `json:"vector"`
	FullText float64 `json:"full_text"`
	Graph    float64 `json:"graph"`
	Session  float64 `json:"session"`
	// Intent weighs the memories a question about the user asks for by
	// kind or slot; zero leaves recall's default.
	Intent float64 `json:"intent,omitempty"`
}

// Gate is how the relevance gate treats a similarity between the vector
// floor and StrongFloor: it passes only when less than UnseenMax of the
// question's weighted words are unknown to the user's memories. Below the
// vector floor, one of the user's nearest memories passes a question about
// the user at SubjectFloor (0: never), and the user's nearest passes any
// question at LeadFloor when it leads the next by LeadMargin (0: never).
type Gate struct {
	StrongFloor  float64 `json:"strong_floor,omitempty"`
	UnseenMax    float64 `json:"unseen_max,omitempty"`
	SubjectFloor float64 `json:"subject_floor,omitempty"`
	LeadFloor    float64 `json:"lead_floor,omitempty"`
	LeadMargin   float64 `json:"lead_margin,omitempty"`
}

// DefaultFusion is the weighting recall has used with every model: the
// vector and full-text lists count alike, graph neighbours and the session
// somewhat less.
var DefaultFusion = Fusion{Vector: 1, FullText: 1, Graph: 0.8, Session: 0.5}

// Targets of Run.
const (
	// MinUnrelatedEmpty is the share of unrelated questions that must find
	// nothing above the floor.
	MinUnrelatedEmpty = 0.97
	// MinDedupPrecision is the share of pairs merged at the threshold that
	// must really be duplicates.
	MinDedupPrecision = 0.99
	// TopK is how deep a relevant memory may rank and still count as found.
	TopK = 5
)

// Report is what the labelled data measured at the chosen numbers.
type Report struct {
	Queries   int `json:"queries"`
	Unrelated int `json:"unrelated"`
	Pairs     int `json:"pairs"`
	// Recall is the share of questions whose memory ranks in the top TopK
	// above the floor; UnrelatedEmpty the share of unrelated questions with
	// nothing above it.
	Recall         float64 `json:"recall"`
	UnrelatedEmpty float64 `json:"unrelated_empty"`
	// DedupPrecision and DedupRecall are over the labelled pairs at the
	// threshold; FalseMerges counts distinct pairs it would merge.
	DedupPrecision float64 `json:"dedup_precision"`
	DedupRecall    float64 `json:"dedup_recall"`
	FalseMerges    int     `json:"false_merges"`
	// Cosines seen: the mean of duplicate and of distinct pairs, the mean
	// best score of relevant and of unrelated questions.
	DuplicateMean float64 `json:"duplicate_mean"`
	DistinctMean  float64 `json:"distinct_mean"`
	RelevantMean  float64 `json:"relevant_mean"`
	UnrelatedMean float64 `json:"unrelated_mean"`
}

//go:embed models/*.json
var builtIn embed.FS

// ErrMissing means no calibration is known for a model.
var ErrMissing = errors.New("no calibration for this embedding model")

// File is the name of a model's calibration file.
func File(model string) string {
	return unsafeChars.ReplaceAllString(model, "_") + ".json"
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// Lookup returns the calibration of model at dimension dim: from dir when it
// holds one (dir "" is not looked in), else the one built in. A calibration
// made at another dimension does not count.
func Lookup(model string, dim int, dir string) (Calibration, error) {
	var raw []byte
	var err error
	from := "built-in " + File(model)
	if dir != "" {
		from = filepath.Join(dir, File(model))
		raw, err = os.ReadFile(from)
		if errors.Is(err, fs.ErrNotExist) {
			err, raw, from = nil, nil, "built-in "+File(model)
		} else if err != nil {
			return Calibration{}, err
		}
	}
	if raw == nil {
		raw, err = builtIn.ReadFile("models/" + File(model))
		if errors.Is(err, fs.ErrNotExist) {
			return Calibration{}, fmt.Errorf("%w: %s", ErrMissing, model)
		} else if err != nil {
			return Calibration{}, err
		}
	}
	var c Calibration
	if err := json.Unmarshal(raw, &c); err != nil {
		return Calibration{}, fmt.Errorf("calibration %s: %w", from, err)
	}
	switch {
	case c.Model != model:
		return Calibration{}, fmt.Errorf("calibration %s is for model %q, not %q", from, c.Model, model)
	case c.Dimension != dim:
		return Calibration{}, fmt.Errorf("%w: %s at dimension %d (%s is for dimension %d)", ErrMissing, model, dim, from, c.Dimension)
	}
	if err := c.Check(); err != nil {
		return Calibration{}, fmt.Errorf("calibration %s: %w", from, err)
	}
	return c, nil
}

// Check reports numbers that cannot be a calibration.
func (c Calibration) Check() error {
	switch {
	case c.VectorFloor <= -1 || c.VectorFloor >= 1:
		return fmt.Errorf("vector floor %v is outside (-1, 1)", c.VectorFloor)
	case c.ExpansionFloor <= -1 || c.ExpansionFloor > c.VectorFloor:
		return fmt.Errorf("expansion floor %v is outside (-1, vector floor %v]", c.ExpansionFloor, c.VectorFloor)
	case c.DuplicateThreshold <= 0 || c.DuplicateThreshold > 1.01:
		return fmt.Errorf("duplicate threshold %v is outside (0, 1.01]", c.DuplicateThreshold)
	case c.Fusion.Vector <= 0 || c.Fusion.FullText < 0 || c.Fusion.Graph < 0 || c.Fusion.Session < 0 || c.Fusion.Intent < 0:
		return errors.New("fusion weights must not be negative, nor the vector one zero")
	case c.Gate.StrongFloor != 0 && (c.Gate.StrongFloor < c.VectorFloor || c.Gate.StrongFloor > 1.01):
		return fmt.Errorf("strong floor %v is outside [vector floor %v, 1.01]", c.Gate.StrongFloor, c.VectorFloor)
	case c.Gate.UnseenMax < 0 || c.Gate.UnseenMax > 1.01:
		return fmt.Errorf("unseen max %v is outside [0, 1.01]", c.Gate.UnseenMax)
	case c.Gate.SubjectFloor < 0 || c.Gate.SubjectFloor > c.VectorFloor:
		return fmt.Errorf("subject floor %v is outside [0, vector floor %v]", c.Gate.SubjectFloor, c.VectorFloor)
	case c.Gate.LeadFloor < 0 || c.Gate.LeadFloor > c.VectorFloor:
		return fmt.Errorf("lead floor %v is outside [0, vector floor %v]", c.Gate.LeadFloor, c.VectorFloor)
	case c.Gate.LeadMargin < 0 || c.Gate.LeadMargin > 1:
		return fmt.Errorf("lead margin %v is outside [0, 1]", c.Gate.LeadMargin)
	}
	return nil
}

// Save writes c into dir as the model's file and returns its path.
func Save(dir string, c Calibration) (string, error) {
	if err := c.Check(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, File(c.Model))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// Embedder is the model being calibrated.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	Dimension() int
	Model() string
}
