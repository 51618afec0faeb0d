package eval

import (
	"context"
	"slices"
	"testing"
	"time"

	"mneme/internal/apptest"
	"mneme/seed"
)

// sentences are what a new user tries first on the demo: the seeds' own
// examples, generic questions about the user, two paraphrases sharing no
// word with their memory, questions about the rules of a case, and
// chit-chat or unrelated questions that must recall nothing.
var sentences = []Question{
	{ID: "membership-zh", As: "user", User: "alice", Lang: "zh", Query: "我的会员什么时候到期", Expect: []string{"alice-membership"}},
	{ID: "membership-en", As: "user", User: "alice", Lang: "en", Query: "when does my membership run out", Expect: []string{"alice-membership"}},
	{ID: "style-last-time", As: "user", User: "alice", Lang: "zh", Query: "我还想要上次那个风格", Expect: []string{"alice-answer-style"}},
	{ID: "style-to-the-point", As: "user", User: "alice", Lang: "zh", Query: "能不能直接说重点", Expect: []string{"alice-answer-style"}},
	{ID: "rules-as-usual", As: "support-bot", User: "alice", Lang: "zh", Query: "按老规矩处理", Expect: []string{"rule-approval", "rule-free-shipping"}},
	{ID: "preferences", As: "user", User: "alice", Lang: "en", Query: "tell me my preferences", Expect: []string{"alice-answer-style"}},
	{ID: "budget-en", As: "order-bot", User: "alice", Lang: "en", Query: "what is her budget", Expect: []string{"alice-budget-150k"}},
	{ID: "budget-zh", As: "order-bot", User: "alice", Lang: "zh", Query: "她的预算是多少", Expect: []string{"alice-budget-150k"}},
	{ID: "ship-goods", As: "order-bot", User: "alice", Lang: "en", Query: "where should we ship the goods", Expect: []string{"alice-delivery-window"}},
	{ID: "delivery-requirements", As: "support-bot", User: "carol", Lang: "zh", Query: "送货时间有什么要求？", Expect: []string{"carol-delivery-window"}},
	{ID: "spend", As: "order-bot", User: "alice", Lang: "en", Query: "how much can she spend", Expect: []string{"alice-budget-150k"}},
	{ID: "rules-big-orders", As: "order-bot", User: "alice", Lang: "en", Query: "which rules apply to big orders?", Expect: []string{"rule-approval"}},
	{ID: "approval-zh", As: "order-bot", User: "alice", Lang: "zh", Query: "大额订单需要谁审批？", Expect: []string{"rule-approval"}},
	{ID: "sign-off", As: "order-bot", User: "alice", Lang: "en", Query: "do large orders need sign-off?", Expect: []string{"rule-approval"}},
	{ID: "broken-parcel", As: "support-bot", User: "bob", Lang: "en", Query: "what should I do when a customer's parcel arrives broken?", Expect: []string{"howto-damaged"}},
	{ID: "our-rules", As: "support-bot", User: "alice", Lang: "en", Query: "what are our rules?", Expect: []string{"rule-approval", "rule-free-shipping"}},
	{ID: "smoking", As: "support-bot", User: "alice", Lang: "en", Query: "is smoking allowed in the office?", Unrelated: true},
	{ID: "thanks", As: "user", User: "alice", Lang: "en", Query: "thank you so much, have a nice day", Unrelated: true},
	{ID: "xyz-order", As: "user", User: "alice", Lang: "zh", Query: "xyz 123 订单", Unrelated: true},
	{ID: "ok", As: "user", User: "alice", Lang: "zh", Query: "好的", Unrelated: true},
}

// TestSentences asks the sentences through real recall under policy over
// the demo data with the built-in embedder: every one finds its memories in
// the first K (and nothing forbidden, nor superseded), the chit-chat
// nothing.
func TestSentences(t *testing.T) {
	qs := slices.Clone(sentences)
	for i := range qs {
		qs[i].Dataset, qs[i].Split = DatasetDemo, SplitTune
		qs[i].Category = "seed-sentence"
		if qs[i].Unrelated {
			qs[i].Category = "chit-chat"
		}
	}
	demo, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(qs, map[string]*seed.Dataset{DatasetDemo: demo}); err != nil {
		t.Fatal(err)
	}
	f := apptest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := Load(ctx, f.App.Service, f.App.Admin, f.App.Keys, demo, f.Tenant+"-dem")
	if err != nil {
		t.Fatal(err)
	}
	outcomes, err := Run(ctx, f.App.Service, map[string]*Loaded{DatasetDemo: l}, qs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outcomes {
		q := o.Question
		switch {
		case len(o.Forbidden) > 0:
			t.Errorf("%s %q returned forbidden %v (got %v)", q.ID, q.Query, o.Forbidden, o.Got)
		case q.Unrelated && len(o.Got) > 0:
			t.Errorf("%s %q should recall nothing, got %v", q.ID, q.Query, o.Got)
		case o.Hits < len(q.Expect):
			t.Errorf("%s %q: want %v in the first %d, got %v", q.ID, q.Query, q.Expect, K, o.Got)
		}
	}
}
