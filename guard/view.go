package guard

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// view is a text as the detectors read it: full-width ASCII forms folded to
// ASCII (the digits and letters Chinese input methods often type), the
// digits of every script and the superscript and circled forms of digits
// read as ASCII digits (see digitValue), characters that show as nothing
// (ignorable: zero-width spaces and joiners, bidi marks, soft hyphens,
// variation selectors, Hangul fillers, tag characters) and combining marks
// dropped, Cyrillic and Greek look-alikes of Latin letters read as
// Latin among Latin letters (see lookalikes), a number spelled in Chinese
// numerals read as its digits (see spelledNumbers), every other space read
// as one, and a URL escape of a printable ASCII character read as that
// character, so that "１３８１２３４５６７８", "١٣٨١٢٣٤٥٦٧٨", a card number with
// a zero-width space between its digits, "4111%201111%201111%201111" or
// "bob%40example.com" is found as its plain form. at maps each byte offset
// of the view, and its end, back to the text. shown holds the spans of the
// view that a right-to-left override (U+202E) displays in reverse.
type view struct {
	text  string
	src   string // the text
	at    []int  // nil when the view is the text
	shown [][2]int
}

func newView(text string) view {
	spelled := spelledNumbers(text)
	if !strings.ContainsFunc(text, changes) && !hasEscape(text) && len(spelled) == 0 {
		return view{text: text}
	}
	var b strings.Builder
	at := make([]int, 0, len(text)+1)
	o := overrides{open: -1}
	w := words{text: text}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if c, ok := escapeAt(text, i); ok {
			r, size = rune(c), 3
		}
		o.see(r, b.Len())
		for len(spelled) > 0 && spelled[0][1] <= i {
			spelled = spelled[1:]
		}
		if d, ok := chineseDigits[r]; ok && len(spelled) > 0 && i >= spelled[0][0] {
			r = d
		}
		if r = fold(r); r >= 0 {
			if l, ok := lookalikes[r]; ok && w.latinAt(i) {
				r = l
			}
			n, _ := b.WriteRune(r)
			for range n {
				at = append(at, i)
			}
		}
		i += size
	}
	return view{text: b.String(), src: text, at: append(at, len(text)), shown: o.close(b.Len())}
}

// overrides follows the right-to-left overrides of a text as its view is
// built and collects the spans of the view they cover: from U+202E to the
// PDF (U+202C) that closes it, or to the end of the line.
type overrides struct {
	open  int // where the override began in the view; -1 when none is open
	depth int // embeddings opened inside it, each closed by a PDF
	spans [][2]int
}

// see takes the text's next character r, at offset at of the view.
func (o *overrides) see(r rune, at int) {
	switch {
	case o.open < 0:
		if r == '\u202e' {
			o.open = at
		}
	case r == '\u202c' && o.depth > 0:
		o.depth--
	case r == '\u202c' || r == '\n' || r == '\r' || r == '\u2029':
		o.close(at)
	case r >= '\u202a' && r <= '\u202e':
		o.depth++ // an embedding or override (LRE, RLE, LRO, RLO)
	}
}

// close ends the open override, if any, at offset at of the view, and
// returns the spans.
func (o *overrides) close(at int) [][2]int {
	if o.open >= 0 && o.open < at {
		o.spans = append(o.spans, [2]int{o.open, at})
	}
	o.open, o.depth = -1, 0
	return o.spans
}

// find runs detect over the view and, over each span an override shows
// reversed, over what is shown: "\u202e1111111111111114\u202c" displays,
// and is read as, 4111111111111111.
func (v view) find(detect func(string) [][2]int) [][2]int {
	out := detect(v.text)
	for _, s := range v.shown {
		n := s[1] - s[0]
		for _, m := range detect(reverse(v.text[s[0]:s[1]])) {
			out = append(out, [2]int{s[0] + n - m[1], s[0] + n - m[0]})
		}
	}
	return out
}

// reverse returns s with its characters in reverse order.
func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// fold returns the character the view reads for r, or -1 when it reads
// none.
func fold(r rune) rune {
	switch {
	case r < utf8.RuneSelf:
		return r
	case ignorable(r) || unicode.In(r, unicode.Mn, unicode.Me):
		return -1 // "4\u0301", "4\u3164" and the keycap "4\ufe0f\u20e3" show a 4
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
func changes(r rune) bool {
	_, lookalike := lookalikes[r]
	return lookalike || fold(r) != r
}

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
// inside it, or right after it, fall in it, and so do ignorable characters
// right before it, down to floor: masked, a value leaves no bidi control
// behind to turn its mask around.
func (v view) span(start, end, floor int) (int, int) {
	if v.at == nil {
		return start, end
	}
	start, end = v.at[start], v.at[end]
	for start > floor {
		r, n := utf8.DecodeLastRuneInString(v.src[:start])
		if !ignorable(r) {
			break
		}
		start -= n
	}
	return start, end
}
