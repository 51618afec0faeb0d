package neo

// Neo4j's full-text indexes read queries in the syntax of Lucene's classic
// query parser. These write it: user text as plain words, phrases that stay
// phrases, and the terms a substring must lie in. Nothing a user typed
// becomes syntax.

import (
	"strings"
	"unicode"
)

// maxQueryRunes caps the text of a full-text query. Lucene refuses queries
// with more than 1024 clauses, and the CJK analyzer makes a clause of every
// pair of Chinese characters; recall needs only the first words anyway.
const maxQueryRunes = 256

// special holds every character Lucene's classic query parser treats as
// syntax: + - && || ! ( ) { } [ ] ^ " ~ * ? : \ /
const special = `+-&|!(){}[]^"~*?:\/`

// FullTextQuery turns raw user text into a Lucene query that matches its words
// and nothing else: every special character is escaped, the operators AND, OR
// and NOT are lowercased into plain words, control characters become spaces,
// and the words are OR-ed by Lucene's default. It returns "" when nothing
// searchable is left; the caller must then return no hits rather than query.
func FullTextQuery(text string) string {
	if r := []rune(text); len(r) > maxQueryRunes {
		text = string(r[:maxQueryRunes])
	}
	var words []string
	searchable := false
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}) {
		switch w {
		case "AND", "OR", "NOT":
			w = strings.ToLower(w)
		}
		var b strings.Builder
		for _, r := range w {
			if strings.ContainsRune(special, r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
			if unicode.IsLetter(r) || unicode.IsNumber(r) {
				searchable = true
			}
		}
		words = append(words, b.String())
	}
	if !searchable {
		return ""
	}
	return strings.Join(words, " ")
}

// A case-insensitive substring filter (toLower(content) CONTAINS text)
// cannot be answered by a full-text index exactly, but the index can name a
// superset: ContainsTerms lists Lucene clauses on field that every text
// containing text satisfies, from what the index's analyzer (Lucene's CJK analyzer: the standard tokenizer,
// width folding, lower case, bigrams of Chinese characters, English stop
// words) must have made of the same characters in the field.
//
//   - A run of ASCII letters and digits is never split by the tokenizer,
//     so it lies inside one indexed term. Where the run meets white space
//     or ASCII punctuation that always ends a word, the term ends too;
//     elsewhere (an end of the text, a letter of another script, or ' . :
//     ; , _ " which may join words) the term may go on. A run ended on
//     both sides is a whole term; a run ended on its left only starts one
//     (a prefix query). A term that may go on leftwards names no clause: a
//     query with a leading wildcard reads the whole dictionary. Nor do stop
//     words, which the index leaves out, and runs a stop word could be the
//     term of, nor prefixes shorter than minPrefixRunes, which would expand
//     into too many terms.
//   - Two Chinese characters side by side are a bigram of the index
//     wherever they stand.
//
// Every clause left out only widens the superset; none at all means the
// index cannot help.
func ContainsTerms(field, text string) []string {
	var clauses []string
	seen := map[string]bool{}
	add := func(c string) {
		if !seen[c] && len(clauses) < maxContainsTerms {
			seen[c] = true
			clauses = append(clauses, c)
		}
	}
	rs := []rune(strings.ToLower(text))
	for i := 0; i < len(rs); {
		switch {
		case isASCIIAlnum(rs[i]):
			j := i
			for j < len(rs) && isASCIIAlnum(rs[j]) {
				j++
			}
			run := string(rs[i:j])
			if i > 0 && endsWord(rs[i-1]) {
				switch {
				case j < len(rs) && endsWord(rs[j]):
					if !stopWord(run, func(w, run string) bool { return w == run }) {
						add(field + ":" + run)
					}
				case j-i >= minPrefixRunes && !stopWord(run, strings.HasPrefix):
					add(field + ":" + run + "*")
				}
			}
			i = j
		case unicode.Is(unicode.Han, rs[i]) && i+1 < len(rs) && unicode.Is(unicode.Han, rs[i+1]):
			add(field + ":" + string(rs[i:i+2]))
			i++
		default:
			i++
		}
	}
	return clauses
}

// Bounds of ContainsTerms: how many clauses, and the shortest run a prefix
// query is made of.
const (
	maxContainsTerms = 16
	minPrefixRunes   = 3
)

// stopWords are the English stop words of Lucene's CJK analyzer, which the
// full-text index leaves out (db.index.fulltext.listAvailableAnalyzers).
var stopWords = strings.Fields("a and are as at be but by for if in into is it no not of on or s such t that the their then there these they this to was will with www")

// stopWord reports whether some stop word w has match(w, run).
func stopWord(run string, match func(w, run string) bool) bool {
	for _, w := range stopWords {
		if match(w, run) {
			return true
		}
	}
	return false
}

func isASCIIAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
}

// endsWord: white space, and ASCII punctuation that never joins the letters
// or digits around it into one word (only ' . : ; , _ and " may).
func endsWord(r rune) bool {
	return unicode.IsSpace(r) || r < 0x80 && strings.ContainsRune("!#$%&()*+-/<=>?@[\\]^`{|}~", r)
}

// EscapePhrase escapes what ends or escapes a Lucene phrase: the result,
// between double quotes, is one phrase of exactly s.
func EscapePhrase(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
