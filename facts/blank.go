package facts

import (
	"strings"
	"unicode"
)

// Invisible reports a character that makes keys, kinds and ids which look
// alike but differ: controls (tabs, line breaks), the line and paragraph
// separators (U+2028, U+2029), every space but the plain one (no-break,
// ideographic, em, thin…) and the braille blank, and whatever Unicode says
// may show as nothing (Default_Ignorable_Code_Point: format characters such
// as zero-width spaces and bidi marks, variation selectors, the combining
// grapheme joiner, the Hangul fillers, Khmer's inherent vowels).
func Invisible(r rune) bool {
	return r != ' ' && unicode.Is(unicode.Zs, r) || r == '\u2800' || unicode.In(r, invisibles...)
}

// invisibles are the categories and properties of Invisible.
var invisibles = []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point}

// Blank reports text that shows nothing: empty, or spaces and invisible
// characters alone. No memory may hold it.
func Blank(text string) bool {
	return strings.TrimFunc(text, func(r rune) bool { return unicode.IsSpace(r) || Invisible(r) }) == ""
}
