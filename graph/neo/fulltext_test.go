package neo

import (
	"fmt"
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
			if got := FullTextQuery(tc.in); got != tc.want {
				t.Errorf("FullTextQuery(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestFullTextQueryCapsLength(t *testing.T) {
	in := strings.Repeat("预", maxQueryRunes+100)
	if got := []rune(FullTextQuery(in)); len(got) != maxQueryRunes {
		t.Errorf("query has %d runes, want %d", len(got), maxQueryRunes)
	}
}

// Every character Lucene's parser treats as syntax is escaped.
func TestFullTextQueryEscapesEverySpecial(t *testing.T) {
	for _, r := range special {
		got := FullTextQuery("a" + string(r) + "b")
		if want := `a\` + string(r) + "b"; got != want {
			t.Errorf("%q: got %q, want %q", r, got, want)
		}
	}
}

// ContainsTerms names only what the index must hold for content that
// contains the text: whole words where the text ends them, prefixes where
// it ends them on the left only, Chinese bigrams, never a stop word.
func TestContainsTerms(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"one word: it may be inside a longer one", "order", nil},
		{"whole words between spaces", "note 5042 about", []string{"content:5042", "content:about*"}},
		{"a number after #", "order #700007.", []string{"content:700007*"}},
		{"ended by punctuation that never joins", "(urgent) x-ray", []string{"content:urgent", "content:x", "content:ray*"}},
		{"apostrophe and dot may join", "x alice's v12.5 y", []string{"content:alice*", "content:v12*"}},
		{"underscore and colon may join", "x snake_case key:value y", []string{"content:snake*", "content:key*"}},
		{"any case", "x ORDER Now", []string{"content:order", "content:now*"}},
		{"stop words are not in the index", "x the order of things", []string{"content:order", "content:things*"}},
		{"a prefix a stop word may complete", "x the", nil},
		{"a short prefix", "x ab", nil},
		{"chinese bigrams", "我的预算", []string{"content:我的", "content:的预", "content:预算"}},
		{"a lone chinese character", "x 预 y", nil},
		{"chinese and english", "会员 level 3 gold", []string{"content:会员", "content:level", "content:3", "content:gold*"}},
		{"a letter of another script may go on a word", "x café crème y", []string{"content:caf*"}},
		{"full-width letters are another script", "x ＡＢＣ y", nil},
		{"lucene syntax is no term", `x *:* y`, nil},
		{"repeats once", "x go go go go", []string{"content:go"}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ContainsTerms("content", tc.in)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("ContainsTerms(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	var long []string
	for i := range 40 {
		long = append(long, fmt.Sprintf("w%d", i))
	}
	if got := ContainsTerms("content", "x "+strings.Join(long, " ")); len(got) != maxContainsTerms {
		t.Errorf("%d clauses, want at most %d", len(got), maxContainsTerms)
	}
}
