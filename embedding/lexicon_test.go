package embedding

import (
	"testing"

	"mneme/tokens"
)

func TestStem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"replies", "reply"},
		{"answers", "answer"},
		{"shipped", "ship"},
		{"shipping", "ship"},
		{"shipments", "shipment"},
		{"preferred", "prefer"},
		{"prefers", "prefer"},
		{"expires", "expir"},
		{"expired", "expir"},
		{"approve", "approv"},
		{"approved", "approv"},
		{"status", "status"},
		{"address", "address"},
		{"boxes", "box"},
		{"need", "need"},
		{"bus", "bus"},
		{"so", "so"},
		{"café", "café"},
	} {
		if got := stem(tc.in); got != tc.want {
			t.Errorf("stem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLexiconIsConsistent(t *testing.T) {
	seen := map[string]string{}
	for _, g := range conceptGroups {
		for _, w := range g {
			if prev, ok := seen[w]; ok {
				t.Errorf("%q is in the groups of %q and %q", w, prev, g[0])
			}
			seen[w] = g[0]
			if tokens.Keywords(w) == nil {
				t.Errorf("lexicon word %q is a stopword", w)
			}
		}
		if tokens.IsCJK([]rune(g[0])[0]) {
			t.Errorf("group %v: the head must be English", g)
		}
	}
}

func TestHashRunesMatchesHash(t *testing.T) {
	for _, s := range []string{"", "预", "预算", "a", "so-1001"} {
		if got, want := hashRunes(classCJK, []rune(s)), hash(classCJK, s); got != want {
			t.Errorf("hashRunes(%q) = %x, hash = %x", s, got, want)
		}
	}
}
