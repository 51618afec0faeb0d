package facts

import (
	"strings"
	"unicode"
)

// Worth remembering: greetings, thanks and acknowledgements carry nothing to
// recall later, and neither does text without a letter or a digit.

// chitChatWords are the English words small talk is made of. A text made
// only of them (and punctuation) is chit-chat.
var chitChatWords = setOfWords(`hi hello hey hiya yo thanks thank thx ty you u cheers ok okay k kk
	alright fine sure cool great nice awesome perfect good morning afternoon evening night bye goodbye
	see ya later cya lol haha hahaha hehe hmm um uh oh ah wow yes yeah yep no nope np welcome got it
	noted please pls much very so a lot lots again for that this all everything`)

// chitChatZH are the Chinese phrases of small talk, longest first so that
// removing them from a run leaves nothing when the run is only small talk.
var chitChatZH = []string{
	"不客气", "没问题", "早上好", "晚上好", "下午好", "知道了", "明白了", "好的呢", "谢谢你", "辛苦了",
	"好的", "谢谢", "多谢", "感谢", "你好", "您好", "再见", "拜拜", "晚安", "收到", "明白", "知道",
	"可以", "是的", "哈哈", "嘿嘿", "呵呵", "好吧", "行吧", "没事", "了解", "懂了", "在吗",
	"嗯", "哦", "噢", "哈", "好", "行", "对", "啊", "呀", "吧", "呢", "了", "的", "哇", "谢", "您", "你",
}

func setOfWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(s) {
		out[w] = true
	}
	return out
}

// Reasons a text is not worth remembering.
const (
	ChitChat    = "chit_chat"
	ContentFree = "content_free"
)

// Worthless returns why content is not worth remembering (ChitChat,
// ContentFree), or "" when it is.
func Worthless(content string) string {
	signal := 0
	for _, r := range content {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			signal++
		}
	}
	if signal < 2 {
		return ContentFree
	}
	if isChitChat(content) {
		return ChitChat
	}
	return ""
}

// isChitChat reports whether text is only small talk: every Latin word is a
// chit-chat word and every run of Chinese dissolves into chit-chat phrases.
func isChitChat(text string) bool {
	for _, tok := range tokens(strings.ToLower(foldWidth(text))) {
		if isHan(tok) {
			for _, p := range chitChatZH {
				tok = strings.ReplaceAll(tok, p, "")
			}
			if tok != "" {
				return false
			}
			continue
		}
		if !chitChatWords[tok] {
			return false
		}
	}
	return true
}

// tokens splits text into Latin words, digit runs and runs of Han
// characters; everything else separates.
func tokens(text string) []string {
	var out []string
	var cur []rune
	han := false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Han, r):
			if !han {
				flush()
			}
			han = true
			cur = append(cur, r)
		case unicode.IsLetter(r) || unicode.IsNumber(r) || r == '\'':
			if han {
				flush()
			}
			han = false
			if r != '\'' {
				cur = append(cur, r)
			}
		default:
			flush()
		}
	}
	flush()
	return out
}

func isHan(s string) bool {
	for _, r := range s {
		return unicode.Is(unicode.Han, r)
	}
	return false
}

// foldWidth maps full-width ASCII forms and the ideographic space to their
// ASCII equivalents, so that "ＯＫ" reads as "OK".
func foldWidth(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			return r - 0xFEE0
		case r == 0x3000:
			return ' '
		}
		return r
	}, s)
}
