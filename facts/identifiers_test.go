package facts_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/facts"
)

func TestIdentifiers(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"SO-3401 是从哪个仓库发出的？", []string{"so-3401"}},
		{"Was invoice INV-2026-0931 for SO-1001 paid?", []string{"inv-2026-0931", "so-1001"}},
		{"订单SO-1002到了吗", []string{"so-1002"}},
		{"tracking SF1234567890.", []string{"sf1234567890"}},
		{"xyz 123 订单", nil},
		{"the Q4 budget is 150k CNY, A4 paper on 30-day terms", nil},
		{"2026-10-09", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := facts.Identifiers(tt.text); !cmp.Equal(got, tt.want) {
			t.Errorf("Identifiers(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
