package keystore

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/graphtest"
	"mneme/graph/neo"
	"mneme/identity"
	"mneme/internal/testenv"
	"mneme/memory"
)

func TestIdentityStore(t *testing.T) {
	s := testStore(t)
	ctx := graphtest.Ctx(t)
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	admin := identity.Principal{Kind: memory.KindAdmin, ID: "admin", CreatedAt: now}
	adminKey := identity.Key{ID: memory.NewID("key"), Prefix: "mn_x_abc", OwnerKind: "admin", OwnerID: "admin", CreatedAt: now, Hash: "h-admin"}
	if err := s.CreateTenant(ctx, identity.Tenant{Name: tenant, CreatedAt: now}, admin, adminKey); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTenant(ctx, identity.Tenant{Name: tenant, CreatedAt: now}, admin, adminKey); !errors.Is(err, identity.ErrTenantExists) {
		t.Fatalf("second CreateTenant = %v, want ErrTenantExists", err)
	}
	bot := identity.Principal{Kind: memory.KindAgent, ID: "bot", Team: "ops", CreatedAt: now}
	if err := s.CreatePrincipal(ctx, tenant, bot); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePrincipal(ctx, tenant, bot); !errors.Is(err, identity.ErrPrincipalExists) {
		t.Fatalf("second CreatePrincipal = %v, want ErrPrincipalExists", err)
	}
	key := identity.Key{ID: memory.NewID("key"), Prefix: "mn_x_def", OwnerKind: "agent", OwnerID: "bot", CreatedAt: now, Hash: "h-bot"}
	if err := s.CreateKey(ctx, tenant, key); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateKey(ctx, tenant, identity.Key{ID: memory.NewID("key"), OwnerKind: "user", OwnerID: "nobody", CreatedAt: now, Hash: "h-x"}); !errors.Is(err, identity.ErrNoOwner) {
		t.Fatalf("CreateKey for nobody = %v, want ErrNoOwner", err)
	}

	t.Run("lookup", func(t *testing.T) {
		tests := []struct {
			name, tenant, hash string
			want               memory.Principal
			err                error
		}{
			{"found", tenant, "h-bot", memory.Principal{Tenant: tenant, Kind: "agent", ID: "bot", Team: "ops"}, nil},
			{"unknown hash", tenant, "h-none", memory.Principal{}, memory.ErrNotFound},
			{"other tenant", other, "h-bot", memory.Principal{}, memory.ErrNotFound},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got, err := s.KeyByHash(ctx, tc.tenant, tc.hash)
				if !errors.Is(err, tc.err) {
					t.Fatalf("KeyByHash = %v, want %v", err, tc.err)
				}
				if d := cmp.Diff(tc.want, got.Principal); d != "" {
					t.Errorf("principal (-want +got):\n%s", d)
				}
			})
		}
	})
	t.Run("other tenant sees nothing", func(t *testing.T) {
		if ps, err := s.Principals(ctx, other); err != nil || len(ps) != 0 {
			t.Errorf("Principals(other) = %v, %v", ps, err)
		}
		if ks, err := s.Keys(ctx, other); err != nil || len(ks) != 0 {
			t.Errorf("Keys(other) = %v, %v", ks, err)
		}
		if _, err := s.Key(ctx, other, key.ID); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("Key(other) = %v", err)
		}
		if _, err := s.RevokeKey(ctx, other, key.ID, now); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("RevokeKey(other) = %v", err)
		}
	})
	t.Run("rotate, revoke, expire, touch", func(t *testing.T) {
		next := identity.Key{ID: memory.NewID("key"), Prefix: "mn_x_ghi", OwnerKind: "agent", OwnerID: "bot", CreatedAt: now, Hash: "h-bot2"}
		grace := now.Add(time.Hour)
		if err := s.RotateKey(ctx, tenant, key.ID, grace, next); err != nil {
			t.Fatal(err)
		}
		if err := s.RotateKey(ctx, tenant, key.ID, grace, identity.Key{ID: memory.NewID("key"), Hash: "h-bot3", OwnerKind: "agent", OwnerID: "bot"}); !errors.Is(err, identity.ErrKeyInactive) {
			t.Errorf("second rotation = %v, want ErrKeyInactive", err)
		}
		old, err := s.Key(ctx, tenant, key.ID)
		if err != nil || old.RotatedTo != next.ID || old.GraceUntil == nil || !old.GraceUntil.Equal(grace) {
			t.Errorf("rotated key = %+v, %v", old, err)
		}
		exp := now.Add(2 * time.Hour)
		if k, err := s.SetKeyExpiry(ctx, tenant, next.ID, &exp); err != nil || k.ExpiresAt == nil || !k.ExpiresAt.Equal(exp) {
			t.Errorf("SetKeyExpiry = %+v, %v", k, err)
		}
		if k, err := s.SetKeyExpiry(ctx, tenant, next.ID, nil); err != nil || k.ExpiresAt != nil {
			t.Errorf("clear expiry = %+v, %v", k, err)
		}
		if err := s.TouchKeys(ctx, tenant, []string{next.ID}, now); err != nil {
			t.Fatal(err)
		}
		k, err := s.RevokeKey(ctx, tenant, next.ID, now)
		if err != nil || k.RevokedAt == nil || k.LastUsedAt == nil {
			t.Errorf("RevokeKey = %+v, %v", k, err)
		}
		keys, err := s.Keys(ctx, tenant)
		if err != nil || len(keys) != 3 {
			t.Errorf("Keys = %d keys, %v; want 3", len(keys), err)
		}
	})
	t.Run("a user keeps the name of the user's node", func(t *testing.T) {
		err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
			return exec(ctx, tx, `MERGE (u:User {tenant: $tenant, id: 'u3'}) SET u.name = 'Ann Li'`, map[string]any{"tenant": tenant})
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range []struct{ given, want string }{{"", "Ann Li"}, {"Ann Wang", "Ann Wang"}, {"", "Ann Wang"}} {
			if err := s.EnsurePrincipal(ctx, tenant, identity.Principal{Kind: "user", ID: "u3", Name: step.given, CreatedAt: now}); err != nil {
				t.Fatal(err)
			}
			p, err := s.Principal(ctx, tenant, "user", "u3")
			name, nameErr := s.UserName(ctx, tenant, "u3")
			if err != nil || nameErr != nil || p.Name != step.want || name != step.want {
				t.Errorf("given %q: registration %+v (%v), user's node %q (%v); want %q", step.given, p, err, name, nameErr, step.want)
			}
		}
	})
	t.Run("a change sets only the fields it names", func(t *testing.T) {
		text := func(s string) *string { return &s }
		if err := s.EnsurePrincipal(ctx, tenant, identity.Principal{Kind: "user", ID: "u4", Name: "Ann Li", CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		p, err := s.ChangePrincipal(ctx, tenant, "user", "u4", identity.PrincipalChange{Name: text("Ann Zhao")})
		name, nameErr := s.UserName(ctx, tenant, "u4")
		if err != nil || nameErr != nil || p.Name != "Ann Zhao" || p.Kind != "user" || p.ID != "u4" || name != "Ann Zhao" {
			t.Errorf("rename: %+v (%v), user's node %q (%v); want Ann Zhao on both", p, err, name, nameErr)
		}
		if p, err = s.ChangePrincipal(ctx, tenant, "user", "u4", identity.PrincipalChange{Name: text("")}); err != nil || p.Name != "" {
			t.Errorf("clearing the name: %+v, %v", p, err)
		}
		if name, _ := s.UserName(ctx, tenant, "u4"); name != "" {
			t.Errorf("the user's node kept %q after the name was cleared", name)
		}
		roles := []string{"finance"}
		if err := s.EnsurePrincipal(ctx, tenant, identity.Principal{Kind: "agent", ID: "helper", Team: "support", Roles: roles, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		p, err = s.ChangePrincipal(ctx, tenant, "agent", "helper", identity.PrincipalChange{Team: text("billing")})
		if err != nil || p.Team != "billing" || !slices.Equal(p.Roles, roles) {
			t.Errorf("team change: %+v, %v; want team billing, roles kept", p, err)
		}
		var team string
		err = s.read(ctx, func(tx neo4j.ManagedTransaction) error {
			var err error
			team, _, err = neo.ReadOne(ctx, tx, `MATCH (a:Agent {tenant: $tenant, id: 'helper'}) RETURN a.team AS team`, map[string]any{"tenant": tenant}, neo.Column("team", str))
			return err
		})
		if err != nil || team != "billing" {
			t.Errorf("the agent's node has team %q (%v), want billing", team, err)
		}
		if p, err = s.ChangePrincipal(ctx, tenant, "agent", "helper", identity.PrincipalChange{Roles: &[]string{}}); err != nil || p.Roles != nil || p.Team != "billing" {
			t.Errorf("clearing the roles: %+v, %v", p, err)
		}
		if _, err := s.ChangePrincipal(ctx, tenant, "user", "nobody", identity.PrincipalChange{Name: text("X")}); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("changing a principal that does not exist: %v, want not found", err)
		}
		if _, err := s.ChangePrincipal(ctx, "another-"+tenant, "user", "u4", identity.PrincipalChange{Name: text("X")}); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("changing another tenant's principal: %v, want not found", err)
		}
	})
	t.Run("delete principal and user", func(t *testing.T) {
		n, err := s.DeletePrincipal(ctx, tenant, "agent", "bot")
		if err != nil || n != 2 {
			t.Errorf("DeletePrincipal = %d, %v; want its 2 keys", n, err)
		}
		if _, err := s.DeletePrincipal(ctx, tenant, "agent", "bot"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("second DeletePrincipal = %v", err)
		}
		if err := s.EnsurePrincipal(ctx, tenant, identity.Principal{Kind: "user", ID: "u1", CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutKey(ctx, tenant, identity.Key{ID: memory.NewID("key"), OwnerKind: "user", OwnerID: "u1", CreatedAt: now, Hash: "h-u1"}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.DeleteUser(ctx, tenant, "u1"); err != nil || n != 1 {
			t.Errorf("DeleteUser = %d, %v", n, err)
		}
		if n, err := s.DeleteUser(ctx, tenant, "u1"); err != nil || n != 0 {
			t.Errorf("second DeleteUser = %d, %v", n, err)
		}
		if _, err := s.Principal(ctx, tenant, "user", "u1"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("erased user still registered: %v", err)
		}
	})
}

// TestAgentExists: only an agent principal of the tenant counts; a user of
// that id, or the agent of another tenant, does not.
func TestAgentExists(t *testing.T) {
	s := testStore(t)
	ctx := graphtest.Ctx(t)
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)
	now := time.Now().UTC()
	for _, p := range []struct {
		tenant string
		p      identity.Principal
	}{
		{tenant, identity.Principal{Kind: memory.KindAgent, ID: "bot", CreatedAt: now}},
		{tenant, identity.Principal{Kind: memory.KindUser, ID: "alice", CreatedAt: now}},
		{other, identity.Principal{Kind: memory.KindAgent, ID: "globex-bot", CreatedAt: now}},
	} {
		if err := s.CreatePrincipal(ctx, p.tenant, p.p); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]bool{"bot": true, "alice": false, "globex-bot": false, "ghost": false} {
		if got, err := s.AgentExists(ctx, tenant, id); err != nil || got != want {
			t.Errorf("AgentExists(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
}

// TestAdmins: a tenant's admins by id, up to the limit; not its other
// principals, nor another tenant's admins.
func TestAdmins(t *testing.T) {
	s := testStore(t)
	ctx := graphtest.Ctx(t)
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)
	now := time.Now().UTC()
	for _, p := range []struct {
		tenant string
		p      identity.Principal
	}{
		{tenant, identity.Principal{Kind: memory.KindAdmin, ID: "zed", CreatedAt: now}},
		{tenant, identity.Principal{Kind: memory.KindAdmin, ID: "ann", Roles: []string{"admin"}, CreatedAt: now}},
		{tenant, identity.Principal{Kind: memory.KindAgent, ID: "bot", CreatedAt: now}},
		{other, identity.Principal{Kind: memory.KindAdmin, ID: "globex-admin", CreatedAt: now}},
	} {
		if err := s.CreatePrincipal(ctx, p.tenant, p.p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Admins(ctx, tenant, 10)
	want := []memory.Principal{
		{Tenant: tenant, Kind: memory.KindAdmin, ID: "ann", Roles: []string{"admin"}},
		{Tenant: tenant, Kind: memory.KindAdmin, ID: "zed"},
	}
	if err != nil || !cmp.Equal(got, want, cmpopts.EquateEmpty()) {
		t.Errorf("Admins = %+v, %v; want %+v", got, err, want)
	}
	if got, err := s.Admins(ctx, tenant, 1); err != nil || len(got) != 1 || got[0].ID != "ann" {
		t.Errorf("Admins limited to 1 = %+v, %v", got, err)
	}
}
