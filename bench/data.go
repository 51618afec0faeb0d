package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"mneme/memory"
)

// The generated tenant: customers of a B2B supplier, remembered by three
// kinds of agent. Content is English or Chinese from templates filled with
// products, cities, companies, order numbers and amounts, so that memories of
// one user differ in words and questions find some of them and not others.

// pair is one value in both languages.
type pair struct{ en, zh string }

var (
	products = []pair{
		{"industrial printers", "工业打印机"}, {"label printers", "标签打印机"}, {"barcode scanners", "扫码枪"},
		{"thermal paper", "热敏纸"}, {"ink cartridges", "墨盒"}, {"office chairs", "办公椅"},
		{"standing desks", "升降桌"}, {"LED panels", "LED面板"}, {"safety gloves", "劳保手套"},
		{"packing tape", "封箱胶带"}, {"laptops", "笔记本电脑"}, {"monitors", "显示器"},
		{"routers", "路由器"}, {"air purifiers", "空气净化器"}, {"coffee machines", "咖啡机"},
	}
	cities = []pair{
		{"Shanghai", "上海"}, {"Hangzhou", "杭州"}, {"Suzhou", "苏州"}, {"Beijing", "北京"},
		{"Shenzhen", "深圳"}, {"Guangzhou", "广州"}, {"Nanjing", "南京"}, {"Chengdu", "成都"},
		{"Wuhan", "武汉"}, {"Hefei", "合肥"},
	}
	givenNames  = []string{"Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace", "Henry", "Iris", "Jack", "Kevin", "Lily", "Mia", "Nora", "Oscar", "Peter"}
	familyNames = []pair{
		{"Wang", "王"}, {"Li", "李"}, {"Zhang", "张"}, {"Liu", "刘"}, {"Chen", "陈"},
		{"Yang", "杨"}, {"Zhao", "赵"}, {"Huang", "黄"}, {"Zhou", "周"}, {"Wu", "吴"},
	}
	zhGiven       = []string{"伟", "芳", "娜", "敏", "静", "磊", "洋", "艳", "勇", "杰", "涛", "明"}
	companyStems  = []pair{{"Jinda", "金达"}, {"Huaxin", "华信"}, {"Dongfang", "东方"}, {"Hengtai", "恒泰"}, {"Xinyuan", "鑫源"}, {"Tianrun", "天润"}, {"Ruifeng", "瑞丰"}, {"Boya", "博雅"}}
	companyTrades = []pair{{"Trading", "贸易"}, {"Technology", "科技"}, {"Logistics", "物流"}, {"Manufacturing", "制造"}, {"Retail", "零售"}}
	channels      = []pair{{"email", "邮件"}, {"phone", "电话"}, {"WeChat", "微信"}}
	answerStyles  = []pair{
		{"short answers of two or three sentences", "简短的回复，两三句话即可"},
		{"detailed answers with the numbers spelled out", "详细的回复，把数字都写清楚"},
	}
	languages = []pair{{"Chinese", "中文"}, {"English", "英文"}}
)

// tmpl is one kind of memory. Placeholders in braces are filled per memory:
// {name} {company} {product} {city} {order} {qty} {amount} {n} {pct} {date}
// {date2} {channel} {style} {language}.
type tmpl struct {
	typ, kind, key string
	// sens fixes the sensitivity; "" draws it from the tenant's mix.
	sens   string
	en, zh string
}

var templates = []tmpl{
	// Episodic: what happened.
	{typ: memory.TypeEpisodic, kind: "order_status",
		en: "Order {order} for {qty} {product} was placed on {date}; delivery to the {city} warehouse is expected by {date2}.",
		zh: "订单{order}：{qty}件{product}，{date}下单，发往{city}仓库，预计{date2}到货。"},
	{typ: memory.TypeEpisodic, kind: "delivery",
		en: "The shipment of {product} for order {order} was delayed by {n} days because of bad weather near {city}.",
		zh: "订单{order}的{product}因{city}附近天气原因延迟{n}天发货。"},
	{typ: memory.TypeEpisodic, kind: "complaint",
		en: "{name} complained that the {product} in order {order} arrived damaged; we promised a replacement within {n} days.",
		zh: "{name}投诉订单{order}中的{product}到货破损，已承诺{n}天内换货。"},
	{typ: memory.TypeEpisodic, kind: "refund",
		en: "A refund of {amount} yuan for order {order} ({product}) was approved and paid on {date}.",
		zh: "订单{order}（{product}）退款{amount}元已审批，{date}付款。"},
	{typ: memory.TypeEpisodic, kind: "conversation",
		en: "On {date} {name} asked for a quotation for {qty} {product} delivered to {city}.",
		zh: "{date}{name}询问{qty}件{product}送到{city}的报价。"},
	// Semantic: facts about the customer.
	{typ: memory.TypeSemantic, kind: "rule", key: "payment_terms",
		en: "Payment terms for {company}: net {n} days; invoices go to the finance team in {city}.",
		zh: "{company}的账期为{n}天，发票寄往{city}财务部。"},
	{typ: memory.TypeSemantic, kind: "definition", key: "credit_limit", sens: memory.SensitivityConfidential,
		en: "{company} has a credit limit of {amount} yuan; orders above it need manager approval.",
		zh: "{company}授信额度为{amount}元，超出部分需要经理审批。"},
	{typ: memory.TypeSemantic, kind: "rule",
		en: "{company} gets a {pct}% discount on {product} orders of more than {qty} units.",
		zh: "{company}采购{product}超过{qty}件享受{pct}%折扣。"},
	{typ: memory.TypeSemantic, kind: "definition",
		en: "{company} runs a warehouse in {city} that receives deliveries Monday to Friday.",
		zh: "{company}在{city}有仓库，周一至周五收货。"},
	// Procedural: how to serve this customer.
	{typ: memory.TypeProcedural, kind: "rule",
		en: "When {name} asks about order status, check the logistics system first and reply with the tracking number.",
		zh: "{name}询问订单进度时，先查物流系统，再回复快递单号。"},
	{typ: memory.TypeProcedural, kind: "rule",
		en: "Orders of {product} above {amount} yuan must be approved by the regional manager in {city} before shipping.",
		zh: "{product}订单金额超过{amount}元时，发货前需要{city}区域经理审批。"},
	{typ: memory.TypeProcedural, kind: "rule",
		en: "For urgent orders from {company}, offer express delivery and confirm the address by {channel}.",
		zh: "{company}的加急订单，提供快递配送，并通过{channel}确认地址。"},
	{typ: memory.TypeProcedural, kind: "rule",
		en: "Refunds under {amount} yuan for {name} can be approved directly; larger refunds go to finance.",
		zh: "{name}的退款低于{amount}元可直接批准，更大的金额转财务处理。"},
	// Profile: who the customer is. Keyed slots supersede each other.
	{typ: memory.TypeProfile, kind: "preference", key: "budget", sens: memory.SensitivityConfidential,
		en: "{name}'s monthly budget for {product} is {amount} yuan.",
		zh: "{name}每月{product}采购预算为{amount}元。"},
	{typ: memory.TypeProfile, kind: "preference", key: "answer_style",
		en: "{name} prefers {style}.",
		zh: "{name}喜欢{style}。"},
	{typ: memory.TypeProfile, kind: "preference", key: "contact_channel",
		en: "{name} wants to be contacted by {channel} during working hours.",
		zh: "{name}希望在工作时间通过{channel}联系。"},
	{typ: memory.TypeProfile, kind: "preference", key: "language",
		en: "{name} prefers to communicate in {language}.",
		zh: "{name}习惯用{language}沟通。"},
	{typ: memory.TypeProfile, kind: "address", key: "delivery_city",
		en: "{name}'s default delivery address is the {company} office in {city}.",
		zh: "{name}的默认收货地址是{company}在{city}的办公室。"},
	{typ: memory.TypeProfile, kind: "preference",
		en: "{name} likes {product} from domestic brands and asks for samples before large orders.",
		zh: "{name}偏好国产品牌的{product}，大批量下单前会要求样品。"},
}

// typeWeights is the share of each memory type, in percent.
var typeWeights = []struct {
	typ    string
	weight int
}{
	{memory.TypeEpisodic, 40}, {memory.TypeSemantic, 20}, {memory.TypeProcedural, 15}, {memory.TypeProfile, 25},
}

// questions are what agents ask before they answer a user; the same
// placeholders as the templates.
var questions = []pair{
	{"What is {name}'s budget for {product}?", "这个客户的{product}预算是多少？"},
	{"When will order {order} arrive in {city}?", "订单{order}什么时候到{city}？"},
	{"How does the customer prefer to be contacted?", "客户喜欢用什么方式联系？"},
	{"What are the payment terms and the credit limit of {company}?", "{company}的账期和授信额度是多少？"},
	{"Were there delayed shipments to {city}?", "发往{city}的货物有延迟吗？"},
	{"Should my reply be short or detailed?", "回复这个客户要简短还是详细？"},
	{"Was the refund for the {product} order paid?", "{product}订单的退款付了吗？"},
	{"Who must approve a large {product} order?", "大额{product}订单需要谁审批？"},
	{"Does {company} get a discount on {product}?", "{company}采购{product}有折扣吗？"},
	{"Which language does the customer speak?", "客户用什么语言沟通？"},
	{"Any complaints about damaged {product}?", "有没有关于{product}破损的投诉？"},
	{"Where should we deliver the next order?", "下一批货送到哪里？"},
}

// user is one generated customer.
type user struct {
	id      string
	name    pair
	company pair
	city    pair // home city: most of the user's memories mention it
	zh      bool // writes and is written about mostly in Chinese
	orders  []string
}

// generator makes the tenant's users, memories and questions from one seed.
type generator struct {
	rng    *rand.Rand
	tenant string
	agents int
	start  time.Time // the oldest memory
	span   time.Duration
	order  int // last order number handed out
}

func newGenerator(seed uint64, tenant string, agents int, now time.Time) *generator {
	const span = 180 * 24 * time.Hour
	return &generator{
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), tenant: tenant, agents: agents,
		start: now.Add(-span), span: span, order: 100000,
	}
}

func (g *generator) pick(n int) int { return g.rng.IntN(n) }

func (g *generator) users(n int) []*user {
	out := make([]*user, n)
	for i := range out {
		fam := familyNames[g.pick(len(familyNames))]
		stem, trade := companyStems[g.pick(len(companyStems))], companyTrades[g.pick(len(companyTrades))]
		out[i] = &user{
			id:      fmt.Sprintf("user-%03d", i),
			name:    pair{givenNames[g.pick(len(givenNames))] + " " + fam.en, fam.zh + zhGiven[g.pick(len(zhGiven))]},
			company: pair{stem.en + " " + trade.en, stem.zh + trade.zh},
			city:    cities[g.pick(len(cities))],
			zh:      g.rng.Float64() < 0.4,
		}
	}
	return out
}

// memories returns the memories of u, count of them, oldest first, without
// embeddings.
func (g *generator) memories(u *user, count int) []memory.Memory {
	out := make([]memory.Memory, count)
	step := g.span / time.Duration(count+1)
	for i := range out {
		t := g.template()
		at := g.start.Add(step*time.Duration(i+1) + time.Duration(g.rng.Int64N(int64(step)))).UTC().Truncate(time.Millisecond)
		content, entities := g.fill(u, t, i, u.zh == (g.rng.Float64() < 0.85), at)
		sens := t.sens
		if sens == "" {
			sens = g.sensitivity()
		}
		agent := g.pick(g.agents)
		out[i] = memory.Memory{
			ID: memory.NewID("mem"), Tenant: g.tenant, UserID: u.id, AgentID: agentID(agent),
			SessionID: fmt.Sprintf("s-%s-%03d", u.id, i/8), Type: t.typ, Kind: t.kind, Key: t.key,
			Content: content, Status: memory.StatusActive, Sensitivity: sens,
			Importance: float64(3+g.pick(7)) / 10, Confidence: float64(7+g.pick(4)) / 10, Source: "bench",
			Entities: entities, ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1,
		}
	}
	return out
}

func agentID(i int) string { return "agent-" + strconv.Itoa(i) }

// template draws a template: a type by typeWeights, then one of its templates.
func (g *generator) template() tmpl {
	r := g.pick(100)
	typ := typeWeights[len(typeWeights)-1].typ
	for _, tw := range typeWeights {
		if r < tw.weight {
			typ = tw.typ
			break
		}
		r -= tw.weight
	}
	var of []tmpl
	for _, t := range templates {
		if t.typ == typ {
			of = append(of, t)
		}
	}
	return of[g.pick(len(of))]
}

// sensitivity draws from the tenant's mix: mostly internal.
func (g *generator) sensitivity() string {
	switch r := g.pick(100); {
	case r < 10:
		return memory.SensitivityPublic
	case r < 80:
		return memory.SensitivityInternal
	case r < 95:
		return memory.SensitivityConfidential
	default:
		return memory.SensitivityRestricted
	}
}

// fill writes one memory's content from t in English or Chinese and lists
// the entities it mentions.
func (g *generator) fill(u *user, t tmpl, i int, zh bool, at time.Time) (string, []memory.Entity) {
	text := t.en
	if zh {
		text = t.zh
	}
	product := products[g.pick(len(products))]
	city := u.city
	if g.rng.Float64() < 0.4 {
		city = cities[g.pick(len(cities))]
	}
	var order string
	if strings.Contains(text, "{order}") {
		if t.kind == "order_status" || len(u.orders) == 0 {
			g.order++
			order = "SO-" + strconv.Itoa(g.order)
			u.orders = append(u.orders, order)
		} else {
			order = u.orders[g.pick(len(u.orders))]
		}
	}
	date, date2 := at.Add(-time.Duration(g.pick(72))*time.Hour), at.Add(time.Duration(2+g.pick(12))*24*time.Hour)
	lang := func(p pair) string {
		if zh {
			return p.zh
		}
		return p.en
	}
	day := func(d time.Time) string {
		if zh {
			return fmt.Sprintf("%d月%d日", d.Month(), d.Day())
		}
		return d.Format("2 January")
	}
	content := strings.NewReplacer(
		"{name}", lang(u.name), "{company}", lang(u.company), "{product}", lang(product),
		"{city}", lang(city), "{order}", order, "{qty}", strconv.Itoa(10*(1+g.pick(50))),
		"{amount}", strconv.Itoa(1000*(5+g.pick(496))), "{n}", strconv.Itoa(3+g.pick(58)),
		"{pct}", strconv.Itoa(3+g.pick(13)), "{date}", day(date), "{date2}", day(date2),
		"{channel}", lang(channels[g.pick(len(channels))]), "{style}", lang(answerStyles[g.pick(len(answerStyles))]),
		"{language}", lang(languages[g.pick(len(languages))]),
	).Replace(text)

	var entities []memory.Entity
	if order != "" {
		entities = append(entities, memory.Entity{ID: "order:" + order, Kind: "order", Name: order})
	}
	if strings.Contains(text, "{product}") {
		entities = append(entities, memory.Entity{ID: "product:" + slug(product.en), Kind: "product", Name: product.en})
	}
	if strings.Contains(text, "{company}") {
		entities = append(entities, memory.Entity{ID: "company:" + slug(u.company.en), Kind: "company", Name: u.company.en})
	}
	return content, entities
}

// question draws a question an agent might ask about u.
func (g *generator) question(u *user) string {
	q := questions[g.pick(len(questions))]
	text := q.en
	zh := u.zh == (g.rng.Float64() < 0.85)
	if zh {
		text = q.zh
	}
	lang := func(p pair) string {
		if zh {
			return p.zh
		}
		return p.en
	}
	order := "SO-" + strconv.Itoa(100001+g.pick(max(g.order-100000, 1)))
	if len(u.orders) > 0 && g.rng.Float64() < 0.8 {
		order = u.orders[g.pick(len(u.orders))]
	}
	city := u.city
	if g.rng.Float64() < 0.3 {
		city = cities[g.pick(len(cities))]
	}
	return strings.NewReplacer(
		"{name}", lang(u.name), "{company}", lang(u.company), "{product}", lang(products[g.pick(len(products))]),
		"{city}", lang(city), "{order}", order,
	).Replace(text)
}

func slug(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") }
