package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/policyadmin"
)

func TestCapReasons(t *testing.T) {
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("r%02d", i)
		}
		return out
	}
	long := strings.Repeat("é", policyadmin.MaxReasonChars+1)
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"none", nil, nil},
		{"a few, as they are", []string{"a", "b"}, []string{"a", "b"}},
		{"exactly the most", many(policyadmin.MaxReasons), many(policyadmin.MaxReasons)},
		{"more than the most: how many more", many(2000), append(many(policyadmin.MaxReasons-1), "… and 1985 more reasons")},
		{"one too long, cut", []string{long}, []string{strings.Repeat("é", policyadmin.MaxReasonChars-1) + "…"}},
		{"on one line, nothing turned around", []string{"allow\nforged: line \u202eevil"}, []string{"allow forged: line evil"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, capReasons(tc.in)); d != "" {
				t.Errorf("capReasons (-want +got):\n%s", d)
			}
		})
	}
}
