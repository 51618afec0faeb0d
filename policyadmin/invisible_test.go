package policyadmin

import (
	"context"
	"errors"
	"testing"
)

// invisibleCases are a few of the characters memory.Invisible refuses
// (memory's tests hold every class): grant kinds and module names use it.
var invisibleCases = []struct {
	name string
	r    rune
}{
	{"zero-width space (format)", '\u200b'},
	{"variation selector 16", '\ufe0f'},
	{"Hangul filler", '\u3164'},
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
