package facts

import "strings"

// Identifiers are the codes text names, lower-cased: runs of ASCII letters,
// digits and the joiners - _ / . that start with a letter, hold a digit and
// are at least four characters long, such as an order (SO-3401), an invoice
// (INV-2026-0931) or a parcel (SF1234567890). Such a code names one thing,
// so a memory that holds it is about what a question naming it asks. Digits
// alone ("123", "2026"), amounts and spans ("150k", "30-day") and short
// codes ("q4", "a4") name nothing.
func Identifiers(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune(joiners, r))
	}) {
		w = strings.Trim(w, joiners)
		if len(w) >= 4 && w[0] >= 'a' && w[0] <= 'z' && strings.ContainsAny(w, "0123456789") {
			out = append(out, w)
		}
	}
	return out
}

const joiners = "-_/."
