package policyadmin

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"mneme/memory"
)

// TestRevisionLockingOutAdminsIsRefused: a revision under which none of
// the tenant's real admins (the stored ones and the caller) may manage the
// tenant is refused on push, on a check and on activation, with
// policy_locks_out_admins; one that still lets one of them manage passes.
func TestRevisionLockingOutAdminsIsRefused(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	fp := f.policies
	mods := []PolicyModule{{Name: "authz.rego", Source: "package mneme.authz\n"}}
	locksOut := func(step string, err error) {
		t.Helper()
		var rej *PolicyRejectedError
		if !errors.As(err, &rej) || rej.Code != RejectLocksOutAdmins {
			t.Errorf("%s: %v, want %s", step, err, RejectLocksOutAdmins)
		}
	}

	fp.lockedOut = map[string]bool{"admin": true, "root": true}
	_, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Modules: mods})
	locksOut("push denying every admin", err)
	if len(fp.revisions) != 0 {
		t.Errorf("a revision locking the admins out was stored: %v", fp.revisions)
	}
	_, err = f.svc.CheckPolicy(ctx, adminAcme, mods)
	locksOut("check denying every admin", err)

	// The stored admin is denied, the caller is not: one admin is enough.
	fp.lockedOut = map[string]bool{"admin": true}
	if _, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Modules: mods}); err != nil {
		t.Fatalf("push letting root manage: %v", err)
	}
	// The admins changed since the push: activation tries them again.
	fp.lockedOut = map[string]bool{"admin": true, "root": true}
	_, err = f.svc.ActivatePolicy(ctx, adminAcme, 1)
	locksOut("activate denying every admin", err)
	if fp.state.Active != 0 {
		t.Errorf("active revision %d after a refused activation", fp.state.Active)
	}
}

// TestAdminsUndoWhateverThePolicyDecides: once the revision in force denies
// the tenant's admin everything, or runs out of time on every decision,
// the admin still reads the policy state and revisions, rolls back and
// activates an earlier revision, and none of it asks the revision in force;
// pushing or activating a revision never run still goes through it, and
// other principals stay refused.
func TestAdminsUndoWhateverThePolicyDecides(t *testing.T) {
	for name, decide := range map[string]func(memory.Principal, string, memory.Resource) (memory.Decision, error){
		"denies": func(memory.Principal, string, memory.Resource) (memory.Decision, error) {
			return memory.Decision{}, nil
		},
		"too slow": func(memory.Principal, string, memory.Resource) (memory.Decision, error) {
			return memory.Decision{}, fmt.Errorf("%w: %w", memory.ErrUnavailable, ErrPolicyTimeout)
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t)
			mods := []PolicyModule{{Name: "authz.rego", Source: "package mneme.authz\n"}}
			for range 3 {
				if _, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Modules: mods}); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range []int64{1, 2} {
				if _, err := f.svc.ActivatePolicy(ctx, adminAcme, n); err != nil {
					t.Fatal(err)
				}
			}
			f.authz.decide = decide
			f.authz.decisions = nil

			if _, err := f.svc.PolicyStatus(ctx, adminAcme); err != nil {
				t.Errorf("policy state: %v", err)
			}
			if _, err := f.svc.ListPolicies(ctx, adminAcme); err != nil {
				t.Errorf("list revisions: %v", err)
			}
			if _, err := f.svc.Policy(ctx, adminAcme, 1); err != nil {
				t.Errorf("read revision 1: %v", err)
			}
			if _, err := f.svc.DiffPolicies(ctx, adminAcme, 1, 2); err != nil {
				t.Errorf("diff: %v", err)
			}
			if st, err := f.svc.RollbackPolicy(ctx, adminAcme, nil); err != nil || st.Active != 1 {
				t.Errorf("rollback: %+v, %v; want revision 1", st, err)
			}
			if st, err := f.svc.ActivatePolicy(ctx, adminAcme, 2); err != nil || st.Active != 2 {
				t.Errorf("activate revision 2, run before: %+v, %v", st, err)
			}
			zero := int64(0)
			if st, err := f.svc.RollbackPolicy(ctx, adminAcme, &zero); err != nil || st.Active != 0 {
				t.Errorf("rollback to 0: %+v, %v", st, err)
			}
			if len(f.authz.decisions) != 0 {
				t.Errorf("undoing asked the policy in force: %+v", f.authz.decisions)
			}

			if _, err := f.svc.ActivatePolicy(ctx, adminAcme, 3); err == nil {
				t.Error("activated revision 3, never run, against the policy in force")
			}
			if _, _, err := f.svc.PushPolicy(ctx, adminAcme, NewPolicy{Modules: mods}); err == nil {
				t.Error("pushed against the policy in force")
			}
			if _, err := f.svc.PolicyStatus(ctx, agentSupport); err == nil {
				t.Error("an agent read the policy state")
			}
			if _, err := f.svc.RollbackPolicy(ctx, userAlice, nil); err == nil {
				t.Error("a user rolled back")
			}
		})
	}
}
