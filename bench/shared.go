package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"mneme/memory"
)

// The tenant's shared knowledge: the company's rules and definitions, its
// teams' procedures and its agents' own procedures, on the subjects the
// questions ask about (approvals, payment terms, refunds, delays, damaged
// goods, languages, replies), so that recall has to rank them against the
// user's memories rather than skip them as unrelated.

// recallerTeam is the team of the recalling agent: it reads this team's
// knowledge and not the other teams'.
const recallerTeam = "support"

// otherTeams write knowledge the recaller may not read.
var otherTeams = []string{"orders", "finance", "logistics"}

// sharedTmpl is one kind of shared memory, with the placeholders of tmpl plus
// {n2}; key, when set, is filled like the content and makes later memories
// of the same key supersede earlier ones.
type sharedTmpl struct {
	scope, typ, kind, key string
	trigger               pair // a trigger entity, when the procedure has one
	en, zh                string
}

var sharedTemplates = []sharedTmpl{
	// The tenant's rules and definitions.
	{scope: memory.ScopeTenant, typ: memory.TypeSemantic, kind: "rule", key: "approval_threshold:{product}:{city}",
		en: "Orders of {product} to {city} above {amount} yuan need approval from the finance manager before they ship.",
		zh: "发往{city}的{product}订单金额超过{amount}元，发货前需要财务经理审批。"},
	{scope: memory.ScopeTenant, typ: memory.TypeSemantic, kind: "rule",
		en: "Standard payment terms for new customers in {city} are net {n} days, with a first credit limit of {amount} yuan.",
		zh: "{city}新客户的标准账期为{n}天，初始授信额度为{amount}元。"},
	{scope: memory.ScopeTenant, typ: memory.TypeSemantic, kind: "rule",
		en: "Refunds for {product} above {amount} yuan are paid only after finance approves them, within {n} working days.",
		zh: "{product}超过{amount}元的退款需财务审批后付款，{n}个工作日内完成。"},
	{scope: memory.ScopeTenant, typ: memory.TypeSemantic, kind: "rule",
		en: "Discounts above {pct}% on {product} orders of more than {qty} units need approval from the sales director.",
		zh: "{product}订单超过{qty}件时，折扣超过{pct}%需要销售总监批准。"},
	{scope: memory.ScopeTenant, typ: memory.TypeSemantic, kind: "definition",
		en: "Deliveries to {city} leave from the regional warehouse and take {n} days on average; {product} ships separately.",
		zh: "发往{city}的货物从区域仓库发出，平均{n}天到达；{product}单独发货。"},
	{scope: memory.ScopeTenant, typ: memory.TypeProcedural, kind: "rule",
		en: "When a shipment to {city} is delayed by more than {n} days, tell the customer by {channel} and offer express delivery on the next {product} order.",
		zh: "发往{city}的货物延迟超过{n}天时，通过{channel}通知客户，并为下一笔{product}订单提供快递配送。"},
	// A team's procedures and rules.
	{scope: memory.ScopeTeam, typ: memory.TypeProcedural, kind: "procedure", trigger: pair{"damaged", "破损"},
		en: "For a complaint about damaged {product} from {city}: ask for photos, open a replacement order and reply within {n} hours.",
		zh: "{city}客户投诉{product}破损时：先要照片，再开换货单，{n}小时内回复。"},
	{scope: memory.ScopeTeam, typ: memory.TypeProcedural, kind: "procedure",
		en: "To answer when an order of {product} arrives in {city}, look up its tracking number in the logistics system and reply with the expected date within {n} minutes.",
		zh: "回答{product}订单何时到{city}时，先在物流系统查快递单号，{n}分钟内回复预计到货日期。"},
	{scope: memory.ScopeTeam, typ: memory.TypeProcedural, kind: "procedure",
		en: "Before quoting {qty} {product}, check the stock of the {city} warehouse and the customer's credit limit of at least {amount} yuan.",
		zh: "报价{qty}件{product}前，先查{city}仓库库存，并确认客户授信额度不低于{amount}元。"},
	{scope: memory.ScopeTeam, typ: memory.TypeSemantic, kind: "rule",
		en: "Customers of the {city} region are answered in their own language; when it is unknown, in {language} first, within {n} minutes.",
		zh: "{city}地区的客户用其自己的语言回复；不清楚时先用{language}，{n}分钟内回复。"},
	{scope: memory.ScopeTeam, typ: memory.TypeSemantic, kind: "rule",
		en: "Contact customers in {city} by {channel} during working hours, at most {n} times a week, unless their profile says otherwise.",
		zh: "除非客户资料另有说明，工作时间通过{channel}联系{city}的客户，每周最多{n}次。"},
	// An agent's own procedures.
	{scope: memory.ScopeAgent, typ: memory.TypeProcedural, kind: "procedure",
		en: "When a customer in {city} asks whether the reply should be short or detailed, read their answer style first; by default give {style}, within {n} lines.",
		zh: "{city}的客户问回复要简短还是详细时，先看其回复偏好；默认给{style}，不超过{n}行。"},
	{scope: memory.ScopeAgent, typ: memory.TypeProcedural, kind: "procedure",
		en: "When asked about a refund for {product}, check the refund ledger and quote the payment date; refunds above {amount} yuan go to finance.",
		zh: "被问到{product}退款时，先查退款台账再告知付款日期；超过{amount}元的退款转财务。"},
	{scope: memory.ScopeAgent, typ: memory.TypeProcedural, kind: "procedure",
		en: "When asked where to deliver the next order of {product}, confirm the default address in {city} by {channel} before booking the shipment.",
		zh: "客户问下一批{product}送到哪里时，先通过{channel}确认{city}的默认地址再安排发货。"},
	{scope: memory.ScopeAgent, typ: memory.TypeProcedural, kind: "procedure",
		en: "When a customer asks about their budget for {product}, quote it only after checking the latest budget memory of the last {n} days.",
		zh: "客户询问{product}预算时，先查最近{n}天的预算记录再回复。"},
}

// sharedMix is the share of each place of shared knowledge, in percent:
// the tenant's, the recaller's team's, other teams', and agents' own.
var sharedMix = []struct {
	place  string
	weight int
}{
	{placeTenant, 30}, {placeOwnTeam, 20}, {placeOtherTeam, 30}, {placeAgent, 20},
}

const (
	placeTenant    = "tenant"
	placeOwnTeam   = "own-team"
	placeOtherTeam = "other-team"
	placeAgent     = "agent"
)

// sharedMemory is one memory of shared knowledge and who writes it: an
// admin the tenant's and the teams', an agent its own procedures, as the
// write policy wants.
type sharedMemory struct {
	writer string // "" for the admin, else the agent's id
	memory memory.NewMemory
}

// sharedKnowledge generates n memories of shared knowledge for agents
// agents, the same for the same seed. Their keys, where they have one,
// supersede in the order returned.
func sharedKnowledge(seed uint64, n, agents int) []sharedMemory {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	pick := func(n int) int { return rng.IntN(n) }
	out := make([]sharedMemory, n)
	for i := range out {
		place := drawPlace(pick(100))
		t := sharedTemplateOf(place, pick)
		var ref memory.ScopeRef
		var writer string
		switch place {
		case placeTenant:
			ref = memory.ScopeRef{Kind: memory.ScopeTenant}
		case placeOwnTeam:
			ref = memory.ScopeRef{Kind: memory.ScopeTeam, ID: recallerTeam}
		case placeOtherTeam:
			ref = memory.ScopeRef{Kind: memory.ScopeTeam, ID: otherTeams[pick(len(otherTeams))]}
		case placeAgent:
			writer = agentID(pick(agents))
			ref = memory.ScopeRef{Kind: memory.ScopeAgent, ID: writer}
		}
		content, key, entities := fillShared(t, rng.Float64() < 0.4, pick)
		importance := float64(5+pick(5)) / 10
		out[i] = sharedMemory{writer: writer, memory: memory.NewMemory{
			Scope: &ref, Type: t.typ, Kind: t.kind, Key: key, Content: content,
			Sensitivity: sharedSensitivity(pick(100)), Importance: &importance,
			Source: "bench", Entities: entities, IdempotencyKey: "bench-shared-" + strconv.Itoa(i),
		}}
	}
	return out
}

// drawPlace maps r in [0, 100) to a place by sharedMix.
func drawPlace(r int) string {
	for _, m := range sharedMix {
		if r < m.weight {
			return m.place
		}
		r -= m.weight
	}
	return sharedMix[len(sharedMix)-1].place
}

// sharedTemplateOf draws one template of the place's scope.
func sharedTemplateOf(place string, pick func(int) int) sharedTmpl {
	scope := map[string]string{
		placeTenant: memory.ScopeTenant, placeOwnTeam: memory.ScopeTeam,
		placeOtherTeam: memory.ScopeTeam, placeAgent: memory.ScopeAgent,
	}[place]
	var of []sharedTmpl
	for _, t := range sharedTemplates {
		if t.scope == scope {
			of = append(of, t)
		}
	}
	return of[pick(len(of))]
}

// sharedSensitivity maps r in [0, 100) to a sensitivity: shared knowledge
// is mostly internal, some of it public, a little confidential.
func sharedSensitivity(r int) string {
	switch {
	case r < 20:
		return memory.SensitivityPublic
	case r < 90:
		return memory.SensitivityInternal
	default:
		return memory.SensitivityConfidential
	}
}

// fillShared writes one memory of t in English or Chinese, with its key
// and the entities it mentions.
func fillShared(t sharedTmpl, zh bool, pick func(int) int) (string, string, []memory.Entity) {
	lang := func(p pair) string {
		if zh {
			return p.zh
		}
		return p.en
	}
	product, city := products[pick(len(products))], cities[pick(len(cities))]
	fill := strings.NewReplacer(
		"{product}", lang(product), "{city}", lang(city),
		"{qty}", strconv.Itoa(10*(1+pick(50))), "{amount}", strconv.Itoa(1000*(5+pick(496))),
		"{n}", strconv.Itoa(2+pick(59)), "{pct}", strconv.Itoa(3+pick(13)),
		"{channel}", lang(channels[pick(len(channels))]), "{style}", lang(answerStyles[pick(len(answerStyles))]),
		"{language}", lang(languages[pick(len(languages))]),
	)
	text := lang(pair{t.en, t.zh})
	var entities []memory.Entity
	if strings.Contains(text, "{product}") {
		entities = append(entities, memory.Entity{ID: "product:" + slug(product.en), Kind: "product", Name: product.en})
	}
	if t.trigger != (pair{}) {
		name := lang(t.trigger)
		entities = append(entities, memory.Entity{ID: "trigger:" + name, Kind: "trigger", Name: name})
	}
	// A key names its slot in English whatever the language, so that both
	// languages of a rule share it.
	key := strings.NewReplacer("{product}", slug(product.en), "{city}", slug(city.en)).Replace(t.key)
	return fill.Replace(text), key, entities
}

// sharedSuperseded counts the keyed memories of ms that a later one of the
// same slot (scope, scope id, key) replaces.
func sharedSuperseded(ms []sharedMemory) int {
	seen := map[string]bool{}
	n := 0
	for _, s := range ms {
		m := s.memory
		if m.Key == "" {
			continue
		}
		slot := fmt.Sprintf("%s\x00%s\x00%s", m.Scope.Kind, m.Scope.ID, m.Key)
		if seen[slot] {
			n++
		}
		seen[slot] = true
	}
	return n
}
