package policyadmin

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mneme/memory"
)

func validGrant() NewGrant {
	return NewGrant{Grantee: "billing-bot", Source: "support-bot", Types: []string{memory.TypeSemantic}, MaxSensitivity: memory.SensitivityInternal}
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
		{"source is the grantee", func(n *NewGrant) { n.Source = n.Grantee }, "source"},
		{"types nil", func(n *NewGrant) { n.Types = nil }, "types"},
		{"types empty", func(n *NewGrant) { n.Types = []string{} }, "types"},
		{"type unknown", func(n *NewGrant) { n.Types = []string{"dream"} }, "types"},
		{"second type unknown", func(n *NewGrant) { n.Types = []string{memory.TypeSemantic, "Profile"} }, "types"},
		{"sensitivity missing", func(n *NewGrant) { n.MaxSensitivity = "" }, "max_sensitivity"},
		{"sensitivity unknown", func(n *NewGrant) { n.MaxSensitivity = "secret" }, "max_sensitivity"},
		{"expired", func(n *NewGrant) { n.ExpiresAt = &past }, "expires_at"},
		{"expires now", func(n *NewGrant) { n.ExpiresAt = &now }, "expires_at"},
		{"kind empty", func(n *NewGrant) { n.Kinds = []string{"order", ""} }, "kinds"},
		{"kind too long", func(n *NewGrant) { n.Kinds = []string{strings.Repeat("k", 65)} }, "kinds"},
		{"kind with a bidi override", func(n *NewGrant) { n.Kinds = []string{"\u202eevil"} }, "kinds"},
		{"kind with a zero-width space", func(n *NewGrant) { n.Kinds = []string{"pre\u200bference"} }, "kinds"},
		{"too many kinds", func(n *NewGrant) {
			for i := range MaxGrantKinds + 1 {
				n.Kinds = append(n.Kinds, fmt.Sprintf("k%d", i))
			}
		}, "kinds"},
		{"source wildcard", func(n *NewGrant) { n.Source = "*" }, ""},
		{"every type", func(n *NewGrant) { n.Types = memory.Types }, ""},
		{"restricted", func(n *NewGrant) { n.MaxSensitivity = memory.SensitivityRestricted }, ""},
		{"expires later", func(n *NewGrant) { n.ExpiresAt = &future }, ""},
		{"kinds", func(n *NewGrant) { n.Kinds = []string{"order", strings.Repeat("k", 64)} }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			n := validGrant()
			tt.edit(&n)
			g, _, err := f.svc.CreateGrant(context.Background(), adminAcme, n)
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
			if len(f.grants.grants) != 0 || len(f.policies.usedGrants) != 0 || len(f.policies.published) != 0 {
				t.Error("an invalid grant was stored or loaded")
			}
		})
	}
}

func TestCreateGrant(t *testing.T) {
	existing := memory.Grant{ID: "grant_old", Tenant: "globex", Grantee: "a", Source: "b", Types: []string{memory.TypeEpisodic}, MaxSensitivity: memory.SensitivityPublic}
	f := newFixture(t)
	f.grants.grants = []memory.Grant{existing}
	expires := testNow.Add(24 * time.Hour)
	n := validGrant()
	// Repeats say nothing more: the grant keeps each once.
	n.Types, n.Kinds, n.ExpiresAt = []string{memory.TypeSemantic, memory.TypeSemantic}, []string{"order", "order"}, &expires

	g, _, err := f.svc.CreateGrant(context.Background(), adminAcme, n)
	if err != nil {
		t.Fatal(err)
	}
	want := memory.Grant{
		Tenant: "acme", Grantee: "billing-bot", Source: "support-bot", Types: []string{memory.TypeSemantic},
		Kinds: []string{"order"}, MaxSensitivity: memory.SensitivityInternal, ExpiresAt: &expires, CreatedAt: testNow,
	}
	if diff := cmp.Diff(want, g, cmpopts.IgnoreFields(memory.Grant{}, "ID")); diff != "" {
		t.Errorf("grant (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(g.ID, "grant_") {
		t.Errorf("id %q lacks the grant_ prefix", g.ID)
	}
	wantDecisions := []decideCall{{Principal: adminAcme, Action: memory.ActionManage, Resource: memory.Resource{Tenant: "acme"}}}
	if diff := cmp.Diff(wantDecisions, f.authz.decisions); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	// The tenant's grants, the new one included and no other tenant's, go
	// to the policy engine at the new grant revision, and the other
	// replicas hear of that revision.
	if diff := cmp.Diff([]string{"acme"}, f.grants.listCalls); diff != "" {
		t.Errorf("ListGrants tenants (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]memory.Grant{{g}}, f.policies.usedGrants); diff != "" {
		t.Errorf("UseGrants (-want +got):\n%s", diff)
	}
	if !slices.Equal(f.policies.usedGrant, []int64{1}) || len(f.policies.published) != 1 || f.policies.published[0].Grants != 1 {
		t.Errorf("loaded grant revisions %v, announced %v; want revision 1 loaded and announced", f.policies.usedGrant, f.policies.published)
	}
}

// TestGrantForAnUnknownAgent: a grant names registered agents of the
// tenant as grantee and source (or "*" as source); a mistyped id, a user,
// or another tenant's agent could never use it, and as a source would share
// the memories of whoever registers that id later. An existing grant whose
// agent was deleted can still be narrowed, but not be given to, or share
// the memories of, an unknown agent.
func TestGrantForAnUnknownAgent(t *testing.T) {
	for _, tt := range []struct {
		grantee, source string
		want            error
	}{
		{"biling-bot", "support-bot", ErrUnknownGrantee},
		{"alice", "support-bot", ErrUnknownGrantee},
		{"globex-bot", "support-bot", ErrUnknownGrantee},
		{"billing-bot", "suport-bot", ErrUnknownSource},
		{"billing-bot", "alice", ErrUnknownSource},
		{"billing-bot", "user:alice", ErrUnknownSource},
		{"billing-bot", "globex-bot", ErrUnknownSource},
	} {
		f := newFixture(t)
		f.agents["globex"] = []string{"globex-bot"}
		n := validGrant()
		n.Grantee, n.Source = tt.grantee, tt.source
		if _, _, err := f.svc.CreateGrant(context.Background(), adminAcme, n); !errors.Is(err, tt.want) {
			t.Errorf("grant to %s of %s: %v, want %v", tt.grantee, tt.source, err, tt.want)
		}
		if len(f.grants.grants) != 0 {
			t.Errorf("grant to %s of %s was stored", tt.grantee, tt.source)
		}
	}
	f := newFixture(t)
	g, _, err := f.svc.CreateGrant(context.Background(), adminAcme, validGrant())
	if err != nil {
		t.Fatal(err)
	}
	f.agents["acme"] = []string{"support-bot"} // billing-bot deleted since
	public := memory.SensitivityPublic
	if _, err := f.svc.UpdateGrant(context.Background(), adminAcme, g.ID, GrantChange{MaxSensitivity: &public}); err != nil {
		t.Errorf("narrowing a grant whose agent was deleted: %v", err)
	}
	ghost := "ghost-bot"
	if _, err := f.svc.UpdateGrant(context.Background(), adminAcme, g.ID, GrantChange{Grantee: &ghost}); !errors.Is(err, ErrUnknownGrantee) {
		t.Errorf("giving the grant to an unknown agent: %v, want ErrUnknownGrantee", err)
	}
	if _, err := f.svc.UpdateGrant(context.Background(), adminAcme, g.ID, GrantChange{Source: &ghost}); !errors.Is(err, ErrUnknownSource) {
		t.Errorf("sharing an unknown agent's memories: %v, want ErrUnknownSource", err)
	}
}

// A change that changes nothing is refused: it would be a revision of the
// grants, in force on every replica, for nothing.
func TestEmptyGrantChange(t *testing.T) {
	f := newFixture(t)
	g, _, err := f.svc.CreateGrant(context.Background(), adminAcme, validGrant())
	if err != nil {
		t.Fatal(err)
	}
	before := f.grants.grants[0]
	_, err = f.svc.UpdateGrant(context.Background(), adminAcme, g.ID, GrantChange{})
	var inv *memory.InvalidError
	if !errors.As(err, &inv) || inv.Field != "body" {
		t.Fatalf("empty change: err = %v, want invalid body", err)
	}
	if len(f.grants.grants) != 1 || !reflect.DeepEqual(f.grants.grants[0], before) {
		t.Errorf("grants after an empty change: %+v, want %+v", f.grants.grants, before)
	}
}

func TestGrantsRequireManage(t *testing.T) {
	tests := []struct {
		name   string
		decide func(memory.Principal, string, memory.Resource) (memory.Decision, error)
	}{
		{"deny", denyAction(memory.ActionManage)},
		{"policy error", failAll},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.grants.grants = []memory.Grant{{ID: "grant_1", Tenant: "acme"}}
			f.authz.decide = tt.decide
			ctx := context.Background()

			if _, _, err := f.svc.CreateGrant(ctx, agentSupport, validGrant()); !errors.Is(err, memory.ErrForbidden) {
				t.Errorf("CreateGrant err = %v, want memory.ErrForbidden", err)
			}
			if err := f.svc.DeleteGrant(ctx, agentSupport, "grant_1"); !errors.Is(err, memory.ErrForbidden) {
				t.Errorf("DeleteGrant err = %v, want memory.ErrForbidden", err)
			}
			if _, err := f.svc.ListGrants(ctx, agentSupport); !errors.Is(err, memory.ErrForbidden) {
				t.Errorf("ListGrants err = %v, want memory.ErrForbidden", err)
			}
			if len(f.grants.grants) != 1 || len(f.grants.deletes) != 0 || len(f.grants.listCalls) != 0 {
				t.Errorf("grant store touched: grants=%v deletes=%v lists=%v", f.grants.grants, f.grants.deletes, f.grants.listCalls)
			}
			if len(f.policies.usedGrants) != 0 || len(f.policies.published) != 0 {
				t.Error("grants reloaded or announced after a denial")
			}
			for _, d := range f.authz.decisions {
				if d.Action != memory.ActionManage || d.Resource != (memory.Resource{Tenant: "acme"}) {
					t.Errorf("decision %+v, want manage on the tenant", d)
				}
			}
		})
	}
}

func TestDeleteGrant(t *testing.T) {
	keep := memory.Grant{ID: "grant_keep", Tenant: "acme"}
	drop := memory.Grant{ID: "grant_drop", Tenant: "acme"}
	tests := []struct {
		name        string
		id          string
		deleteErr   error
		wantErr     error
		wantDeletes []string
		wantSet     [][]memory.Grant
	}{
		{"deleted and reloaded", "grant_drop", nil, nil, []string{"acme/grant_drop"}, [][]memory.Grant{{keep}}},
		{"unknown id", "grant_none", nil, memory.ErrNotFound, []string{"acme/grant_none"}, nil},
		{"store down", "grant_drop", memory.ErrUnavailable, memory.ErrUnavailable, []string{"acme/grant_drop"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.grants.grants = []memory.Grant{keep, drop}
			f.grants.deleteErr = tt.deleteErr
			err := f.svc.DeleteGrant(context.Background(), adminAcme, tt.id)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantDeletes, f.grants.deletes); diff != "" {
				t.Errorf("deletes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSet, f.policies.usedGrants); diff != "" {
				t.Errorf("UseGrants (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateGrantStoreError(t *testing.T) {
	f := newFixture(t)
	f.grants.createErr = memory.ErrUnavailable
	if _, _, err := f.svc.CreateGrant(context.Background(), adminAcme, validGrant()); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("err = %v, want memory.ErrUnavailable", err)
	}
	if len(f.policies.usedGrants) != 0 || len(f.policies.published) != 0 {
		t.Error("grants reloaded after a failed create")
	}
}

func TestListGrants(t *testing.T) {
	mine := memory.Grant{ID: "grant_1", Tenant: "acme"}
	f := newFixture(t)
	f.grants.grants = []memory.Grant{mine, {ID: "grant_2", Tenant: "globex"}}
	got, err := f.svc.ListGrants(context.Background(), adminAcme)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]memory.Grant{mine}, got); diff != "" {
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
		{"use", nil, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.grants.listErr = tt.listErr
			f.policies.useErr = tt.setErr
			// The grant is stored; the error says it is not yet effective.
			g, _, err := f.svc.CreateGrant(context.Background(), adminAcme, validGrant())
			if !errors.Is(err, boom) {
				t.Fatalf("err = %v, want boom", err)
			}
			if g.ID == "" || len(f.grants.grants) != 1 {
				t.Errorf("grant %+v not stored before the reload failed", g)
			}
			if !errors.Is(err, memory.ErrUnavailable) {
				t.Errorf("err = %v, want it to read as ErrUnavailable: the change is not yet in force", err)
			}
			if len(f.policies.published) != 0 {
				t.Errorf("announced %v although this replica could not load it", f.policies.published)
			}
		})
	}
}

func TestPutGrant(t *testing.T) {
	seeded := memory.Grant{ID: "grant_seed", Tenant: "acme", Grantee: "billing-bot", Source: "*", Types: []string{memory.TypeProfile}, MaxSensitivity: memory.SensitivityPublic}
	tests := []struct {
		name     string
		existing []memory.Grant
		g        memory.Grant
		wantErr  bool
	}{
		{"new", nil, seeded, false},
		{"replaces the same id", []memory.Grant{{ID: "grant_seed", Tenant: "acme", Grantee: "old"}}, seeded, false},
		{"invalid", nil, memory.Grant{ID: "grant_bad", Tenant: "acme", Grantee: "x"}, true},
	}
	t.Run("replaces in one step, never deleting", func(t *testing.T) {
		f := newFixture(t)
		f.grants.grants = []memory.Grant{{ID: "grant_seed", Tenant: "acme", Grantee: "old"}}
		f.grants.deleteErr = memory.ErrUnavailable
		if err := f.svc.PutGrant(context.Background(), seeded); err != nil {
			t.Fatal(err)
		}
		if len(f.grants.deletes) != 0 {
			t.Errorf("PutGrant deleted %v", f.grants.deletes)
		}
	})
	t.Run("create error", func(t *testing.T) {
		f := newFixture(t)
		f.grants.createErr = memory.ErrUnavailable
		if err := f.svc.PutGrant(context.Background(), seeded); !errors.Is(err, memory.ErrUnavailable) {
			t.Errorf("err = %v, want memory.ErrUnavailable", err)
		}
		if len(f.policies.usedGrants) != 0 {
			t.Error("grants reloaded after a failed create")
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
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
			if diff := cmp.Diff([]memory.Grant{want}, f.grants.grants); diff != "" {
				t.Errorf("stored grants (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([][]memory.Grant{{want}}, f.policies.usedGrants); diff != "" {
				t.Errorf("UseGrants (-want +got):\n%s", diff)
			}
		})
	}
}

// ReloadGrants gives the engine every tenant's grants at once, at start-up.
func TestReloadGrants(t *testing.T) {
	acme := memory.Grant{ID: "grant_1", Tenant: "acme"}
	globex := memory.Grant{ID: "grant_2", Tenant: "globex"}
	f := newFixture(t)
	f.grants.grants = []memory.Grant{acme, globex}
	if err := f.svc.ReloadGrants(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{""}, f.grants.listCalls); diff != "" {
		t.Errorf("ListGrants tenants (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]memory.Grant{{acme, globex}}, f.authz.setGrants); diff != "" {
		t.Errorf("SetGrants (-want +got):\n%s", diff)
	}
	if len(f.authz.decisions) != 0 || len(f.policies.published) != 0 {
		t.Errorf("a reload decided %v or announced %v", f.authz.decisions, f.policies.published)
	}

	boom := errTest("boom")
	for name, set := range map[string]func(*fixture){
		"list": func(f *fixture) { f.grants.listErr = boom },
		"set":  func(f *fixture) { f.authz.setErr = boom },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			set(f)
			if err := f.svc.ReloadGrants(context.Background()); !errors.Is(err, boom) {
				t.Errorf("err = %v, want boom", err)
			}
		})
	}
}

func TestGrantSetCarriesItsRevision(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	set, err := f.svc.Grants(ctx, adminAcme)
	if err != nil {
		t.Fatal(err)
	}
	if set.Revision != 0 || set.Grants == nil || len(set.Grants) != 0 {
		t.Errorf("empty tenant: %+v, want revision 0 and [] (never null)", set)
	}
	g, _, err := f.svc.CreateGrant(ctx, adminAcme, validGrant())
	if err != nil {
		t.Fatal(err)
	}
	if set, err = f.svc.Grants(ctx, adminAcme); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(GrantSet{Grants: []memory.Grant{g}, Revision: 1}, set); diff != "" {
		t.Errorf("grant set (-want +got):\n%s", diff)
	}
	f.authz.decide = denyAction(memory.ActionManage)
	if _, err := f.svc.Grants(ctx, agentSupport); !errors.Is(err, memory.ErrForbidden) {
		t.Errorf("Grants as an agent: %v", err)
	}
}

// TestCreatingAGrantTwiceKeepsOne: a grant identical to one the tenant has,
// its types in another order, is answered with that one (created false),
// and changes neither the grants nor their revision; a grant that differs
// in anything is made.
func TestCreatingAGrantTwiceKeepsOne(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	n := validGrant()
	n.Types = []string{memory.TypeSemantic, memory.TypeEpisodic}
	first, created, err := f.svc.CreateGrant(ctx, adminAcme, n)
	if err != nil || !created {
		t.Fatalf("first grant: created %v, %v", created, err)
	}
	revision := f.policies.state.GrantRevision

	n.Types = []string{memory.TypeEpisodic, memory.TypeSemantic, memory.TypeEpisodic}
	again, created, err := f.svc.CreateGrant(ctx, adminAcme, n)
	if err != nil || created || again.ID != first.ID {
		t.Errorf("the same grant again: %+v, created %v, %v; want grant %s, not created", again, created, err, first.ID)
	}
	if len(f.grants.grants) != 1 || f.policies.state.GrantRevision != revision {
		t.Errorf("the same grant again left %d grants at revision %d, want 1 at %d", len(f.grants.grants), f.policies.state.GrantRevision, revision)
	}
	if e := f.audit.events[len(f.audit.events)-1]; e.Target != grantTarget(first.ID) || e.Details["existing"] != "true" {
		t.Errorf("audit of the same grant again: %+v", e)
	}

	n.MaxSensitivity = memory.SensitivityPublic
	if other, created, err := f.svc.CreateGrant(ctx, adminAcme, n); err != nil || !created || other.ID == first.ID {
		t.Errorf("a grant of another sensitivity: %+v, created %v, %v", other, created, err)
	}
}
