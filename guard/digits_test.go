package guard

import (
	"testing"
	"unicode"
)

// TestDecimalRuns checks what decimalValue relies on: every range of
// unicode.Nd is whole runs of ten digits.
func TestDecimalRuns(t *testing.T) {
	for _, rg := range unicode.Nd.R16 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %U–%U stride %d is not runs of ten", rg.Lo, rg.Hi, rg.Stride)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %U–%U stride %d is not runs of ten", rg.Lo, rg.Hi, rg.Stride)
		}
	}
}

func TestDigitValue(t *testing.T) {
	tests := []struct {
		r    rune
		want int
	}{
		{'7', 7},
		{'٤', 4},          // Arabic-Indic
		{'۴', 4},          // extended Arabic-Indic (Persian)
		{'४', 4},          // Devanagari
		{'๔', 4},          // Thai
		{'４', 4},          // full-width
		{'\U0001D7D2', 4}, // mathematical bold
		{'\U0001D7FF', 9}, // mathematical monospace, the last of five sets
		{'\U0001D7F6', 0}, // mathematical monospace zero
		{'⁴', 4},          // superscript
		{'¹', 1},          // superscript in Latin-1
		{'₀', 0},          // subscript
		{'④', 4},          // circled
		{'⓪', 0},          // circled zero
		{'❹', 4},          // dingbat
		{'⑩', -1},         // ten: two digits
		{'a', -1},         // a letter
		{'四', -1},         // a Chinese numeral is a word
		{unicode.MaxRune, -1},
	}
	for _, tc := range tests {
		if got := digitValue(tc.r); got != tc.want {
			t.Errorf("digitValue(%q) = %d, want %d", tc.r, got, tc.want)
		}
	}
}
