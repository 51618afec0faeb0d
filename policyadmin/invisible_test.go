package policyadmin

import (
	"context"
	"errors"
	"testing"
)

// invisibleCases holds a character of each class refused in grant kinds
// and module names, as memory refuses them in memory kinds.
var invisibleCases = []struct {
	name string
	r    rune
}{
	{"tab (control)", '\t'},
	{"next line (C1 control)", '\u0085'},
	{"zero-width space (format)", '\u200b'},
	{"soft hyphen (format)", '\u00ad'},
	{"right-to-left override (format)", '\u202e'},
	{"tag letter a (format)", '\U000E0061'},
	{"combining grapheme joiner", '\u034f'},
	{"variation selector 1", '\ufe00'},
	{"variation selector 16", '\ufe0f'},
	{"variation selector 17", '\U000E0100'},
	{"variation selector 256", '\U000E01EF'},
	{"Mongolian free variation selector", '\u180b'},
	{"Khmer inherent vowel aq", '\u17b4'},
	{"Khmer inherent vowel aa", '\u17b5'},
	{"Hangul choseong filler", '\u115f'},
	{"Hangul jungseong filler", '\u1160'},
	{"Hangul filler", '\u3164'},
	{"halfwidth Hangul filler", '\uffa0'},
	{"reserved default-ignorable", '\U000E0FFF'},
	{"line separator", '\u2028'},
	{"paragraph separator", '\u2029'},
	{"no-break space", '\u00a0'},
}

func TestInvisibleInGrantKindsAndModuleNames(t *testing.T) {
	ctx := context.Background()
	for _, tt := range invisibleCases {
		t.Run(tt.name, func(t *testing.T) {
			kind := "pre" + string(tt.r) + "ference"
			f := newFixture(t)
			n := validGrant()
			n.Kinds = []string{kind}
			_, err := f.svc.CreateGrant(ctx, adminAcme, n)
			if field := fieldOf(t, err); field != "kinds" {
				t.Errorf("create with kind %q: field = %q, want kinds (err %v)", kind, field, err)
			}
			g, err := f.svc.CreateGrant(ctx, adminAcme, validGrant())
			if err != nil {
				t.Fatal(err)
			}
			kinds := []string{"order", kind}
			_, err = f.svc.UpdateGrant(ctx, adminAcme, g.ID, GrantChange{Kinds: &kinds})
			if field := fieldOf(t, err); field != "kinds" {
				t.Errorf("update to kinds %q: field = %q, want kinds (err %v)", kinds, field, err)
			}
			if len(f.grants.grants) != 1 || len(f.grants.grants[0].Kinds) != 0 {
				t.Errorf("grants after refused kinds: %+v", f.grants.grants)
			}
			name := "auth" + string(tt.r) + "z.rego"
			var rej *PolicyRejectedError
			_, _, err = f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Modules: []PolicyModule{{Name: name, Source: "package mneme.authz\n"}}})
			if !errors.As(err, &rej) || rej.Code != RejectInvalid {
				t.Errorf("push module %q: %v, want %s", name, err, RejectInvalid)
			}
		})
	}
}
