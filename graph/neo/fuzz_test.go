package neo

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// unescapeLucene splits an escaped full-text query into its words, undoing
// the escapes, and reports the first special character left unescaped.
func unescapeLucene(q string) (words []string, bare rune, ok bool) {
	var cur strings.Builder
	inWord := false
	rs := []rune(q)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\':
			if i+1 == len(rs) {
				return nil, r, false
			}
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case r == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.ContainsRune(special, r):
			return nil, r, false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, 0, true
}

// FuzzFullTextQuery checks that user text becomes a Lucene query of plain
// words only: no special character unescaped, no operator word, no control
// character, words separated by single spaces, and unescaping gives back
// the words of the (capped) text.
func FuzzFullTextQuery(f *testing.F) {
	for _, s := range []string{"email contact", "预算是十万元", "*:*", "content:x OR y", `a\b \`, "x AND NOT y", `"hello world"`, "a\x00b", "+-&|!(){}[]^\"~*?:\\/", "\u3000全角\u00a0空格", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q := FullTextQuery(text)
		if q == "" {
			return
		}
		if !utf8.ValidString(q) && utf8.ValidString(text) {
			t.Fatalf("query %q of valid text is not valid UTF-8", q)
		}
		if strings.HasPrefix(q, " ") || strings.HasSuffix(q, " ") || strings.Contains(q, "  ") {
			t.Fatalf("query %q: words must be separated by single spaces", q)
		}
		for _, r := range q {
			if r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r)) {
				t.Fatalf("query %q holds whitespace or control %q", q, r)
			}
		}
		words, bare, ok := unescapeLucene(q)
		if !ok {
			t.Fatalf("query %q holds %q unescaped", q, bare)
		}
		for _, w := range strings.Split(q, " ") {
			if w == "AND" || w == "OR" || w == "NOT" {
				t.Fatalf("query %q holds the operator %s", q, w)
			}
		}
		capped := text
		if r := []rune(text); len(r) > maxQueryRunes {
			capped = string(r[:maxQueryRunes])
		}
		want := strings.FieldsFunc(capped, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
		for i, w := range want {
			// Bytes that are not UTF-8 reach Lucene as U+FFFD, one each.
			want[i] = string([]rune(w))
			switch w {
			case "AND", "OR", "NOT":
				want[i] = strings.ToLower(w)
			}
		}
		if strings.Join(words, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("FullTextQuery(%q) = %q unescapes to %q, want %q", text, q, words, want)
		}
	})
}

// FuzzEscapePhrase checks that a phrase stays one phrase: inside quotes,
// the escaped text has no unescaped quote and unescapes to itself.
func FuzzEscapePhrase(f *testing.F) {
	for _, s := range []string{"acme/u1", `t"x`, `t\`, `\"`, "租户/用户"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := EscapePhrase(s)
		var b strings.Builder
		for i := 0; i < len(e); i++ {
			switch e[i] {
			case '\\':
				if i+1 == len(e) {
					t.Fatalf("EscapePhrase(%q) = %q ends in an escape", s, e)
				}
				i++
				b.WriteByte(e[i])
			case '"':
				t.Fatalf("EscapePhrase(%q) = %q ends the phrase early", s, e)
			default:
				b.WriteByte(e[i])
			}
		}
		if b.String() != s {
			t.Fatalf("EscapePhrase(%q) = %q unescapes to %q", s, e, b.String())
		}
	})
}
