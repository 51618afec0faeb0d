package guard

import (
	"strings"
	"unicode"
)

// view is a text as the detectors read it: full-width ASCII forms folded to
// ASCII (the digits and letters Chinese input methods often type),
// invisible format characters dropped (zero-width spaces and joiners, bidi
// marks, soft hyphens) and every other space read as one, so that
// "１３８１２３４５６７８" or a card number with a zero-width space between its
// digits is found as its plain form. at maps each byte offset of the view,
// and its end, back to the text.
type view struct {
	text string
	at   []int // nil when the view is the text
}

func newView(text string) view {
	if !strings.ContainsFunc(text, changes) {
		return view{text: text}
	}
	var b strings.Builder
	at := make([]int, 0, len(text)+1)
	for i, r := range text {
		switch {
		case unicode.Is(unicode.Cf, r):
			continue
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0
		case r != ' ' && unicode.Is(unicode.Zs, r):
			r = ' ' // a no-break, thin or ideographic space is a space
		}
		n, _ := b.WriteRune(r)
		for range n {
			at = append(at, i)
		}
	}
	return view{text: b.String(), at: append(at, len(text))}
}

// changes reports whether the view reads r otherwise than the text has it.
func changes(r rune) bool {
	return unicode.Is(unicode.Cf, r) || (r >= 0xFF01 && r <= 0xFF5E) || (r != ' ' && unicode.Is(unicode.Zs, r))
}

// span maps a span of the view back to the text; invisible characters
// inside it, or right after it, fall in it.
func (v view) span(start, end int) (int, int) {
	if v.at == nil {
		return start, end
	}
	return v.at[start], v.at[end]
}
