package graph

import (
	"strings"
	"testing"
)

func TestFullTextQuery(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain words", "email contact", "email contact"},
		{"chinese", "预算是十万元", "预算是十万元"},
		{"mixed", "会员 membership", "会员 membership"},
		{"match all", "*:*", ""},
		{"field query", "content:x OR y", `content\:x or y`},
		{"operators become words", "x AND NOT y OR z", "x and not y or z"},
		{"lowercase operators stay", "and or not", "and or not"},
		{"operators inside words stay", "ANDROID ORACLE", "ANDROID ORACLE"},
		{"symbol operators", "a && b || !c", `a \&\& b \|\| \!c`},
		{"required and prohibited", "+a -b", `\+a \-b`},
		{"unbalanced quote", `"hello`, `\"hello`},
		{"phrase", `"hello world"`, `\"hello world\"`},
		{"groups", "(a OR b)", `\(a or b\)`},
		{"ranges", "[a TO z] {1 TO 2}", `\[a TO z\] \{1 TO 2\}`},
		{"boost and fuzzy", "spot^10 spot~2", `spot\^10 spot\~2`},
		{"wildcards", "sp?t* ?", `sp\?t\* \?`},
		{"regex", "/ab+c/", `\/ab\+c\/`},
		{"backslash", `a\b \`, `a\\b \\`},
		{"only syntax", `+-&|!(){}[]^"~*?:\/`, ""},
		{"only operators: stopwords, no hits", "AND OR NOT", "and or not"},
		{"empty", "", ""},
		{"blank", " \t\n ", ""},
		{"control characters split words", "a\x00b\x1fc", "a b c"},
		{"chinese with syntax", "预算:*", `预算\:\*`},
		{"full-width colon is text", "预算：多少", "预算：多少"},
		{"digits are searchable", "42", "42"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fullTextQuery(tc.in); got != tc.want {
				t.Errorf("fullTextQuery(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestFullTextQueryCapsLength(t *testing.T) {
	in := strings.Repeat("预", maxFullTextRunes+100)
	if got := []rune(fullTextQuery(in)); len(got) != maxFullTextRunes {
		t.Errorf("query has %d runes, want %d", len(got), maxFullTextRunes)
	}
}

// Every character Lucene's parser treats as syntax is escaped.
func TestFullTextQueryEscapesEverySpecial(t *testing.T) {
	for _, r := range luceneSpecial {
		got := fullTextQuery("a" + string(r) + "b")
		if want := `a\` + string(r) + "b"; got != want {
			t.Errorf("%q: got %q, want %q", r, got, want)
		}
	}
}
