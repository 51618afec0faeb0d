// Package userids holds the rule that keeps one person one user: user ids
// are exact and case-sensitive, so a write about an id that differs from
// an existing user's only by case ("Carol" beside carol) would make a
// second user, out of reach of the first one's export and erasure. Fold
// gives the key under which a store finds such a user, and
// CaseConflictError is the refusal.
package userids

import (
	"fmt"
	"strings"
	"unicode"

	"mneme/memory"
)

// CodeCaseConflict is the stable code of a CaseConflictError.
const CodeCaseConflict = "user_id_case_conflict"

// Fold returns id under Unicode simple case folding: two ids have the same
// Fold exactly when strings.EqualFold holds for them. Each character is
// replaced by the least of the characters it folds with ("carol",
// "CAROL" and "Carol" all give "CAROL"; "k", "K" and the Kelvin sign give
// "K").
func Fold(id string) string {
	var b strings.Builder
	b.Grow(len(id))
	for _, r := range id {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// CaseConflictError refuses a write about the user ID, whom the tenant does
// not know, because the tenant knows Existing, whose id differs from it
// only by case. It is a conflict with what is stored (memory.ErrConflict)
// and never heals by retrying.
type CaseConflictError struct {
	ID, Existing string
}

func (e *CaseConflictError) Error() string {
	return fmt.Sprintf("user_id %q differs only by case from the existing user %q: user ids are exact and case-sensitive, so write about %q, or erase that user first", e.ID, e.Existing, e.Existing)
}

// Unwrap makes the error a memory.ErrConflict.
func (e *CaseConflictError) Unwrap() error { return memory.ErrConflict }

// RefusalCode is the stable code clients see (CodeCaseConflict).
func (e *CaseConflictError) RefusalCode() string { return CodeCaseConflict }
