package identity

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"mneme/memory"
)

func TestValidChange(t *testing.T) {
	text := func(s string) *string { return &s }
	tests := []struct {
		name, kind string
		change     PrincipalChange
		field      string // "" when the change is valid; "unknown role": ErrUnknownRole
	}{
		{"a user's name", memory.KindUser, PrincipalChange{Name: text("Ann Li")}, ""},
		{"clearing a user's name", memory.KindUser, PrincipalChange{Name: text("")}, ""},
		{"an agent's team", memory.KindAgent, PrincipalChange{Team: text("billing")}, ""},
		{"an analyst's roles", memory.KindAnalyst, PrincipalChange{Roles: &[]string{"analyst", "analyst_full"}}, ""},
		{"an analyst's unknown role", memory.KindAnalyst, PrincipalChange{Roles: &[]string{"analyst", "superuser"}}, "unknown role"},
		{"an analyst given the admin role", memory.KindAnalyst, PrincipalChange{Roles: &[]string{"admin"}}, "unknown role"},
		{"an agent's own role", memory.KindAgent, PrincipalChange{Roles: &[]string{"agent"}}, ""},
		{"a user's own role", memory.KindUser, PrincipalChange{Roles: &[]string{"user"}}, ""},
		{"an admin's own role", memory.KindAdmin, PrincipalChange{Roles: &[]string{"admin"}}, ""},
		{"clearing an agent's roles", memory.KindAgent, PrincipalChange{Roles: &[]string{}}, ""},
		{"an agent given the admin role", memory.KindAgent, PrincipalChange{Roles: &[]string{"admin"}}, "unknown role: agent"},
		{"an agent given an analyst's role", memory.KindAgent, PrincipalChange{Roles: &[]string{"agent", "analyst_full"}}, "unknown role: agent"},
		{"a user given the admin role", memory.KindUser, PrincipalChange{Roles: &[]string{"admin"}}, "unknown role: user"},
		{"an admin given an invented role", memory.KindAdmin, PrincipalChange{Roles: &[]string{"superuser"}}, "unknown role: admin"},
		{"nothing", memory.KindUser, PrincipalChange{}, "body"},
		{"a name on an agent", memory.KindAgent, PrincipalChange{Name: text("Bot")}, "name"},
		{"a team on a user", memory.KindUser, PrincipalChange{Team: text("support")}, "team"},
		{"a name too long", memory.KindUser, PrincipalChange{Name: text(strings.Repeat("a", MaxUserName+1))}, "name"},
		{"a control character", memory.KindUser, PrincipalChange{Name: text("Ann\x07Li")}, "name"},
		{"a team that is no name", memory.KindAgent, PrincipalChange{Team: text("sup port")}, "team"},
		{"a role that is no name", memory.KindAnalyst, PrincipalChange{Roles: &[]string{"a b"}}, "roles"},
		{"an unknown kind", "robot", PrincipalChange{Roles: &[]string{"x"}}, "kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validChange(tt.kind, tt.change)
			var inv *memory.InvalidError
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("validChange = %v, want valid", err)
			case tt.field == "unknown role":
				if !errors.Is(err, ErrUnknownRole) || !strings.Contains(err.Error(), "analyst, analyst_full") {
					t.Errorf("validChange = %v, want ErrUnknownRole naming the known roles", err)
				}
			case strings.HasPrefix(tt.field, "unknown role: "):
				want := "roles are " + strings.TrimPrefix(tt.field, "unknown role: ")
				if !errors.Is(err, ErrUnknownRole) || !strings.HasSuffix(err.Error(), want) {
					t.Errorf("validChange = %v, want ErrUnknownRole ending %q", err, want)
				}
			case tt.field != "" && (!errors.As(err, &inv) || inv.Field != tt.field):
				t.Errorf("validChange = %v, want invalid %s", err, tt.field)
			}
		})
	}
}

// changeStore records the change it is asked for.
type changeStore struct {
	Store
	got PrincipalChange
	err error
}

func (c *changeStore) ChangePrincipal(_ context.Context, _, kind, id string, ch PrincipalChange) (Principal, error) {
	c.got = ch
	if c.err != nil {
		return Principal{}, c.err
	}
	return Principal{Kind: kind, ID: id, Name: *ch.Name}, nil
}

type forgetful struct{ forgot []string }

func (f *forgetful) Forget(tenant, user string) { f.forgot = append(f.forgot, tenant+"/"+user) }

type allowAll struct{}

func (allowAll) Decide(context.Context, memory.Principal, string, memory.Resource, time.Time) (memory.Decision, error) {
	return memory.Decision{Allow: true}, nil
}

func TestChangePrincipal(t *testing.T) {
	ctx := context.Background()
	admin := memory.Principal{Tenant: "acme", Kind: memory.KindAdmin, ID: "root", Roles: []string{"admin"}}
	build := func(store Store) (*Service, *fakeEpochs, *forgetful) {
		epochs, names := &fakeEpochs{n: map[string]int64{}}, &forgetful{}
		svc, err := New(Options{Store: store, Epochs: epochs, Hasher: testHasher(t), Authz: allowAll{}, Names: names})
		if err != nil {
			t.Fatal(err)
		}
		return svc, epochs, names
	}

	store := &changeStore{}
	svc, epochs, names := build(store)
	name := "  Ann   Li "
	p, err := svc.ChangePrincipal(ctx, admin, memory.KindUser, "u1", PrincipalChange{Name: &name})
	if err != nil || p.Name != "Ann Li" || *store.got.Name != "Ann Li" {
		t.Errorf("ChangePrincipal = %+v, %v (stored %q); want the name tidied", p, err, *store.got.Name)
	}
	if len(names.forgot) != 1 || names.forgot[0] != "acme/u1" {
		t.Errorf("names forgotten: %v, want acme/u1", names.forgot)
	}
	if epochs.n["acme"] != 1 {
		t.Errorf("epoch of acme = %d, want one bump: every replica reads the principal again", epochs.n["acme"])
	}

	store = &changeStore{err: memory.ErrNotFound}
	svc, epochs, names = build(store)
	if _, err := svc.ChangePrincipal(ctx, admin, memory.KindUser, "nobody", PrincipalChange{Name: &name}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("an unknown principal: %v, want not found", err)
	}
	if len(names.forgot) != 0 || epochs.n["acme"] != 0 {
		t.Errorf("a failed change forgot %v and bumped %d times", names.forgot, epochs.n["acme"])
	}

	user := memory.Principal{Tenant: "acme", Kind: memory.KindUser, ID: "u1"}
	svc, _, _ = build(&changeStore{})
	svc.authz = nil // no policy: every admin call is forbidden
	if _, err := svc.ChangePrincipal(ctx, user, memory.KindUser, "u1", PrincipalChange{Name: &name}); !errors.Is(err, memory.ErrForbidden) {
		t.Errorf("without the manage right: %v, want forbidden", err)
	}
}
