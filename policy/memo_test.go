package policy

import (
	"context"
	"slices"
	"testing"
	"time"

	"mneme/memory"
	"mneme/policyadmin"
)

// Decisions are remembered, and forgotten the moment what they saw changes:
// the grants, the tenant's settings, the clock passing a grant's expiry, the
// policy itself.
func TestDecisionMemo(t *testing.T) {
	ctx := context.Background()
	at := testNow.Add(time.Hour)
	e := engineWithGrantExpiring(t, at)
	alice := memory.Principal{Tenant: "acme", Kind: memory.KindUser, ID: "u1"}
	rule := memory.Resource{Tenant: "acme", ID: "r1", AgentID: "admin", Type: memory.TypeProcedural,
		Sensitivity: memory.SensitivityInternal, Status: memory.StatusActive, Scope: memory.ScopeTenant}
	otherMemory := orderM
	otherMemory.ID = "m2"
	settings := func(usersReadShared bool) func() {
		return func() {
			s := policyadmin.Settings{UsersReadShared: usersReadShared, UserMaxSensitivity: memory.SensitivityInternal}
			if err := e.UseSettings(ctx, "acme", 100, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		name      string
		do        func()
		p         memory.Principal
		r         memory.Resource
		now       time.Time
		want      bool
		evaluated bool
	}{
		{"granted", nil, support, orderM, testNow, true, true},
		{"the same decision a minute later", nil, support, orderM, testNow.Add(time.Minute), true, false},
		{"another memory", nil, support, otherMemory, testNow, true, true},
		{"at the grant's expiry", nil, support, orderM, at, false, true},
		{"before the expiry again", nil, support, orderM, testNow, true, true},
		{"remembered again", nil, support, orderM, testNow, true, false},
		{"grant revoked", func() { setGrants(t, e) }, support, orderM, testNow, false, true},
		{"grant given back", func() { setGrants(t, e, grantG1) }, support, orderM, testNow, true, true},
		{"a user, shared knowledge not open to users", settings(false), alice, rule, testNow, false, true},
		{"remembered denial", nil, alice, rule, testNow, false, false},
		{"settings open it", settings(true), alice, rule, testNow, true, true},
	}
	for _, st := range steps {
		if st.do != nil {
			st.do()
		}
		before := e.base.memo.misses.Load()
		d, err := e.Decide(ctx, st.p, memory.ActionRead, st.r, st.now)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if d.Allow != st.want {
			t.Errorf("%s: allow %v, want %v (reasons %v)", st.name, d.Allow, st.want, d.Reasons)
		}
		if evaluated := e.base.memo.misses.Load() > before; evaluated != st.evaluated {
			t.Errorf("%s: evaluated %v, want %v", st.name, evaluated, st.evaluated)
		}
	}
}

// A remembered decision hands each caller reasons of its own.
func TestDecisionMemoReasonsAreCopies(t *testing.T) {
	e := newEngine(t, Options{})
	setGrants(t, e, grantG1)
	first, err := e.Decide(context.Background(), support, memory.ActionRead, orderM, testNow)
	if err != nil || len(first.Reasons) == 0 {
		t.Fatalf("decide = %+v, %v", first, err)
	}
	want := slices.Clone(first.Reasons)
	first.Reasons[0] = "changed by a caller"
	second, err := e.Decide(context.Background(), support, memory.ActionRead, orderM, testNow)
	if err != nil || !slices.Equal(second.Reasons, want) {
		t.Errorf("remembered reasons = %v, %v; want %v", second.Reasons, err, want)
	}
}
