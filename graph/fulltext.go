package graph

import (
	"strings"
	"unicode"
)

// maxFullTextRunes caps the text of a full-text query. Lucene refuses queries
// with more than 1024 clauses, and the CJK analyzer makes a clause of every
// pair of Chinese characters; recall needs only the first words anyway.
const maxFullTextRunes = 256

// luceneSpecial holds every character Lucene's classic query parser treats as
// syntax: + - && || ! ( ) { } [ ] ^ " ~ * ? : \ /
const luceneSpecial = `+-&|!(){}[]^"~*?:\/`

// fullTextQuery turns raw user text into a Lucene query that matches its words
// and nothing else: every special character is escaped, the operators AND, OR
// and NOT are lowercased into plain words, control characters become spaces,
// and the words are OR-ed by Lucene's default. It returns "" when nothing
// searchable is left; the caller must then return no hits rather than query.
func fullTextQuery(text string) string {
	if r := []rune(text); len(r) > maxFullTextRunes {
		text = string(r[:maxFullTextRunes])
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
			if strings.ContainsRune(luceneSpecial, r) {
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
