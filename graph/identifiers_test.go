package graph

import "testing"

func TestIdentifierPhrases(t *testing.T) {
	for in, want := range map[string]string{
		"status order SO-1001 INV-2026-0931": ` "so-1001"^4 "inv-2026-0931"^4`,
		"SO-3401 仓库 发出":                      ` "so-3401"^4`,
		"xyz 123 订单":                         "",
		`so-1"001 "a1b2"`:                    ` "so-1"^4 "a1b2"^4`, // quotes never reach the query
	} {
		if got := identifierPhrases(in); got != want {
			t.Errorf("identifierPhrases(%q) = %q, want %q", in, got, want)
		}
	}
}
