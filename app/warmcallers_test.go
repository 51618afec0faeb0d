package app

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/identity"
	"mneme/memory"
)

// The callers warmed are those whose filters differ: every agent, grantees
// first, then one user and one admin of each tenant; no more than asked,
// and never an agent that only a lapsed grant or another tenant names.
func TestWarmCallerSet(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	past := now.Add(-time.Hour)
	agent := func(id, team string) identity.Principal {
		return identity.Principal{Kind: memory.KindAgent, ID: id, Team: team}
	}
	byTenant := map[string][]identity.Principal{
		"acme": {
			{Kind: memory.KindUser, ID: "alice"}, {Kind: memory.KindUser, ID: "bob"}, agent("finance-bot", "finance"),
			{Kind: memory.KindAdmin, ID: "root", Roles: []string{"admin"}}, agent("support-bot", "support"), agent("order-bot", "orders"),
			{Kind: memory.KindAnalyst, ID: "ana"},
		},
		"beta": {agent("helper", ""), {Kind: memory.KindUser, ID: "u1"}},
	}
	grants := []memory.Grant{
		{Tenant: "acme", Grantee: "support-bot"},
		{Tenant: "acme", Grantee: "support-bot"},
		{Tenant: "acme", Grantee: "order-bot", ExpiresAt: &past},
		{Tenant: "beta", Grantee: "ghost"},
		{Tenant: "gamma", Grantee: "helper"},
	}
	names := func(ps []memory.Principal) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Tenant+"/"+p.Kind+":"+p.ID)
		}
		return out
	}
	tests := []struct {
		name string
		most int
		want []string
	}{
		{"all", 24, []string{
			"acme/agent:support-bot", "acme/agent:finance-bot", "acme/agent:order-bot", "beta/agent:helper",
			"acme/user:alice", "acme/admin:root", "beta/user:u1",
		}},
		{"bounded", 2, []string{"acme/agent:support-bot", "acme/agent:finance-bot"}},
		{"none", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := warmCallerSet(grants, byTenant, now, tt.most)
			if d := cmp.Diff(tt.want, names(got)); d != "" {
				t.Errorf("callers (-want +got):\n%s", d)
			}
			for _, p := range got {
				if p.ID == "support-bot" && p.Team != "support" {
					t.Errorf("support-bot warmed without its team: %+v", p)
				}
			}
		})
	}
}

// Each caller asks about a user of its own tenant, the tenant's users in
// turn; a user asks about themselves; a caller of a tenant with no user
// who has memories asks nothing.
func TestWarmRowAsks(t *testing.T) {
	callers := []memory.Principal{
		{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot"}, {Tenant: "acme", Kind: memory.KindAgent, ID: "order-bot"},
		{Tenant: "acme", Kind: memory.KindAgent, ID: "finance-bot"}, {Tenant: "acme", Kind: memory.KindUser, ID: "carol"},
		{Tenant: "acme", Kind: memory.KindAdmin, ID: "root"}, {Tenant: "beta", Kind: memory.KindAgent, ID: "helper"},
		{Tenant: "gamma", Kind: memory.KindAgent, ID: "lonely"},
	}
	users := map[string][]string{"acme": {"alice", "bob"}, "beta": {"u1"}, "gamma": nil}
	var got []string
	for _, a := range warmRowAsks(callers, users) {
		got = append(got, a.caller.Tenant+"/"+a.caller.ID+"→"+a.user)
	}
	want := []string{"acme/support-bot→alice", "acme/order-bot→bob", "acme/finance-bot→alice", "acme/carol→carol", "acme/root→bob", "beta/helper→u1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("asks (-want +got):\n%s", diff)
	}
}
