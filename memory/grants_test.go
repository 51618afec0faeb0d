package memory

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func validGrant() NewGrant {
	return NewGrant{Grantee: "billing-bot", Source: "support-bot", Types: []string{TypeSemantic}, MaxSensitivity: SensitivityInternal}
}

func TestCreateGrantValidation(t *testing.T) {
	past, now, future := testNow.Add(-time.Second), testNow, testNow.Add(time.Hour)
	tests := []struct {
		name      string
		edit      func(*NewGrant)
		wantField string // "" means valid
	}{
		{"grantee missing", func(n *NewGrant) { n.Grantee = "" }, "grantee"},
		{"grantee bad", func(n *NewGrant) { n.Grantee = "billing bot" }, "grantee"},
		{"grantee wildcard", func(n *NewGrant) { n.Grantee = "*" }, "grantee"},
		{"source missing", func(n *NewGrant) { n.Source = "" }, "source"},
		{"source bad", func(n *NewGrant) { n.Source = "support/bot" }, "source"},
		{"source other wildcard", func(n *NewGrant) { n.Source = "**" }, "source"},
		{"types nil", func(n *NewGrant) { n.Types = nil }, "types"},
		{"types empty", func(n *NewGrant) { n.Types = []string{} }, "types"},
		{"type unknown", func(n *NewGrant) { n.Types = []string{"dream"} }, "types"},
		{"second type unknown", func(n *NewGrant) { n.Types = []string{TypeSemantic, "Profile"} }, "types"},
		{"sensitivity missing", func(n *NewGrant) { n.MaxSensitivity = "" }, "max_sensitivity"},
		{"sensitivity unknown", func(n *NewGrant) { n.MaxSensitivity = "secret" }, "max_sensitivity"},
		{"expired", func(n *NewGrant) { n.ExpiresAt = &past }, "expires_at"},
		{"expires now", func(n *NewGrant) { n.ExpiresAt = &now }, "expires_at"},
		{"kind empty", func(n *NewGrant) { n.Kinds = []string{"order", ""} }, "kinds"},
		{"kind too long", func(n *NewGrant) { n.Kinds = []string{strings.Repeat("k", 65)} }, "kinds"},
		{"source wildcard", func(n *NewGrant) { n.Source = "*" }, ""},
		{"every type", func(n *NewGrant) { n.Types = Types }, ""},
		{"restricted", func(n *NewGrant) { n.MaxSensitivity = SensitivityRestricted }, ""},
		{"expires later", func(n *NewGrant) { n.ExpiresAt = &future }, ""},
		{"kinds", func(n *NewGrant) { n.Kinds = []string{"order", strings.Repeat("k", 64)} }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			n := validGrant()
			tt.edit(&n)
			g, err := f.svc.CreateGrant(context.Background(), adminAcme, n)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("CreateGrant: %v", err)
				}
				if g.Source != n.Source || g.MaxSensitivity != n.MaxSensitivity {
					t.Errorf("grant %+v does not carry the request %+v", g, n)
				}
				return
			}
			if field := fieldOf(t, err); field != tt.wantField {
				t.Errorf("field = %q, want %q (err %v)", field, tt.wantField, err)
			}
			if len(f.grants.grants) != 0 || len(f.authz.setGrants) != 0 {
				t.Error("an invalid grant was stored or loaded")
			}
		})
	}
}

func TestCreateGrant(t *testing.T) {
	existing := Grant{ID: "grant_old", Tenant: "globex", Grantee: "a", Source: "b", Types: []string{TypeEpisodic}, MaxSensitivity: SensitivityPublic}
	f := newFixture(t, RecallConfig{})
	f.grants.grants = []Grant{existing}
	expires := testNow.Add(24 * time.Hour)
	n := validGrant()
	n.Kinds, n.ExpiresAt = []string{"order"}, &expires

	g, err := f.svc.CreateGrant(context.Background(), adminAcme, n)
	if err != nil {
		t.Fatal(err)
	}
	want := Grant{
		Tenant: "acme", Grantee: "billing-bot", Source: "support-bot", Types: []string{TypeSemantic},
		Kinds: []string{"order"}, MaxSensitivity: SensitivityInternal, ExpiresAt: &expires, CreatedAt: testNow,
	}
	if diff := cmp.Diff(want, g, cmpopts.IgnoreFields(Grant{}, "ID")); diff != "" {
		t.Errorf("grant (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(g.ID, "grant_") {
		t.Errorf("id %q lacks the grant_ prefix", g.ID)
	}
	wantDecisions := []decideCall{{Principal: adminAcme, Action: ActionManage, Resource: Resource{Tenant: "acme"}}}
	if diff := cmp.Diff(wantDecisions, f.authz.decisions); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	// Every tenant's grants, the new one included, go to the policy engine.
	if diff := cmp.Diff([]string{""}, f.grants.listCalls); diff != "" {
		t.Errorf("ListGrants tenants (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]Grant{{existing, g}}, f.authz.setGrants); diff != "" {
		t.Errorf("SetGrants (-want +got):\n%s", diff)
	}
}

func TestGrantsRequireManage(t *testing.T) {
	tests := []struct {
		name   string
		decide func(Principal, string, Resource) (Decision, error)
	}{
		{"deny", denyAction(ActionManage)},
		{"policy error", failAll},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.grants.grants = []Grant{{ID: "grant_1", Tenant: "acme"}}
			f.authz.decide = tt.decide
			ctx := context.Background()

			if _, err := f.svc.CreateGrant(ctx, agentSupport, validGrant()); !errors.Is(err, ErrForbidden) {
				t.Errorf("CreateGrant err = %v, want ErrForbidden", err)
			}
			if err := f.svc.DeleteGrant(ctx, agentSupport, "grant_1"); !errors.Is(err, ErrForbidden) {
				t.Errorf("DeleteGrant err = %v, want ErrForbidden", err)
			}
			if _, err := f.svc.ListGrants(ctx, agentSupport); !errors.Is(err, ErrForbidden) {
				t.Errorf("ListGrants err = %v, want ErrForbidden", err)
			}
			if len(f.grants.grants) != 1 || len(f.grants.deletes) != 0 || len(f.grants.listCalls) != 0 {
				t.Errorf("grant store touched: grants=%v deletes=%v lists=%v", f.grants.grants, f.grants.deletes, f.grants.listCalls)
			}
			if len(f.authz.setGrants) != 0 {
				t.Error("grants reloaded after a denial")
			}
			for _, d := range f.authz.decisions {
				if d.Action != ActionManage || d.Resource != (Resource{Tenant: "acme"}) {
					t.Errorf("decision %+v, want manage on the tenant", d)
				}
			}
		})
	}
}

func TestDeleteGrant(t *testing.T) {
	keep := Grant{ID: "grant_keep", Tenant: "acme"}
	drop := Grant{ID: "grant_drop", Tenant: "acme"}
	tests := []struct {
		name        string
		id          string
		deleteErr   error
		wantErr     error
		wantDeletes []string
		wantSet     [][]Grant
	}{
		{"deleted and reloaded", "grant_drop", nil, nil, []string{"acme/grant_drop"}, [][]Grant{{keep}}},
		{"unknown id", "grant_none", nil, ErrNotFound, []string{"acme/grant_none"}, nil},
		{"store down", "grant_drop", ErrUnavailable, ErrUnavailable, []string{"acme/grant_drop"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.grants.grants = []Grant{keep, drop}
			f.grants.deleteErr = tt.deleteErr
			err := f.svc.DeleteGrant(context.Background(), adminAcme, tt.id)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantDeletes, f.grants.deletes); diff != "" {
				t.Errorf("deletes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSet, f.authz.setGrants); diff != "" {
				t.Errorf("SetGrants (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateGrantStoreError(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	f.grants.createErr = ErrUnavailable
	if _, err := f.svc.CreateGrant(context.Background(), adminAcme, validGrant()); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if len(f.authz.setGrants) != 0 {
		t.Error("grants reloaded after a failed create")
	}
}

func TestListGrants(t *testing.T) {
	mine := Grant{ID: "grant_1", Tenant: "acme"}
	f := newFixture(t, RecallConfig{})
	f.grants.grants = []Grant{mine, {ID: "grant_2", Tenant: "globex"}}
	got, err := f.svc.ListGrants(context.Background(), adminAcme)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Grant{mine}, got); diff != "" {
		t.Errorf("grants (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"acme"}, f.grants.listCalls); diff != "" {
		t.Errorf("ListGrants tenants (-want +got):\n%s", diff)
	}
}

func TestReloadGrantsErrors(t *testing.T) {
	boom := errTest("boom")
	tests := []struct {
		name    string
		listErr error
		setErr  error
	}{
		{"list", boom, nil},
		{"set", nil, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.grants.listErr = tt.listErr
			f.authz.setErr = tt.setErr
			// The grant is stored; the error says it is not yet effective.
			g, err := f.svc.CreateGrant(context.Background(), adminAcme, validGrant())
			if !errors.Is(err, boom) {
				t.Fatalf("err = %v, want boom", err)
			}
			if g.ID == "" || len(f.grants.grants) != 1 {
				t.Errorf("grant %+v not stored before the reload failed", g)
			}
		})
	}
}

func TestPutGrant(t *testing.T) {
	seeded := Grant{ID: "grant_seed", Tenant: "acme", Grantee: "billing-bot", Source: "*", Types: []string{TypeProfile}, MaxSensitivity: SensitivityPublic}
	tests := []struct {
		name     string
		existing []Grant
		g        Grant
		wantErr  bool
	}{
		{"new", nil, seeded, false},
		{"replaces the same id", []Grant{{ID: "grant_seed", Tenant: "acme", Grantee: "old"}}, seeded, false},
		{"invalid", nil, Grant{ID: "grant_bad", Tenant: "acme", Grantee: "x"}, true},
	}
	t.Run("replaces in one step, never deleting", func(t *testing.T) {
		f := newFixture(t, RecallConfig{})
		f.grants.grants = []Grant{{ID: "grant_seed", Tenant: "acme", Grantee: "old"}}
		f.grants.deleteErr = ErrUnavailable
		if err := f.svc.PutGrant(context.Background(), seeded); err != nil {
			t.Fatal(err)
		}
		if len(f.grants.deletes) != 0 {
			t.Errorf("PutGrant deleted %v", f.grants.deletes)
		}
	})
	t.Run("create error", func(t *testing.T) {
		f := newFixture(t, RecallConfig{})
		f.grants.createErr = ErrUnavailable
		if err := f.svc.PutGrant(context.Background(), seeded); !errors.Is(err, ErrUnavailable) {
			t.Errorf("err = %v, want ErrUnavailable", err)
		}
		if len(f.authz.setGrants) != 0 {
			t.Error("grants reloaded after a failed create")
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.grants.grants = tt.existing
			err := f.svc.PutGrant(context.Background(), tt.g)
			if tt.wantErr {
				fieldOf(t, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.g
			want.CreatedAt = testNow
			if diff := cmp.Diff([]Grant{want}, f.grants.grants); diff != "" {
				t.Errorf("stored grants (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([][]Grant{{want}}, f.authz.setGrants); diff != "" {
				t.Errorf("SetGrants (-want +got):\n%s", diff)
			}
		})
	}
}
