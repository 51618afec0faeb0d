package policyadmin

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mneme/memory"
)

// fakeAudit records events and reads them back, as journal.Audit does for
// one tenant: newest first, filtered by actor and action.
type fakeAudit struct {
	mu      sync.Mutex
	events  []memory.AuditEvent
	queries []memory.AuditQuery
}

var (
	_ memory.Auditor = (*fakeAudit)(nil)
	_ AuditLog       = (*fakeAudit)(nil)
)

func (f *fakeAudit) Audit(_ context.Context, e memory.AuditEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, e)
}

func (f *fakeAudit) Events(_ context.Context, tenant string, q memory.AuditQuery) ([]memory.AuditEvent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	out := []memory.AuditEvent{}
	for i := len(f.events) - 1; i >= 0 && len(out) < q.Limit; i-- {
		e := f.events[i]
		if e.Tenant == tenant && (q.Actor == "" || e.Actor == q.Actor) && (q.Action == "" || e.Action == q.Action) {
			out = append(out, e)
		}
	}
	return out, nil
}

// brief is what a test compares of an event.
type brief struct{ Actor, Action, Target, Outcome, Error, RequestID string }

func (f *fakeAudit) briefs() []brief {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []brief
	for _, e := range f.events {
		out = append(out, brief{e.Actor, e.Action, e.Target, e.Outcome, e.Error, e.RequestID})
	}
	return out
}

func TestGrantAndPolicyChangesAreAudited(t *testing.T) {
	ctx := memory.WithRequestID(context.Background(), "req-7")
	f := newFixture(t)
	f.authz.decide = func(p memory.Principal, _ string, _ memory.Resource) (memory.Decision, error) {
		return memory.Decision{Allow: p.Kind == memory.KindAdmin}, nil
	}
	mods := []PolicyModule{{Name: "authz.rego", Source: "package mneme.authz\n"}}

	g, _, err := f.svc.CreateGrant(ctx, adminAcme, NewGrant{Grantee: "order-bot", Source: "support-bot", Types: []string{memory.TypeSemantic}, MaxSensitivity: memory.SensitivityInternal})
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{"preference"}
	if _, err := f.svc.UpdateGrant(ctx, adminAcme, g.ID, GrantChange{Kinds: &kinds}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.UpdateGrant(ctx, adminAcme, "grant_nope", GrantChange{Kinds: &kinds}); err == nil {
		t.Fatal("updated a grant that does not exist")
	}
	if err := f.svc.DeleteGrant(ctx, adminAcme, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Modules: []PolicyModule{{Name: "x.txt"}}}); err == nil {
		t.Fatal("pushed a policy that is no Rego")
	}
	for range 2 {
		if _, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Message: "m", Modules: mods}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int64{1, 2} {
		if _, err := f.svc.ActivatePolicy(ctx, adminAcme, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.svc.ActivatePolicy(ctx, adminAcme, 99); err == nil {
		t.Fatal("activated a revision that does not exist")
	}
	if _, err := f.svc.RollbackPolicy(ctx, adminAcme, nil); err != nil {
		t.Fatal(err)
	}
	// Refused by policy: left to the decision log.
	if _, _, err := f.svc.CreateGrant(ctx, agentSupport, NewGrant{}); err == nil {
		t.Fatal("an agent created a grant")
	}
	if err := f.svc.PutGrant(context.Background(), memory.Grant{ID: "grant_seed", Tenant: "acme", Grantee: "order-bot", Source: "*", Types: []string{memory.TypeSemantic}, MaxSensitivity: memory.SensitivityPublic}); err != nil {
		t.Fatal(err)
	}

	const ok, failed, admin = memory.AuditOK, memory.AuditFailed, "admin:root"
	want := []brief{
		{admin, AuditGrantCreate, "grant:" + g.ID, ok, "", "req-7"},
		{admin, AuditGrantUpdate, "grant:" + g.ID, ok, "", "req-7"},
		{admin, AuditGrantUpdate, "grant:grant_nope", failed, "not_found", "req-7"},
		{admin, AuditGrantDelete, "grant:" + g.ID, ok, "", "req-7"},
		{admin, AuditPolicyPush, "policy", failed, RejectInvalid, "req-7"},
		{admin, AuditPolicyPush, "policy:1", ok, "", "req-7"},
		{admin, AuditPolicyPush, "policy:2", ok, "", "req-7"},
		{admin, AuditPolicyActivate, "policy:1", ok, "", "req-7"},
		{admin, AuditPolicyActivate, "policy:2", ok, "", "req-7"},
		{admin, AuditPolicyActivate, "policy:99", failed, "not_found", "req-7"},
		{admin, AuditPolicyRollback, "policy:1", ok, "", "req-7"},
		{"system", AuditGrantPut, "grant:grant_seed", ok, "", ""},
	}
	if d := cmp.Diff(want, f.audit.briefs()); d != "" {
		t.Errorf("audit events (-want +got):\n%s", d)
	}
	for _, e := range f.audit.events {
		if e.Tenant != "acme" || !e.Time.Equal(testNow) {
			t.Errorf("%s: tenant %q time %v", e.Action, e.Tenant, e.Time)
		}
		if e.Action == AuditPolicyRollback && (e.Details["active"] != "1" || e.Details["epoch"] != "3") {
			t.Errorf("rollback details = %v", e.Details)
		}
		if e.Action == AuditGrantCreate && e.Details["grantee"] != "order-bot" {
			t.Errorf("grant details = %v", e.Details)
		}
	}
}

func TestAuditTrailIsForAdmins(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.authz.decide = denyAction(memory.ActionManage)
	if _, err := f.svc.AuditTrail(ctx, agentSupport, memory.AuditQuery{}); err != memory.ErrForbidden {
		t.Errorf("agent: %v, want ErrForbidden", err)
	}
	if len(f.audit.queries) != 0 {
		t.Errorf("a refused read reached the trail")
	}

	f = newFixture(t)
	f.audit.Audit(ctx, memory.AuditEvent{Tenant: "acme", Actor: "admin:root", Action: AuditGrantCreate})
	f.audit.Audit(ctx, memory.AuditEvent{Tenant: "other", Actor: "admin:root", Action: AuditGrantCreate})
	got, err := f.svc.AuditTrail(ctx, adminAcme, memory.AuditQuery{Action: AuditGrantCreate})
	if err != nil || len(got) != 1 || got[0].Tenant != "acme" {
		t.Errorf("AuditTrail = %+v, %v; want acme's one event", got, err)
	}
	if d := cmp.Diff([]memory.AuditQuery{{Action: AuditGrantCreate, Limit: memory.DefaultAuditLimit}}, f.audit.queries, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("queries (-want +got):\n%s", d)
	}
	for _, limit := range []int{-1, memory.MaxAuditLimit + 1} {
		if _, err := f.svc.AuditTrail(ctx, adminAcme, memory.AuditQuery{Limit: limit}); fieldOf(t, err) != "limit" {
			t.Errorf("limit %d accepted", limit)
		}
	}
}

// A grant for an agent the tenant does not have, and a check refused as
// busy, are named in the trail as the API answers them.
func TestAuditReasonOfUnknownAgents(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{ErrUnknownGrantee, "unknown_principal"},
		{fmt.Errorf("grant: %w", ErrUnknownSource), "unknown_principal"},
		{&PolicyRejectedError{Code: RejectInvalid}, RejectInvalid},
		{memory.ErrNotFound, "not_found"},
		{fmt.Errorf("activate: %w", &CheckBusyError{}), "policy_check_busy"},
	} {
		if got := auditReason(tt.err); got != tt.want {
			t.Errorf("auditReason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
