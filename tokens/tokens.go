// Package tokens splits Chinese and English text into the words full-text
// search and the built-in embedder agree on: English words without
// stopwords, compound ids kept whole, and runs of CJK characters with
// function words cut out. Recall builds its full-text queries with Keywords;
// the built-in embedder hashes what Tokenize emits.
package tokens

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind says what the tokenizer found.
type Kind uint8

const (
	// Word is a normalised English word or number, stopwords removed.
	Word Kind = iota
	// Compound is a word joined by '-', '_', '.' or '/' such as an order
	// id "so-1001" or "3.5"; its parts follow it as Part tokens.
	Compound
	// Part is one part of the compound before it, stopwords removed.
	Part
	// CJK is a run of CJK characters with function words cut out.
	CJK
)

// englishStopwords are true function words: articles, auxiliaries, pronouns,
// prepositions, conjunctions and question words, plus a few deictic words
// ("today", "now") that say when a question is asked, not what it is about.
// Content words never belong here.
var englishStopwords = setOf(
	"a", "an", "the", "and", "or", "but", "if", "then", "than", "so", "as",
	"of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "onto",
	"about", "over", "under", "up", "out", "off", "before", "after", "during",
	"within", "without", "until", "since", "between", "through", "per", "via",
	"because", "while", "whether", "though", "although", "not", "no", "nor", "yet",
	"is", "am", "are", "was", "were", "be", "been", "being",
	"do", "does", "did", "doing", "have", "has", "had", "having",
	"will", "would", "shall", "should", "can", "could", "may", "might", "must",
	"i", "me", "my", "mine", "myself", "we", "us", "our", "ours",
	"you", "your", "yours", "he", "him", "his", "she", "her", "hers",
	"it", "its", "they", "them", "their", "theirs",
	"this", "that", "these", "those", "there", "here",
	"what", "which", "who", "whom", "whose", "when", "where", "why", "how",
	"much", "many", "any", "some", "all", "each", "every", "both", "either",
	"neither", "more", "most", "other", "such", "same", "own", "only", "once",
	"again", "ever", "still",
	"today", "now", "tomorrow", "yesterday", "just", "very", "too", "also", "please",
)

// chineseFunctionWords are cut out of CJK runs before n-grams are taken:
// particles, the copula, question words, pronouns and the words for today,
// tomorrow, yesterday and now. Longer
// entries win.
var chineseFunctionWords = NewDict(
	"的", "了", "是", "吗", "呢", "吧", "在", "啊", "呀", "么", "和", "与",
	"什么", "怎么", "怎么样", "怎样", "为什么", "哪里", "哪些", "哪个", "多少",
	"我", "你", "您", "他", "她", "它", "我们", "你们", "他们", "请问", "一下", "今天", "明天", "昨天", "现在", "这个", "那个",
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// normRune folds full-width ASCII to half-width, the ideographic space to a
// space, and case to lower case.
func normRune(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		r -= 0xFEE0
	case r == 0x3000:
		r = ' '
	}
	return unicode.ToLower(r)
}

// IsCJK reports whether r is a Han, kana or Hangul character.
func IsCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

func isWordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) && !IsCJK(r)
}

func isJoiner(r rune) bool { return r == '-' || r == '_' || r == '.' || r == '/' }

func isApostrophe(r rune) bool { return r == '\'' || r == '’' || r == 'ʼ' }

// IsDigit reports whether r is an ASCII digit.
func IsDigit(r rune) bool { return r >= '0' && r <= '9' }

// Tokenize normalises text and calls emit for every token in order. English
// stopwords are dropped here; Chinese function words split CJK runs.
func Tokenize(text string, emit func(kind Kind, s string)) {
	rs := make([]rune, 0, len(text))
	for _, r := range text {
		rs = append(rs, normRune(r))
	}
	var word []rune
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case IsCJK(r):
			j := i
			for j < len(rs) && IsCJK(rs[j]) {
				j++
			}
			splitCJK(rs[i:j], emit)
			i = j
		case isWordRune(r):
			word = word[:0]
			compound := false
			j := i
		scan:
			for j < len(rs) {
				c := rs[j]
				switch {
				case isWordRune(c):
					word = append(word, c)
					j++
				case c == ',' && digitGroupAt(rs, j):
					j++ // thousands separator: "100,000" is one number
				case isJoiner(c) && j+1 < len(rs) && isWordRune(rs[j+1]):
					compound = true
					word = append(word, c)
					j++
				case isApostrophe(c) && j+1 < len(rs) && unicode.IsLetter(rs[j+1]):
					k := j + 1
					for k < len(rs) && isWordRune(rs[k]) {
						k++
					}
					word = dropClitic(word, string(rs[j+1:k]))
					j = k
					break scan
				default:
					break scan
				}
			}
			emitWord(string(word), compound, emit)
			i = j
		default:
			i++
		}
	}
}

// digitGroupAt reports whether rs[i] is a comma between a digit and exactly
// three digits, as in "100,000".
func digitGroupAt(rs []rune, i int) bool {
	if i == 0 || !IsDigit(rs[i-1]) || i+3 >= len(rs) {
		return false
	}
	for k := i + 1; k <= i+3; k++ {
		if !IsDigit(rs[k]) {
			return false
		}
	}
	return i+4 == len(rs) || !IsDigit(rs[i+4])
}

// dropClitic removes an English clitic: "what's" → "what", "alice's" →
// "alice", "don't" → "do", "can't" → "can", "won't" → "will".
func dropClitic(word []rune, clitic string) []rune {
	if clitic != "t" || len(word) == 0 || word[len(word)-1] != 'n' {
		return word
	}
	switch string(word) {
	case "can":
		return word
	case "won":
		return []rune("will")
	}
	return word[:len(word)-1]
}

func emitWord(w string, compound bool, emit func(Kind, string)) {
	if !compound {
		if w = normNumber(w); !englishStopwords[w] {
			emit(Word, w)
		}
		return
	}
	emit(Compound, w)
	for _, p := range strings.FieldsFunc(w, isJoiner) {
		if p = normNumber(p); !englishStopwords[p] {
			emit(Part, p)
		}
	}
}

// normNumber writes round thousands the way people say them: "100000" →
// "100k", so "100,000", "100000" and "100k" are one token.
func normNumber(w string) string {
	if len(w) <= 3 || !strings.HasSuffix(w, "000") {
		return w
	}
	for i := 0; i < len(w); i++ {
		if !IsDigit(rune(w[i])) {
			return w
		}
	}
	return w[:len(w)-3] + "k"
}

// splitCJK cuts function words out of a CJK run and emits what is left.
func splitCJK(run []rune, emit func(Kind, string)) {
	start := 0
	for i := 0; i < len(run); {
		n := functionWordAt(run[i:])
		if n == 0 {
			i++
			continue
		}
		if i > start {
			emit(CJK, string(run[start:i]))
		}
		i += n
		start = i
	}
	if start < len(run) {
		emit(CJK, string(run[start:]))
	}
}

// functionWordAt returns the length in runes of the longest Chinese function
// word at the start of rs, or 0.
func functionWordAt(rs []rune) int {
	n := 0
	chineseFunctionWords.Match(rs, func(w Entry) bool {
		n = len(w.Runes)
		return false
	})
	return n
}

// Dict finds Chinese words at a position of a run of runes without
// building strings; words are indexed by their first rune.
type Dict map[rune][]Entry

// Entry is a word of a Dict and the value it was added with.
type Entry struct {
	Runes []rune
	Value string
}

// NewDict returns a Dict of words with empty values.
func NewDict(words ...string) Dict {
	d := Dict{}
	for _, w := range words {
		d.Add(w, "")
	}
	return d
}

// Add files word under its first rune, longest words first.
func (d Dict) Add(word, value string) {
	rs := []rune(word)
	ws := append(d[rs[0]], Entry{Runes: rs, Value: value})
	slices.SortStableFunc(ws, func(a, b Entry) int { return len(b.Runes) - len(a.Runes) })
	d[rs[0]] = ws
}

// Match calls fn for each word that starts rs, longest first, until fn
// returns false.
func (d Dict) Match(rs []rune, fn func(Entry) bool) {
	if len(rs) == 0 {
		return
	}
	for _, w := range d[rs[0]] {
		if len(w.Runes) <= len(rs) && slices.Equal(w.Runes, rs[:len(w.Runes)]) && !fn(w) {
			return
		}
	}
}

// Keywords returns the content words of text for a full-text query: English
// words and numbers without stopwords (lower case, not stemmed; compound ids
// such as "so-1001" kept whole), and for Chinese the character bigrams of each
// run (a lone character stands for itself), function words removed. Each
// keyword appears once, in order of first appearance. An empty result means
// the text has nothing to search for.
func Keywords(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	Tokenize(text, func(kind Kind, s string) {
		switch kind {
		case Word, Compound:
			add(s)
		case Part:
			// The compound before it already stands for its parts.
		case CJK:
			if utf8.RuneCountInString(s) == 1 {
				add(s)
				return
			}
			rs := []rune(s)
			for i := 0; i+1 < len(rs); i++ {
				add(string(rs[i : i+2]))
			}
		}
	})
	return out
}
