package graph

import (
	"sort"
	"strings"
	"testing"

	"mneme/memory"
)

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
