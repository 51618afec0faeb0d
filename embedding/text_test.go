package embedding

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
	Kind tokenKind
	Text string
}

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []token
	}{
		{"SO-1001 shipped", []token{{tokCompound, "so-1001"}, {tokPart, "1001"}, {tokWord, "shipped"}}},
		{"e-mail the PO", []token{{tokCompound, "e-mail"}, {tokPart, "e"}, {tokPart, "mail"}, {tokWord, "po"}}},
		{"can't ship, won't pay, isn't late", []token{{tokWord, "ship"}, {tokWord, "pay"}, {tokWord, "late"}}},
		{"1,200 CNY; 1,2,3", []token{{tokWord, "1200"}, {tokWord, "cny"}, {tokWord, "1"}, {tokWord, "2"}, {tokWord, "3"}}},
		{"Alice的预算是十万元。", []token{{tokWord, "alice"}, {tokCJK, "预算"}, {tokCJK, "十万元"}}},
		{"今天天气怎么样", []token{{tokCJK, "天气"}}},
		{"trailing-", []token{{tokWord, "trailing"}}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			var got []token
			tokenize(tc.text, func(k tokenKind, s string) { got = append(got, token{k, s}) })
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("tokenize(%q) (-want +got):\n%s", tc.text, d)
			}
		})
	}
}

func TestStem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"replies", "reply"},
		{"answers", "answer"},
		{"shipped", "ship"},
		{"shipping", "ship"},
		{"shipments", "shipment"},
		{"preferred", "prefer"},
		{"prefers", "prefer"},
		{"expires", "expir"},
		{"expired", "expir"},
		{"approve", "approv"},
		{"approved", "approv"},
		{"status", "status"},
		{"address", "address"},
		{"boxes", "box"},
		{"need", "need"},
		{"bus", "bus"},
		{"so", "so"},
		{"café", "café"},
	} {
		if got := stem(tc.in); got != tc.want {
			t.Errorf("stem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLexiconIsConsistent(t *testing.T) {
	seen := map[string]string{}
	for _, g := range conceptGroups {
		for _, w := range g {
			if prev, ok := seen[w]; ok {
				t.Errorf("%q is in the groups of %q and %q", w, prev, g[0])
			}
			seen[w] = g[0]
			if Keywords(w) == nil {
				t.Errorf("lexicon word %q is a stopword", w)
			}
		}
		if isCJK([]rune(g[0])[0]) {
			t.Errorf("group %v: the head must be English", g)
		}
	}
}

func TestHashRunesMatchesHash(t *testing.T) {
	for _, s := range []string{"", "预", "预算", "a", "so-1001"} {
		if got, want := hashRunes(classCJK, []rune(s)), hash(classCJK, s); got != want {
			t.Errorf("hashRunes(%q) = %x, hash = %x", s, got, want)
		}
	}
}
