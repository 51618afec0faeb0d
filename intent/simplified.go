package intent

import (
	_ "embed"
	"strings"
	"unicode/utf8"
)

//go:embed traditional.txt
var traditionalText string

// traditional maps a traditional Chinese character to the simplified one
// the cues are written in.
var traditional = func() map[rune]rune {
	m := make(map[rune]rune, 4200)
	for line := range strings.Lines(traditionalText) {
		t, s, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		tr, _ := utf8.DecodeRuneInString(t)
		sr, _ := utf8.DecodeRuneInString(s)
		m[tr] = sr
	}
	return m
}()

// lower is text in lower case and simplified characters: a question
// typed in Taiwan or Hong Kong ("會員資格什麼時候到期") meets the same cues
// as one typed on the mainland. Only the cues read it; the searches take
// the question as written, so that memories kept in traditional characters
// are found by their own words.
func lower(text string) string {
	text = strings.ToLower(text)
	if strings.ContainsFunc(text, func(r rune) bool { _, ok := traditional[r]; return ok }) {
		text = strings.Map(func(r rune) rune {
			if s, ok := traditional[r]; ok {
				return s
			}
			return r
		}, text)
	}
	return cantonese.Replace(text)
}

// cantonese reads the words of written Cantonese that Mandarin writes
// otherwise as Mandarin's: "你哋退咗幾多錢俾我" is asked as "你们退了几多钱给我".
var cantonese = strings.NewReplacer(
	"点样", "怎么", "几时", "什么时候", "边个", "谁", "边度", "哪里", "乜嘢", "什么", "咩", "什么", "几多", "多少",
	"佢哋", "他们", "我哋", "我们", "你哋", "你们", "佢", "他", "嘅", "的", "啲", "些", "咗", "了", "冇", "没有",
	"喺", "在", "唔", "不", "俾", "给", "搵", "找", "睇", "看", "嘢", "东西",
)
