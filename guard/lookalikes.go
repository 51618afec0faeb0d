package guard

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// lookalikes maps Cyrillic and Greek letters to the Latin letters they look
// like, so that "bоb@example.cоm" typed with a Cyrillic о is still read as
// an address. The view reads them so only in a word that holds a Latin
// letter too (see words): a Russian or Greek word stays as written.
var lookalikes = pairs(
	"асеорхуіјѕһԁԛԝӏѵАВСЕНІЈКМОРЅТХУαονριυγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
	"aceopxyijshdqwlvABCEHIJKMOPSTXYaovpiuyABEZHIKMNOPTYX",
)

// pairs maps each character of from to the one at its place in to.
func pairs(from, to string) map[rune]rune {
	f, t := []rune(from), []rune(to)
	if len(f) != len(t) {
		panic("guard: look-alike lists differ in length")
	}
	m := make(map[rune]rune, len(f))
	for i, r := range f {
		m[r] = t[i]
	}
	return m
}

// words tells, for offsets of a text read in order, whether the word each
// stands in holds an ASCII letter. A word is a run of letters, digits,
// marks, invisible characters and the punctuation of an address (._%+-@),
// so that a whole address is one. It keeps the last word it read, so the
// text is read once.
type words struct {
	text  string
	end   int // of the last word read
	latin bool
}

func (w *words) latinAt(i int) bool {
	if i < w.end {
		return w.latin
	}
	start, end := i, i
	for start > 0 {
		r, n := utf8.DecodeLastRuneInString(w.text[:start])
		if !inWord(r) {
			break
		}
		start -= n
	}
	for end < len(w.text) {
		r, n := utf8.DecodeRuneInString(w.text[end:])
		if !inWord(r) {
			break
		}
		end += n
	}
	w.end = end
	w.latin = strings.ContainsFunc(w.text[start:end], func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	})
	return w.latin
}

func inWord(r rune) bool {
	return unicode.In(r, unicode.L, unicode.Nd, unicode.M) || ignorable(r) || strings.ContainsRune("._%+-@", r)
}
