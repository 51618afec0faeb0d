package intent

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// About reports whether question asks about the person recall serves:
// "which firm am I with?", "how does she like to be reached?", "我的会员什么
// 时候到期？". Such a question is about the user's own memories even when it
// shares no word with them and names no kind of memory, so recall may let the
// user's nearest memories answer it at a lower similarity than a question
// about anything else ("who wrote Pride and Prejudice?", "给我讲个笑话吧").
//
// It holds when question is a question, or a request for what is known
// ("summarise what we know about Bob"; not a greeting, thanks or other
// request), that refers to the user: by a first- or third-person word, a
// word for the customer, or the user's id or name (Person). "me" as the one
// a request is for ("tell me a joke", "给我讲个笑话吧") does not count. A
// question that names another user (who.Others) and not this one is not.
func About(question string, who Person) bool {
	return !who.NamesOther(question) && about(question, who)
}

// about is About for a question that names none of who.Others.
func about(question string, who Person) bool {
	q := plain(question)
	if q == "" || !asks(q) && !inform.MatchString(q) {
		return false
	}
	// A question after a first clause is about whom it names itself: "we
	// might expand into pharma, how do pharma companies store drugs?".
	if loc := clause.FindStringIndex(q); loc != nil && !opening.MatchString(q) {
		q = q[loc[0]+2:]
	}
	if m := howTo.FindStringSubmatch(q); m != nil && !ways[m[len(m)-1]] {
		q = q[len(m[0]):]
	}
	if m := whatToDo.FindString(q); !strings.HasPrefix(q[len(m):], " for a living") {
		q = q[len(m):]
	}
	q = q[len(whatToMind.FindString(q)):]
	for _, h := range zhHowTo {
		q = strings.TrimPrefix(q, h)
	}
	// What we do to the user, asked by the user: "你们给我回消息的时候写多
	// 长合适", "你们几点以后别给我打电话".
	if zhTowardMe.MatchString(q) {
		return true
	}
	q = recipient.ReplaceAllString(q, " ")
	for _, r := range zhRecipient {
		q = strings.ReplaceAll(q, r, " ")
	}
	if len(who.spans(question)) > 0 {
		return true
	}
	if !who.Asking {
		// "We" and "our" from the business's side are the business: "do we
		// stock nitrile gloves?" asks nothing of the customer.
		q = strings.NewReplacer("我们", " ", "咱们", " ").Replace(business.ReplaceAllString(q, " "))
	}
	return person.MatchString(q) || containsAny(otherThis.ReplaceAllString(q, " "), zhPerson)
}

// zhTowardMe is the business (你们) reaching, answering or serving the
// speaker; not asking a favour of it ("你们能给我推荐个餐厅吗").
var zhTowardMe = regexp.MustCompile(`你们.*(给我(回|发|打|写|送|退|赔)|(跟|和)我(联系|沟通|说|讲)|联系我|通知我|找我)`)

// otherThis is 这家 or 这位 before what cannot be the customer: a shop, a
// restaurant, a celebrity ("这家店的红烧肉好吃不", "这位明星最近怎么样").
var otherThis = regexp.MustCompile(`这(家|位|个)(店|餐厅|饭店|饭馆|餐馆|酒店|宾馆|医院|学校|银行|超市|商场|影院|明星|网红|演员|歌手|作家|老师|医生|主播|博主)`)

// Dealing reports whether question asks about one of the user's dealings
// with us, spoken of as known but without naming the user: "has the big desk
// order gone through yet?", "这批纸箱什么时候发？". An agent asks so about the
// user it serves, but the same words ask about the world too ("is the
// shipment tracking website down?"), so such a question is weaker evidence
// of being about the user than About.
func Dealing(question string) bool {
	q := plain(question)
	if q == "" || !asks(q) {
		return false
	}
	return dealsWith(q) || containsAny(q, zhDealing) || zhCounted.MatchString(q) || bought.MatchString(q)
}

// containsAny reports whether q holds any of words.
func containsAny(q string, words []string) bool {
	return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(q, w) })
}

// dealsWith reports whether lower-cased q speaks of one of the user's
// dealings (dealing), not of an order of things or a payment for anything
// ("the order of the planets", "the payment for Olympics tickets").
func dealsWith(q string) bool {
	for at := 0; at < len(q); {
		m := dealing.FindStringSubmatchIndex(q[at:])
		if m == nil {
			return false
		}
		// After a contraction the words it opened may still be someone's:
		// "when's his consignment leaving?".
		if contractions[q[at+m[2]:at+m[3]]] {
			at += m[3]
			continue
		}
		if rest := q[at+m[1]:]; !strings.HasPrefix(rest, " of ") && !strings.HasPrefix(rest, " for ") {
			return true
		}
		at += m[1]
	}
	return false
}

// contractions are the words before "'s" that name no one: "what's the
// order of …" is no one's order.
var contractions = map[string]bool{"it's": true, "what's": true, "that's": true, "there's": true, "here's": true, "who's": true,
	"where's": true, "how's": true, "when's": true, "let's": true, "he's": true, "she's": true, "one's": true, "everyone's": true,
	"someone's": true, "somebody's": true, "anyone's": true, "nobody's": true, "today's": true, "tomorrow's": true, "world's": true}

// Refers reports whether text refers to someone or something as known: a
// person ("my", "you", 你们), or a thing with a definite word ("the
// damaged seats", 那批货). A question that refers to neither ("合肥到上海的
// 高铁要多久？", "浦东机场怎么去最方便？") asks about the world, not about
// anything the user and we have dealt with. "The" before a superlative or
// a thing of everyone's ("the best paper", "the weather"), and "this"
// before a time ("this weekend"), know nothing in particular.
func Refers(text string) bool {
	q := otherThis.ReplaceAllString(generic.ReplaceAllString(lower(text), " "), " ")
	// "how do I fix a wobbly armrest?" asks what anyone would.
	if m := howTo.FindStringSubmatch(q); m != nil && !ways[m[len(m)-1]] {
		q = q[len(m[0]):]
	}
	return person.MatchString(q) || known.MatchString(q) || containsAny(q, zhPerson) || containsAny(q, zhKnown) || containsAny(q, zhDealing)
}

// generic is a definite word that refers to nothing known.
var generic = regexp.MustCompile(`\bthe (best|worst|most|least|cheapest|fastest|quickest|easiest|safest|biggest|largest|smallest|typical|average|weather|difference|world|internet|market|industry)\b|\bthis (morning|afternoon|evening|week|weekend|month|year|time)\b`)

// Prefers reports whether text asks what is required, preferred or best:
// "送货时间有什么要求？", "什么时候送货比较好？", "what delivery times does she
// prefer?". A requirement or a preference is someone's, so a question that
// also names a kind of memory (delivery) asks for the user's.
func Prefers(text string) bool {
	q := lower(text)
	return preference.MatchString(q) || containsAny(q, zhPreference)
}

// DealsWithSomeone reports whether text speaks of someone other than the
// speaker (she, the customer, 客户) or of contacting, answering or serving
// someone: "anything to keep in mind before contacting Sophia?", "跟她沟通要注
// 意点啥", but not "what should I know before my first day here?".
func DealsWithSomeone(text string) bool {
	q := lower(text)
	return otherPerson.MatchString(q) || interaction.MatchString(q) || containsAny(q, zhOther)
}

// Someones reports whether text speaks of one person, the speaker or
// another: "按她的老规矩来", "the usual for me", but not "按我们的老规矩" (the
// tenant's).
func Someones(text string) bool {
	q := lower(text)
	return otherPerson.MatchString(q) || oneself.MatchString(q) || containsAny(strings.ReplaceAll(q, "我们", ""), zhSomeone)
}

var (
	oneself     = regexp.MustCompile(`\b(i|i'm|i've|i'd|me|my|mine|myself)\b`)
	zhSomeone   = []string{"我", "她", "他", "客户", "顾客", "这位", "那位"}
	otherPerson = regexp.MustCompile(`\b(she|she's|her|hers|he|he's|him|his|they|their|them|customer|customers|client|clients|account|buyer)\b`)
	interaction = regexp.MustCompile(`\b(contact\w*|reach\w*|repl\w*|respond\w*|answer\w*|call\w*|email\w*|writ\w*|talk\w*|deal\w*|handl\w*|serv\w*|bill\w*|ship\w*|deliver\w*|getting back|get back)\b`)
	zhOther     = []string{"她", "他", "客户", "顾客", "老板", "这位", "那位", "联系", "沟通", "回复", "回消息", "发消息", "回信", "打电话", "打交道", "送货", "对接", "服务", "开票"}
)

// General reports whether text asks about things in general rather than
// about anyone's: a trade, a market, what is typical, the difference
// between two things ("纺织行业现在利润率大概多少", "what are typical payment
// terms in the auto parts industry?", "增值税专用发票和普通发票有啥区别"). Such a
// question names a kind of memory (margins, payment terms, invoices) that
// every customer's record holds, and is answered by none of them.
func General(text string) bool {
	q := lower(text)
	return general.MatchString(q) || containsAny(q, zhGeneral)
}

var (
	general   = regexp.MustCompile(`\b(industry|industries|sector|market|markets|in general|generally|typical|typically|normal|going rate|going price|wholesale price|difference between|differences between|someone|somebody|is it rude|is it polite|etiquette|translate|how long does (a|an) \w+ take|weather|forecast|recycle|recycling|(vat|tax|exchange|interest) rates?|forward calls|how (do|can) i (set up|configure|install|enable|disable|reset|turn on|turn off)|outages?|(website|web site|site|app|portal|system|server|platform|page|link)s? (is |are )?(down|offline|not working|working|broken|loading|slow)|(is|are) (down|offline) (today|now|right now|again))\b`)
	zhGeneral = []string{"行业", "业内", "市场价", "行情", "一般来说", "通常来说", "普遍", "区别", "一回事", "别人", "礼貌", "翻译", "怎么开通", "如何开通", "天气", "红包", "高铁", "动车", "改名字", "怎么设置", "如何设置"}
)

var (
	preference   = regexp.MustCompile(`\b(prefer|prefers|preferred|preference|preferences|requirement|requirements|best time|best way)\b`)
	zhPreference = []string{"要求", "偏好", "喜好", "习惯", "比较好", "最好", "方便"}
)

// Phatic reports whether text only checks that the line works or that
// someone is there ("can you hear me?", "are you still there?", "能听到我说
// 话吗", "在吗"): it asks about nothing, however much it says "me".
func Phatic(text string) bool {
	q := strings.TrimRight(plain(text), "?？!！.。~ ")
	return phatic.MatchString(q) || zhPhatic.MatchString(q)
}

var (
	phatic   = regexp.MustCompile(`^(hello|hi|hey)?[ ,]*((can|could|do) you (hear|see|read) me( now| ok| okay| alright| at all)?|(are )?you (still )?(there|around|online|with me)|is (this|it) working|testing( 1 2 3)?|anyone there|anybody there)$`)
	zhPhatic = regexp.MustCompile(`^(喂|你好)?[，, ]*(能|可以)?(听得?到|听得?见|看得?到|看得?见)(我)?(说话|的声音|的消息)?(吗|么|没有?)?$|^(喂|你好)?[，, ]*(还)?在(吗|么|不在)$|^(喂|你好)?[，, ]*有人(在)?(吗|么)$`)
)

// Requests reports whether text, not a question, asks for something: "tell
// me my preferences", "keep it short, like before", "按老规矩处理", "我还想要上
// 次那个风格", or a few words typed as a search ("contact preference", "送货
// 地址"). A statement that names the same things ("just sent you an email",
// "谢谢你们，答复很及时", "我今天在公司", "节后再联系吧") asks for nothing.
func Requests(text string) bool {
	q := plain(text)
	return imperative.MatchString(q) || request.MatchString(q) || containsAny(q, zhRequest) || searchTerms(q)
}

// searchTerms reports whether lower-cased q is a few words typed as a
// search: no more than four words or ten characters, no sentence
// punctuation or closing particle, and nobody speaking or spoken to, but
// for whose the search is ("my preferences", "我的偏好").
func searchTerms(q string) bool {
	words := strings.Fields(q)
	if len(words) > 4 || utf8.RuneCountInString(q) > 40 || len(words) == 1 && utf8.RuneCountInString(q) > 10 {
		return false
	}
	if rest := possessive.ReplaceAllString(q, ""); rest != "" {
		q = rest
	}
	for _, w := range zhPossessive {
		if rest, ok := strings.CutPrefix(q, w); ok && rest != "" {
			q = rest
			break
		}
	}
	return !strings.ContainsAny(q, ",，.。!！;；~…") && !person.MatchString(q) && !known.MatchString(q) &&
		!containsAny(q, zhPerson) && !containsAny(q, zhKnown) && !containsAny(q, zhClosing)
}

// HowTo reports whether text asks how to do something: "how do I top up
// my Oyster card?", "我的悠遊卡要怎麼儲值". The way is a procedure's to tell,
// never one of the user's own facts, however near the question. How one
// is, or how to deal with someone ("how do I like things explained?", "how
// should I talk to Carol?"), is no such question.
func HowTo(text string) bool {
	q := plain(text)
	if m := howTo.FindStringSubmatch(q); m != nil {
		return !ways[m[len(m)-1]] && !towardSomeone[m[len(m)-1]]
	}
	return strings.HasPrefix(q, "how to ") || zhAskHow.MatchString(q)
}

var (
	// towardSomeone are the verbs of dealing with a person.
	towardSomeone = map[string]bool{"talk": true, "speak": true, "reply": true, "respond": true, "answer": true, "reach": true,
		"contact": true, "address": true, "write": true, "explain": true, "approach": true, "deal": true, "handle": true, "treat": true,
		"greet": true, "call": true, "message": true, "email": true, "ring": true, "text": true, "get": true, "phone": true}
	zhAskHow = regexp.MustCompile(`(怎么|如何|怎样)(才能|才可以|可以)?(储值|充值|增值|设置|操作|开通|修改|改|安装|下载|注册|登录|绑定|转账|续期|激活)`)
)

// Asks reports whether text is a question rather than a request, a
// greeting or a statement ("给我讲个笑话吧", "ok great, talk later").
func Asks(text string) bool {
	return asks(plain(text))
}

// asks reports whether lower-cased q is a question: it ends with a question
// mark or a tag ("…, right", "pushed back to when", "付钱利索不", "都记着的吧"), starts as English questions
// do, or holds a Chinese question word.
func asks(q string) bool {
	return strings.HasSuffix(q, "?") || strings.HasSuffix(q, "？") || opening.MatchString(q) && !wish.MatchString(q) || clause.MatchString(q) || closing.MatchString(q) || containsAny(q, zhQuestion) ||
		slices.ContainsFunc(zhTag, func(t string) bool { return strings.HasSuffix(q, t) }) || aNotA(q)
}

// aNotA reports a Chinese A-not-A question: 多不多, 好不好, 来没来; not
// 能不能 or 可不可以, which ask someone to do something (Requests).
func aNotA(q string) bool {
	rs := []rune(q)
	for i := 0; i+2 < len(rs); i++ {
		if (rs[i+1] == '不' || rs[i+1] == '没') && rs[i] == rs[i+2] && rs[i] != rs[i+1] && rs[i] != '能' && rs[i] != '可' && unicode.Is(unicode.Han, rs[i]) {
			return true
		}
	}
	return false
}

// plain is text lower-cased (and simplified, see lower) as people type it
// in a chat, written out: the openers before a question go ("hey so what
// do you …") and chat shorthand is spelt ("u" is you, "pls" please, "rn"
// right now).
func plain(text string) string {
	q := lower(strings.TrimSpace(text))
	for {
		m := filler.FindString(q)
		if m == "" || m == q {
			break
		}
		q = q[len(m):]
	}
	// Twice: a match takes the space the next one starts with ("u n u").
	return strings.TrimSpace(shorthand.Replace(shorthand.Replace(" " + q + " ")))
}

var (
	// filler opens a chat line before what it says.
	filler = regexp.MustCompile(`^(hey|hi|hello|yo|so|ok|okay|um|uh|oh|well|btw|and|but|also|just|quick q|quick question)\b[,.!:]?\s*`)
	// shorthand spells chat words out, as whole words between spaces.
	shorthand = strings.NewReplacer(" u ", " you ", " ur ", " your ", " r ", " are ", " pls ", " please ", " plz ", " please ",
		" n ", " and ", " rn ", " right now ", " abt ", " about ", " wat ", " what ", " wut ", " what ", " thx ", " thanks ")
)

func ascii(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '-' }

var (
	// opening is how an English question starts.
	opening = regexp.MustCompile(`^(what|what's|whats|which|who|whom|whose|when|where|how|hows|why|do|does|did|is|are|am|was|were|can|could|should|would|will|have|has|had|any|anything|anyone|anybody)\b`)
	// wish opens a parting wish, not a question ("have a good weekend").
	wish = regexp.MustCompile(`^have (a|an|fun)\b`)
	// clause opens a question after a first clause ("after the increase,
	// how much …"); closing ends an English question typed without its
	// mark: a tag
	// ("…, right") or the question word last ("pushed back, to when").
	clause  = regexp.MustCompile(`, (what|what's|whats|which|who|when|where|how|why)\b`)
	closing = regexp.MustCompile(`(, ?(right|correct|yeah|yes|no|isn't it|aren't they|don't they|doesn't she|doesn't he)|\b(when|where|why|how|what|who|which))$`)
	// business is the first person plural: the user's firm when the user
	// asks, the business when an agent or an admin does.
	business = regexp.MustCompile(`\b(we|we're|we've|we'd|we'll|our|ours|us|ourselves)\b`)
	// person is a word for the user: the speaker, the person an agent
	// speaks of, or the customer.
	person = regexp.MustCompile(`\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|our|ours|us|she|she's|her|hers|herself|he|he's|him|his|himself|they|their|theirs|them|(this|that) ([a-z]+ )?(customer|client|buyer|lady|gentleman)|the ([a-z]+ )?(customer|client|buyer)|the user|this (user|person|guy|woman|man|fellow)|(this|that) ([a-z]+ )?account|the [a-z]+ account)\b`)
	// dealing is one of the user's dealings with us spoken of as known:
	// "has the big desk order gone through?", "when is that shipment
	// leaving?". An agent asks it about the user it serves.
	dealing = regexp.MustCompile(`\b(the|this|that|these|those|my|her|his|their|our|which|[a-z][\w-]*'s)( [\w-]+){0,3} (orders?|shipments?|deliver(y|ies)|parcels?|packages?|purchases?|invoices?|bills?|payments?|batch(es)?|consignments?|refunds?|quot(e|es|ation|ations))\b`)
	// inform opens a request for what is known, which asks as a question
	// does: "summarise what we know about Bob".
	inform = regexp.MustCompile(`^(tell me|show me|give me|list|summari[sz]e|describe|recap|sum up|outline|fill me in|brief me)\b`)
	// imperative opens a request in English; request marks one anywhere.
	imperative = regexp.MustCompile(`^(please|kindly|tell|show|give|list|remind|summari[sz]e|describe|recap|outline|keep|use|make|send|write|reply|answer|follow|stick|go|be|stop|don't|do not|same|as usual|like before|like last time|let me know|fill me in|brief me|update me)\b`)
	request    = regexp.MustCompile(`\b(please|i want|i'd like|i would like|i need|like before|like last time|as usual|same as|the usual( (way|rules?|process|procedure|routine))?)\b`)
	// known speaks of us or of a thing as known.
	known = regexp.MustCompile(`\b(you|your|yours|the|this|that|these|those)\b`)
	// possessive opens a search for something of someone's: "my budget".
	possessive = regexp.MustCompile(`^(my|our|her|his|their) +`)
	// howTo starts a question that asks for instructions ("how do I bake
	// bread?"), whose "I" is anyone; only the verbs of a person's ways
	// ("how do I like to be reached?") keep it about the speaker.
	howTo = regexp.MustCompile(`^how (do|can|should|could|would|will|to) (i|we) (\w+)`)
	// whatToDo asks for instructions too: "what should I do when …", but
	// not "what do I do for a living?".
	whatToDo = regexp.MustCompile(`^what (should|shall|do|can|could|would) (i|we) do\b`)
	// whatToMind asks for advice, whose "I" is anyone too: "what should I
	// know before visiting Beijing?" is not about the asker, "what should I
	// know about her?" is, by "her".
	whatToMind = regexp.MustCompile(`^(what|anything|is there anything) (should|shall|do|must|would) (i|we) (need to )?(know|keep in mind|bear in mind|watch out for|look out for|be aware of)\b|^do (i|we) need to know\b`)
	ways       = map[string]bool{"like": true, "prefer": true, "want": true, "usually": true, "normally": true, "typically": true, "tend": true, "feel": true}
	// recipient is "me" as the one a request is for, not its subject.
	recipient = regexp.MustCompile(`\b(tell|give|show|send|teach|recommend|find|get|bring|let|help|write|make|sing|read) (me|us)\b`)
)

var (
	zhQuestion = []string{"吗", "什么", "啥", "哪", "怎么", "咋", "怎样", "多少", "几", "谁", "是否", "有没有", "要不要", "会不会", "呢", "如何", "多久", "为什么", "多长", "是不是",
		"多细", "多短", "多快", "多早", "多晚", "多远", "多大", "多详细", "多正式"}
	// zhTag ends a sentence as a question: 利索不, 到了没, 记着的吧, 对吧.
	zhTag    = []string{"不", "没", "没有", "对吧", "是吧", "的吧", "没错吧"}
	zhPerson = []string{"我", "她", "他", "客户", "用户", "顾客", "这人", "这位", "这家", "女士", "先生", "小姐", "这个账户", "这个户头", "总家", "总那边"}
	// zhDealing speaks of one of the user's dealings as known: 那批货, 上次的订单.
	// bought points at what someone bought or ordered: "the workstations
	// she bought", 我上次订的.
	bought = regexp.MustCompile(`\b(i|she|he|they|we) (bought|ordered|purchased)\b|[我她他](们)?(上次|之前|前几天|刚)?(买|订|下单)的`)
	// zhCounted points at goods or orders counted out, as one speaks of a
	// dealing: 那十二托, 这两万套, 那些, 撤了一单, 第二笔, 那张一百二十张办公桌的订单.
	zhCounted = regexp.MustCompile(`那些|[那这][0-9一二两三四五六七八九十百千万几]+[托箱件套批单张包袋台把]|[一两二三四五六七八九十几0-9]+(笔单|笔订单|单)|第[一二三四五六七八九十0-9]+[笔单]|[那这][张个份][^，。？！?]{0,15}(订单|单子)`)
	zhDealing = []string{"那批", "这批", "那单", "这单", "那笔", "这笔", "上次", "上回", "那张账单", "这张账单", "那份账单", "我的账单", "那张发票", "这张发票"}
	// zhRequest marks a request in Chinese.
	zhRequest = []string{"请", "按", "照", "想要", "我要", "给我", "帮我", "告诉我", "别", "不要", "直接", "能不能", "可不可以", "能否", "麻烦",
		"一点", "点儿", "简单点", "说人话", "长话短说", "老样子", "就行", "就好"}
	// zhPossessive opens a search for something of someone's: 我的预算.
	zhPossessive = []string{"我们的", "我的", "她的", "他的"}
	// zhClosing ends a spoken sentence, not a search: 节后再联系吧.
	zhClosing = []string{"吧", "了", "啊", "呀", "哦", "嘛", "啦", "哈"}
	// zhKnown speaks of us or of a thing as known: 你们, 那个, 这件.
	zhKnown = []string{"你", "您", "咱", "那个", "这个", "那件", "这件", "那些", "这些", "那次", "这次"}
	// zhHowTo are the openings of a Chinese how-to question.
	zhHowTo = []string{"我们该怎么", "我们怎么", "我应该怎么", "我该怎么", "我要怎么", "我怎么", "我如何"}
	// zhRecipient holds longer phrases first, so that 给我们 goes whole.
	zhRecipient = []string{"给我们", "帮我们", "告诉我们", "给我", "帮我", "告诉我", "为我", "替我", "让我", "陪我"}
)

// Person is how a question may name the user recall serves: by the id
// ("alice", "u07"), in any case, or by the name people call the user
// ("Ethan Zhou"): the whole name or a word of it of two letters or more,
// but only where it is written as a name, capitalised, so that "the bill"
// does not name Bill (Chinese names have no case and count anywhere).
type Person struct {
	ID, Name string
	// Others are the tenant's users known by a name (the user among them
	// or not): a question that names another ("what does Alice prefer?"
	// asked about Bob) is about that person, not the user.
	Others []Person
	// Asking is true when the user asks themselves: "照旧办" unnamed is
	// their usual way, as "same as always for me" is.
	Asking bool
	// lowered are the id and the words of the name lower-cased, read ahead
	// by NewPerson for a list many questions are read against.
	lowered []string
}

// NewPerson returns the user id known by name, read ahead for Others.
func NewPerson(id, name string) Person {
	return Person{ID: id, Name: name, lowered: lowerWords(id, name)}
}

func lowerWords(id, name string) []string {
	return append([]string{strings.ToLower(id)}, strings.Fields(strings.ToLower(name))...)
}

// NamesOther reports whether question names one of p.Others and not p:
// "what answer style do Alice and Bob like?" is about both, and "Alice"
// names no one else for Alice Wang, though Alice Chen is a user too.
func (p Person) NamesOther(question string) bool {
	question = norm.NFC.String(question)
	if len(p.spans(question)) > 0 {
		return false
	}
	lower := strings.ToLower(question)
	return slices.ContainsFunc(p.Others, func(o Person) bool {
		return o.ID != p.ID && o.mayBeIn(lower) && len(o.spans(question)) > 0
	})
}

// mayBeIn reports whether the lower-cased question holds p's id or a word
// of p's name, which spans then checks: most of a tenant's users are not
// named, and this is cheap.
func (p Person) mayBeIn(lower string) bool {
	words := p.lowered
	if words == nil {
		words = lowerWords(p.ID, p.Name)
	}
	return slices.ContainsFunc(words, func(w string) bool { return w != "" && strings.Contains(lower, w) })
}

// nameWord is one way of naming the user, lower-cased; proper ones count
// only capitalised.
type nameWord struct {
	text   string
	proper bool
}

// words returns the ways p may be named, longer ones first, so that "ethan
// zhou" goes whole before "ethan".
func (p Person) words() []nameWord {
	var out []nameWord
	add := func(w string, proper bool) {
		if w != "" && !slices.ContainsFunc(out, func(o nameWord) bool { return o.text == w }) {
			out = append(out, nameWord{w, proper})
		}
	}
	add(strings.ToLower(strings.TrimSpace(p.ID)), false)
	name := strings.ToLower(strings.Join(strings.Fields(p.Name), " "))
	add(name, true)
	if parts := strings.Fields(name); len(parts) > 1 {
		for _, w := range parts {
			if utf8.RuneCountInString(w) >= 2 && !strings.ContainsAny(w, ".'’") {
				add(w, true)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b nameWord) int { return len(b.text) - len(a.text) })
	return out
}

// spans returns where question names p, possessives included, in order
// and without overlaps.
func (p Person) spans(question string) [][2]int {
	lower := strings.ToLower(question)
	if len(lower) != len(question) {
		return nil // a case change altered lengths: offsets would not match
	}
	var out [][2]int
	taken := func(at, end int) bool {
		return slices.ContainsFunc(out, func(s [2]int) bool { return at < s[1] && s[0] < end })
	}
	for _, w := range p.words() {
		for i := 0; ; {
			j := strings.Index(lower[i:], w.text)
			if j < 0 {
				break
			}
			at, end := i+j, i+j+len(w.text)
			i = end
			r, _ := utf8.DecodeRuneInString(question[at:])
			// "Sophias firm": a possessive typed without its apostrophe.
			if w.proper && !strings.HasSuffix(w.text, "s") && strings.HasPrefix(lower[end:], "s") && (end+1 == len(lower) || !ascii(lower[end+1])) {
				end++
			}
			if (at > 0 && ascii(lower[at-1])) || (end < len(lower) && ascii(lower[end])) || (w.proper && unicode.IsLower(r)) || taken(at, end) {
				continue
			}
			for _, s := range []string{"'s", "’s"} {
				if strings.HasPrefix(lower[end:], s) {
					end += len(s)
				}
			}
			out = append(out, [2]int{at, end})
		}
	}
	slices.SortFunc(out, func(a, b [2]int) int { return a[0] - b[0] })
	return out
}

// Unnamed returns question without the words that name the user (Person),
// possessive included ("did Alice have a problem with her chairs?" for user
// alice). Recall searches one user's memories, most of which name that
// user, so the name says nothing about which of them is meant; left in, it
// pulls the question towards the user's shortest memories. The question
// comes back composed (NFC), as stored memories are: "Café" typed with a
// combining accent searches as the one written precomposed.
func Unnamed(question string, who Person) string {
	question = norm.NFC.String(question)
	spans := who.spans(question)
	if len(spans) == 0 {
		return question
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(question[last:s[0]])
		last = s[1]
	}
	b.WriteString(question[last:])
	return strings.Join(strings.Fields(b.String()), " ")
}
