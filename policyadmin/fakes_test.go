package policyadmin

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"mneme/memory"
)

// In-package fakes of the interfaces the Service consumes, the same ones
// production wires in. They record what they were asked so tests can check
// what did (and did not) reach them.

// testNow is the fixed clock of every test service.
var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// fakePolicies is a PolicyStore, PolicyEngine, RevisionBus and DecisionLog
// in one, recording what the service asked of each.
type fakePolicies struct {
	mu        sync.Mutex
	state     PolicyState
	revisions map[int64]PolicyRevision
	stateErr  error
	checkErr  error
	checked   [][]PolicyModule // the modules of each CheckPolicy

	loaded     *Revisions
	usedEpoch  []int64
	usedGrant  []int64
	usedGrants [][]memory.Grant // the grants of each UseGrants
	useErr     error

	usedSettings []Settings // the settings of each UseSettings

	announced *Revisions
	busErr    error
	published []Revisions

	log      []DecisionRecord
	replay   []memory.Decision
	replayed [][]PolicyModule // the draft of each Replay

	lockedOut map[string]bool // admins DecideDraft denies, by id

	meanwhile func(*PolicyState) // changes the state as a rollback reaches the store
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
		return PolicyRevision{}, memory.ErrNotFound
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
		return PolicyState{}, memory.ErrNotFound
	}
	f.state.Active, f.state.Epoch = n, f.state.Epoch+1
	f.state.History = append(f.state.History, n)
	if l := f.state.Lineage; len(l) == 0 || l[len(l)-1] != n {
		f.state.Lineage = append(slices.Clone(l), n)
	}
	return f.state, nil
}

func (f *fakePolicies) RollBackPolicy(_ context.Context, r Rollback) (PolicyState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.revisions[r.To]; !ok && r.To != 0 {
		return PolicyState{}, memory.ErrNotFound
	}
	if f.meanwhile != nil {
		f.meanwhile(&f.state)
	}
	if r.Epoch != f.state.Epoch {
		return PolicyState{}, memory.ErrConflict
	}
	f.state.Active, f.state.Epoch = r.To, f.state.Epoch+1
	f.state.History = append(f.state.History, r.To)
	f.state.Lineage = slices.Clone(r.Lineage)
	return f.state, nil
}

func (f *fakePolicies) PolicyState(context.Context, string) (PolicyState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state, f.stateErr
}

func (f *fakePolicies) CheckPolicy(_ context.Context, _ string, modules []PolicyModule) (PolicyReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checked = append(f.checked, modules)
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

func (f *fakePolicies) UseGrants(_ context.Context, _ string, revision int64, grants []memory.Grant) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.useErr != nil {
		return f.useErr
	}
	f.usedGrant = append(f.usedGrant, revision)
	f.usedGrants = append(f.usedGrants, append([]memory.Grant(nil), grants...))
	if f.loaded == nil {
		f.loaded = &Revisions{}
	}
	f.loaded.Grants = revision
	return nil
}

func (f *fakePolicies) ChangeSettings(_ context.Context, _ string, c SettingsChange) (Settings, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	before := f.state.Settings
	if c.UserMaxSensitivity != nil {
		f.state.Settings.UserMaxSensitivity = *c.UserMaxSensitivity
	}
	if c.UsersReadShared != nil {
		f.state.Settings.UsersReadShared = *c.UsersReadShared
	}
	f.state.GrantRevision++
	return before, nil
}

func (f *fakePolicies) UseSettings(_ context.Context, _ string, _ int64, st Settings) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.usedSettings = append(f.usedSettings, st)
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

func (f *fakePolicies) Replay(_ context.Context, _ string, modules []PolicyModule, records []DecisionRecord) ([]memory.Decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replayed = append(f.replayed, modules)
	return f.replay[:len(records)], nil
}

func (f *fakePolicies) DecideDraft(_ context.Context, _ string, _ []PolicyModule, inputs []DecisionInput) ([]memory.Decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]memory.Decision, len(inputs))
	for i, in := range inputs {
		out[i].Allow = !f.lockedOut[in.Principal.ID]
	}
	return out, nil
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

// grantChanged bumps the grant revision, as a change of grants does.
func (f *fakePolicies) grantChanged() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state.GrantRevision++
}

var (
	_ PolicyStore  = (*fakePolicies)(nil)
	_ PolicyEngine = (*fakePolicies)(nil)
	_ RevisionBus  = (*fakePolicies)(nil)
	_ DecisionLog  = (*fakePolicies)(nil)
)

// fakeGrants is an in-memory GrantStore keyed by grant id.
type fakeGrants struct {
	mu        sync.Mutex
	grants    []memory.Grant
	createErr error
	listErr   error
	deleteErr error
	listCalls []string // tenant of each ListGrants
	deletes   []string // "tenant/id"
	// changed, when set, is called after every change, as the real store
	// bumps the tenant's grant revision in the same transaction.
	changed func()
}

func (f *fakeGrants) bump() {
	if f.changed != nil {
		f.changed()
	}
}

var _ GrantStore = (*fakeGrants)(nil)

func (f *fakeGrants) CreateGrant(_ context.Context, g memory.Grant) (memory.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.createErr != nil {
		return memory.Grant{}, f.createErr
	}
	for _, have := range f.grants {
		if sameGrant(have, g) {
			return have, nil
		}
	}
	f.grants = append(f.grants, g)
	f.bump()
	return g, nil
}

func (f *fakeGrants) ListGrants(_ context.Context, tenant string) ([]memory.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listCalls = append(f.listCalls, tenant)
	if f.listErr != nil {
		return nil, f.listErr
	}
	var out []memory.Grant
	for _, g := range f.grants {
		if tenant == "" || g.Tenant == tenant {
			out = append(out, g)
		}
	}
	return out, nil
}

func (f *fakeGrants) DeleteGrant(_ context.Context, tenant, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes = append(f.deletes, tenant+"/"+id)
	if f.deleteErr != nil {
		return f.deleteErr
	}
	for i, g := range f.grants {
		if g.Tenant == tenant && g.ID == id {
			f.grants = append(f.grants[:i], f.grants[i+1:]...)
			f.bump()
			return nil
		}
	}
	return memory.ErrNotFound
}

func (f *fakeGrants) UpdateGrant(_ context.Context, g memory.Grant) (memory.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.createErr != nil {
		return memory.Grant{}, f.createErr
	}
	for i, old := range f.grants {
		if old.Tenant == g.Tenant && old.ID == g.ID {
			f.grants[i] = g
			f.bump()
			return g, nil
		}
	}
	return memory.Grant{}, memory.ErrNotFound
}

func (f *fakeGrants) PutGrant(_ context.Context, g memory.Grant) (memory.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.createErr != nil {
		return memory.Grant{}, f.createErr
	}
	for i, old := range f.grants {
		if old.Tenant == g.Tenant && old.ID == g.ID {
			f.grants[i] = g
			f.bump()
			return g, nil
		}
	}
	f.grants = append(f.grants, g)
	f.bump()
	return g, nil
}

// decideCall is one policy evaluation as the fake saw it.
type decideCall struct {
	Principal memory.Principal
	Action    string
	Resource  memory.Resource
}

// fakeAuthz decides with a function (nil: allow everything) and records
// the grants it is given.
type fakeAuthz struct {
	mu sync.Mutex
	// decide, if set, makes every decision; nil allows with reason "test".
	decide    func(p memory.Principal, action string, r memory.Resource) (memory.Decision, error)
	decisions []decideCall

	setGrants [][]memory.Grant
	setErr    error
}

var _ Authorizer = (*fakeAuthz)(nil)

func (f *fakeAuthz) Decide(_ context.Context, p memory.Principal, action string, r memory.Resource, _ time.Time) (memory.Decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decisions = append(f.decisions, decideCall{Principal: p, Action: action, Resource: r})
	if f.decide == nil {
		return memory.Decision{Allow: true, Reasons: []string{"test"}}, nil
	}
	return f.decide(p, action, r)
}

func (f *fakeAuthz) SetGrants(_ context.Context, grants []memory.Grant) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setGrants = append(f.setGrants, append([]memory.Grant(nil), grants...))
	return f.setErr
}

func failAll(memory.Principal, string, memory.Resource) (memory.Decision, error) {
	return memory.Decision{}, errTest("policy engine down")
}

// denyAction denies one action and allows every other.
func denyAction(action string) func(memory.Principal, string, memory.Resource) (memory.Decision, error) {
	return func(_ memory.Principal, a string, _ memory.Resource) (memory.Decision, error) {
		if a == action {
			return memory.Decision{Allow: false}, nil
		}
		return memory.Decision{Allow: true, Reasons: []string{"test"}}, nil
	}
}

// errTest is an error no production code returns.
type errTest string

func (e errTest) Error() string { return string(e) }

// fieldOf returns the field of an *memory.InvalidError, failing otherwise.
func fieldOf(t *testing.T, err error) string {
	t.Helper()
	var inv *memory.InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("err = %v (%T), want *memory.InvalidError", err, err)
	}
	return inv.Field
}

// fixture bundles a Service with its fakes.
type fixture struct {
	svc      *Service
	agents   fakeAgents
	grants   *fakeGrants
	authz    *fakeAuthz
	policies *fakePolicies
	audit    *fakeAudit
}

// fakeAgents are the registered agents of each tenant.
type fakeAgents map[string][]string

func (f fakeAgents) AgentExists(_ context.Context, tenant, id string) (bool, error) {
	return slices.Contains(f[tenant], id), nil
}

// Admins returns the tenant's admins: "admin" in acme.
func (f fakeAgents) Admins(_ context.Context, tenant string, _ int) ([]memory.Principal, error) {
	if tenant != "acme" {
		return nil, nil
	}
	return []memory.Principal{{Tenant: tenant, Kind: memory.KindAdmin, ID: "admin"}}, nil
}

// newFixture returns a Service on fresh fakes, with the fixed clock testNow
// and a discarding logger. The grant store bumps the policy state's grant
// revision on every change, as graph.Store does.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		agents:   fakeAgents{"acme": {"billing-bot", "support-bot", "order-bot"}},
		grants:   &fakeGrants{},
		authz:    &fakeAuthz{},
		policies: &fakePolicies{revisions: map[int64]PolicyRevision{}, state: PolicyState{Tenant: "acme", History: []int64{}}},
		audit:    &fakeAudit{},
	}
	f.grants.changed = f.policies.grantChanged
	svc, err := New(Options{
		Policies: f.policies, Grants: f.grants, Principals: f.agents, Engine: f.policies, Authz: f.authz,
		Bus: f.policies, Decisions: f.policies, Audit: f.audit, AuditLog: f.audit,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return testNow },
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.svc = svc
	return f
}

// Principals used across the tests; all in tenant acme.
var (
	agentSupport = memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot", Roles: []string{"agent"}}
	userAlice    = memory.Principal{Tenant: "acme", Kind: memory.KindUser, ID: "alice", Roles: []string{"user"}}
	adminAcme    = memory.Principal{Tenant: "acme", Kind: memory.KindAdmin, ID: "root", Roles: []string{"admin"}}
)

// sameGrant reports whether a and b grant the same, as the graph store
// compares them: types and kinds as sets.
func sameGrant(a, b memory.Grant) bool {
	set := func(xs []string) []string { return slices.Sorted(slices.Values(xs)) }
	return a.Tenant == b.Tenant && a.Grantee == b.Grantee && a.Source == b.Source && a.MaxSensitivity == b.MaxSensitivity &&
		slices.Equal(set(a.Types), set(b.Types)) && slices.Equal(set(a.Kinds), set(b.Kinds)) &&
		(a.ExpiresAt == nil) == (b.ExpiresAt == nil) && (a.ExpiresAt == nil || a.ExpiresAt.Equal(*b.ExpiresAt))
}
