package facts

import "testing"

func TestBlank(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"", true},
		{" \t\n", true},
		{"\x01\x02\x1f", true},
		{"\u200b\u3000\u2800\u3164\ufe0f", true},
		{"a", false},
		{"\x01 cartons \x01", false},
		{"好", false},
	} {
		if got := Blank(tc.text); got != tc.want {
			t.Errorf("Blank(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
