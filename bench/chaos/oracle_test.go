package main

import (
	"testing"
	"time"
)

func TestOracleAllowed(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	o := newOracle(demo{grants: []grant{{ID: "seed", Grantee: "support-bot", Source: "order-bot", Types: []string{"episodic"}, Kinds: []string{"order_status"}, MaxSensitivity: "internal"}}})
	i := o.grantOpened(grant{Grantee: "a1", Source: "*", Types: []string{"episodic"}, MaxSensitivity: "internal"}, at(10))
	o.grantClosed(i, at(20))
	o.embargoed(at(30), at(40))

	mem := func(user, agent, typ, kind, sens string) readMemory {
		return readMemory{Tenant: "acme", UserID: user, AgentID: agent, Type: typ, Kind: kind, Sensitivity: sens}
	}
	agent := func(id string) principal { return principal{kind: "agent", id: id} }
	user := func(id string) principal { return principal{kind: "user", id: id} }
	for _, tc := range []struct {
		name       string
		p          principal
		m          readMemory
		start, end int
		want       bool
	}{
		{"admin reads anything", principal{kind: "admin", id: "admin"}, mem("u", "x", "semantic", "note", "restricted"), 0, 1, true},
		{"another tenant", principal{kind: "admin", id: "admin"}, readMemory{Tenant: "globex", Sensitivity: "public"}, 0, 1, false},
		{"user reads about self", user("u"), mem("u", "x", "episodic", "note", "internal"), 0, 1, true},
		{"user above the ceiling", user("u"), mem("u", "x", "episodic", "note", "confidential"), 0, 1, false},
		{"user reads another", user("u"), mem("v", "x", "episodic", "note", "public"), 0, 1, false},
		{"agent reads own", agent("a1"), mem("u", "a1", "semantic", "note", "restricted"), 0, 1, true},
		{"agent reads what the user said", agent("a2"), mem("u", "user:u", "profile", "preference", "confidential"), 0, 1, true},
		{"agent reads another user's word only by grant", agent("a2"), mem("v", "user:u", "profile", "preference", "internal"), 0, 1, false},
		{"agent reads other's without grant", agent("a2"), mem("u", "a1", "episodic", "note", "internal"), 0, 1, false},
		{"seed grant covers", agent("support-bot"), mem("u", "order-bot", "episodic", "order_status", "internal"), 0, 1, true},
		{"seed grant: wrong kind", agent("support-bot"), mem("u", "order-bot", "episodic", "complaint", "internal"), 0, 1, false},
		{"seed grant: too sensitive", agent("support-bot"), mem("u", "order-bot", "episodic", "order_status", "confidential"), 0, 1, false},
		{"grant before it opened", agent("a1"), mem("u", "a2", "episodic", "note", "internal"), 0, 9, false},
		{"grant overlapping the read", agent("a1"), mem("u", "a2", "episodic", "note", "internal"), 5, 11, true},
		{"grant after it closed", agent("a1"), mem("u", "a2", "episodic", "note", "internal"), 21, 25, false},
		{"embargo surely in force", agent("a1"), mem("u", "a1", "episodic", embargoKind, "internal"), 31, 39, false},
		{"embargo perhaps in force", agent("a1"), mem("u", "a1", "episodic", embargoKind, "internal"), 25, 35, true},
		{"embargo not in force", agent("a1"), mem("u", "a1", "episodic", embargoKind, "internal"), 41, 45, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, why := o.allowed("acme", tc.p, tc.m, at(tc.start), at(tc.end)); got != tc.want {
				t.Errorf("allowed = %v (%s), want %v", got, why, tc.want)
			}
		})
	}
}

func TestForgetOneAck(t *testing.T) {
	o := newOracle(demo{})
	a, b, c := o.sent("m1", "u"), o.sent("m2", "erased"), o.sent("m3", "u")
	o.ack(a)
	o.ack(b)
	o.userErased("erased", "p")
	_ = c
	if m, ok := o.forgetOneAck(); !ok || m != "m1" {
		t.Fatalf("forgot %q %v, want m1: the only acknowledged write of a user still present", m, ok)
	}
	if _, ok := o.writes["m1"]; ok {
		t.Error("m1 still known")
	}
	if m, ok := o.forgetOneAck(); ok {
		t.Errorf("forgot %q with nothing left to forget", m)
	}
}
