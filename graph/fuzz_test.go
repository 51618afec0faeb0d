package graph

import (
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"mneme/memory"
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
		case strings.ContainsRune(luceneSpecial, r):
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
		q := fullTextQuery(text)
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
		if r := []rune(text); len(r) > maxFullTextRunes {
			capped = string(r[:maxFullTextRunes])
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
			t.Fatalf("fullTextQuery(%q) = %q unescapes to %q, want %q", text, q, words, want)
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
		e := escapePhrase(s)
		var b strings.Builder
		for i := 0; i < len(e); i++ {
			switch e[i] {
			case '\\':
				if i+1 == len(e) {
					t.Fatalf("escapePhrase(%q) = %q ends in an escape", s, e)
				}
				i++
				b.WriteByte(e[i])
			case '"':
				t.Fatalf("escapePhrase(%q) = %q ends the phrase early", s, e)
			default:
				b.WriteByte(e[i])
			}
		}
		if b.String() != s {
			t.Fatalf("escapePhrase(%q) = %q unescapes to %q", s, e, b.String())
		}
	})
}

// filterFromBytes builds a filter tree from fuzz input: each byte picks an
// operator or a field, and strings come from the fuzzer's text cut at '|'.
type filterGen struct {
	ops   []byte
	texts []string
	n     int
}

func (g *filterGen) byte() byte {
	if len(g.ops) == 0 {
		return 0
	}
	b := g.ops[0]
	g.ops = g.ops[1:]
	return b
}

func (g *filterGen) text() string {
	if len(g.texts) == 0 {
		return ""
	}
	s := g.texts[g.n%len(g.texts)]
	g.n++
	return s
}

var fuzzFields = append(append([]string{}, memory.FilterFields...), "content", "m.tenant", "")

func (g *filterGen) filter(depth int) memory.Filter {
	b := g.byte()
	ops := []string{memory.FilterTrue, memory.FilterFalse, memory.FilterAnd, memory.FilterOr, memory.FilterNot, memory.FilterEq, memory.FilterNe, memory.FilterIn, "xor"}
	f := memory.Filter{Op: ops[int(b)%len(ops)]}
	if b >= 200 {
		f.Op = g.text()
	}
	switch f.Op {
	case memory.FilterAnd, memory.FilterOr, memory.FilterNot:
		if depth < 6 {
			for i := 0; i < int(g.byte()%4); i++ {
				f.Args = append(f.Args, g.filter(depth+1))
			}
		}
	default:
		f.Field = fuzzFields[int(g.byte())%len(fuzzFields)]
		for i := 0; i < int(g.byte()%4); i++ {
			f.Values = append(f.Values, g.text())
		}
		if g.byte()%8 == 0 {
			f.Args = append(f.Args, memory.Filter{Op: memory.FilterTrue})
		}
	}
	return f
}

// cypherToken reads one token of a predicate: what filterPredicate may
// write and nothing else.
var predicateWords = map[string]bool{"(": true, ")": true, "AND": true, "OR": true, "NOT": true, "true": true, "false": true, "=": true, "<>": true, "IN": true}

// FuzzFilterPredicate checks that a policy filter becomes Cypher made only
// of operators, known property expressions and parameter placeholders: no
// value, field name or operator text from the filter reaches the query, and
// every placeholder names a parameter holding the filter's value.
func FuzzFilterPredicate(f *testing.F) {
	f.Add([]byte{2, 2, 5, 0, 1, 7, 3, 2}, "acme|u1")
	f.Add([]byte{3, 3, 4, 1, 6, 2, 1, 0, 7, 5, 3}, "x' OR 1=1 //|$p0|) MATCH (n) DETACH DELETE n //")
	f.Add([]byte{4, 1, 8}, "")
	f.Add([]byte{250, 1}, "and")
	f.Add([]byte{5, 10, 1}, "user") // author: an expression holding another
	f.Fuzz(func(t *testing.T, shape []byte, texts string) {
		g := &filterGen{ops: shape, texts: strings.Split(texts, "|")}
		filter := g.filter(0)
		text, params := filterPredicate(filter)
		// Longest first: one expression may hold another (the author's
		// CASE reads m.user_id), and map order would vary the outcome.
		props := make([]string, 0, len(filterProperty))
		for _, p := range filterProperty {
			props = append(props, p)
		}
		sort.Slice(props, func(i, j int) bool { return len(props[i]) > len(props[j]) })
		used := map[string]bool{}
		// Property expressions hold spaces ("coalesce(m.kind, '')"): take
		// them out first, then every token must be known.
		rest := text
		for _, p := range props {
			rest = strings.ReplaceAll(rest, p, " PROP ")
		}
		rest = strings.NewReplacer("(", " ( ", ")", " ) ").Replace(rest)
		for _, tok := range strings.Fields(rest) {
			switch {
			case tok == "PROP" || predicateWords[tok]:
			case strings.HasPrefix(tok, "$p") && len(tok) > 2 && strings.Trim(tok[2:], "0123456789") == "":
				if _, ok := params[tok[1:]]; !ok {
					t.Fatalf("predicate %q names %s, not among its parameters %v", text, tok, params)
				}
				used[tok[1:]] = true
			default:
				t.Fatalf("predicate %q holds %q, which is neither an operator, a property nor a parameter", text, tok)
			}
		}
		for name, v := range params {
			if !used[name] {
				t.Fatalf("predicate %q leaves parameter %s unused", text, name)
			}
			switch v.(type) {
			case string, []string:
			default:
				t.Fatalf("parameter %s is %T, want a string or strings", name, v)
			}
		}
		if strings.Count(text, "(") != strings.Count(text, ")") {
			t.Fatalf("predicate %q has unbalanced parentheses", text)
		}
	})
}
