package intent_test

import (
	"testing"

	"mneme/intent"
)

func TestDealing(t *testing.T) {
	tests := []struct {
		question string
		want     bool
	}{
		{"Has the big desk order gone through yet?", true},
		{"When is the carton shipment leaving?", true},
		{"Was that refund ever paid out?", true},
		{"上次那批纸的钱付了没有？", true},
		{"这批纸箱什么时候发？", true},
		{"why is my second purchase running behind?", true},
		{"has her tape order gone out?", true},
		{"What is the order of the planets from the sun?", false},
		{"Is the payment for the Olympics tickets refundable?", false},
		{"How long does a parcel take from China to Germany?", false},
		{"the carton shipment is late", false}, // not a question
		{"xyz 123 订单", false},
		{"那两万套餐具发货了吗？", true},
		{"那些防静电袋送到了吗？", true},
		{"联华那张发票付款了没有？", true},
		{"这几天天气怎么样？", false}, // days are no goods
		{"一百块钱能买什么？", false},
		{"Which purchase did she call off ahead of dispatch?", true},
		{"olivia's orders, anything late?", true}, // a name's
		{"When's his big packaging consignment leaving the depot?", true},
		{"what's the order of the planets?", false}, // a contraction is no one's
		{"第二笔为啥晚了", true},
		{"Carol是不是撤了一单", true},
		{"我能借一笔钱吗", false},
		{"Why are the workstations she bought stuck and not moving?", true},
		{"我上次订的纸到了吗？", true},
		{"那张一百二十张办公桌的订单为什么卡住了？", true}, // 那张 … 的订单, however many desks between
		{"这张桌子多少钱？", false},
		{"What should I buy for my mother?", false},
	}
	for _, tt := range tests {
		if got := intent.Dealing(tt.question); got != tt.want {
			t.Errorf("Dealing(%q) = %v, want %v", tt.question, got, tt.want)
		}
	}
}

func TestPhatic(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"can you hear me?", true},
		{"Hey, you still there?", true},
		{"能听到我说话吗", true},
		{"喂，听得见吗？", true},
		{"在吗", true},
		{"can you hear me about the order?", false},
		{"Do you see my order?", false},
		{"能听到我说话吗？我的订单到了吗", false},
		{"在公司吗", false},
		{"are you there tomorrow for the delivery?", false},
	}
	for _, tt := range tests {
		if got := intent.Phatic(tt.text); got != tt.want {
			t.Errorf("Phatic(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestRequests(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"tell me my preferences", true},
		{"keep it short for me, like before", true},
		{"Same as always, please.", true},
		{"按老规矩处理", true},
		{"the usual rule", true},
		{"handle it the usual way", true},
		{"我还想要上次那个风格", true},
		{"能不能直接说重点", true},
		{"contact preference", true},
		{"送货地址", true},
		{"my preferences", true},
		{"fill me in on Emma: who she works for and what she buys", true},
		{"her delivery address", true},
		{"我的偏好", true},
		{"上次那个风格就行", true},
		{"my", false},
		{"my day was long, she said", false},
		{"我的天", true}, // a search for nothing: no cue answers it
		{"Just sent you an email, no rush", false},
		{"lol that's a long answer", false},
		{"Thanks! Got the invoice, will check it later", false},
		{"我今天在公司", false},
		{"节后再联系吧", false},
		{"谢谢你们，答复很及时", false},
	}
	for _, tt := range tests {
		if got := intent.Requests(tt.text); got != tt.want {
			t.Errorf("Requests(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestPrefers(t *testing.T) {
	tests := []struct {
		question string
		want     bool
	}{
		{"送货时间有什么要求？", true},
		{"什么时候送货比较好？", true},
		{"What delivery times does she prefer?", true},
		{"送货到杭州要几天？", false},
		{"When does the order ship?", false},
	}
	for _, tt := range tests {
		if got := intent.Prefers(tt.question); got != tt.want {
			t.Errorf("Prefers(%q) = %v, want %v", tt.question, got, tt.want)
		}
	}
}

func TestGeneral(t *testing.T) {
	tests := []struct {
		question string
		want     bool
	}{
		{"纺织行业现在利润率大概多少", true},
		{"What are typical payment terms in the auto parts industry?", true},
		{"增值税专用发票和普通发票有啥区别", true},
		{"whats the going rate for trucking to Chengdu", true},
		{"Is the shipment tracking website down today?", true},
		{"is the payment portal offline right now?", true},
		{"Has the shipment been sent?", false},
		{"is it rude to call someone after 6 pm?", true},
		{"晚上给别人打电话礼貌吗", true},
		{"how long does an email take to arrive", true},
		{"微信支付怎么开通", true},
		{"what's the proper way to recycle empty toner cartridges?", true},
		{"对了，无锡到南京高铁要多久", true},
		{"微信怎么改名字？", true},
		{"What's the VAT rate in the UK?", true},
		{"可以帮我翻译一下hello吗", true},
		{"what's the weather in Hangzhou this week?", true},
		{"微信怎么发红包", true},
		{"how do I make my desk phone forward calls?", true},
		{"how can I reset my password for the portal?", true},
		{"她的账期是多少", false},
		{"What are her payment terms?", false},
		{"什么时候送货比较好？", false},
	}
	for _, tt := range tests {
		if got := intent.General(tt.question); got != tt.want {
			t.Errorf("General(%q) = %v, want %v", tt.question, got, tt.want)
		}
	}
}

func TestRefers(t *testing.T) {
	tests := []struct {
		question string
		want     bool
	}{
		{"What happened with the damaged seats?", true},
		{"Will your prices go up next year?", true},
		{"你们能供应可降解的外卖餐盒吗？", true},
		{"那批货怎么样了？", true},
		{"我的预算是多少", true},
		{"合肥到上海的高铁要多久？", false},
		{"浦东机场怎么去最方便？", false},
		{"订单号一般是怎么编的？有什么规则？", false},
		{"Why do cats purr?", false},
		{"who makes the best paper for laser printers?", false},
		{"whats the weather like in hangzhou this weekend", false},
		{"is the usual delivery slot still free?", true},
		{"did the best-before date on the gloves pass?", true},
		{"how do i fix a wobbly armrest on an office chair, any tips", false},
		{"这家店的红烧肉好吃不", false},
		{"how do I like to be reached?", true},
	}
	for _, tt := range tests {
		if got := intent.Refers(tt.question); got != tt.want {
			t.Errorf("Refers(%q) = %v, want %v", tt.question, got, tt.want)
		}
	}
}

func TestAbout(t *testing.T) {
	tests := []struct {
		question, user string
		want           bool
	}{
		// Questions about the speaker or the person an agent serves.
		{"Who is my employer?", "u04", true},
		{"What's the best way to get hold of me?", "u01", true},
		{"你们给我回消息的时候写多长合适", "", true},
		{"你们几点以后别给我打电话", "", true},
		{"你们给我退了多少钱？", "", true},
		{"我喜欢多详细的回答", "", true},
		{"你们能给我推荐个餐厅吗", "", false}, // a favour asked, nothing of the speaker's
		{"Did I ask when you are open during the festive season?", "u01", true},
		{"does she still want the short answers", "", true},
		{"What line of business is this lady in?", "", true},
		{"What line of business is the lady at the counter in?", "", false},
		{"How should we contact Alice?", "alice", true},
		{"When does Alice's membership expire", "alice", true},
		{"what did the customer order last time?", "", true},
		{"after the increase, how much money do i have for purchasing", "", true},
		{"we might expand into pharma next year, how do pharma companies store drugs", "", false},
		{"王女士是在哪个单位管啥的来着", "", true},
		{"这家一般多久给我们结一次钱", "", true},
		{"这家店的红烧肉好吃不", "", false},
		{"这位明星最近怎么样", "", false},
		{"Which outfit is this person with?", "", true},
		{"我的会员什么时候到期", "", true},
		{"她喜欢怎样的回复？", "", true},
		{"客户的预算是多少", "", true},
		{"告诉我我的会员等级是什么", "", true},
		{"u07 的地址是哪里？", "u07", true},
		{"Has the big desk order gone through yet?", "", false}, // Dealing, not About
		// Colloquial question words.
		{"她的账期是啥", "", true},
		{"跟他咋联系", "", true},
		{"要不要给她打电话", "", true},
		{"whats her budget", "", true},
		// Advice is for anyone, unless it is about someone.
		{"What should I know before visiting Beijing?", "", false},
		{"what should we keep in mind when buying a used car", "", false},
		{"Do I need to know Chinese to work in Shanghai?", "", false},
		{"What should I know about her before the call?", "", true},
		// Not about the user: world knowledge, requests, pleasantries.
		{"What is the capital of Australia?", "alice", false},
		{"Who was the person who invented the telephone?", "", false},
		{"Who won the football match last night?", "", false},
		{"今天天气怎么样？", "", false},
		{"世界杯冠军是谁？", "", false},
		{"tell me a joke?", "", false},
		{"能给我讲个笑话吗？", "", false},
		{"给我讲个笑话吧", "", false},
		{"Recommend me a good film for the weekend.", "", false},
		{"thank you so much, have a nice day", "", false},
		{"ok great, talk later", "", false},
		{"好的", "", false},
		{"xyz 123 订单", "", false},
		// How-to questions ask for instructions, not about the asker,
		// unless they ask about the asker's ways or name what is theirs.
		{"How do I bake sourdough bread?", "", false},
		{"how can we return a damaged parcel", "", false},
		{"我该怎么烤面包？", "", false},
		{"what should I do when a customer's parcel arrives broken", "", false},
		{"what do I do for a living?", "", true},
		{"What do I like to eat?", "", true},
		{"How do I prefer to be contacted?", "", true},
		{"How do I pay my invoice?", "", true},
		{"我怎么付我的账单？", "", true},
		// Statements and orders are not questions, whoever they name.
		{"I want the same style as last time", "", false},
		{"按老规矩处理", "", false},
		// A request for what is known asks as a question does; other
		// requests do not.
		{"Summarise what we know about Bob.", "bob", true},
		{"Tell me what you know about Bob", "bob", true},
		{"tell me a joke", "", false},
		{"describe the weather in Paris", "", false},
		// A user id inside another word names nobody.
		{"What is the status of ticket u011?", "u01", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			if got := intent.About(tt.question, intent.Person{ID: tt.user}); got != tt.want {
				t.Errorf("About(%q, %q) = %v, want %v", tt.question, tt.user, got, tt.want)
			}
		})
	}
}

// "We" and "our" are the user's firm when the user asks, the business when
// an agent or an admin does.
func TestAboutWe(t *testing.T) {
	tests := []struct {
		question string
		asking   bool
		want     bool
	}{
		{"Do we stock nitrile gloves in size XL?", false, false},
		{"Who's the account manager for Mingliang on our side?", false, false},
		{"咱们仓库周六开门吗？", false, false},
		{"Do we get free shipping on our orders?", true, true},
		{"我们的发票寄到哪了？", true, true},
		{"How much are we making on this restaurant client?", false, true},
		{"What do we clear on the Suzhou account?", false, true},
		{"Has she paid us yet?", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			if got := intent.About(tt.question, intent.Person{ID: "u01", Asking: tt.asking}); got != tt.want {
				t.Errorf("About(%q, asking %v) = %v, want %v", tt.question, tt.asking, got, tt.want)
			}
		})
	}
}

func TestUnnamed(t *testing.T) {
	tests := []struct{ q, user, want string }{
		{"did Alice have a problem with her chairs?", "alice", "did have a problem with her chairs?"},
		{"When does Alice's membership expire?", "alice", "When does membership expire?"},
		{"What answer style do Alice and Bob like?", "alice", "What answer style do and Bob like?"},
		{"Alice 的椅子有什么问题？", "alice", "的椅子有什么问题？"},
		{"Alicetown deliveries", "alice", "Alicetown deliveries"}, // not the word
		{"what about malice?", "alice", "what about malice?"},
		{"tell me my preferences", "alice", "tell me my preferences"},
		{"how is u07 doing", "u07", "how is doing"},
		{"anything", "", "anything"},
		{"lunch at Cafe\u0301 Mu\u0308ller?", "alice", "lunch at Caf\u00e9 M\u00fcller?"}, // composed, as memories are stored
		{"did Alice\u0301 call?", "alice", "did Alic\u00e9 call?"},
	}
	for _, tt := range tests {
		if got := intent.Unnamed(tt.q, intent.Person{ID: tt.user}); got != tt.want {
			t.Errorf("Unnamed(%q, %q) = %q, want %q", tt.q, tt.user, got, tt.want)
		}
	}
}

func TestNames(t *testing.T) {
	who := intent.Person{ID: "u02", Name: "Ethan  Bill Zhou Jr."}
	about := []struct {
		q    string
		want bool
	}{
		{"Did Ethan's first batch leave the warehouse already?", true},
		{"Ethan 的货现在到哪一步了？", true},
		{"Zhou 在哪个城市？", true},
		{"how is u02 doing?", true},
		{"What is the capital of Australia?", false},
		{"Did Ethanol prices rise?", false},
		{"is Ethans firm a slow payer", true}, // the apostrophe left out
		{"Did Ethans prices rise?", true},
		{"was the bill paid?", false}, // not written as a name
		{"was the Bill paid?", true},
	}
	for _, tt := range about {
		if got := intent.About(tt.q, who); got != tt.want {
			t.Errorf("About(%q, %+v) = %v, want %v", tt.q, who, got, tt.want)
		}
	}
	unnamed := []struct{ q, want string }{
		{"Did Ethan Bill Zhou Jr.'s first batch leave?", "Did first batch leave?"},
		{"Did Ethan's first batch leave?", "Did first batch leave?"},
		{"Did Ethans first batch leave?", "Did first batch leave?"},
		{"Did Ethan Zhou pay the bill?", "Did pay the bill?"},
		{"Ethan 的货现在到哪一步了？", "的货现在到哪一步了？"},
		{"how is U02 doing", "how is doing"},
		{"张伟的订单到了吗", "张伟的订单到了吗"},
	}
	for _, tt := range unnamed {
		if got := intent.Unnamed(tt.q, who); got != tt.want {
			t.Errorf("Unnamed(%q, %+v) = %q, want %q", tt.q, who, got, tt.want)
		}
	}
	if got, want := intent.Unnamed("张伟的订单到了吗", intent.Person{ID: "u9", Name: "张伟"}), "的订单到了吗"; got != want {
		t.Errorf("a Chinese name: %q, want %q", got, want)
	}
}

func TestAsks(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"What happened with the damaged seats?", true},
		{"will your prices go up next year", true},
		{"someones parcel is overdue, whats the drill", true},
		{"上次那批纸的钱付了没有？", true},
		{"Bob 为什么不高兴", true},
		{"tell me a joke", false},
		{"给我讲个笑话吧", false},
		{"ok great, talk later", false},
		{"Alice prefers short answers.", false},
		{"hey so what do u actually remember about me", true},
		{"Noah wants replies itemised rather than in paragraphs, right", true},
		{"my ink cartridges got pushed back, to when", true},
		{"after the increase, how much money do i have for purchasing", true},
		{"anything about how she likes to be dealt with", true},
		{"她们家付钱利索不", true},
		{"我跟你们来往的那些讲究你们都记着的吧", true},
		{"给他写东西要写多细", true},
		{"这家咱们在她身上赚得多不多", true},
		{"那批货到没到", true},
		{"不不不，我说错了", false},
		{"能不能直接说重点", false},
		{"hey, thanks so much", false},
		{"节后再联系吧", false},
		{"Have a nice evening, and thanks for fixing the invoice", false},
		{"Have you shipped it?", true},
		{"ok great, talk later", false},
	}
	for _, tt := range tests {
		if got := intent.Asks(tt.text); got != tt.want {
			t.Errorf("Asks(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestHowTo(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"How do I top up my Oyster card?", true},
		{"how can I renew my passport", true},
		{"我的悠遊卡要怎麼儲值？", true},
		{"微信點樣轉賬？", true},
		{"What's my delivery address?", false},
		{"How should I talk to Carol, by message or voice?", false},
		{"How do I like things explained to me?", false},
		{"我的货怎么还没到", false},
		{"When does my membership expire?", false},
	} {
		if got := intent.HowTo(tc.text); got != tc.want {
			t.Errorf("HowTo(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
