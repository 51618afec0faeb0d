package journal

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"mneme/internal/testenv"
	"mneme/memory"

	"github.com/redis/go-redis/v9"
)

func TestAuditTrail(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		tenant, other := testenv.Tenant(t), testenv.Tenant(t)
		t.Cleanup(func() { delKeys(rdb, auditKey(tenant), auditKey(other)) })
		ctx := context.Background()
		a := NewAudit(rdb, AuditOptions{Cap: 4})
		base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		ev := func(i int, actor, action string) memory.AuditEvent {
			return memory.AuditEvent{
				Time: base.Add(time.Duration(i) * time.Minute), Tenant: tenant, Actor: actor, Action: action,
				Target: "user:alice", Outcome: memory.AuditOK,
			}
		}
		all := []memory.AuditEvent{
			ev(0, "admin:root", "key.create"), // trimmed by the cap
			ev(1, "admin:root", "key.revoke"),
			ev(2, "admin:ops", "grant.create"),
			ev(3, "admin:root", "user.erase"),
			ev(4, "system", "janitor.sweep"),
		}
		for _, e := range all {
			a.Audit(ctx, e)
		}
		a.Audit(ctx, memory.AuditEvent{Tenant: other, Actor: "admin:x", Action: "key.create"})

		tests := []struct {
			name string
			q    memory.AuditQuery
			want []memory.AuditEvent
		}{
			{"newest first, capped", memory.AuditQuery{}, []memory.AuditEvent{all[4], all[3], all[2], all[1]}},
			{"by actor", memory.AuditQuery{Actor: "admin:root"}, []memory.AuditEvent{all[3], all[1]}},
			{"by action", memory.AuditQuery{Action: "user.erase"}, []memory.AuditEvent{all[3]}},
			{"by action prefix", memory.AuditQuery{Action: "key."}, []memory.AuditEvent{all[1]}},
			{"limit", memory.AuditQuery{Limit: 2}, []memory.AuditEvent{all[4], all[3]}},
			// No stream id is older: it was a store error.
			{"since before 1970", memory.AuditQuery{Since: time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)}, []memory.AuditEvent{all[4], all[3], all[2], all[1]}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := a.Events(ctx, tenant, tt.q)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			})
		}
		got, err := a.Events(ctx, other, memory.AuditQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Tenant != other || got[0].Outcome != memory.AuditOK || got[0].Time.IsZero() {
			t.Errorf("other tenant's trail = %+v, want its one event, stamped and ok", got)
		}
	})
}

func TestAuditRetention(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		tenant := testenv.Tenant(t)
		t.Cleanup(func() { _ = rdb.Del(context.Background(), auditKey(tenant)).Err() })
		ctx := context.Background()
		a := NewAudit(rdb, AuditOptions{Retention: 300 * time.Millisecond})
		a.Audit(ctx, memory.AuditEvent{Tenant: tenant, Actor: "admin:root", Action: "key.create"})
		time.Sleep(500 * time.Millisecond)
		a.Audit(ctx, memory.AuditEvent{Tenant: tenant, Actor: "admin:root", Action: "key.revoke"})
		got, err := a.Events(ctx, tenant, memory.AuditQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Action != "key.revoke" {
			t.Errorf("after the retention, trail = %+v, want only the newer event", got)
		}
	})
}

// delKeys deletes keys one by one: on a cluster, the keys of two tenants
// live in different slots and one DEL of both fails.
func delKeys(rdb redis.UniversalClient, keys ...string) {
	for _, k := range keys {
		_ = rdb.Del(context.Background(), k).Err()
	}
}

// A target or detail from a request is kept short and on one line, however
// long and whatever it holds.
func TestAuditBoundsWhatRequestsSay(t *testing.T) {
	tenant := testenv.Tenant(t)
	rdb := testenv.Redis(t)
	t.Cleanup(func() { delKeys(rdb, auditKey(tenant)) })
	a := NewAudit(rdb, AuditOptions{})
	long := strings.Repeat("z", 5000) + "\noutcome=ok actor=admin:admin"
	a.Audit(context.Background(), memory.AuditEvent{Tenant: tenant, Actor: "analyst:a", Action: "graph.neighbourhood", Target: "entity:" + long, Details: map[string]string{"from": long, "hops": "2"}})
	got, err := a.Events(context.Background(), tenant, memory.AuditQuery{})
	if err != nil || len(got) != 1 {
		t.Fatalf("events: %v, %v", got, err)
	}
	e := got[0]
	for what, s := range map[string]string{"target": e.Target, "detail": e.Details["from"]} {
		if n := utf8.RuneCountInString(s); n > maxAuditText+1 || strings.ContainsAny(s, "\n\r") || !strings.HasSuffix(s, "…") {
			t.Errorf("%s kept as %d characters: %.80q…", what, n, s)
		}
	}
	if e.Details["hops"] != "2" || e.Target[:8] != "entity:z" {
		t.Errorf("short values changed: %+v", e)
	}
}

func TestBounded(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"user:alice", "user:alice"},
		{"a\nb\tc\x00d", "a b c d"},
		{"ok\xffbad", "ok\uFFFDbad"},
		{strings.Repeat("é", maxAuditText), strings.Repeat("é", maxAuditText)},
		{strings.Repeat("é", maxAuditText+1), strings.Repeat("é", maxAuditText) + "…"},
	} {
		if got := bounded(tc.in); got != tc.want {
			t.Errorf("bounded(%.20q) = %.20q, want %.20q", tc.in, got, tc.want)
		}
	}
}

// End users' own acts (user:self) have a stream and a cap of their own: a
// user deleting in a loop cannot push the admins' acts out of the trail,
// and the trail reads back both, merged newest first.
func TestAuditKeepsUsersApart(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		tenant := testenv.Tenant(t)
		t.Cleanup(func() { delKeys(rdb, auditKey(tenant), selfKey(tenant)) })
		ctx := context.Background()
		a := NewAudit(rdb, AuditOptions{Cap: 3, SelfCap: 2})
		base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		ev := func(i int, actor string) memory.AuditEvent {
			return memory.AuditEvent{Time: base.Add(time.Duration(i) * time.Minute), Tenant: tenant, Actor: actor, Action: "memory.delete", Outcome: memory.AuditOK}
		}
		admin := []memory.AuditEvent{ev(0, "admin:root"), ev(2, "admin:root")}
		a.Audit(ctx, admin[0])
		var users []memory.AuditEvent
		for i := 1; i < 50; i += 2 {
			users = append(users, ev(i+2, selfActor))
			a.Audit(ctx, users[len(users)-1])
		}
		a.Audit(ctx, admin[1])
		n := len(users)
		tests := []struct {
			name string
			q    memory.AuditQuery
			want []memory.AuditEvent
		}{
			{"both, merged, each capped", memory.AuditQuery{}, []memory.AuditEvent{users[n-1], users[n-2], admin[1], admin[0]}},
			{"the admins' only", memory.AuditQuery{Actor: "admin:root"}, []memory.AuditEvent{admin[1], admin[0]}},
			{"the users' only", memory.AuditQuery{Actor: selfActor}, []memory.AuditEvent{users[n-1], users[n-2]}},
			{"limit", memory.AuditQuery{Limit: 3}, []memory.AuditEvent{users[n-1], users[n-2], admin[1]}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := a.Events(ctx, tenant, tt.q)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// erasedUsers is an ErasedUsers of a fixed set; a user named "unknowable"
// cannot be told.
type erasedUsers map[string]bool

func (e erasedUsers) UserErased(_ context.Context, _, userID string) (bool, error) {
	if userID == "unknowable" {
		return false, errors.New("graph unavailable")
	}
	return e[userID], nil
}

// TestAuditNamesErasedUsersByTheirHash: an act about a user who was erased
// names them by their tombstone's hash, as the erase did, in its target and
// a graph query's user filter; a user never erased is named as before, and
// one whose erase cannot be told is named by the hash.
func TestAuditNamesErasedUsersByTheirHash(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		tenant := testenv.Tenant(t)
		t.Cleanup(func() { delKeys(rdb, auditKey(tenant)) })
		ctx := context.Background()
		a := NewAudit(rdb, AuditOptions{Erased: erasedUsers{"erin": true}})
		hash := func(id string) string { return memory.UserTombstoneID(tenant, id) }
		tests := []struct {
			action, target string
			details        map[string]string
			wantTarget     string
			wantUser       string
		}{
			{action: memory.AuditUserErase, target: hash("erin"), wantTarget: hash("erin")},
			{action: "user.export", target: "user:erin", wantTarget: hash("erin")},
			{action: "key.create", target: "user:erin", details: map[string]string{"key": "k_1"}, wantTarget: hash("erin")},
			{action: "graph.aggregate", details: map[string]string{"user": "erin", "by": "type"}, wantUser: hash("erin")},
			{action: "graph.neighbourhood", target: "user:erin", details: map[string]string{"user": "alice"}, wantTarget: hash("erin"), wantUser: "alice"},
			{action: "user.export", target: "user:alice", wantTarget: "user:alice"},
			{action: "principal.change", target: "agent:erin", wantTarget: "agent:erin"},
			{action: "user.export", target: "user:unknowable", wantTarget: hash("unknowable")},
		}
		for i, tt := range tests {
			details := maps.Clone(tt.details)
			a.Audit(ctx, memory.AuditEvent{
				Time: time.Date(2026, 5, 1, 12, i, 0, 0, time.UTC), Tenant: tenant, Actor: "admin:root",
				Action: tt.action, Target: tt.target, Details: details, Outcome: memory.AuditOK,
			})
			if !maps.Equal(details, tt.details) {
				t.Errorf("%s: the caller's details changed to %v", tt.action, details)
			}
		}
		got, err := a.Events(ctx, tenant, memory.AuditQuery{})
		if err != nil || len(got) != len(tests) {
			t.Fatalf("%d events, %v", len(got), err)
		}
		for i, tt := range tests {
			e := got[len(got)-1-i]
			if e.Target != tt.wantTarget || e.Details["user"] != tt.wantUser {
				t.Errorf("%s %s: target %q, user %q; want %q, %q", tt.action, tt.target, e.Target, e.Details["user"], tt.wantTarget, tt.wantUser)
			}
		}
	})
}
