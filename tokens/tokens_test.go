package tokens

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeywords(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"What's the weather today?", []string{"weather"}},
		{"How are you doing?", nil},
		{"Does the user like short replies?", []string{"user", "like", "short", "replies"}},
		{"预算多少", []string{"预算"}},
		{"预算是十万元", []string{"预算", "十万", "万元"}},
		{"订单 SO-1001 发货了吗？", []string{"订单", "so-1001", "发货"}},
		{"Ｏｒｄｅｒ　ＳＯ－１００２", []string{"order", "so-1002"}},
		{"Alice's budget: 100,000 CNY (was 100k)", []string{"alice", "budget", "100k", "cny"}},
		{"Don't ship SO-1003 before Monday", []string{"ship", "so-1003", "monday"}},
		{"我要退货", []string{"要退", "退货"}},
		{"华东包括哪些省份", []string{"华东", "东包", "包括", "省份"}},
		{"Carol 喜欢什么样的回复", []string{"carol", "喜欢", "样", "回复"}},
		{"VAT 3.5% on INV-2026-0931", []string{"vat", "3.5", "inv-2026-0931"}},
		{"order, order, ORDER", []string{"order"}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Keywords(tc.text)); d != "" {
				t.Errorf("Keywords(%q) (-want +got):\n%s", tc.text, d)
			}
		})
	}
}

type token struct {
	Kind Kind
	Text string
}

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []token
	}{
		{"SO-1001 shipped", []token{{Compound, "so-1001"}, {Part, "1001"}, {Word, "shipped"}}},
		{"e-mail the PO", []token{{Compound, "e-mail"}, {Part, "e"}, {Part, "mail"}, {Word, "po"}}},
		{"can't ship, won't pay, isn't late", []token{{Word, "ship"}, {Word, "pay"}, {Word, "late"}}},
		{"1,200 CNY; 1,2,3", []token{{Word, "1200"}, {Word, "cny"}, {Word, "1"}, {Word, "2"}, {Word, "3"}}},
		{"Alice的预算是十万元。", []token{{Word, "alice"}, {CJK, "预算"}, {CJK, "十万元"}}},
		{"今天天气怎么样", []token{{CJK, "天气"}}},
		{"trailing-", []token{{Word, "trailing"}}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			var got []token
			Tokenize(tc.text, func(k Kind, s string) { got = append(got, token{k, s}) })
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Tokenize(%q) (-want +got):\n%s", tc.text, d)
			}
		})
	}
}
