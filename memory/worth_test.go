package memory

import "testing"

func TestWorthless(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"ok", ReasonChitChat},
		{"Thanks!", ReasonChitChat},
		{"Thanks a lot for that!", ReasonChitChat},
		{"thank you so much 🙏", ReasonChitChat},
		{"Good morning :)", ReasonChitChat},
		{"ＯＫ，谢谢", ReasonChitChat},
		{"好的，谢谢！", ReasonChitChat},
		{"嗯嗯 哈哈哈", ReasonChitChat},
		{"收到，明白了", ReasonChitChat},
		{"...", ReasonContentFree},
		{"👍👍", ReasonContentFree},
		{"?!", ReasonContentFree},
		{"k", ReasonContentFree},
		{"   ", ReasonContentFree},
		{"ok, ship it to Berlin", ""},
		{"thanks, the budget is 100k", ""},
		{"Alice prefers short answers", ""},
		{"好评", ""},
		{"好的，预算改成15万", ""},
		{"用户喜欢简短的回答", ""},
		{"no sugar", ""},
		{"42", ""},
	}
	for _, tc := range tests {
		if got := worthless(tc.text); got != tc.want {
			t.Errorf("worthless(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
