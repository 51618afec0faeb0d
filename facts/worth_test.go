package facts

import "testing"

func TestWorthless(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"ok", ChitChat},
		{"Thanks!", ChitChat},
		{"Thanks a lot for that!", ChitChat},
		{"thank you so much 🙏", ChitChat},
		{"Good morning :)", ChitChat},
		{"ＯＫ，谢谢", ChitChat},
		{"好的，谢谢！", ChitChat},
		{"嗯嗯 哈哈哈", ChitChat},
		{"收到，明白了", ChitChat},
		{"...", ContentFree},
		{"👍👍", ContentFree},
		{"?!", ContentFree},
		{"k", ContentFree},
		{"   ", ContentFree},
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
		if got := Worthless(tc.text); got != tc.want {
			t.Errorf("Worthless(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
