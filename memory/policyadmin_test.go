package memory

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakePolicies is a PolicyStore, PolicyEngine, RevisionBus and DecisionLog
// in one, recording what the service asked of each.
type fakePolicies struct {
	mu        sync.Mutex
	state     PolicyState
	revisions map[int64]PolicyRevision
	stateErr  error
	checkErr  error

	loaded    *Revisions
	usedEpoch []int64
	usedGrant []int64

	announced *Revisions
	busErr    error
	published []Revisions

	log    []DecisionRecord
	replay []Decision
}

func (f *fakePolicies) CreatePolicyRevision(_ context.Context, r PolicyRevision) (PolicyRevision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r.Number = int64(len(f.revisions) + 1)
	f.revisions[r.Number] = r
	return r, nil
}

func (f *fakePolicies) PolicyRevision(_ context.Context, _ string, n int64) (PolicyRevision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.revisions[n]
	if !ok {
		return PolicyRevision{}, ErrNotFound
	}
	return r, nil
}

func (f *fakePolicies) ListPolicyRevisions(context.Context, string) ([]PolicyRevision, error) {
	return nil, nil
}

func (f *fakePolicies) ActivatePolicy(_ context.Context, tenant string, n int64, by string, at time.Time) (PolicyState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.revisions[n]; !ok && n != 0 {
		return PolicyState{}, ErrNotFound
	}
	f.state.Active, f.state.Epoch = n, f.state.Epoch+1
	f.state.History = append(f.state.History, n)
	return f.state, nil
}

func (f *fakePolicies) PolicyState(context.Context, string) (PolicyState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state, f.stateErr
}

func (f *fakePolicies) CheckPolicy(context.Context, []PolicyModule) (PolicyReport, error) {
	return PolicyReport{Digest: "sha256:x"}, f.checkErr
}

func (f *fakePolicies) BundledPolicy() []PolicyModule {
	return []PolicyModule{{Name: "authz.rego", Source: "package mneme.authz\n"}}
}

func (f *fakePolicies) UsePolicy(_ context.Context, _ string, number, epoch int64, _ []PolicyModule) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.usedEpoch = append(f.usedEpoch, epoch)
	if f.loaded == nil {
		f.loaded = &Revisions{}
	}
	f.loaded.Policy, f.loaded.PolicyEpoch = number, epoch
	return nil
}

func (f *fakePolicies) UseGrants(_ context.Context, _ string, revision int64, _ []Grant) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.usedGrant = append(f.usedGrant, revision)
	if f.loaded == nil {
		f.loaded = &Revisions{}
	}
	f.loaded.Grants = revision
	return nil
}

func (f *fakePolicies) Loaded(string) (Revisions, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.loaded == nil {
		return Revisions{}, false
	}
	return *f.loaded, true
}

func (f *fakePolicies) Simulate(context.Context, []PolicyModule, DecisionInput, bool) (Simulation, error) {
	return Simulation{}, nil
}

func (f *fakePolicies) Replay(_ context.Context, _ []PolicyModule, records []DecisionRecord) ([]Decision, error) {
	return f.replay[:len(records)], nil
}

func (f *fakePolicies) Current(context.Context, string) (Revisions, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.announced == nil {
		return Revisions{}, false, f.busErr
	}
	return *f.announced, true, f.busErr
}

func (f *fakePolicies) Announce(_ context.Context, _ string, r Revisions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published = append(f.published, r)
	f.announced = &r
	return f.busErr
}

func (f *fakePolicies) Decisions(_ context.Context, _ string, q DecisionQuery) ([]DecisionRecord, error) {
	return f.log[:min(q.Limit, len(f.log))], nil
}

func newAdminFixture(t *testing.T) (*fixture, *fakePolicies) {
	t.Helper()
	f := newFixture(t, RecallConfig{})
	fp := &fakePolicies{revisions: map[int64]PolicyRevision{}, state: PolicyState{Tenant: "acme", History: []int64{}}}
	opts := f.options(t, RecallConfig{})
	opts.Admin = &PolicyAdmin{Store: fp, Engine: fp, Bus: fp, Decisions: fp}
	f.svc = f.service(t, opts)
	return f, fp
}

func TestSync(t *testing.T) {
	ctx := context.Background()
	t.Run("first request loads and announces", func(t *testing.T) {
		f, fp := newAdminFixture(t)
		fp.state.Epoch, fp.state.GrantRevision = 0, 4
		if err := f.svc.Sync(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if len(fp.usedEpoch) != 1 || len(fp.usedGrant) != 1 || len(fp.published) != 1 || fp.published[0].Grants != 4 {
			t.Errorf("used %v %v, announced %v", fp.usedEpoch, fp.usedGrant, fp.published)
		}
	})
	t.Run("current replica does nothing more", func(t *testing.T) {
		f, fp := newAdminFixture(t)
		fp.loaded = &Revisions{PolicyEpoch: 2, Grants: 3}
		fp.announced = &Revisions{PolicyEpoch: 2, Grants: 3}
		fp.stateErr = errTest("the store must not be read")
		if err := f.svc.Sync(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("behind on grants reloads grants only", func(t *testing.T) {
		f, fp := newAdminFixture(t)
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
		f, fp := newAdminFixture(t)
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
		f, fp := newAdminFixture(t)
		fp.loaded = &Revisions{}
		fp.busErr = errTest("redis down")
		if err := f.svc.Sync(ctx, "acme"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("err = %v, want ErrUnavailable", err)
		}
	})
	t.Run("behind and no store: deny", func(t *testing.T) {
		f, fp := newAdminFixture(t)
		fp.loaded = &Revisions{}
		fp.announced = &Revisions{Grants: 1}
		fp.stateErr = errTest("neo4j down")
		if err := f.svc.Sync(ctx, "acme"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("err = %v, want ErrUnavailable", err)
		}
	})
}

func TestPolicyAdminIsForAdmins(t *testing.T) {
	ctx := context.Background()
	f, _ := newAdminFixture(t)
	f.authz.decide = denyAction(ActionManage)
	if _, err := f.svc.PolicyStatus(ctx, agentSupport); !errors.Is(err, ErrForbidden) {
		t.Errorf("PolicyStatus as an agent: %v", err)
	}
	if _, _, err := f.svc.PushPolicy(ctx, userAlice, NewPolicy{Modules: []PolicyModule{{Name: "a.rego", Source: "package a"}}}); !errors.Is(err, ErrForbidden) {
		t.Errorf("PushPolicy as a user: %v", err)
	}
	plain := newFixture(t, RecallConfig{})
	if _, err := plain.svc.PolicyStatus(ctx, adminAcme); !errors.Is(err, ErrPolicyAdmin) {
		t.Errorf("PolicyStatus without administration: %v", err)
	}
}

func TestPushAndRollback(t *testing.T) {
	ctx := context.Background()
	f, fp := newAdminFixture(t)
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

func TestReplayCountsChanges(t *testing.T) {
	ctx := context.Background()
	f, fp := newAdminFixture(t)
	fp.log = []DecisionRecord{{Result: ResultAllow}, {Result: ResultDeny}, {Result: ResultAllow}, {Result: ResultDeny}}
	fp.replay = []Decision{{Allow: true}, {Allow: true}, {Allow: false, Reasons: []string{"no"}}, {Allow: false}}
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
