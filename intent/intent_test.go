package intent

import (
	"reflect"
	"slices"
	"testing"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		q    string
		want []string // intent names, in rule order
	}{
		{"tell me my preferences", []string{"preferences"}},
		{"How do you usually get hold of me?", []string{"contact"}},
		{"any notes on me?", []string{"about_me"}},
		{"when do my perks lapse?", []string{"membership"}},
		{"他那批硒鼓为什么晚了？", []string{"order_moves"}},
		{"whats the status of my stuff", []string{"orders"}},
		{"is she the type who wants every last detail?", []string{"answer_style"}},
		{"what's our playbook for returns?", []string{"rule_lookup"}},
		{"他们一年的采购额度是多少", []string{"budget"}},
		{"are we making decent money on this account?", []string{"margin"}},
		{"is there anything of hers in the system?", []string{"orders"}},
		{"How long do I have to settle what I owe you?", []string{"payment"}},
		{"你们给我退了多少钱？", []string{"refunds"}},
		{"九月份那张账单我付清了吗？", []string{"paid"}},
		{"has my september bill been paid?", []string{"paid"}},
		{"If I cancel something that is already on the road, what happens?", []string{"rule_lookup"}},
		{"What time of day can the courier bring my stuff?", []string{"delivery"}},
		{"what happens if I cancel an order that has shipped?", []string{"rule_lookup"}},
		{"why is my second purchase running behind?", []string{"order_moves"}},
		{"give me the lowdown on this guy", []string{"about_me"}},
		{"what's my job title", []string{"company"}},
		{"which gate do trucks go to?", []string{"delivery"}},
		{"大单要谁点头？", []string{"rule_lookup"}},
		{"东西拆了还能退吗", []string{"rule_lookup"}},
		{"quick rundown on this customer pls", []string{"about_me"}},
		{"what are his quirks?", []string{"preferences"}},
		{"Any standing instructions for this customer?", []string{"preferences"}},
		{"这人啥情况，给我大概讲讲", []string{"about_me"}},
		{"remind me who she is, like her role n where she works", []string{"about_me", "company"}},
		{"这家一般多久给我们结一次钱", []string{"payment"}},
		{"给他写东西要写多细", []string{"answer_style"}},
		{"she picky about anything when we write to her?", []string{"guidance", "contact"}},
		{"what do you know about me", []string{"about_me"}},
		{"我还想要上次那个风格", []string{"answer_style"}},
		{"能不能直接说重点", []string{"answer_style"}},
		{"按老规矩处理", []string{"rules"}},
		{"我的会员什么时候到期", []string{"membership"}},
		{"When does my membership expire?", []string{"membership"}},
		{"How should we contact Alice?", []string{"contact"}},
		{"when does my membership run out", []string{"membership"}},
		{"我的会员什么时候过期", []string{"membership"}},
		{"how much can she spend", []string{"budget"}},
		{"what can the customer afford this quarter", []string{"budget"}},
		{"她今年还能花多少", []string{"budget"}},
		{"where should we ship the goods", []string{"delivery"}},
		{"where do I send the goods", []string{"delivery"}},
		{"货寄到哪里", []string{"delivery"}},
		{"has the shipment left the warehouse", []string{"order_moves"}}, // one of her dealings; "ship" as a whole word only
		{"那单手套送到了吗？", []string{"order_moves"}},                           // the order's delivery, not her delivery window
		{"这批纸箱什么时候发？", []string{"order_moves"}},
		{"Did the paper shipment arrive on time?", []string{"order_moves"}},
		{"什么时候送到？", []string{"delivery"}},                         // no order spoken of: her delivery window
		{"the parcel arrived yesterday", nil},                     // told, not asked
		{"Is the shipment tracking website down today?", nil},     // of the world, and no move of goods
		{"Which language does she prefer?", []string{"language"}}, // the slot says which preference
		{"contact preference", []string{"contact"}},
		{"能不能直接说重点，按我的偏好来", []string{"answer_style"}},
		{"dietary preferences", []string{"preferences"}},
		{"tell me my preferences and the rules", []string{"preferences", "rule_lookup"}}, // rules are no preference
		{"What is the status of order SO-1001?", nil},
		{"xyz 123 订单", nil},
		{"How does Greenleaf want to be billed?", []string{"invoice"}},
		{"when do they pay the bill?", []string{"payment"}}, // paying, not being billed
		{"recent orders", []string{"orders"}},
		{"她最近的订单有哪些？", []string{"orders"}},
		{"What did she order last month?", []string{"orders"}},
		{"the order of the planets", nil},
		{"employer", []string{"company"}},
		{"What does Carol do for a living?", []string{"company"}},
		{"thank you so much, have a nice day", nil},
		{"好的", nil},
		{"the stylus is broken", nil}, // "style" as a whole word only
		{"What's the best way to get hold of her?", []string{"contact"}},
		{"How does Carol want to be reached?", []string{"contact"}},
		{"Is it okay to ring her, or should I write to her instead?", []string{"contact"}},
		{"Should I message him or give him a ring?", []string{"contact"}},
		{"回复要多详细？", []string{"answer_style"}},
		{"我喜欢什么样的回答", []string{"answer_style"}}, // the slot says which preference
		{"Have I asked you about your opening hours before?", []string{"past_conversations"}},
		{"我之前问过退货的事吗", []string{"past_conversations"}},
		{"we talked about a discount last week, right?", []string{"past_conversations"}},
		{"when will the parcel reach Shanghai", nil}, // "reach" alone is not about contacting
		{"送货要多长时间", []string{"delivery"}},            // not a question about answer length
		{"Do I want long explanations from you?", []string{"answer_style"}},
		{"How many days do we get to settle a bill?", []string{"payment"}},
		{"我们公司一般多久结账？", []string{"payment", "company"}},
		{"What business am I part of?", []string{"company"}},
		{"Bob 在哪家厂子？", []string{"company"}},
		{"Why is Bob upset?", []string{"complaints"}},
		{"How chatty should I be with Ava?", []string{"answer_style"}},
		{"How long before Elijah's company pays us?", []string{"payment"}},
		{"Evelyn 在哪个城市？", []string{"company"}},
		{"Bob 为什么不高兴？", []string{"complaints"}},
		{"can you explain the return rule?", []string{"rule_lookup"}}, // "explain" alone is not about answer style
		{"Which firm am I with?", []string{"company"}},
		{"Is the delivery date firm?", []string{"delivery"}}, // "firm" alone is no company
		{"What goods do I usually buy from you?", []string{"purchases"}},
		{"我平时都买什么", []string{"purchases"}},
		{"Which outfit is this person with?", []string{"company"}},
		{"Anything I should keep in mind when dealing with her?", []string{"guidance"}},
		{"你们对我了解多少？", []string{"about_me"}},
		{"上次我问你们的那件事有消息了吗？", []string{"past_conversations"}},
		{"keep it short for me, like before", []string{"answer_style"}},
		{"Will she mind a long essay?", []string{"answer_style"}},
		{"cheers mate, speak soon", nil}, // a goodbye, not a question about language
		{"Does she speak Chinese?", []string{"language"}},
		{"What time should the truck arrive at her kitchen?", []string{"delivery"}}, // her delivery window, not an order on its way
		{"那批托盘什么时候送过去？", []string{"order_moves"}},
		{"My status level ends when?", []string{"membership"}},
		{"咋给他回邮件？", []string{"answer_style"}},
		{Unnamed("Where does Alice work?", Person{ID: "alice"}), []string{"company"}},
		{"我啥时候要货？", []string{"delivery"}},
		{"上次那批纸的钱付了没有？", []string{"paid"}},
		{"Has the desk order been paid?", []string{"paid"}},
		{"paid search ads", nil}, // no dealing and no one spoken of
		// What to mind with someone is every preference, beside the slot
		// the question names.
		{"Any heads-up before I call him back?", []string{"guidance", "contact"}},
		{"any heads up before I go to the gym?", nil},
		{"What should I know before my first day here?", nil},
		{"需要注意啥吗？我明天去健身房", nil},
		{"anything to keep in mind before contacting?", []string{"guidance", "contact"}},
		{"和这位客户打交道有什么讲究？", []string{"guidance"}},
		{"用普通话回复她可以吗？", []string{"language"}},
		{"Cut to the chase, please", []string{"answer_style"}},
		{"what are his buying habits?", []string{"purchases"}},
		{"这位顾客下单有什么习惯", []string{"purchases"}},
		{"这位客户的订单都怎么样了", []string{"orders"}},
		{"这位客户的沟通习惯", []string{"communication"}}, // the channel, the language and the style at once
		{"Give me Bob's profile.", []string{"about_me"}},
		{"这个客户有什么特别的要求吗？", []string{"preferences"}},
		{"the cooking mitt order reach her already or not ah?", []string{"order_moves"}}, // the order, not how to reach her
		{"Did she call off the metal platter purchase?", []string{"order_moves"}},
		{"明亮电子的信用额度是多少？", []string{"budget"}},
		{"那十二托的货什么时候出发？", []string{"order_moves"}}, // goods counted out are one of the user's dealings
		{"运费怎么收？", []string{"rule_lookup"}},
		{"她那批用完即扔的碗筷快递号是多少？", []string{"order_moves"}},
		{"Why hasn't her big furniture purchase gone through yet?", []string{"order_moves"}},
		{"顾客收到的东西坏了怎么办？", []string{"rule_lookup"}},
		{"华东包括哪几个省？", []string{"definition"}},
		{"年度采购预算是多少？", []string{"budget"}}, // 预算是 holds no definition
		{"What does a pallet order mean here?", []string{"definition"}},
		{"When can we drop parcels at her workplace?", []string{"delivery"}},
		{"联华那张发票付款了没有？", []string{"invoice", "paid"}},
		{"客户 cancel 了已经 ship 出去的单，要怎么 handle？", []string{"rule_lookup", "delivery"}},
		{"How much margin is there on this account?", []string{"margin"}},
		{"她那边我们利润怎么样", []string{"margin"}},
		{"新买家想采购，我这边该走哪几步？", []string{"rule_lookup"}},
		{"满多少钱包邮？", []string{"rule_lookup"}},
		{"没拆封的东西几天内可以退？", []string{"rule_lookup"}},
		{"Was she paid back for the broken lamps?", []string{"refunds"}},
		{"上次那个扶手坏了的事处理得怎么样了？", nil}, // 上次那个 alone names no style
		{"What are this customer's standing requirements on our side?", []string{"preferences"}},
		{"How should I answer her?", []string{"communication"}}, // the words, the language and the channel
		{"how should i reply to olivia", []string{"communication"}},
		{"你们都记了我哪些信息？", []string{"about_me"}},
		{"你们记录的我是做什么生意的？", []string{"company"}},
		{"What do I need to double-check before issuing a VAT invoice?", []string{"rule_lookup", "invoice"}},
		{"给她回消息前我需要知道什么？", []string{"answer_style", "guidance"}},
		{"他一般喜欢用什么方式沟通？", []string{"communication"}},
		{"Any special delivery instructions for her?", []string{"delivery"}},
		{"Which time slot suits him for drop-offs?", []string{"delivery"}},
		{"给她发消息用哪种文字？", []string{"language"}},
		{"A parcel came in damaged, walk me through what we do", []string{"rule_lookup"}},
		{"退货的处理顺序是什么？", []string{"rule_lookup"}},
		{"What did he call off last month?", []string{"cancellations"}},
		{"她之前取消了什么？", []string{"cancellations"}},
		{"Call me on my mobile", []string{"contact"}},
		{"How are his finances looking?", []string{"finances"}},
		{"这位客户是谁？", []string{"company"}},
		{"Who's this client, then?", []string{"company"}},
		{"how much money went back to the Suzhou client?", []string{"budget", "refunds"}},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			got := detectAlone(tt.q)
			if !slices.Equal(got.Names, tt.want) {
				t.Errorf("detectAlone(%q) = %v, want %v", tt.q, got.Names, tt.want)
			}
			if got.Empty() != (len(tt.want) == 0) {
				t.Errorf("Empty() = %v with %v", got.Empty(), got)
			}
		})
	}
}

// The usual way of one person is how they like things done; with no one
// named, it is the tenant's rules.
func TestDetectForTheUsualOfSomeone(t *testing.T) {
	bob := Person{ID: "bob", Name: "Bob"}
	tests := []struct {
		q    string
		want []string
	}{
		{"按老规矩处理", []string{"rules"}},
		{"按我们的老规矩处理", []string{"rules"}},
		{"Same as always, please.", []string{"rules"}},
		{"按 Bob 的老规矩处理。", []string{"usual_for_someone"}},
		{"照旧办就行，按她的老规矩来。", []string{"usual_for_someone"}},
		{"Do the usual for Bob.", []string{"usual_for_someone"}},
		{"same as usual for me", []string{"usual_for_someone"}},
		{"Tell me everything you've got on this customer's habits.", []string{"preferences"}},
		{"和上次一样，照旧", []string{"rules"}},
		{"Do things the way I normally like, ok?", []string{"preferences"}},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			if got := DetectFor(tt.q, bob).Names; !slices.Equal(got, tt.want) {
				t.Errorf("DetectFor(%q) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
	// The user asking, unnamed: their own usual way.
	bob.Asking = true
	for _, q := range []string{"和上次一样，照旧", "Same as always, please."} {
		if got := DetectFor(q, bob).Names; !slices.Equal(got, []string{"usual_for_someone"}) {
			t.Errorf("DetectFor(%q) asked by the user = %v, want usual_for_someone", q, got)
		}
	}
}

func TestMatchPrefersTheSlot(t *testing.T) {
	a := detectAlone("我的会员什么时候到期")
	tests := []struct {
		typ, kind, key string
		want           int
	}{
		{"profile", "membership", "membership_expiry", 3},
		{"profile", "membership", "membership_tier", 2},
		{"episodic", "order_status", "", 0},
	}
	for _, tt := range tests {
		if got := a.Match(tt.typ, tt.kind, tt.key); got != tt.want {
			t.Errorf("Match(%s, %s, %s) = %d, want %d", tt.typ, tt.kind, tt.key, got, tt.want)
		}
	}
	if got := detectAlone("what do you know about me").Match("profile", "company", "company"); got != 1 {
		t.Errorf("a question about the user as a whole matches profile memories by type: got %d", got)
	}
}

// TestBudgetOfAPeriod: a question about the budget of a period prefers the
// budget of that period (its slot), and still reaches the budgets of other
// periods and of none by their kind; a question that names no period
// prefers the budget of none.
func TestBudgetOfAPeriod(t *testing.T) {
	tests := []struct {
		q, key string
		want   int
	}{
		{"What is the Q4 budget?", "budget_q4", 3},
		{"What is the Q4 budget?", "budget_2027_q1", 2},
		{"What is the Q4 budget?", "budget", 2},
		{"What's our budget for 2027?", "budget_2027", 3},
		{"What's our budget for 2027?", "budget_q4", 2},
		{"what is the monthly budget", "budget_monthly", 3},
		{"What is the budget?", "budget", 3},
		{"What is the budget?", "budget_q4", 2},
		{"What is next year's budget?", "budget_2027", 2},
		{"四季度预算是多少？", "budget_q4", 3},
		{"第一季度的预算是多少", "budget_q1", 3},
		{"第一季度的预算是多少", "budget_q4", 2},
		{"下半年预算多少", "budget_h2", 3},
		{"2027年的预算是多少？", "budget_2027", 3},
		{"预算是多少？", "budget", 3},
		{"预算是多少？", "budget_2027_q1", 2},
		{"Q3的信用额度是多少", "credit_limit_q3", 2},
	}
	for _, tt := range tests {
		kind := "budget"
		if tt.key == "credit_limit_q3" {
			kind = "credit_limit"
		}
		if got := detectAlone(tt.q).Match("semantic", kind, tt.key); got != tt.want {
			t.Errorf("detectAlone(%q).Match(key %s) = %d, want %d", tt.q, tt.key, got, tt.want)
		}
	}
}

func TestTopical(t *testing.T) {
	tests := []struct {
		q       string
		topical bool
	}{
		{"which rules apply to big orders?", true},
		{"do large orders need sign-off?", true},
		{"大额订单需要谁审批？", true},
		{"运费怎么算？", true},
		{"what should I do when a customer's parcel arrives broken?", true},
		{"下单流程是什么？", true},
		{"what's the rule of thumb for cooking rice?", true},
		{"what are our rules?", false}, // names no subject: every rule answers
		{"有哪些规定？", false},
		{"有什么规矩？", false},
		{"退货有什么规矩？", true},
		{"按老规矩处理", false}, // the usual way, not a subject
		{"按老规矩处理大额订单的审批", false},
		{"tell me my preferences", false},    // names no subject: every preference answers
		{"which rules apply to her?", false}, // the customer is no subject
		{"What rules does the customer follow?", false},
		{"What is the status of order SO-1001?", false},
	}
	for _, tt := range tests {
		if got := detectAlone(tt.q).Topical; got != tt.topical {
			t.Errorf("detectAlone(%q).Topical = %v, want %v (%v)", tt.q, got, tt.topical, detectAlone(tt.q).Names)
		}
	}
}

func TestCut(t *testing.T) {
	tests := []struct{ padded, cue, want string }{
		{" which rules apply ", "rules", " which  apply "},
		{" the rules of the house ", "the rule*", "  of the house "},
		{" 大额订单需要谁审批 ", "审批", " 大额订单需要谁  "},
		{" no match here ", "rule", " no match here "},
	}
	for _, tt := range tests {
		if got := cut(tt.padded, tt.cue); got != tt.want {
			t.Errorf("cut(%q, %q) = %q, want %q", tt.padded, tt.cue, got, tt.want)
		}
	}
}

// A question typed in traditional characters is read as the same question
// typed in simplified ones.
func TestTraditionalReadsAsSimplified(t *testing.T) {
	for _, tc := range []struct{ traditional, simplified string }{
		{"我的會員資格什麼時候到期", "我的会员资格什么时候到期"},
		{"我的收貨地址是哪裡", "我的收货地址是哪里"},
		{"回覆我的時候寫短一點", "回复我的时候写短一点"},
		{"你哋退咗幾多錢俾我？", "你们退了多少钱给我？"},
		{"他們公司的採購預算是多少", "他们公司的采购预算是多少"},
		{"請問發票寄到哪個地址", "请问发票寄到哪个地址"},
	} {
		want := detectAlone(tc.simplified)
		if want.Empty() {
			t.Fatalf("%q asks for nothing: the case tests nothing", tc.simplified)
		}
		if got := detectAlone(tc.traditional); !reflect.DeepEqual(got, want) {
			t.Errorf("detectAlone(%q) = %+v, want %+v as for %q", tc.traditional, got, want, tc.simplified)
		}
		who := Person{ID: "u1"}
		if About(tc.traditional, who) != About(tc.simplified, who) || General(tc.traditional) != General(tc.simplified) {
			t.Errorf("%q is read otherwise than %q", tc.traditional, tc.simplified)
		}
	}
}

// detectAlone reads a question asked about no one named.
func detectAlone(q string) Ask { return DetectFor(q, Person{}) }
