package policyadmin

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"mneme/memory"
)

func TestSync(t *testing.T) {
	ctx := context.Background()
	t.Run("first request loads and announces", func(t *testing.T) {
		f := newFixture(t)
		fp := f.policies
		fp.state.Epoch, fp.state.GrantRevision = 0, 4
		if err := f.svc.Sync(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if len(fp.usedEpoch) != 1 || len(fp.usedGrant) != 1 || len(fp.published) != 1 || fp.published[0].Grants != 4 {
			t.Errorf("used %v %v, announced %v", fp.usedEpoch, fp.usedGrant, fp.published)
		}
	})
	t.Run("current replica does nothing more", func(t *testing.T) {
		f := newFixture(t)
		fp := f.policies
		fp.loaded = &Revisions{PolicyEpoch: 2, Grants: 3}
		fp.announced = &Revisions{PolicyEpoch: 2, Grants: 3}
		fp.stateErr = errTest("the store must not be read")
		if err := f.svc.Sync(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("behind on grants reloads grants only", func(t *testing.T) {
		f := newFixture(t)
		fp := f.policies
		fp.loaded = &Revisions{PolicyEpoch: 2, Grants: 3}
		fp.announced = &Revisions{PolicyEpoch: 2, Grants: 5}
		fp.state.Epoch, fp.state.GrantRevision = 2, 5
		if err := f.svc.Sync(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if len(fp.usedEpoch) != 0 || !slices.Equal(fp.usedGrant, []int64{5}) || len(fp.published) != 0 {
			t.Errorf("used %v %v, announced %v", fp.usedEpoch, fp.usedGrant, fp.published)
		}
	})
	t.Run("behind on policy reloads the active revision", func(t *testing.T) {
		f := newFixture(t)
		fp := f.policies
		fp.revisions[1] = PolicyRevision{Number: 1}
		fp.loaded = &Revisions{PolicyEpoch: 1, Grants: 3}
		fp.announced = &Revisions{Policy: 1, PolicyEpoch: 2, Grants: 3}
		fp.state.Active, fp.state.Epoch, fp.state.GrantRevision = 1, 2, 3
		if err := f.svc.Sync(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(fp.usedEpoch, []int64{2}) || len(fp.usedGrant) != 0 {
			t.Errorf("used %v %v", fp.usedEpoch, fp.usedGrant)
		}
	})
	t.Run("no revisions: deny", func(t *testing.T) {
		f := newFixture(t)
		fp := f.policies
		fp.loaded = &Revisions{}
		fp.busErr = errTest("redis down")
		if err := f.svc.Sync(ctx, "acme"); !errors.Is(err, memory.ErrUnavailable) {
			t.Errorf("err = %v, want memory.ErrUnavailable", err)
		}
	})
	t.Run("behind and no store: deny", func(t *testing.T) {
		f := newFixture(t)
		fp := f.policies
		fp.loaded = &Revisions{}
		fp.announced = &Revisions{Grants: 1}
		fp.stateErr = errTest("neo4j down")
		if err := f.svc.Sync(ctx, "acme"); !errors.Is(err, memory.ErrUnavailable) {
			t.Errorf("err = %v, want memory.ErrUnavailable", err)
		}
	})
}

func TestPolicyAdminIsForAdmins(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.authz.decide = denyAction(memory.ActionManage)
	if _, err := f.svc.PolicyStatus(ctx, agentSupport); !errors.Is(err, memory.ErrForbidden) {
		t.Errorf("PolicyStatus as an agent: %v", err)
	}
	if _, _, err := f.svc.PushPolicy(ctx, userAlice, NewPolicy{Modules: []PolicyModule{{Name: "a.rego", Source: "package a"}}}); !errors.Is(err, memory.ErrForbidden) {
		t.Errorf("PushPolicy as a user: %v", err)
	}
}

// A Service is never half built: New names every missing part, so no
// method has to ask whether administration is configured.
func TestNewRequiresEveryDependency(t *testing.T) {
	f := newFixture(t)
	full := Options{Policies: f.policies, Grants: f.grants, Principals: f.agents, Engine: f.policies, Authz: f.authz, Bus: f.policies, Decisions: f.policies,
		Audit: f.audit, AuditLog: f.audit}
	tests := []struct {
		name string
		drop func(*Options)
	}{
		{"Policies", func(o *Options) { o.Policies = nil }},
		{"Grants", func(o *Options) { o.Grants = nil }},
		{"Principals", func(o *Options) { o.Principals = nil }},
		{"Engine", func(o *Options) { o.Engine = nil }},
		{"Authz", func(o *Options) { o.Authz = nil }},
		{"Bus", func(o *Options) { o.Bus = nil }},
		{"Decisions", func(o *Options) { o.Decisions = nil }},
		{"Audit", func(o *Options) { o.Audit = nil }},
		{"AuditLog", func(o *Options) { o.AuditLog = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := full
			tt.drop(&o)
			if _, err := New(o); err == nil || !strings.Contains(err.Error(), tt.name) {
				t.Fatalf("New without %s: %v, want an error naming it", tt.name, err)
			}
		})
	}
	t.Run("all missing", func(t *testing.T) {
		_, err := New(Options{})
		for _, tt := range tests {
			if err == nil || !strings.Contains(err.Error(), tt.name) {
				t.Errorf("New(Options{}): %v, does not name %s", err, tt.name)
			}
		}
	})
	t.Run("defaults", func(t *testing.T) {
		s, err := New(full)
		if err != nil {
			t.Fatal(err)
		}
		if s.log == nil || s.now == nil {
			t.Errorf("defaults not applied: log=%v now=%v", s.log != nil, s.now != nil)
		}
	})
}

func TestPushAndRollback(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	fp := f.policies
	mods := []PolicyModule{{Name: "authz.rego", Source: "package mneme.authz\n"}}
	for _, bad := range [][]PolicyModule{
		nil,
		{{Name: "../x.rego", Source: ""}},
		{{Name: "a.txt", Source: ""}},
		{{Name: "a.rego"}, {Name: "a.rego"}},
	} {
		var rej *PolicyRejectedError
		if _, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Modules: bad}); !errors.As(err, &rej) || rej.Code != RejectInvalid {
			t.Errorf("push %v: %v, want %s", bad, err, RejectInvalid)
		}
	}
	fp.checkErr = &PolicyRejectedError{Code: RejectTestFailed, Problems: []string{"x"}}
	if _, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Modules: mods}); err == nil || len(fp.revisions) != 0 {
		t.Errorf("a rejected policy was stored: %v", err)
	}
	fp.checkErr = nil
	for i := 1; i <= 2; i++ {
		rev, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Message: "m", Modules: mods})
		if err != nil || rev.Number != int64(i) || rev.Author != "admin:root" {
			t.Fatalf("push %d: %+v, %v", i, rev, err)
		}
	}
	if _, err := f.svc.RollbackPolicy(ctx, adminAcme, nil); err == nil {
		t.Error("rollback with nothing to roll back to")
	}
	for _, n := range []int64{1, 2} {
		if _, err := f.svc.ActivatePolicy(ctx, adminAcme, n); err != nil {
			t.Fatal(err)
		}
	}
	st, err := f.svc.RollbackPolicy(ctx, adminAcme, nil)
	if err != nil || st.Active != 1 {
		t.Errorf("rollback: %+v, %v; want revision 1", st, err)
	}
	zero := int64(0)
	if st, err = f.svc.RollbackPolicy(ctx, adminAcme, &zero); err != nil || st.Active != 0 {
		t.Errorf("rollback to 0: %+v, %v", st, err)
	}
	// Every activation was loaded here and announced to the others.
	if !slices.Equal(fp.usedEpoch, []int64{1, 2, 3, 4}) || len(fp.published) != 4 {
		t.Errorf("loaded epochs %v, announced %v", fp.usedEpoch, fp.published)
	}
	fp.checkErr = &PolicyRejectedError{Code: RejectTestFailed}
	if _, err := f.svc.ActivatePolicy(ctx, adminAcme, 2); err == nil || fp.state.Active != 0 {
		t.Errorf("activated a revision that fails its check: %v", err)
	}
	if _, err := f.svc.ActivatePolicy(ctx, adminAcme, 0); err != nil {
		t.Errorf("revision 0 is checked at build time, not activation: %v", err)
	}
}

// TestNegativeRevisionIsInvalid: a negative revision is the same mistake
// wherever it is named, and refused as invalid before anything is decided,
// checked or activated.
func TestNegativeRevisionIsInvalid(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	minus := int64(-1)
	tests := []struct {
		name string
		call func() error
	}{
		{"policy", func() error { _, err := f.svc.Policy(ctx, adminAcme, -1); return err }},
		{"diff from", func() error { _, err := f.svc.DiffPolicies(ctx, adminAcme, -1, 0); return err }},
		{"diff to", func() error { _, err := f.svc.DiffPolicies(ctx, adminAcme, 0, -2); return err }},
		{"activate", func() error { _, err := f.svc.ActivatePolicy(ctx, adminAcme, -1); return err }},
		{"rollback", func() error { _, err := f.svc.RollbackPolicy(ctx, adminAcme, &minus); return err }},
		{"simulate", func() error { _, err := f.svc.Simulate(ctx, adminAcme, SimulateRequest{Revision: &minus}); return err }},
		{"replay", func() error { _, err := f.svc.Replay(ctx, adminAcme, ReplayRequest{Revision: &minus}); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inv *memory.InvalidError
			if err := tt.call(); !errors.As(err, &inv) || inv.Field != "revision" {
				t.Errorf("%s of revision -1: %v, want invalid revision", tt.name, err)
			}
		})
	}
	if len(f.policies.usedEpoch) != 0 || len(f.policies.checked) != 0 {
		t.Errorf("a negative revision was loaded (%v) or checked (%v)", f.policies.usedEpoch, f.policies.checked)
	}
}

func TestReplayCountsChanges(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	fp := f.policies
	fp.log = []DecisionRecord{{Result: ResultAllow}, {Result: ResultDeny}, {Result: ResultAllow}, {Result: ResultDeny}}
	fp.replay = []memory.Decision{{Allow: true}, {Allow: true}, {Allow: false, Reasons: []string{"no"}}, {Allow: false}}
	zero := int64(0)
	rep, err := f.svc.Replay(ctx, adminAcme, ReplayRequest{Revision: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Replayed != 4 || rep.DenyToAllow != 1 || rep.AllowToDeny != 1 || len(rep.Changes) != 2 ||
		rep.Changes[1].Result != ResultDeny || rep.Changes[1].Reasons[0] != "no" {
		t.Errorf("report %+v", rep)
	}
	if _, err := f.svc.Replay(ctx, adminAcme, ReplayRequest{Revision: &zero, Modules: []PolicyModule{{Name: "a.rego"}}}); err == nil {
		t.Error("replay with a revision and modules")
	}
}

// TestReplayInlineDraft: a draft sent inline passes every check of a push
// before any decision is replayed against it, is bounded in size, and is
// neither stored nor activated; a stored revision is not checked again.
func TestReplayInlineDraft(t *testing.T) {
	ctx := context.Background()
	draft := []PolicyModule{{Name: "authz.rego", Source: "package mneme.authz\n"}}
	tests := []struct {
		name     string
		modules  []PolicyModule
		checkErr error
		code     string // the rejection's code; "" when the replay runs
		checked  bool   // whether the engine's check ran
	}{
		{name: "passes", modules: draft, checked: true},
		{name: "fails its tests", modules: draft, checkErr: &PolicyRejectedError{Code: RejectTestFailed, Problems: []string{"test_x failed"}}, code: RejectTestFailed, checked: true},
		{name: "parse error", modules: draft, checkErr: &PolicyRejectedError{Code: RejectParse, Problems: []string{"authz.rego:1: unexpected"}}, code: RejectParse, checked: true},
		{name: "no modules", modules: nil, code: RejectInvalid},
		{name: "bad name", modules: []PolicyModule{{Name: "../authz.rego", Source: "package x"}}, code: RejectInvalid},
		{name: "too large in all", modules: []PolicyModule{
			{Name: "a.rego", Source: strings.Repeat("#", MaxPolicyModuleBytes)},
			{Name: "b.rego", Source: strings.Repeat("#", MaxPolicyModuleBytes)},
			{Name: "c.rego", Source: "package x"},
		}, code: RejectInvalid},
		{name: "module too large", modules: []PolicyModule{{Name: "a.rego", Source: strings.Repeat("#", MaxPolicyModuleBytes+1)}}, code: RejectInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			fp := f.policies
			fp.log = []DecisionRecord{{Result: ResultAllow}, {Result: ResultDeny}}
			fp.replay = []memory.Decision{{Allow: false, Reasons: []string{"draft says no"}}, {Allow: false}}
			fp.checkErr = tt.checkErr
			rep, err := f.svc.Replay(ctx, adminAcme, ReplayRequest{Modules: tt.modules})
			if got := len(fp.checked) == 1; got != tt.checked {
				t.Errorf("engine check ran %d times", len(fp.checked))
			}
			if tt.code != "" {
				var rej *PolicyRejectedError
				if !errors.As(err, &rej) || rej.Code != tt.code {
					t.Fatalf("err = %v, want %s", err, tt.code)
				}
				if len(fp.replayed) != 0 {
					t.Error("a rejected draft was replayed")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if rep.Check == nil || rep.Check.Digest != "sha256:x" || rep.AllowToDeny != 1 || len(rep.Changes) != 1 {
					t.Errorf("report %+v", rep)
				}
				if len(fp.replayed) != 1 || !slices.Equal(fp.replayed[0], tt.modules) {
					t.Errorf("replayed %v, want the draft", fp.replayed)
				}
			}
			if len(fp.revisions) != 0 || fp.state.Active != 0 || len(fp.usedEpoch) != 0 || len(fp.published) != 0 {
				t.Errorf("a replay stored %d revisions, activated %d, loaded %v, announced %v", len(fp.revisions), fp.state.Active, fp.usedEpoch, fp.published)
			}
		})
	}

	// A stored revision passed its checks when it was pushed.
	f := newFixture(t)
	f.policies.log = []DecisionRecord{{Result: ResultAllow}}
	f.policies.replay = []memory.Decision{{Allow: true}}
	zero := int64(0)
	rep, err := f.svc.Replay(ctx, adminAcme, ReplayRequest{Revision: &zero})
	if err != nil || rep.Check != nil || len(f.policies.checked) != 0 {
		t.Errorf("replay of revision 0: %+v, %v; checked %d times", rep, err, len(f.policies.checked))
	}
	f.authz.decide = denyAction(memory.ActionManage)
	if _, err := f.svc.Replay(ctx, agentSupport, ReplayRequest{Modules: draft}); !errors.Is(err, memory.ErrForbidden) || len(f.policies.checked) != 0 {
		t.Errorf("an agent replays a draft: %v", err)
	}
}

func TestWarmUpOnlyReads(t *testing.T) {
	f := newFixture(t)
	if err := f.svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.grants.listCalls, memory.WarmTenants) {
		t.Errorf("grants read for %v, want %v", f.grants.listCalls, memory.WarmTenants)
	}
	fp := f.policies
	if len(fp.usedEpoch) != 0 || len(fp.usedGrant) != 0 || len(fp.published) != 0 || len(f.authz.decisions) != 0 {
		t.Errorf("warm-up loaded %v %v, announced %v, decided %v", fp.usedEpoch, fp.usedGrant, fp.published, f.authz.decisions)
	}
	fp.stateErr = errTest("neo4j down")
	if err := f.svc.WarmUp(context.Background()); !errors.Is(err, fp.stateErr) {
		t.Errorf("err = %v, want the store's error", err)
	}
}

// TestRollbackStepsBack: each rollback without a revision goes one step
// further back through the revisions activated, never to one it left; a
// rollback to a revision of the lineage leaves out those after it.
func TestRollbackStepsBack(t *testing.T) {
	ctx := context.Background()
	mods := []PolicyModule{{Name: "authz.rego", Source: "package mneme.authz\n"}}
	rev := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name      string
		activate  []int64
		rollbacks []*int64 // nil: back to the previous revision
		want      []int64  // the revision active after each rollback
	}{
		{"steps back to the bundled policy", []int64{1, 2}, []*int64{nil, nil}, []int64{1, 0}},
		{"skips the revisions rolled back from", []int64{1, 2, 3}, []*int64{nil, nil, nil}, []int64{2, 1, 0}},
		{"the same revision twice in a row is one step", []int64{1, 2, 2}, []*int64{nil}, []int64{1}},
		{"an earlier revision activated again is a step of its own", []int64{1, 2, 1}, []*int64{nil, nil, nil}, []int64{2, 1, 0}},
		{"to a revision of the lineage", []int64{1, 2, 3}, []*int64{rev(1), nil}, []int64{1, 0}},
		{"to another revision", []int64{1, 3}, []*int64{rev(2), nil, nil}, []int64{2, 3, 1}},
		{"to the bundled policy", []int64{1, 2}, []*int64{rev(0)}, []int64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for range 3 {
				if _, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Modules: mods}); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range tc.activate {
				if _, err := f.svc.ActivatePolicy(ctx, adminAcme, n); err != nil {
					t.Fatal(err)
				}
			}
			var got []int64
			for _, to := range tc.rollbacks {
				st, err := f.svc.RollbackPolicy(ctx, adminAcme, to)
				if err != nil {
					t.Fatalf("rollback after %v: %v", got, err)
				}
				got = append(got, st.Active)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("active after each rollback %v, want %v", got, tc.want)
			}
			if tc.want[len(tc.want)-1] != 0 {
				return
			}
			var invalid *memory.InvalidError
			if _, err := f.svc.RollbackPolicy(ctx, adminAcme, nil); !errors.As(err, &invalid) {
				t.Errorf("rollback from the bundled policy with nothing before it: %v, want invalid", err)
			}
		})
	}
}

// TestRollbackRacingAnActivation: a rollback that finds the policy changed
// while it was chosen changes nothing and says so.
func TestRollbackRacingAnActivation(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	mods := []PolicyModule{{Name: "authz.rego", Source: "package mneme.authz\n"}}
	for n := int64(1); n <= 2; n++ {
		if _, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Modules: mods}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.ActivatePolicy(ctx, adminAcme, n); err != nil {
			t.Fatal(err)
		}
	}
	f.policies.meanwhile = func(st *PolicyState) { st.Epoch++ }
	if _, err := f.svc.RollbackPolicy(ctx, adminAcme, nil); !errors.Is(err, ErrPolicyChanged) {
		t.Errorf("rollback racing a change: %v, want ErrPolicyChanged", err)
	}
	if f.policies.state.Active != 2 {
		t.Errorf("active %d after a refused rollback, want 2", f.policies.state.Active)
	}
}
