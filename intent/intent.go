// Package intent recognises questions about the user rather than about
// words: "tell me my preferences", "what do you know about me", "我还想要上次
// 那个风格", "按老规矩处理". Such a question shares no word with the memory it
// means; what it names is a kind of memory (a preference, a rule, a
// procedure) or a slot (answer_style, membership_expiry). DetectFor maps a
// question, in Chinese or English, to those kinds, slots and types; About
// tells whether a question asks about the user at all ("which firm am I
// with?"), whatever it names. The rules are pure and know nothing of any one
// user's data.
package intent

import (
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"mneme/period"
)

// Ask is what a question about the user asks for. A memory answers it when
// its slot (key) is one of Keys, or its kind one of Kinds, or, for a
// question about the user as a whole, its type one of Types.
type Ask struct {
	// Names are the intents recognised, for explain ("answer_style", …).
	Names []string
	Keys  []string
	Kinds []string
	Types []string
	// Topical is true when every intent recognised asks about a subject the
	// question names ("which rules apply to big orders?"): a memory of the
	// kind asked for answers only if it is also near the question.
	Topical bool
}

// Empty reports whether the question asks for no kind of memory.
func (a Ask) Empty() bool { return len(a.Keys)+len(a.Kinds)+len(a.Types) == 0 }

// Match says how well a memory answers the ask: 3 for its slot, 2 for its
// kind, 1 for its type, 0 not at all.
func (a Ask) Match(typ, kind, key string) int {
	switch {
	case key != "" && slices.Contains(a.Keys, key):
		return 3
	case kind != "" && slices.Contains(a.Kinds, kind):
		return 2
	case slices.Contains(a.Types, typ):
		return 1
	}
	return 0
}

// Memory types as the memory domain names them.
const (
	typeProfile    = "profile"
	typeSemantic   = "semantic"
	typeProcedural = "procedural"
)

// rule is one intent: cues that name it, and what it asks for. A cue is a
// phrase matched in the lower-cased question: English cues as whole words
// (a trailing '*' matches any ending), Chinese ones anywhere.
type rule struct {
	name  string
	cues  []string
	keys  []string
	kinds []string
	types []string
	// topical is true when the question names what it asks about, so that
	// only memories near it answer (Ask.Topical).
	topical bool
	// dealing is true for an intent that fires only when the question
	// speaks of one of the user's dealings (Dealing): "送到了吗" asks about
	// an order only as "那单手套送到了吗？".
	dealing bool
	// dealsWithSomeone is true for an intent that fires only when the
	// question speaks of someone else, or of contacting, answering or
	// serving someone (DealsWithSomeone).
	dealsWithSomeone bool
	// someones is true for an intent that fires only when the question
	// names the user or speaks of one person, the speaker or another
	// (Someones); "we" and "our" are the tenant.
	someones bool
	// periodic is true for an intent whose slots are bound to a period
	// (a budget): a question that names one ("the Q4 budget") asks for
	// the slot of that period, "budget_q4", as package extract keys it.
	periodic bool
	// broad is true for an intent that asks for a whole kind of memory
	// (every preference): beside an intent for one slot ("contact
	// preference", "how does she prefer her answers?") it adds nothing, as
	// the slot says which one is meant.
	broad bool
}

// ruleKinds are the kinds of memory that say how things are done.
var ruleKinds = []string{"rule", "how_to", "procedure"}

// usualCues ask for the usual way.
var usualCues = []string{
	"as usual", "the usual", "usual way", "same as always", "same as before", "same as last time", "like last time",
	"老规矩", "照旧", "照常", "按惯例", "惯例", "老办法", "按以前", "和以前一样", "跟以前一样", "老一套",
}

// rules are the intents. Each cue is a way people ask about that part of
// themselves, not a word of any stored memory: a question naming an order or
// a product is about words, and vector and full-text search serve it.
var rules = []rule{
	// How the user likes to be dealt with in words: the channel, the
	// language and the answers' style at once ("这位客户的沟通习惯").
	{name: "communication", keys: []string{"contact_channel", "language", "answer_style"}, cues: []string{
		"沟通习惯", "怎么沟通", "如何沟通", "沟通上", "沟通偏好", "communication style", "communication preference*", "how to communicate", "like to communicate",
		// How to answer someone is in which words and language, and where.
		"how should i answer", "how to answer", "how to reply", "how should we reply", "how should i reply", "how do i reply", "how should we answer",
		"沟通方式", "方式沟通", "怎么回她", "怎么回他", "方式回她", "方式回他",
	}},
	{name: "answer_style", keys: []string{"answer_style"}, cues: []string{
		"style", "tone", "format", "concise", "brief", "briefly", "shorter", "short answer*", "long answer*",
		"answers", "replies", "answer length", "how long should", "how detailed", "how much detail",
		"to the point", "get to the point", "straight to the point", "long-winded", "wordy", "verbose", "tl;dr", "tldr",
		"the way i like",
		"风格", "简洁", "简短", "简单点", "重点", "长篇", "啰嗦", "啰唆", "废话", "直接说", "说人话", "详细点", "详细一点",
		"怎么回复", "怎么回答", "回复方式", "回答方式", "语气", "上次那样", "老样子",
		"多详细", "详细程度", "写多少", "答复", "什么样的回答", "什么样的回复", "怎样的回答", "怎样的回复",
		"long explanation*", "detailed explanation*", "explanations", "chatty", "talkative",
		"keep it short", "keep it brief", "keep it simple", "long essay*", "essays", "long message*", "wall of text",
		"短一点", "长话短说", "别太长", "太长了",
		"cut to the chase", "分条", "分点", "回邮件", "回消息", "咋回", "replied to", "reply to her", "reply to him",
		"itemised", "itemized", "bullet point*", "paragraphs", "写多细", "多细", "写东西", "一句话",
		"every detail", "every last detail", "all the details", "nitty-gritty", "nitty gritty",
		"answer me", "reply to me",
	}},
	// What the user buys as a rule: the firm they buy for says it, and so
	// do their orders. Before the preferences, which would take "习惯" of
	// "下单习惯" for themselves.
	{name: "purchases", kinds: []string{"company", "order_status"}, cues: []string{
		"what goods", "what products", "usually buy", "usually order", "what do i buy", "what does she buy", "what does he buy", "what do they buy",
		// Not "usually get" alone: "how do you usually get hold of me?".
		"my usual", "normally get from", "usually get from", "usually gets", "normally gets", "what do i usually get", "what does she usually get",
		"what does he usually get", "what do they usually get", "normally buy", "normally order",
		"采购什么", "买什么东西", "主要买", "平时买", "都买什么", "一般买", "一般订", "订些什么", "买些什么",
		"buying habit*", "ordering habit*", "purchasing habit*", "下单习惯", "下单有什么习惯", "下单的习惯", "采购习惯", "订货习惯",
		"stock up on", "what she buys", "what he buys", "what they buy", "买些啥", "都买啥",
	}},
	// Preferences: all of them, unless a slot named beside them says which
	// one ("contact preference").
	{name: "preferences", kinds: []string{"preference"}, broad: true, cues: []string{
		"preference*", "prefer", "prefers", "preferred", "my likes", "what i like", "what do i like", "things i like",
		"my taste*", "my habit*", "how i like", "dislike*", "quirk*", "standing instruction*", "standing requirement*",
		"her habit*", "his habit*", "their habit*", "customer's habit*", "client's habit*", "buyer's habit*",
		"the way i normally like", "the way i usually like", "how i normally like", "how i usually like",
		"偏好", "喜好", "喜欢什么", "我喜欢", "习惯", "口味", "讨厌",
		"what have i asked you", "what did i ask you to", "asked you to", "my requests", "我的要求", "提过哪些要求", "提过什么要求", "提过啥要求", "说过哪些要求", "说过什么要求", "说过啥要求",
		"喜欢怎样", "喜欢怎么样", "平时喜欢", "特别的要求", "特殊要求", "特别要求", "特殊的要求",
	}},
	// What to mind with the user: all their preferences, even beside a
	// slot the question names ("anything to keep in mind before I reach
	// out to her?" asks for more than the contact channel), when the
	// question is about dealing with someone ("any heads up before I go to
	// the gym?" is not).
	{name: "guidance", kinds: []string{"preference"}, dealsWithSomeone: true, cues: []string{
		"keep in mind", "when dealing with", "deal with me", "likes to be handled", "like to be handled", "dealt with", "be treated", "picky", "fussy", "particular about", "i should know", "heads up", "heads-up", "watch out", "look out for", "be aware", "be careful", "good to know", "should i know", "should we know", "need to know",
		"打交道", "注意什么", "需要知道", "该知道", "应该知道", "注意些什么", "注意事项", "注意点", "要注意", "需要注意", "留意", "讲究", "忌讳", "须知", "来往", "雷区",
		"no-go", "no go", "does she mind", "does he mind", "do they mind", "mind being",
	}},
	// The user as a whole: their profile, and what they may spend, which
	// is as much a part of what is known of them.
	{name: "about_me", types: []string{typeProfile}, kinds: []string{"budget", "credit_limit"}, cues: []string{
		"about me", "know me", "my profile", "who am i", "remember about me", "remember me",
		"关于我", "了解我", "我的资料", "我的信息", "记了我", "记着我", "我哪些信息", "我什么信息", "我是谁", "记得我", "我的情况", "我的档案",
		"about myself", "on file", "know of me", "told you about me", "知道我", "对我了解", "对我的了解", "我的底细",
		"who she is", "who he is", "who they are", "rundown", "run-down", "overview", "fill me in", "brief me", "background on",
		"什么来头", "啥来头", "大概讲讲", "介绍一下",
		"got on me", "have on me", "have on file", "记下的", "帮我记", "让你们记", "掌握了",
		"notes on me", "notes on her", "notes on him", "notes on them", "lowdown", "low-down", "the scoop on",
		"profile", "profiles", "基本情况", "基本信息", "大致情况", "概况",
	}},
	// Someone's usual way: "按她的老规矩来", "do the usual for Alice", "same
	// as always for me" ask how that person likes things done. Before the
	// rules, which take the same words when no one is named.
	{name: "usual_for_someone", kinds: []string{"preference"}, broad: true, someones: true, cues: usualCues},
	// Rules the usual way: "as usual" names no subject, so every current
	// rule and procedure answers it.
	{name: "rules", kinds: ruleKinds, types: []string{typeProcedural}, cues: append([]string{"the drill", "standard way"}, usualCues...)},
	// Rules about something: asked by name ("which rules apply to big
	// orders?") or by what a rule settles (who approves, what is allowed,
	// how a case is handled, how a charge is worked out). Only rules near
	// the question answer it.
	{name: "rule_lookup", kinds: ruleKinds, types: []string{typeProcedural}, topical: true, cues: []string{
		"rule", "rules", "the rule*", "our rule*", "my rule*", "policy", "policies", "procedure*", "process",
		"regulation*", "guideline*", "requirement*", "allowed", "permitted", "approv*", "sign-off", "sign off", "signs off",
		"how do i handle", "how should i handle", "how to handle", "how do we handle", "what do i do when", "what should i do when", "what to do when",
		"规矩", "规则", "流程", "规定", "审批", "批准", "谁批", "允许", "制度", "规章", "怎么处理", "如何处理", "该怎么办", "怎么收", "收多少", "坏了怎么办", "损坏了怎么办", "破损了怎么办", "丢了怎么办", "丢件怎么办", "怎么算", "如何计算", "收费标准",
		// What a rule settles, said as people say it: who nods a big order
		// through, whether opened goods go back, what delivery costs.
		"点头", "拍板", "说了算", "还能退", "能退吗", "能不能退", "do we charge", "charge for",
		// Or the way a case is worked through.
		"playbook", "protocol", "sop", "what steps", "which steps", "steps do we", "steps to follow",
		"what happens if", "what happens when", "what happens", "what do you do if", "what do you do for", "what do we do if", "会怎样", "会怎么样",
		"what are the steps", "steps to", "how to do if", "how to do when", "what to do if", "what should i do if", "what do i do if",
		"what needs checking", "needs checking", "double-check", "double check", "what to check", "what should i check", "what should i verify", "what to verify", "what do i verify",
		"what do i offer", "what should i offer", "what can i offer", "what do we offer",
		"walk me through", "walk me thru", "talk me through",
		"要检查", "检查些什么", "检查什么", "要核对", "核对什么", "哪几步", "哪些步骤", "什么步骤", "几个步骤", "满多少", "可以退", "处理顺序", "什么顺序", "要查哪些", "查哪些", "怎么 handle", "怎么handle", "如何 handle",
	}},
	// What a word of the trade means here: a term defined ("华东包括哪几个
	// 省？", "what does a pallet order mean?"). Only definitions near the
	// question answer it.
	{name: "definition", kinds: []string{"definition"}, topical: true, cues: []string{
		"mean", "means", "meaning", "stand for", "stands for", "definition", "defined", "count as", "counts as", "what counts",
		"什么意思", "啥意思", "指的是", "指什么", "包括哪", "包含哪", "定义", "一托", "每托", "一箱", "每箱",
	}},
	{name: "membership", keys: []string{"membership_expiry", "membership"}, kinds: []string{"membership"}, cues: []string{
		"membership", "member", "members", "vip", "subscription", "subscribe*", "renew*", "tier", "loyalty", "status level", "my level", "perks", "lapse*",
		"会员", "会籍", "vip", "续费", "续期", "到期", "过期", "订阅", "等级", "有效期",
	}},
	// One order on its way (before contact, which would take "reach her" of
	// "did the order reach her already?"): whether or when one of the user's dealings
	// ships or arrives ("那单手套送到了吗？", "这批纸箱什么时候发？", "did the
	// paper shipment arrive?"). It asks for the order, not the delivery
	// preferences, and names which one ("手套"), often in the other
	// language than the order's memory: the user's orders nearest the
	// question answer.
	{name: "order_moves", kinds: []string{"order_status"}, topical: true, dealing: true, cues: []string{
		"arrive*", "arrival", "shipped", "dispatched", "delivered", "on its way", "on the way", "left the warehouse", "sent out", "gone out",
		"送到", "送达", "到了", "到货", "到没到", "发货", "出货", "发了", "发出", "寄出", "出库", "什么时候发", "发没发", "在路上",
		"送过去", "送过来", "运过去", "运过来", "出发", "发走",
		// Or why it has not: late, held up, pushed back.
		"late", "delayed", "delay", "held up", "running behind", "behind schedule", "pushed back", "stuck", "frozen", "still waiting",
		"晚了", "延误", "延迟", "耽误", "推迟", "卡住", "卡着", "还没到", "还没发",
		// Or where it got to, or whether it was called off.
		"leave the depot", "leaving the depot", "left the depot", "leave the warehouse", "leaving the warehouse", "reach her already", "reach him already", "reached her", "reached him", "reach her yet", "reach him yet",
		"call off", "called off", "calling off", "cancelled", "canceled", "取消了", "撤单", "撤回", "撤了",
		// Or whether it went through, and by which parcel number.
		"gone through", "go through yet", "waiting on", "on hold", "not moving",
		"tracking number", "tracking no", "tracking code", "快递号", "快递单号", "运单号", "追踪码", "物流单号", "单号是多少",
	}},
	// What the user called off, asked of no order in particular ("what did
	// she call off?"): the orders, the cancelled one among them. Before
	// contact, which would take "call" of "call off".
	{name: "cancellations", kinds: []string{"order_status"}, cues: []string{
		"call off", "called off", "calling off", "取消了哪", "取消了什么", "取消过哪", "取消过什么", "撤了哪",
	}},
	{name: "contact", keys: []string{"contact_channel"}, cues: []string{
		"contact*", "reach me", "reach her", "reach him", "reach them", "reach you", "be reached", "reach out", "way to reach", "get hold of", "call me", "phone me", "email me", "text me", "get in touch",
		"ring me", "ring her", "ring him", "ring them", "give her a ring", "give him a ring", "give me a ring", "write to her", "write to him", "write to me", "message her", "message him", "message me",
		"phone", "call", "email", "wechat", "ring", "rung", "hear from",
		"联系", "联络", "沟通", "电话", "邮件", "微信", "找我", "手机",
	}},
	{name: "language", keys: []string{"language"}, cues: []string{
		// Not "speak" alone: "speak soon" is a goodbye.
		"language", "in chinese", "in english", "in mandarin", "in cantonese", "which tongue", "speak chinese", "speak english", "speak mandarin",
		"speaks chinese", "speaks english", "speaks mandarin", "does she speak", "does he speak", "do they speak", "do i speak",
		"语言", "中文", "英文", "普通话", "粤语", "说什么话", "用什么话", "文字",
	}},
	// Budget: how much the user may spend, asked of them or of anyone.
	{name: "budget", keys: []string{"budget"}, kinds: []string{"budget", "credit_limit"}, periodic: true, cues: []string{
		"budget*", "spend", "spending", "spend limit", "spending cap", "spending limit", "afford", "how much money",
		"预算", "能花", "可以花", "花多少", "经费", "开支", "开销", "采购额", "额度",
		"credit limit", "credit line", "信用额度", "授信",
	}},
	// Delivery: where and when goods go, however the sending is named.
	{name: "delivery", keys: []string{"delivery_window", "delivery_address"}, cues: []string{
		"deliver*", "ship", "ship to", "shipping address", "ship-to", "address", "when to send", "where to send",
		"bring my stuff", "bring the goods", "bring my order", "send the goods", "send the order", "drop off", "drop stuff off", "drop things off", "drop it off", "send goods", "sending goods", "sending the goods", "dispatch to", "receiving", "receive the goods",
		"送货", "配送", "收货", "地址", "送到哪", "几点送", "寄到", "寄给", "发到哪", "发货到", "送到", "送去", "什么时候送",
		"truck", "trucks", "lorry", "lorries", "gate", "loading bay", "dock", "卸货", "drop parcels", "drop the parcels", "drop off parcels", "parcels at", "van arrive", "arrive at her", "arrive at his", "arrive at my", "arrive at their", "几点到", "要货",
		"shipping instruction*", "delivery instruction*", "drop-off*", "delivery slot*", "time slot*",
	}},
	{name: "invoice", keys: []string{"invoice_type", "invoice_schedule"}, kinds: []string{"invoice_preference"}, cues: []string{
		"invoice*", "billing", "billed", "be billed", "bill me", "bill us", "bill her", "bill him", "bill them", "receipt*", "fapiao",
		"发票", "开票", "票据",
	}},
	// Whether one of the user's dealings was paid ("上次那批纸的钱付了没有？",
	// "has the desk order been paid?"): the payments near the question.
	{name: "paid", kinds: []string{"payment"}, topical: true, dealing: true, cues: []string{
		"paid", "been paid", "paid for", "settled", "付了", "付清", "结清", "钱到了", "到账", "付过", "付款了", "付款没", "付没付", "已付款",
	}},
	{name: "payment", keys: []string{"payment_terms"}, kinds: []string{"payment_terms"}, cues: []string{
		"payment term*", "pay on", "pay us", "when do i pay", "when do we get paid", "credit term*",
		"settle a bill", "settle the bill", "settle bills", "settle invoices", "pay the bill", "pay bills", "pay by",
		"pays us", "pay you", "pays you", "pay on time", "pays on time", "paid on time", "how do they pay", "how does she pay", "how does he pay",
		"slow payer", "late payer", "good payer", "settling up", "settle up", "chase them", "chasing them", "chase her", "chase him",
		"owe", "owes", "owing", "账期", "付款", "结款", "月结", "结账", "结算", "结钱", "付钱", "打款", "回款", "结一次", "利索", "打一次款", "拖款", "拖欠", "拖过",
	}},
	// What the business makes on the user: the internal cost note, which
	// policy shows only to whom may read it.
	{name: "margin", keys: []string{"internal_cost"}, kinds: []string{"internal_cost"}, cues: []string{
		"profit*", "margin*", "how profitable", "利润", "毛利", "盈利", "赚",
		"make money", "making money", "make on", "making on", "earn on", "earning on", "decent money", "good money",
		"money on this", "money on her", "money on his", "money on him", "money on their", "money on them",
	}},
	// The user's money matters as a whole: what they may spend, pay,
	// were refunded and cost us.
	{name: "finances", kinds: []string{"budget", "credit_limit", "payment", "payment_terms", "refund", "internal_cost"}, cues: []string{
		"finances", "financials", "financial situation", "money matters", "财务", "财务状况", "资金情况",
	}},
	// Past conversations: what the user asked or said before, kept as
	// memories of the conversation.
	{name: "past_conversations", kinds: []string{"conversation", "inquiry", "question", "chat"}, cues: []string{
		"did i ask", "have i asked", "what did i ask", "what i asked", "i asked about", "did i mention", "have i mentioned",
		"did i say", "what did i say", "did i tell you", "we talked about", "we discussed", "did we talk", "did we discuss",
		"我问过", "我之前问", "我上次问", "上次我问", "我上次找", "上次找你们", "what i told you", "what did i tell you", "问过你", "我提过", "我说过", "聊过", "咨询过", "我们谈过", "我们讨论过",
	}},
	// Complaints: what the user was unhappy about, however it is said.
	{name: "complaints", kinds: []string{"complaint"}, cues: []string{
		"complain*", "unhappy", "upset", "angry", "annoyed", "dissatisfied", "not happy", "not satisfied", "frustrated",
		"投诉", "抱怨", "不满", "不高兴", "生气", "不开心", "不满意", "不太高兴", "不太满意", "不爽", "售后",
	}},
	// Refunds: what was given back to the user, however it is asked.
	{name: "refunds", kinds: []string{"refund"}, cues: []string{
		"refund*", "money back", "reimburs*", "money went back", "went back to the", "went back to him", "went back to her", "paid back", "gave back", "given back", "money returned", "退款", "退钱", "退了多少", "退过款", "退给", "返还",
	}},
	// Orders as a whole: the user's orders, however many; a question about
	// one order names it, and vector and full-text search serve it. A bare
	// 订单 asks about none ("xyz 123 订单").
	{name: "orders", kinds: []string{"order_status"}, cues: []string{
		"my orders", "her orders", "his orders", "their orders", "our orders", "recent orders", "past orders", "previous orders",
		"open orders", "order history", "purchase history", "what did i order", "what did she order", "what did he order",
		"what did they order", "what has she ordered", "what have i ordered", "what has he ordered",
		"我的订单", "她的订单", "他的订单", "客户的订单", "顾客的订单", "最近的订单", "历史订单", "以前的订单", "买过什么", "订过什么", "下过什么单", "订了些啥", "订了啥", "订了什么", "买了些啥",
		// Orders as people call them in a chat: "what's the status of my stuff".
		"my stuff", "anything of mine", "anything of hers", "anything of his", "anything of theirs", "我的货",
	}},
	{name: "company", kinds: []string{"company"}, cues: []string{
		"my company", "my employer", "employer", "occupation", "job title", "my title", "my position", "职位", "职务", "头衔", "which firm", "what firm", "my firm", "her firm", "his firm", "their firm", "our firm",
		"profession", "where do i work", "who do i work for", "which company", "work for", "works for", "who are they",
		"who is this customer", "who's this customer", "who is this client", "who's this client", "who is this buyer", "who's this buyer",
		"这位客户是谁", "这个客户是谁", "这位是谁", "是什么人",
		"管啥的", "管什么的", "负责什么", "负责啥",
		"works at", "work at", "for a living", "which outfit", "what outfit",
		// The user's name is cut out before the rules read: "where does Alice work?"
		// reads "where does work?".
		"where does she work", "where does he work", "where do they work", "where does work", "where she works", "where he works", "where they work",
		"her role", "his role", "their role", "her job", "his job",
		"what business", "which business", "my business", "organisation", "organization", "my workplace", "where i work",
		"which city", "what city", "based in", "where is she based", "where is he based", "where are they based", "where am i based",
		"公司", "单位", "在哪工作", "在哪上班", "高就", "做什么的", "做什么生意", "做啥生意", "什么行业", "哪个行业", "干什么的", "干啥的", "做啥的", "哪家厂", "哪个厂", "厂子", "哪个城市", "哪座城市", "所在城市",
	}},
}

// DetectFor returns what a question asked about who asks for; Empty when
// it is not one. who's name is cut out first (Unnamed); naming them, or
// asking as them, speaks of someone. A question naming another user asks for nothing of who's.
func DetectFor(question string, who Person) Ask {
	question = norm.NFC.String(question)
	if who.NamesOther(question) {
		return Ask{}
	}
	return detect(Unnamed(question, who), who.Asking || len(who.spans(question)) > 0)
}

func detect(text string, named bool) Ask {
	lower := " " + normalise(plain(text)) + " "
	var a Ask
	// Each rule reads what the rules before it left: "按老规矩处理" is the
	// usual way, not a lookup of 规矩.
	rest := lower
	var fired []rule
	for _, r := range rules {
		if !slices.ContainsFunc(r.cues, func(c string) bool { return has(rest, c) }) || r.dealing && !Dealing(text) || r.dealsWithSomeone && !DealsWithSomeone(text) || r.someones && !named && !Someones(text) {
			continue
		}
		for _, c := range r.cues {
			rest = cut(rest, c)
		}
		fired = append(fired, r)
	}
	if slices.ContainsFunc(fired, func(r rule) bool { return len(r.keys) > 0 }) {
		fired = slices.DeleteFunc(fired, func(r rule) bool { return r.broad })
	}
	topical := true
	for _, r := range fired {
		topical = topical && r.topical
		a.Names = append(a.Names, r.name)
		a.Keys = union(a.Keys, periodKeys(r, text))
		a.Kinds = union(a.Kinds, r.kinds)
		a.Types = union(a.Types, r.types)
	}
	a.Topical = topical && len(a.Names) > 0 && namesSubject(withoutPerson(rest))
	return a
}

// periodKeys are the slots r asks for: of the period the question names,
// when r is periodic and it names one ("What is the Q4 budget?" asks for
// budget_q4; the budgets of other periods, and one of no period, still
// answer by their kind). A question is read without a time: "next year's
// budget" names no period it could key.
func periodKeys(r rule, text string) []string {
	p := period.Of(text, time.Time{}).Key()
	if !r.periodic || p == "" {
		return r.keys
	}
	keys := make([]string, len(r.keys))
	for i, k := range r.keys {
		keys[i] = k + "_" + p
	}
	return keys
}

// withoutPerson blanks out the words that refer to the user ("she", "the
// customer", 客户): the person asked about is no subject of the question.
func withoutPerson(padded string) string {
	padded = person.ReplaceAllString(padded, " ")
	for _, w := range zhPerson {
		padded = strings.ReplaceAll(padded, w, " ")
	}
	return padded
}

// cut blanks out every occurrence of cue in the padded question, as has
// matches it.
func cut(padded, cue string) string {
	if !isASCII(cue) {
		return strings.ReplaceAll(padded, cue, " ")
	}
	stem, wild := strings.CutSuffix(cue, "*")
	if !wild {
		return strings.ReplaceAll(padded, " "+cue+" ", "  ")
	}
	for {
		i := strings.Index(padded, " "+stem)
		if i < 0 {
			return padded
		}
		from := i + 1 + len(stem)
		end := from + strings.IndexByte(padded[from:], ' ')
		padded = padded[:i] + " " + padded[end:]
	}
}

// namesSubject reports whether what is left of a question once its cues
// and the words for the user are cut out names something: "which rules
// apply to big orders?" does, "what are our rules?" and "有哪些规定？" do
// not.
func namesSubject(rest string) bool {
	for _, w := range strings.Fields(rest) {
		if isASCII(w) {
			if len(w) > 2 && !emptyWords[w] {
				return true
			}
			continue
		}
		for _, r := range w {
			if unicode.Is(unicode.Han, r) && !strings.ContainsRune(emptyHan, r) {
				return true
			}
		}
	}
	return false
}

// emptyWords and emptyHan are what a question says around a cue without
// naming a subject: question words, pronouns, auxiliaries, "tell me", "all".
var emptyWords = map[string]bool{
	"what": true, "what's": true, "whats": true, "which": true, "who": true, "how": true, "are": true, "was": true, "were": true,
	"the": true, "our": true, "your": true, "their": true, "you": true, "does": true, "did": true, "have": true, "has": true,
	"there": true, "any": true, "all": true, "tell": true, "about": true, "list": true, "show": true, "give": true, "for": true,
	"please": true, "can": true, "could": true, "would": true, "should": true, "know": true, "current": true, "here": true,
	"these": true, "those": true, "this": true, "that": true, "apply": true, "applies": true, "kind": true, "kinds": true, "some": true,
	"again": true, "now": true, "today": true, "exist": true, "get": true, "follow": true, "need": true, "remind": true,
}

const emptyHan = "的是什么哪些有吗呢我们你他她它请问告诉一下都个还能可以要这那么样啥现在目前当前所有全部具体和与跟"

// normalise lower-cases text and turns ASCII punctuation into spaces, so
// that English cues match as whole words.
func normalise(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r < 128 && !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == ';' || r == '\''):
			b.WriteByte(' ')
		case r == '’':
			b.WriteByte('\'')
		default:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// has reports whether the padded, normalised question holds cue: an ASCII
// cue as whole words ("prefer*" also matches "preferences"), any other
// anywhere.
func has(padded, cue string) bool {
	if !isASCII(cue) {
		return strings.Contains(padded, cue)
	}
	if stem, ok := strings.CutSuffix(cue, "*"); ok {
		return strings.Contains(padded, " "+stem)
	}
	return strings.Contains(padded, " "+cue+" ")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 128 {
			return false
		}
	}
	return true
}

func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}
