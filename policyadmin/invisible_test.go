package policyadmin

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"mneme/memory"
)

// invisibleCases are a few of the characters facts.Invisible refuses
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
			_, _, err := f.svc.CreateGrant(ctx, adminAcme, n)
			if field := fieldOf(t, err); field != "kinds" {
				t.Errorf("create with kind %q: field = %q, want kinds (err %v)", kind, field, err)
			}
			g, _, err := f.svc.CreateGrant(ctx, adminAcme, validGrant())
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

// TestGrantKindsFollowTheMemoryKindRule: a grant names kinds by the rule
// memories' kinds follow, so that no grant names a kind no memory may
// have: look-alike letters are refused, in a new grant and a change, and a
// kind is kept composed, as memories' kinds are.
func TestGrantKindsFollowTheMemoryKindRule(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{
		"\uff45mail",            // full-width ｅ
		"pr\u0435ference",       // Cyrillic е among Latin letters
		"\u0301email",           // a combining mark with nothing to sit on
		"\ufb01le",              // the ligature ﬁ
		strings.Repeat("k", 65), // longer than a memory's kind may be
	} {
		t.Run(kind, func(t *testing.T) {
			if memory.ValidKind(kind) {
				t.Fatalf("memory.ValidKind(%q) = true: not a case of the rule", kind)
			}
			f := newFixture(t)
			n := validGrant()
			n.Kinds = []string{kind}
			_, _, err := f.svc.CreateGrant(ctx, adminAcme, n)
			var inv *memory.InvalidError
			if !errors.As(err, &inv) || inv.Field != "kinds" || !strings.Contains(inv.Error(), memory.KindRule) {
				t.Errorf("create with kind %q: %v, want invalid kinds saying the memory kind rule", kind, err)
			}
			g, _, err := f.svc.CreateGrant(ctx, adminAcme, validGrant())
			if err != nil {
				t.Fatal(err)
			}
			kinds := []string{"email", kind}
			if _, err = f.svc.UpdateGrant(ctx, adminAcme, g.ID, GrantChange{Kinds: &kinds}); fieldOf(t, err) != "kinds" {
				t.Errorf("update to kinds %q: %v, want invalid kinds", kinds, err)
			}
		})
	}
	f := newFixture(t)
	n := validGrant()
	n.Kinds = []string{"cafe\u0301", "caf\u00e9", "报销"}
	g, _, err := f.svc.CreateGrant(ctx, adminAcme, n)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"caf\u00e9", "报销"}; !slices.Equal(g.Kinds, want) {
		t.Errorf("kinds = %q, want %q (composed, once each)", g.Kinds, want)
	}
}
