package policystore

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/graph/graphtest"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/policyadmin"
)

func TestPolicyRevisions(t *testing.T) {
	s := testStore(t)
	ctx := graphtest.Ctx(t)
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	st, err := s.PolicyState(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(policyadmin.PolicyState{Tenant: tenant, History: []int64{}}, st); diff != "" {
		t.Errorf("state of a fresh tenant (-want +got):\n%s", diff)
	}
	mods := []policyadmin.PolicyModule{{Name: "a.rego", Source: "package a\n"}, {Name: "a_test.rego", Source: "package a_test\n"}}
	// Concurrent pushes get distinct numbers.
	var wg sync.WaitGroup
	numbers := make([]int64, 4)
	for i := range numbers {
		wg.Go(func() {
			r, err := s.CreatePolicyRevision(ctx, policyadmin.PolicyRevision{Tenant: tenant, Author: "admin:root", Message: "m", CreatedAt: at, Digest: "sha256:x", Modules: mods})
			if err != nil {
				t.Error(err)
			}
			numbers[i] = r.Number
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, n := range numbers {
		if n < 1 || n > 4 || seen[n] {
			t.Errorf("revision numbers %v, want 1..4 each once", numbers)
		}
		seen[n] = true
	}
	got, err := s.PolicyRevision(ctx, tenant, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := policyadmin.PolicyRevision{Tenant: tenant, Number: 2, Author: "admin:root", Message: "m", CreatedAt: at, Digest: "sha256:x", Modules: mods}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("revision (-want +got):\n%s", diff)
	}
	if _, err := s.PolicyRevision(ctx, other, 2); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("another tenant's revision: %v, want ErrNotFound", err)
	}
	list, err := s.ListPolicyRevisions(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 4 || list[0].Number != 1 || list[3].Number != 4 || list[0].Modules != nil {
		t.Errorf("list %+v", list)
	}

	if _, err := s.ActivatePolicy(ctx, tenant, 9, "admin:root", at); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("activate a missing revision: %v", err)
	}
	if _, err := s.ActivatePolicy(ctx, other, 2, "admin:root", at); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("activate another tenant's revision: %v", err)
	}
	st, err = s.ActivatePolicy(ctx, tenant, 3, "admin:root", at)
	if err != nil {
		t.Fatal(err)
	}
	st, err = s.ActivatePolicy(ctx, tenant, 0, "admin:two", at)
	if err != nil {
		t.Fatal(err)
	}
	wantSt := policyadmin.PolicyState{Tenant: tenant, Active: 0, Epoch: 2, History: []int64{3, 0}, Lineage: []int64{3, 0}, ActivatedAt: &at, ActivatedBy: "admin:two"}
	if diff := cmp.Diff(wantSt, st); diff != "" {
		t.Errorf("state after two activations (-want +got):\n%s", diff)
	}
	again, err := s.PolicyState(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, again); diff != "" {
		t.Errorf("PolicyState (-activate +read):\n%s", diff)
	}

	// Activating the active revision again leaves the lineage as it is.
	for range 2 {
		if st, err = s.ActivatePolicy(ctx, tenant, 3, "admin:root", at); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(st.Lineage, []int64{3, 0, 3}) || !slices.Equal(st.History, []int64{3, 0, 3, 3}) {
		t.Errorf("after activating 3 twice: lineage %v, history %v", st.Lineage, st.History)
	}
	back := policyadmin.Rollback{Tenant: tenant, To: 0, Lineage: []int64{3, 0}, Epoch: st.Epoch - 1, By: "admin:root", At: at}
	if _, err := s.RollBackPolicy(ctx, back); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("rollback chosen at an old epoch: %v, want ErrConflict", err)
	}
	back.Epoch, back.To = st.Epoch, 9
	if _, err := s.RollBackPolicy(ctx, back); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("rollback to a missing revision: %v, want ErrNotFound", err)
	}
	back.To = 0
	rolled, err := s.RollBackPolicy(ctx, back)
	if err != nil {
		t.Fatal(err)
	}
	wantSt = policyadmin.PolicyState{Tenant: tenant, Active: 0, Epoch: st.Epoch + 1, History: []int64{3, 0, 3, 3, 0}, Lineage: []int64{3, 0}, ActivatedAt: &at, ActivatedBy: "admin:root"}
	if diff := cmp.Diff(wantSt, rolled); diff != "" {
		t.Errorf("state after the rollback (-want +got):\n%s", diff)
	}
	if again, err = s.PolicyState(ctx, tenant); err != nil || !cmp.Equal(rolled, again) {
		t.Errorf("PolicyState after the rollback: %+v, %v; want %+v", again, err, rolled)
	}
}

// TestChangeSettings: a change sets the settings it gives and leaves the
// others, returns the settings as they were, and bumps the grant revision.
func TestChangeSettings(t *testing.T) {
	s := testStore(t)
	ctx := graphtest.Ctx(t)
	tenant := testenv.Tenant(t)
	str := func(s string) *string { return &s }
	yes, no := true, false
	for i, step := range []struct {
		change       policyadmin.SettingsChange
		before, want policyadmin.Settings
	}{
		{policyadmin.SettingsChange{UserMaxSensitivity: str("public"), UsersReadShared: &yes}, policyadmin.Settings{}, policyadmin.Settings{UserMaxSensitivity: "public", UsersReadShared: true}},
		{policyadmin.SettingsChange{UsersReadShared: &no}, policyadmin.Settings{UserMaxSensitivity: "public", UsersReadShared: true}, policyadmin.Settings{UserMaxSensitivity: "public"}},
		{policyadmin.SettingsChange{UserMaxSensitivity: str("confidential")}, policyadmin.Settings{UserMaxSensitivity: "public"}, policyadmin.Settings{UserMaxSensitivity: "confidential"}},
		{policyadmin.SettingsChange{UserMaxSensitivity: str("")}, policyadmin.Settings{UserMaxSensitivity: "confidential"}, policyadmin.Settings{}}, // "" removes the ceiling
	} {
		before, err := s.ChangeSettings(ctx, tenant, step.change)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.PolicyState(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		if before != step.before || st.Settings != step.want {
			t.Errorf("step %d: before %+v, after %+v; want %+v, %+v", i, before, st.Settings, step.before, step.want)
		}
		if st.GrantRevision != int64(i+1) {
			t.Errorf("step %d: grant revision %d, want %d", i, st.GrantRevision, i+1)
		}
	}
}
