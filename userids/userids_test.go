package userids

import (
	"errors"
	"strings"
	"testing"

	"mneme/memory"
)

func TestFold(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"carol", "Carol", true},
		{"carol", "CAROL", true},
		{"carol", "carol", true},
		{"carol", "carol2", false},
		{"carol", "karol", false},
		{"k", "\u212a", true}, // the Kelvin sign folds with k
		{"s", "\u017f", true}, // the long s folds with s
		{"ss", "ß", false},    // full folding only: not simple
		{"i", "\u0130", false},
		{"Σσς", "σΣσ", true},
		{"user:bob", "USER:BOB", true},
		{"a.b-c_d@e", "A.B-C_D@E", true},
		{"", "", true},
	} {
		t.Run(tt.a+"/"+tt.b, func(t *testing.T) {
			if got := Fold(tt.a) == Fold(tt.b); got != tt.same {
				t.Errorf("Fold(%q) = %q, Fold(%q) = %q: same = %v, want %v", tt.a, Fold(tt.a), tt.b, Fold(tt.b), got, tt.same)
			}
			if eq := strings.EqualFold(tt.a, tt.b); eq != tt.same {
				t.Errorf("strings.EqualFold(%q, %q) = %v: the table disagrees with Go's simple folding", tt.a, tt.b, eq)
			}
		})
	}
}

// Fold agrees with strings.EqualFold over every pair of characters of the
// Basic Multilingual Plane that fold together.
func TestFoldAgreesWithEqualFold(t *testing.T) {
	for r := rune(0); r < 0x10000; r++ {
		if r >= 0xd800 && r < 0xe000 {
			continue
		}
		a := string(r)
		for _, o := range []rune{r + 1, r - 1, r + 32, r - 32} {
			if o < 0 || (o >= 0xd800 && o < 0xe000) {
				continue
			}
			b := string(o)
			if (Fold(a) == Fold(b)) != strings.EqualFold(a, b) {
				t.Fatalf("Fold(%q) = %q, Fold(%q) = %q, EqualFold = %v", a, Fold(a), b, Fold(b), strings.EqualFold(a, b))
			}
		}
	}
}

func TestCaseConflictError(t *testing.T) {
	var err error = &CaseConflictError{ID: "Carol", Existing: "carol"}
	if !errors.Is(err, memory.ErrConflict) {
		t.Error("a case conflict is not a memory.ErrConflict")
	}
	var coded interface{ RefusalCode() string }
	if !errors.As(err, &coded) || coded.RefusalCode() != CodeCaseConflict {
		t.Errorf("RefusalCode missing or not %q", CodeCaseConflict)
	}
	if msg := err.Error(); !strings.Contains(msg, `"carol"`) || !strings.Contains(msg, `"Carol"`) {
		t.Errorf("message %q names neither id", msg)
	}
}
