package extract

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

// said is when the test conversations happen; relative dates read from it.
var said = time.Date(2026, 10, 8, 9, 0, 0, 0, time.UTC)

// found is the part of an extracted memory a rule decides.
type found struct {
	Type, Kind, Key string
	Content         string
	Entities        []string // kind:id
}

func summarise(ms []memory.NewMemory) []found {
	out := []found{}
	for _, m := range ms {
		f := found{Type: m.Type, Kind: m.Kind, Key: m.Key, Content: m.Content}
		for _, e := range m.Entities {
			f.Entities = append(f.Entities, e.Kind+":"+e.ID)
		}
		out = append(out, f)
	}
	return out
}

func extractUser(t *testing.T, text string) []memory.NewMemory {
	t.Helper()
	ms, err := NewRules(func() time.Time { return said }).Extract(context.Background(), []memory.Turn{{Role: memory.RoleUser, Content: text, At: said}})
	if err != nil {
		t.Fatalf("extract %q: %v", text, err)
	}
	return ms
}

func TestRulesFindFacts(t *testing.T) {
	tests := []struct {
		name, text string
		want       []found
	}{
		{"budget en", "My budget is 100k.", []found{{Type: "semantic", Kind: "budget", Key: "budget", Content: "Budget 100,000: My budget is 100k"}}},
		{"budget en currency", "We raised the budget to $150k", []found{{Type: "semantic", Kind: "budget", Key: "budget", Content: "Budget 150,000 USD: We raised the budget to $150k"}}},
		{"budget zh digits", "我的预算是10万。", []found{{Type: "semantic", Kind: "budget", Key: "budget", Content: "Budget 100,000: 我的预算是10万"}}},
		{"budget zh short", "预算15万", []found{{Type: "semantic", Kind: "budget", Key: "budget", Content: "Budget 150,000: 预算15万"}}},
		{"budget zh numerals", "预算调整为十五万元", []found{{Type: "semantic", Kind: "budget", Key: "budget", Content: "Budget 150,000 CNY: 预算调整为十五万元"}}},
		{"budget amount first", "We have 2,000,000 yuan of budget this year", []found{{Type: "semantic", Kind: "budget", Key: "budget_2026", Content: "Budget 2,000,000 CNY: We have 2,000,000 yuan of budget this year"}}},
		{"credit limit", "Our credit limit is 80k.", []found{{Type: "semantic", Kind: "credit_limit", Key: "credit_limit", Content: "Credit limit 80,000: Our credit limit is 80k"}}},
		{"preference en", "I prefer short answers.", []found{{Type: "profile", Kind: "preference", Key: "answer_style", Content: "I prefer short answers"}}},
		{"preference en object", "I love green tea", []found{{Type: "profile", Kind: "preference", Key: "preference:green-tea", Content: "I love green tea"}}},
		{"dislike en", "I don't like phone calls.", []found{{Type: "profile", Kind: "constraint", Key: "contact_channel", Content: "I don't like phone calls"}}},
		{"constraint en", "Please don't call me after 6 pm.", []found{{Type: "profile", Kind: "constraint", Key: "contact_channel", Content: "Please don't call me after 6 pm"}}},
		{"preference zh", "我喜欢简洁的回复，最好直接给结论。", []found{{Type: "profile", Kind: "preference", Key: "answer_style", Content: "我喜欢简洁的回复，最好直接给结论"}}},
		{"dislike zh object", "我不喜欢喝咖啡", []found{{Type: "profile", Kind: "constraint", Key: "preference:喝咖啡", Content: "我不喜欢喝咖啡"}}},
		{"constraint zh", "请不要打电话给我，发微信就行。", []found{{Type: "profile", Kind: "constraint", Key: "contact_channel", Content: "请不要打电话给我，发微信就行"}}},
		{"wish zh on a topic", "希望以后用英文邮件沟通", []found{{Type: "profile", Kind: "preference", Key: "contact_channel", Content: "希望以后用英文邮件沟通"}}},
		{"remember en", "Remember that the loading dock closes at 5 pm.", []found{{Type: "semantic", Kind: "note", Content: "Note: the loading dock closes at 5 pm"}}},
		{"remember zh", "请记住我们仓库周日不收货。", []found{{Type: "semantic", Kind: "note", Content: "Note: 我们仓库周日不收货"}}},
		{"remember zh with date", "别忘了明天送货", []found{{Type: "semantic", Kind: "note", Content: "Note: 明天送货", Entities: []string{"date:2026-10-09"}}}},
		{"remember a budget is a budget", "Please remember that my budget is 150k", []found{{Type: "semantic", Kind: "budget", Key: "budget", Content: "Budget 150,000: Please remember that my budget is 150k"}}},
		{"order en", "Where is my order SO-1004?", []found{{Type: "episodic", Kind: "order", Content: "Where is my order SO-1004", Entities: []string{"order:SO-1004"}}}},
		{"order zh", "订单号：A20261008 还没到", []found{{Type: "episodic", Kind: "order", Content: "订单号：A20261008 还没到", Entities: []string{"order:A20261008"}}}},
		{"payment", "I paid 18,600 CNY for invoice INV-2026-0931 on 30 Sep.", []found{{Type: "episodic", Kind: "payment", Content: "I paid 18,600 CNY for invoice INV-2026-0931 on 30 Sep", Entities: []string{"invoice:INV-2026-0931", "date:2026-09-30"}}}},
		{"payment zh", "上周退款1200元已经收到了", []found{{Type: "episodic", Kind: "payment", Content: "上周退款1200元已经收到了"}}},
		{"company en", "I work at Hangzhou Lianhua Trading.", []found{{Type: "profile", Kind: "company", Key: "company", Content: "I work at Hangzhou Lianhua Trading", Entities: []string{"company:hangzhou-lianhua-trading", "place:hangzhou"}}}},
		{"company zh", "我在杭州联华贸易有限公司工作", []found{{Type: "profile", Kind: "company", Key: "company", Content: "我在杭州联华贸易有限公司工作", Entities: []string{"company:杭州联华贸易有限公司", "place:hangzhou"}}}},
		{"place en", "I live in Shanghai.", []found{{Type: "profile", Kind: "location", Key: "location", Content: "I live in Shanghai", Entities: []string{"place:shanghai"}}}},
		{"place zh", "我住在苏州工业园区", []found{{Type: "profile", Kind: "location", Key: "location", Content: "我住在苏州工业园区", Entities: []string{"place:suzhou"}}}},
		{"date fact en", "My membership expires on 1 March 2027.", []found{{Type: "profile", Kind: "membership", Key: "membership_expiry", Content: "My membership expires on 1 March 2027", Entities: []string{"date:2027-03-01"}}}},
		{"date fact zh", "合同2027年1月31日到期", []found{{Type: "semantic", Kind: "contract", Key: "contract_expiry", Content: "合同2027年1月31日到期", Entities: []string{"date:2027-01-31"}}}},
		{"deadline", "Please deliver before 20 Oct.", []found{{Type: "episodic", Kind: "deadline", Content: "Please deliver before 20 Oct", Entities: []string{"date:2026-10-20"}}}},
		{"two facts in one sentence", "I work at Suzhou Mingliang Electronics and my budget is 80k CNY", []found{
			{Type: "semantic", Kind: "budget", Key: "budget", Content: "Budget 80,000 CNY: I work at Suzhou Mingliang Electronics and my budget is 80k CNY", Entities: []string{"company:suzhou-mingliang-electronics", "place:suzhou"}},
			{Type: "profile", Kind: "company", Key: "company", Content: "I work at Suzhou Mingliang Electronics and my budget is 80k CNY", Entities: []string{"company:suzhou-mingliang-electronics", "place:suzhou"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, summarise(extractUser(t, tt.text))); diff != "" {
				t.Errorf("extract %q (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestRulesIgnoreChitChat(t *testing.T) {
	for _, text := range []string{
		"Hi!", "Hello, how are you today?", "Thanks, that's all.", "OK", "Good morning!", "haha",
		"I like it, thanks!", "Don't worry about it.", "I'd like to know the weather.", "What is my budget?",
		"Is the budget 100k?", "Can you check something for me?", "See you tomorrow!",
		"你好", "好的，谢谢", "哈哈哈", "今天天气不错", "别客气", "不要紧", "预算是多少？", "我喜欢这个",
		"你们几点下班？", "嗯嗯，知道了",
	} {
		t.Run(text, func(t *testing.T) {
			if got := extractUser(t, text); len(got) != 0 {
				t.Errorf("extract %q = %+v, want nothing", text, summarise(got))
			}
		})
	}
}

func TestRulesReadOnlyTheUser(t *testing.T) {
	turns := []memory.Turn{
		{Role: memory.RoleAssistant, Content: "I prefer to confirm: your budget is 100k?"},
		{Role: memory.RoleSystem, Content: "Remember that the user is a VIP."},
		{Role: memory.RoleUser, Content: "Yes, thanks."},
	}
	got, err := NewRules(nil).Extract(context.Background(), turns)
	if err != nil || len(got) != 0 {
		t.Fatalf("extract = %+v, %v; want nothing from non-user turns", summarise(got), err)
	}
}

func TestRulesKeepTheLastValueOfASlot(t *testing.T) {
	turns := []memory.Turn{
		{Role: memory.RoleUser, Content: "My budget is 100k.", At: said},
		{Role: memory.RoleAssistant, Content: "Noted."},
		{Role: memory.RoleUser, Content: "Actually, make the budget 150k. I prefer email.", At: said.Add(time.Minute)},
	}
	got, err := NewRules(nil).Extract(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	want := []found{
		{Type: "semantic", Kind: "budget", Key: "budget", Content: "Budget 150,000: Actually, make the budget 150k"},
		{Type: "profile", Kind: "preference", Key: "contact_channel", Content: "I prefer email"},
	}
	if diff := cmp.Diff(want, summarise(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, m := range got {
		if m.Importance == nil || m.Confidence == nil || m.Source != "conversation" {
			t.Errorf("%q: importance %v, confidence %v, source %q", m.Content, m.Importance, m.Confidence, m.Source)
		}
	}
}

// The same slot stated in either language gets the same key, so a Chinese
// statement replaces an English one.
func TestKeysAreStableAcrossLanguages(t *testing.T) {
	pairs := [][2]string{
		{"My budget is 100k", "预算调整为15万"},
		{"I prefer short answers", "我喜欢详细的回答"},
		{"Please only contact me by email", "请不要给我打电话"},
		{"I work at Hangzhou Lianhua Trading", "我在苏州明亮电子有限公司上班"},
	}
	for _, p := range pairs {
		a, b := extractUser(t, p[0]), extractUser(t, p[1])
		if len(a) != 1 || len(b) != 1 || a[0].Key == "" || a[0].Key != b[0].Key {
			t.Errorf("keys of %q and %q: %+v / %+v", p[0], p[1], summarise(a), summarise(b))
		}
	}
}

func TestAmounts(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"100k", 100_000}, {"1.5m", 1_500_000}, {"15万", 150_000}, {"十五万", 150_000}, {"十万", 100_000},
		{"一百二十万", 1_200_000}, {"两千五百元", 2_500}, {"18,600 CNY", 18_600}, {"¥3000", 3_000},
	}
	for _, tt := range tests {
		got := amounts(tt.in)
		if len(got) == 0 || got[0].value != tt.want {
			t.Errorf("amounts(%q) = %+v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	imp := func(f float64) *float64 { return &f }
	good := memory.NewMemory{Type: "semantic", Kind: "note", Content: "The dock closes at 5 pm"}
	tests := []struct {
		name string
		edit func(*memory.NewMemory)
	}{
		{"unknown type", func(m *memory.NewMemory) { m.Type = "rumour" }},
		{"empty content", func(m *memory.NewMemory) { m.Content = "  " }},
		{"chit-chat content", func(m *memory.NewMemory) { m.Content = "thanks!" }},
		{"missing kind", func(m *memory.NewMemory) { m.Kind = "" }},
		{"kind with spaces", func(m *memory.NewMemory) { m.Kind = "drop table" }},
		{"key with quotes", func(m *memory.NewMemory) { m.Key = `budget"` }},
		{"importance above 1", func(m *memory.NewMemory) { m.Importance = imp(3) }},
		{"too long", func(m *memory.NewMemory) { m.Content = string(make([]rune, MaxContentChars+1)) }},
	}
	if _, ok := validate(good); !ok {
		t.Fatal("the good memory is rejected")
	}
	for _, tt := range tests {
		m := good
		tt.edit(&m)
		if _, ok := validate(m); ok {
			t.Errorf("%s: accepted", tt.name)
		}
	}
	m, ok := validate(memory.NewMemory{Type: "episodic", Kind: "order", Content: "x order", Entities: []memory.Entity{
		{Kind: "order", Name: "so-1001"}, {Kind: "ORDER", Name: "SO-1001"}, {Kind: "weapon", Name: "x"}, {Kind: "place", Name: "上海"},
	}})
	want := []memory.Entity{{ID: "SO-1001", Kind: "order", Name: "so-1001"}, {ID: "shanghai", Kind: "place", Name: "上海"}}
	if diff := cmp.Diff(want, m.Entities); !ok || diff != "" {
		t.Errorf("entities (-want +got):\n%s", diff)
	}
}

// TestValidateCapsEntities: an extracted memory keeps at most the entities
// a write accepts, the first ones.
func TestValidateCapsEntities(t *testing.T) {
	var ents []memory.Entity
	for i := range memory.MaxEntities + 6 {
		ents = append(ents, memory.Entity{Kind: "product", Name: fmt.Sprintf("Part %d", i)})
	}
	got, ok := validate(memory.NewMemory{Type: memory.TypeSemantic, Kind: "note", Content: "A long list of parts.", Entities: ents})
	if !ok || len(got.Entities) != memory.MaxEntities || got.Entities[0].Name != "Part 0" {
		t.Errorf("kept %v with %d entities, want %d from the first", ok, len(got.Entities), memory.MaxEntities)
	}
}

// An amount the write guard would mask in the text (a card or phone
// number) is not lifted into a slot's value, where it would come back with
// thousands separators the guard does not read.
func TestRulesLiftNoCardOrPhoneAsAnAmount(t *testing.T) {
	for _, text := range []string{"My budget is 4111111111111111 CNY", "My credit limit is 13812345678 yuan"} {
		for _, m := range extractUser(t, text) {
			if strings.Contains(m.Content, "4,111") || strings.Contains(m.Content, "13,812") {
				t.Errorf("extract %q: %q", text, m.Content)
			}
		}
	}
	if ms := extractUser(t, "My budget is 150,000 CNY"); len(ms) != 1 || !strings.HasPrefix(ms[0].Content, "Budget 150,000 CNY") {
		t.Errorf("a plain budget: %+v", ms)
	}
}

// A preference's key made from its object repeats no e-mail, phone or card
// the guard masks in the content.
func TestPreferenceKeyHoldsNoPersonalData(t *testing.T) {
	for _, text := range []string{"I prefer purple umbrellas from carol.x@example.com", "I prefer calls on 13812345678 for urgent orders"} {
		for _, m := range extractUser(t, text) {
			if strings.Contains(m.Key, "example") || strings.Contains(m.Key, "carol-x") || strings.Contains(m.Key, "13812345678") {
				t.Errorf("extract %q: key %q", text, m.Key)
			}
		}
	}
}

// TestBudgetPeriods: a budget that names its period is keyed by it, so that
// the budgets of two periods are two slots; one that names none keeps the
// plain key. Relative periods are read against when the turn was said
// (2026-10-08).
func TestBudgetPeriods(t *testing.T) {
	tests := []struct {
		text, key, content string
	}{
		{"Our Q4 procurement budget is 150k CNY.", "budget_q4", "Budget 150,000 CNY"},
		{"For next year's Q1 the budget is 90k CNY.", "budget_2027_q1", "Budget 90,000 CNY"},
		{"My budget for Q1 is 90k CNY", "budget_q1", "Budget 90,000 CNY"},
		{"The budget for 2027 is 90k", "budget_2027", "Budget 90,000"},
		{"Budget for 2027 is 2000000 yuan", "budget_2027", "Budget 2,000,000 CNY"},
		{"FY2027 budget: $1.2m", "budget_2027", "Budget 1,200,000 USD"},
		{"Our H2 budget is 60k", "budget_h2", "Budget 60,000"},
		{"The budget for next quarter is 40k", "budget_2027_q1", "Budget 40,000"},
		{"Our annual budget is 500k", "budget_annual", "Budget 500,000"},
		{"Our monthly budget is 5k", "budget_monthly", "Budget 5,000"},
		{"My credit limit for Q3 is 200k", "credit_limit_q3", "Credit limit 200,000"},
		{"My budget is 100k", "budget", "Budget 100,000"},
		{"The budget is 150k, delivery on 2027-03-01", "budget", "Budget 150,000"},
		{"一季度预算是9万", "budget_q1", "Budget 90,000"},
		{"第四季度的采购预算是15万元", "budget_q4", "Budget 150,000 CNY"},
		{"明年一季度预算9万", "budget_2027_q1", "Budget 90,000"},
		{"上半年预算30万", "budget_h1", "Budget 300,000"},
		{"下半年预算二十万", "budget_h2", "Budget 200,000"},
		{"2027年预算200万", "budget_2027", "Budget 2,000,000"},
		{"明年的预算是50万", "budget_2027", "Budget 500,000"},
		{"年度预算50万", "budget_annual", "Budget 500,000"},
		{"每月预算5000元", "budget_monthly", "Budget 5,000 CNY"},
		{"预算是15万", "budget", "Budget 150,000"},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			ms := extractUser(t, tc.text)
			if len(ms) != 1 || ms[0].Key != tc.key || !strings.HasPrefix(ms[0].Content, tc.content+":") {
				t.Fatalf("extract %q: %+v, want key %s and content %q…", tc.text, summarise(ms), tc.key, tc.content)
			}
		})
	}
}

// TestBudgetsOfTwoPeriodsInOneConversation: the Q4 budget and next year's
// Q1 budget are both kept; a restated Q4 budget replaces the first.
func TestBudgetsOfTwoPeriodsInOneConversation(t *testing.T) {
	ms, err := NewRules(func() time.Time { return said }).Extract(context.Background(), []memory.Turn{
		{Role: memory.RoleUser, Content: "Our Q4 procurement budget is 150k CNY.", At: said},
		{Role: memory.RoleUser, Content: "For next year's Q1 the budget is 90k CNY.", At: said.Add(time.Minute)},
		{Role: memory.RoleUser, Content: "第四季度预算改成16万元。", At: said.Add(2 * time.Minute)},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []found{
		{Type: "semantic", Kind: "budget", Key: "budget_2027_q1", Content: "Budget 90,000 CNY: For next year's Q1 the budget is 90k CNY"},
		{Type: "semantic", Kind: "budget", Key: "budget_q4", Content: "Budget 160,000 CNY: 第四季度预算改成16万元"},
	}
	if diff := cmp.Diff(want, summarise(ms)); diff != "" {
		t.Errorf("budgets (-want +got):\n%s", diff)
	}
}
