package facts

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Same reports whether text b restates text a: the same text once
// case, width, spacing and punctuation are ignored, or embeddings at least
// threshold alike and the same numbers; never when their marks differ
// (signs, symbols, how a number is written: "≥ 3" and "≤ 3", "+5" and
// "-5", "5/10" and "510", "👍" and "👎"). Numbers decide on their own: "budget
// 100k" and "budget 150k" are two facts however alike the words (the second
// supersedes the first by key, it does not reinforce it).
func Same(a, b string, cosine, threshold float64) bool {
	if marks(a) != marks(b) {
		return false
	}
	// Numbers before the text: "1,5 and 225" and "15 and 2,25" normalise
	// alike, but are not the same numbers.
	if !slices.Equal(Numbers(a), Numbers(b)) {
		return false
	}
	if normalise(a) == normalise(b) {
		return true
	}
	return cosine >= threshold
}

// Signature returns digests of what Same compares before any
// vector: the normalised text, and the numbers in order. Two contents can be
// the same fact only when one of the two is equal, so a store may narrow a
// dedup search to memories that share either. Digests, so that the store
// holds no second copy of a value in the content.
func Signature(content string) (text, numbers string) {
	return digest(normalise(content)), digest(strings.Join(Numbers(content), " "))
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// Composed returns s in its composed form (NFC), which looks the same:
// text stored composed compares alike whichever way its accents were typed.
func Composed(s string) string { return norm.NFC.String(s) }

// LookAlike reports a name that may look like another: one with a letter
// or digit in a compatibility form (full-width "ｅ", the ligature "ﬁ",
// which NFKC turns into the plain ones they show; not full-width
// punctuation, which Chinese is written with) or that mixes Latin letters
// with Cyrillic or Greek ones ("preference" with a Cyrillic е), or a
// combining mark with no letter to sit on (at the start, after a space or
// a sign), which shows as nothing or over whatever stands before it.
func LookAlike(s string) bool {
	compat := func(r rune) bool {
		return (unicode.IsLetter(r) || unicode.IsNumber(r)) && norm.NFKC.String(string(r)) != string(r)
	}
	if strings.ContainsFunc(s, compat) {
		return true
	}
	prev := ' '
	for _, r := range s {
		if unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) && !unicode.IsLetter(prev) && !unicode.IsNumber(prev) && !unicode.In(prev, unicode.Mn, unicode.Mc) {
			return true
		}
		prev = r
	}
	latin := strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Latin, r) })
	return latin && strings.ContainsFunc(s, func(r rune) bool { return unicode.In(r, unicode.Cyrillic, unicode.Greek) })
}

// Label reports whether s reads as what it is, as a memory's kind or key
// must: no control or invisible character (Invisible), no surrounding
// space, and no letters that may look like others (LookAlike).
func Label(s string) bool {
	return !strings.ContainsFunc(s, Invisible) && strings.TrimSpace(s) == s && !LookAlike(s)
}

// normalise keeps only letters and digits, lower-cased, composed and
// width-folded.
func normalise(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(foldWidth(Composed(s))) {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// marks returns what of s normalise drops but a fact turns on, in order:
// symbols (comparison, currency, arrows, emoji, ticks), percent signs, a
// minus before a number and the separators inside one ("1.2", "5/10",
// "1-3", "1:2", the decimal comma of "1,5"; not the thousands comma of
// "1,500").
func marks(s string) string {
	rs := []rune(foldWidth(s))
	digit := func(i int) bool { return i >= 0 && i < len(rs) && unicode.IsDigit(rs[i]) }
	var b strings.Builder
	for i, r := range rs {
		switch {
		case unicode.IsSymbol(r), r == '%', r == '‰', r == '‱':
			b.WriteRune(r)
		case r == '-' && digit(i+1) && (i == 0 || !unicode.IsLetter(rs[i-1]) && !unicode.IsDigit(rs[i-1])):
			b.WriteRune(r) // a minus sign
		case strings.ContainsRune(".-/:", r) && digit(i-1) && digit(i+1):
			b.WriteRune(r)
		case r == ',' && digit(i-1) && digit(i+1) && !thousandsComma(rs, i):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// thousandsComma reports whether the comma rs[i] groups thousands: the
// number it stands in is digits in groups split by commas, the first of one
// to three digits not led by a zero and every other of exactly three
// ("1,500", "12,345,678"). Any other comma between digits is part of how
// the number is written: "1,5", "2,00" and "0,75" are the decimals 1.5,
// 2.00 and 0.75 written with a comma, as much of Europe does, and "1,2,3"
// is a list; none of them is the number its digits make joined.
func thousandsComma(rs []rune, i int) bool {
	digit := func(k int) bool { return k >= 0 && k < len(rs) && unicode.IsDigit(rs[k]) }
	if rs[i] != ',' || !digit(i-1) || !digit(i+1) {
		return false
	}
	start := i // the number's first digit
	for start > 0 && (digit(start-1) || rs[start-1] == ',' && digit(start-2)) {
		start--
	}
	end := i // past its last digit
	for end < len(rs) && (digit(end) || rs[end] == ',' && digit(end+1)) {
		end++
	}
	groups := strings.Split(string(rs[start:end]), ",")
	if first := []rune(groups[0]); len(first) > 3 || first[0] == '0' {
		return false
	}
	for _, g := range groups[1:] {
		if utf8.RuneCountInString(g) != 3 {
			return false
		}
	}
	return true
}

// numberUnits are suffixes that belong to a number: 100k, 15万, 20%.
var numberUnits = map[rune]bool{'k': true, 'm': true, 'w': true, '万': true, '千': true, '百': true, '亿': true, '%': true}

// chineseDigits are the characters Chinese numerals are written with.
const chineseDigits = "零〇一二两三四五六七八九十百千万亿"

// Numbers returns the numbers of s as written, sorted: Arabic digits with
// a unit suffix ("100k", "1500", "15万") and runs of Chinese numerals that
// hold a multiplier or are two characters long ("十五万", "三十").
func Numbers(s string) []string {
	rs := []rune(strings.ToLower(foldWidth(s)))
	var out []string
	for i := 0; i < len(rs); {
		switch {
		case unicode.IsDigit(rs[i]):
			j := i
			var b strings.Builder
			for j < len(rs) && (unicode.IsDigit(rs[j]) || (rs[j] == ',' || rs[j] == '.') && j+1 < len(rs) && unicode.IsDigit(rs[j+1])) {
				if rs[j] != ',' || !thousandsComma(rs, j) {
					b.WriteRune(rs[j])
				}
				j++
			}
			for j < len(rs) && rs[j] == ' ' && j+1 < len(rs) && numberUnits[rs[j+1]] {
				j++
			}
			if j < len(rs) && numberUnits[rs[j]] && (j+1 == len(rs) || !unicode.IsLetter(rs[j+1]) || unicode.Is(unicode.Han, rs[j])) {
				b.WriteRune(rs[j])
				j++
			}
			out = append(out, b.String())
			i = j
		case strings.ContainsRune(chineseDigits, rs[i]):
			j := i
			for j < len(rs) && strings.ContainsRune(chineseDigits, rs[j]) {
				j++
			}
			if run := string(rs[i:j]); j-i >= 2 || strings.ContainsAny(run, "十百千万亿") {
				out = append(out, run)
			}
			i = j
		default:
			i++
		}
	}
	slices.Sort(out)
	return out
}

// Cosine returns the cosine similarity of two vectors, 0 when either is
// zero or their lengths differ.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
