package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"mneme/guard"
)

// Kinds of stated wishes.
const (
	kindPreference = "preference"
	kindConstraint = "constraint"
)

var (
	likeEn    = regexp.MustCompile(`(?i)\bI\s+(?:really\s+|much\s+|strongly\s+|usually\s+|always\s+|generally\s+)?(?:prefer|like|love|enjoy)\s+(.+)|\bI(?:'d|\s+would)\s+(?:rather|prefer)\s+(.+)|\bmy\s+preference\s+is\s+(.+)`)
	dislikeEn = regexp.MustCompile(`(?i)\bI\s+(?:really\s+)?(?:don't|do\s+not|dont|never)\s+(?:really\s+)?(?:like|want|enjoy)\s+(.+)|\bI\s+(?:hate|dislike|can't\s+stand)\s+(.+)`)
	forbidEn  = regexp.MustCompile(`(?i)\b(?:don't|do\s+not|dont|never|please\s+don't|please\s+never)\s+((?:call|email|e-mail|text|message|phone|contact|send|deliver|ship|use|bother|cc|share)\b.*)|\bplease\s+always\s+(.+)|\bonly\s+(?:contact|call|email)\s+me\s+(.+)`)
	likeZh    = regexp.MustCompile(`我(?:最|比较|更|很|非常|特别|一般|通常)?(?:喜欢|偏好|偏爱|倾向于?|习惯)(.+)`)
	dislikeZh = regexp.MustCompile(`我(?:不太|很不|最不|不)(?:喜欢|想要|希望|习惯)(.+)|我(?:讨厌|受不了)(.+)`)
	forbidZh  = regexp.MustCompile(`(?:^|[，,]|请|以后|千万|麻烦|务必)(?:不要|别|勿|请勿)(.+)`)
	wishZh    = regexp.MustCompile(`(?:我|我们)?(?:希望|最好|尽量)(.+)`)
)

// topics name the slot a preference fills, so that a later wish about the
// same thing replaces an earlier one. Order matters: the first match wins.
var topics = []struct {
	key   string
	words []string
}{
	{"contact_channel", []string{"email", "e-mail", "phone", "call", "calls", "calling", "text", "sms", "wechat", "whatsapp", "电话", "邮件", "邮箱", "短信", "微信", "联系"}},
	{"language", []string{"english", "chinese", "mandarin", "中文", "英文", "英语", "普通话"}},
	{"answer_style", []string{"answer", "answers", "reply", "replies", "response", "responses", "short", "brief", "concise", "detailed", "回复", "回答", "简洁", "简短", "详细", "结论"}},
	{"delivery_window", []string{"deliver", "delivery", "deliveries", "shipment", "shipments", "morning", "afternoon", "送货", "配送", "送到", "上午", "下午", "发货"}},
	{"invoice_type", []string{"invoice", "invoices", "发票"}},
	{"payment_method", []string{"alipay", "transfer", "card", "支付宝", "转账", "刷卡"}},
}

// preference reports a stated preference or constraint and the slot it
// fills: a known topic, else "preference:" and its object.
func preference(s string) (kind, key string, ok bool) {
	try := func(re *regexp.Regexp, k string) bool {
		m := re.FindStringSubmatch(s)
		if m == nil {
			return false
		}
		var object string
		for _, g := range m[1:] {
			if g != "" {
				object = g
				break
			}
		}
		object = firstClause(object)
		if weakObject(object) {
			return false
		}
		kind, key = k, topicKey(s)
		if key == "" {
			key = "preference:" + slug(guard.Masked(object), 48)
		}
		return true
	}
	switch {
	case try(dislikeEn, kindConstraint), try(forbidEn, kindConstraint), try(likeEn, kindPreference),
		try(dislikeZh, kindConstraint), try(forbidZh, kindConstraint), try(likeZh, kindPreference):
		return kind, key, true
	}
	// A wish counts only when it is about a known topic: "希望用微信联系"
	// is a preference, "希望你们早点发货" a request of the moment.
	if m := wishZh.FindStringSubmatch(s); m != nil && topicKey(s) != "" && !question.MatchString(s) {
		return kindPreference, topicKey(s), true
	}
	return "", "", false
}

func topicKey(s string) string {
	lower := strings.ToLower(s)
	words := strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' })
	for _, t := range topics {
		for _, w := range t.words {
			if isHan(w) {
				if strings.Contains(lower, w) {
					return t.key
				}
				continue
			}
			for _, x := range words {
				if x == w {
					return t.key
				}
			}
		}
	}
	return ""
}

// firstClause cuts an object at the first clause boundary.
func firstClause(s string) string {
	if i := strings.IndexAny(s, ",，、:："); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// weakObjects are objects that carry no preference: "I like it", "别客气".
var weakObjects = map[string]bool{
	"it": true, "that": true, "this": true, "them": true, "those": true, "these": true, "you": true, "it a lot": true,
	"it very much": true, "worry": true, "mind": true, "这个": true, "那个": true, "它": true, "这": true, "那": true,
	"你": true, "你们": true, "客气": true, "担心": true, "着急": true, "介意": true, "谢": true, "谢谢": true,
}

func weakObject(o string) bool {
	o = strings.ToLower(strings.TrimRight(o, " .!~…"))
	if weakObjects[o] || utf8.RuneCountInString(o) < 2 {
		return true
	}
	// "别忘了…" asks to remember; "不要紧" means never mind.
	return strings.HasPrefix(o, "忘") || strings.HasPrefix(o, "紧") || isChitChat(o)
}

// chitChat are phrases that hold nothing worth remembering on their own.
var chitChat = regexp.MustCompile(`(?i)^(hi|hello|hey|thanks?|thank you|ok|okay|bye|good (morning|night|afternoon)|you're welcome|no problem|lol|haha|你好|谢谢|好的|哈哈|再见|不客气|没关系|嗯)[\s!.。！~]*$`)

func isChitChat(s string) bool { return chitChat.MatchString(strings.TrimSpace(s)) }

func isHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// slug makes a stable id part from a name: lower case, letters and digits
// joined by '-', at most max bytes on a rune boundary.
func slug(s string, max int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			if b.Len()+utf8.RuneLen(r) > max {
				return b.String()
			}
			b.WriteRune(r)
		default:
			dash = true
		}
	}
	return b.String()
}
