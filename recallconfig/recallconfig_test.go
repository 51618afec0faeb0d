package recallconfig

import (
	"math"
	"testing"
)

func TestWithDefaults(t *testing.T) {
	zero := Config{}.WithDefaults()
	set := Config{VectorFloor: 0.4, Candidates: 7, DecayPerDay: map[string]float64{"episodic": 0.5}}.WithDefaults()
	tests := []struct {
		name      string
		got, want float64
	}{
		{"vector floor", zero.VectorFloor, 0.25},
		{"strong floor follows the vector floor", set.StrongFloor, 0.5},
		{"agree floor follows the vector floor", set.AgreeFloor, 0.24},
		{"a set value stays", float64(set.Candidates), 7},
		{"candidates", float64(zero.Candidates), 30},
		{"subject top", float64(zero.SubjectTop), 3},
		{"episodic decay given", set.DecayPerDay["episodic"], 0.5},
		{"profile decay by default", set.DecayPerDay["profile"], math.Ln2 / 730},
		{"decay floor by default", set.DecayFloor, 0.5},
		{"lead gate off by default", zero.LeadFloor, 0},
	}
	for _, tt := range tests {
		if math.Abs(tt.got-tt.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if zero.Keywords == nil || len(zero.Keywords("what is the weather today")) == 0 {
		t.Error("no keywords by default")
	}
}
