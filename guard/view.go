package guard

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// view is a text as the detectors read it: full-width ASCII forms folded to
// ASCII (the digits and letters Chinese input methods often type), the
// digits of every script and the superscript and circled forms of digits
// read as ASCII digits (see digitValue), invisible format characters
// (zero-width spaces and joiners, bidi marks, soft hyphens) and combining
// marks dropped, every
// other space read as one, and a URL escape of a printable ASCII character
// read as that character, so that "１３８１２３４５６７８", "١٣٨١٢٣٤٥٦٧٨", a
// card number with a zero-width space between its digits,
// "4111%201111%201111%201111" or "bob%40example.com" is found as its plain
// form. at maps each byte offset of the view, and its end, back to the
// text.
type view struct {
	text string
	at   []int // nil when the view is the text
}

func newView(text string) view {
	if !strings.ContainsFunc(text, changes) && !hasEscape(text) {
		return view{text: text}
	}
	var b strings.Builder
	at := make([]int, 0, len(text)+1)
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if c, ok := escapeAt(text, i); ok {
			r, size = rune(c), 3
		}
		if r = fold(r); r >= 0 {
			n, _ := b.WriteRune(r)
			for range n {
				at = append(at, i)
			}
		}
		i += size
	}
	return view{text: b.String(), at: append(at, len(text))}
}

// fold returns the character the view reads for r, or -1 when it reads
// none.
func fold(r rune) rune {
	switch {
	case r < utf8.RuneSelf:
		return r
	case unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me):
		return -1 // "4\u0301" and the keycap "4\ufe0f\u20e3" show a 4
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFEE0
	case r != ' ' && unicode.Is(unicode.Zs, r):
		return ' ' // a no-break, thin or ideographic space is a space
	}
	if d := digitValue(r); d >= 0 {
		return '0' + rune(d)
	}
	return r
}

// changes reports whether the view reads r otherwise than the text has it.
func changes(r rune) bool { return fold(r) != r }

// hasEscape reports whether text holds a URL escape the view decodes.
func hasEscape(text string) bool {
	for i := range len(text) {
		if _, ok := escapeAt(text, i); ok {
			return true
		}
	}
	return false
}

// escapeAt decodes the URL escape at text[i] ("%20", "%2D", "%40", "%3D")
// when it stands for a printable ASCII character.
func escapeAt(text string, i int) (byte, bool) {
	if text[i] != '%' || i+2 >= len(text) {
		return 0, false
	}
	hi, ok1 := unhex(text[i+1])
	lo, ok2 := unhex(text[i+2])
	c := hi<<4 | lo
	if !ok1 || !ok2 || c < ' ' || c > '~' {
		return 0, false
	}
	return c, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// span maps a span of the view back to the text; invisible characters
// inside it, or right after it, fall in it.
func (v view) span(start, end int) (int, int) {
	if v.at == nil {
		return start, end
	}
	return v.at[start], v.at[end]
}
