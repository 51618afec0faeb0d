package facts

import (
	"slices"
	"testing"
)

func TestNumbersOf(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"budget 100k", []string{"100k"}},
		{"budget 100 k for 2026", []string{"100k", "2026"}},
		{"100,000 euros", []string{"100000"}},
		{"price 1.5m", []string{"1.5m"}},
		{"预算15万", []string{"15万"}},
		{"预算十五万元", []string{"十五万"}},
		{"三十个", []string{"三十"}},
		{"一起去", nil},
		{"order 4411, 20%", []string{"20%", "4411"}},
		{"ｂｕｄｇｅｔ １００ｋ", []string{"100k"}},
		{"no numbers", nil},
	}
	for _, tc := range tests {
		if got := Numbers(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Numbers(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestSameFact(t *testing.T) {
	tests := []struct {
		a, b   string
		cosine float64
		want   bool
	}{
		{"Alice prefers tea.", "alice PREFERS tea!", 0, true},                 // same text, whatever the vectors
		{"Lunch at Café Müller", "Lunch at Cafe\u0301 Mu\u0308ller", 0, true}, // composed and decomposed accents
		{"用户喜欢简短的回答。", "用户喜欢简短的回答", 0, true},                                  // punctuation
		{"budget 100k", "budget 150k", 0.99, false},                           // numbers differ
		{"budget 100k", "the budget is 100k", 0.9, true},                      // same numbers, alike
		{"budget 100k", "the budget is 100k", 0.5, false},                     // same numbers, not alike enough
		{"Alice likes tea", "Alice likes coffee", 0.7, false},                 // below the threshold
		{"预算十万", "预算十五万", 0.99, false},                                        // Chinese numerals
		{"order 4411 is late", "order 4411 is late!", 0.2, true},              // same text
		{"Alice likes tea", "Alice really likes tea", 0.95, true},             // paraphrase
		{"Alice likes tea", "Alice really likes tea", 0.859, false},           // just under
	}
	// memory.DefaultDuplicateThreshold, which memory cannot lend this package.
	const threshold = 0.86
	for _, tc := range tests {
		if got := Same(tc.a, tc.b, tc.cosine, threshold); got != tc.want {
			t.Errorf("Same(%q, %q, %v) = %v, want %v", tc.a, tc.b, tc.cosine, got, tc.want)
		}
	}
}
