package eval

import (
	"fmt"
	"time"

	"mneme/memory"
	"mneme/seed"
)

// GeneratedUsers is how many users Generate makes.
const GeneratedUsers = 40

// Generate returns the larger evaluation dataset. It is a pure function of
// nothing: every value comes from the user's index, so the refs the
// questions name (u07-budget-v3, …) always mean the same memory. Each user
// has the same kinds of memories as every other, with other values — the
// distractors a question about one user must never bring back — plus
// superseded versions of their answer style and budget, an agent's guess that
// stays a candidate, small talk no question is about, and a confidential
// internal-cost note that only the finance agent may read.
func Generate() *seed.Dataset {
	ds := &seed.Dataset{
		Tenant: "generated",
		Agents: []seed.Agent{{ID: "support-bot", Team: "support"}, {ID: "order-bot", Team: "orders"}, {ID: "finance-bot", Team: "finance"}},
		Grants: []memory.Grant{
			{ID: "gen-grant-support-reads-orders", Grantee: "support-bot", Source: "order-bot",
				Types: []string{memory.TypeEpisodic, memory.TypeSemantic}, Kinds: []string{"order_status", "rule", "definition"},
				MaxSensitivity: memory.SensitivityInternal, CreatedAt: genStart},
			{ID: "gen-grant-orders-reads-support-profile", Grantee: "order-bot", Source: "support-bot",
				Types: []string{memory.TypeProfile}, MaxSensitivity: memory.SensitivityInternal, CreatedAt: genStart},
		},
	}
	for i := range GeneratedUsers {
		u := genUser(i)
		ds.Users = append(ds.Users, seed.User{ID: u.id, Name: u.name})
		ds.Memories = append(ds.Memories, u.memories()...)
	}
	return ds
}

var genStart = time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)

var (
	genNames = []string{"Olivia Lin", "Ethan Zhou", "Mia Xu", "Lucas Huang", "Emma Sun", "Noah Guo", "Ava He", "Liam Ma",
		"Sophia Luo", "Mason Zheng", "Isabella Liang", "James Song", "Amelia Tang", "Benjamin Han", "Harper Feng",
		"Elijah Cao", "Evelyn Deng", "Henry Peng", "Abigail Jiang", "Daniel Yuan"}
	genCompanies = []string{"Northwind Tools", "Bluepeak Textiles", "Redstone Pharma", "Silverline Foods", "Greenfield Print",
		"Goldleaf Hotels", "Ironbridge Motors", "Brightwater Labs", "Cedar Logistics", "Maplewood Schools"}
	genCities    = []string{"Hangzhou", "Suzhou", "Shanghai", "Nanjing", "Ningbo", "Wuxi", "Hefei", "Changzhou"}
	genCitiesZh  = []string{"杭州", "苏州", "上海", "南京", "宁波", "无锡", "合肥", "常州"}
	genProducts  = []string{"office chairs", "A4 copy paper", "packing tape", "safety gloves", "printer toner", "cardboard boxes", "LED desk lamps", "steel shelves"}
	genProductZh = []string{"办公椅", "复印纸", "封箱胶带", "防护手套", "打印机墨盒", "纸箱", "台灯", "钢制货架"}
	// Answer styles; a user's later style supersedes the earlier one.
	genStyles = []string{
		"%s prefers short answers: one or two sentences, no background.",
		"%s wants detailed answers with exact dates and tracking numbers.",
		"%s likes answers as a bullet list, one point per line.",
		"%s 希望回复简洁，直接给结论。",
		"%s 喜欢详细的回复，最好附上单号和日期。",
	}
	genContacts = []string{
		"%s wants to be contacted by email only, never by phone.",
		"%s prefers phone calls to the office line and no calls after 6 pm.",
		"%s 更喜欢通过微信联系，不要打电话。",
		"%s 只接受邮件沟通，电话一律不接。",
	}
)

type genPerson struct {
	i                   int
	id, name, first     string
	company, city, cZh  string
	product, productZh  string
	firstOrder, second  int
	style1, style2      int // style2 < 0: the style never changed
	budgets             int // number of budget versions, 1–3
	contact             int
	margin, paymentDays int
}

func genUser(i int) genPerson {
	name := genNames[i%len(genNames)]
	if i >= len(genNames) {
		name += " Jr."
	}
	first := name[:indexByte(name, ' ')]
	p := genPerson{
		i: i, id: fmt.Sprintf("u%02d", i+1), name: name, first: first,
		company: genCompanies[i%len(genCompanies)] + fmt.Sprintf(" %d", 1+i/len(genCompanies)),
		city:    genCities[i%len(genCities)], cZh: genCitiesZh[i%len(genCitiesZh)],
		product: genProducts[i%len(genProducts)], productZh: genProductZh[(i+3)%len(genProductZh)],
		firstOrder: 3000 + 10*(i+1) + 1, second: 3000 + 10*(i+1) + 2,
		style1: i % len(genStyles), style2: (i + 2) % len(genStyles),
		budgets: 1 + i%3, contact: i % len(genContacts),
		margin: 8 + i%11, paymentDays: []int{30, 45, 60}[i%3],
	}
	if i%3 == 0 {
		p.style2 = -1
	}
	return p
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}

// memories returns the user's memories in the order they happened, so that
// later versions supersede earlier ones when loaded.
func (p genPerson) memories() []seed.Memory {
	var out []seed.Memory
	day := 0
	add := func(suffix, agent, typ, kind, key, sens, content string) {
		day++
		m := seed.Memory{
			Ref: p.id + "-" + suffix, UserID: p.id, AgentID: agent, Type: typ, Kind: kind, Key: key,
			Content: content, Sensitivity: sens, Importance: 0.6, Confidence: 0.9, Source: "generated",
			CreatedAt: genStart.Add(time.Duration(p.i)*time.Hour + time.Duration(day)*72*time.Hour),
		}
		out = append(out, m)
	}
	internal := memory.SensitivityInternal
	add("company", "order-bot", memory.TypeProfile, "company", "company", internal,
		fmt.Sprintf("%s is a buyer at %s in %s, ordering %s.", p.name, p.company, p.city, p.product))
	add("style-v1", "support-bot", memory.TypeProfile, "preference", "answer_style", internal,
		fmt.Sprintf(genStyles[p.style1], p.first))
	add("contact", "support-bot", memory.TypeProfile, "preference", "contact_channel", internal,
		fmt.Sprintf(genContacts[p.contact], p.first))
	budget := 50 + 10*p.i
	for v := 1; v <= p.budgets; v++ {
		text := fmt.Sprintf("%s's annual procurement budget is %dk CNY.", p.first, budget)
		if v > 1 {
			text = fmt.Sprintf("%s raised the annual procurement budget to %dk CNY.", p.first, budget)
		}
		if p.i%2 == 1 {
			text = fmt.Sprintf("%s 的年度采购预算为 %d 万元。", p.first, budget/10)
			if v > 1 {
				text = fmt.Sprintf("%s 的年度采购预算调整为 %d 万元。", p.first, budget/10)
			}
		}
		add(fmt.Sprintf("budget-v%d", v), "order-bot", memory.TypeSemantic, "budget", "budget", internal, text)
		budget += 20
	}
	add("order-a", "order-bot", memory.TypeEpisodic, "order_status", "", internal,
		fmt.Sprintf("Order SO-%d (%d cartons of %s) for %s shipped on %d Oct from the Kunshan warehouse.",
			p.firstOrder, 20+p.i, p.product, p.company, 1+p.i%28))
	add("chat-office", "support-bot", memory.TypeEpisodic, "conversation", "", internal,
		fmt.Sprintf("%s mentioned that the team moves to a new floor of the building next month.", p.first))
	if p.style2 >= 0 {
		add("style-v2", "support-bot", memory.TypeProfile, "preference", "answer_style", internal,
			fmt.Sprintf(genStyles[p.style2], p.first))
	}
	add("order-b", "order-bot", memory.TypeEpisodic, "order_status", "", internal,
		fmt.Sprintf("订单 SO-%d（%d 箱%s）因缺货推迟到 11 月 %d 日从%s仓发货。", p.second, 5+p.i, p.productZh, 1+p.i%28, p.cZh))
	add("payment", "finance-bot", memory.TypeSemantic, "payment_terms", "payment_terms", internal,
		fmt.Sprintf("%s pays invoices on %d-day terms by bank transfer.", p.company, p.paymentDays))
	add("cost", "finance-bot", memory.TypeSemantic, "internal_cost", "internal_cost", memory.SensitivityConfidential,
		fmt.Sprintf("Internal cost note: orders from %s run at a %d%% gross margin.", p.company, p.margin))
	add("chat-holiday", "support-bot", memory.TypeEpisodic, "conversation", "", internal,
		fmt.Sprintf("%s asked about the service desk's opening hours over the holidays.", p.first))
	if p.i%4 == 0 {
		add("guess", "support-bot", memory.TypeProfile, "preference", "delivery_window", internal,
			fmt.Sprintf("%s may prefer deliveries in the morning.", p.first))
		out[len(out)-1].Status = memory.StatusCandidate
	}
	return out
}
