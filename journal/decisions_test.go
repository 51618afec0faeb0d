package journal

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/policyadmin"

	"github.com/redis/go-redis/v9"
)

func TestDecisionLog(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		tenant, other := testenv.Tenant(t), testenv.Tenant(t)
		d := NewDecisions(rdb, DecisionOptions{Cap: 5})
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { d.Run(ctx); close(done) }()
		t.Cleanup(func() { delKeys(rdb, decisionsKey(tenant), decisionsKey(other)) })

		base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		rec := func(i int, kind, id, action, result string) policyadmin.DecisionRecord {
			return policyadmin.DecisionRecord{
				Time: base.Add(time.Duration(i) * time.Minute), Principal: memory.Principal{Tenant: tenant, Kind: kind, ID: id},
				Action: action, Resource: memory.Resource{Tenant: tenant, ID: fmt.Sprintf("m%d", i), UserID: "alice"},
				Result: result, PolicyRevision: 1, GrantRevision: 2, LatencyMicros: 40,
			}
		}
		all := []policyadmin.DecisionRecord{
			rec(0, "agent", "a", "read", "allow"), // trimmed by the cap
			rec(1, "agent", "a", "read", "deny"),
			rec(2, "user", "a", "read", "allow"),
			rec(3, "agent", "b", "write", "allow"),
			rec(4, "agent", "a", "read", "deny"),
			rec(5, "admin", "root", "manage", "allow"),
		}
		for _, r := range all {
			d.Record(r)
		}
		otherRec := rec(9, "agent", "a", "read", "deny")
		otherRec.Principal.Tenant = other
		d.Record(otherRec)
		// Stopping the owner writes what is queued.
		stop()
		<-done

		tests := []struct {
			name string
			q    policyadmin.DecisionQuery
			want []policyadmin.DecisionRecord
		}{
			{"all, newest first, capped", policyadmin.DecisionQuery{}, []policyadmin.DecisionRecord{all[5], all[4], all[3], all[2], all[1]}},
			{"limit", policyadmin.DecisionQuery{Limit: 2}, []policyadmin.DecisionRecord{all[5], all[4]}},
			{"denied", policyadmin.DecisionQuery{Result: "deny"}, []policyadmin.DecisionRecord{all[4], all[1]}},
			{"principal id", policyadmin.DecisionQuery{Principal: "a"}, []policyadmin.DecisionRecord{all[4], all[2], all[1]}},
			{"principal kind and id", policyadmin.DecisionQuery{Principal: "agent:a"}, []policyadmin.DecisionRecord{all[4], all[1]}},
			{"action", policyadmin.DecisionQuery{Action: "write"}, []policyadmin.DecisionRecord{all[3]}},
			{"since", policyadmin.DecisionQuery{Since: base.Add(3 * time.Minute)}, []policyadmin.DecisionRecord{all[5], all[4], all[3]}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got, err := d.Decisions(context.Background(), tenant, tc.q)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
		got, err := d.Decisions(context.Background(), other, policyadmin.DecisionQuery{})
		if err != nil || len(got) != 1 || got[0].Resource.ID != "m9" {
			t.Errorf("other tenant's log: %+v, %v", got, err)
		}
	})
}

func TestRecordNeverBlocks(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		d := NewDecisions(rdb, DecisionOptions{})
		// Nobody runs the log: the queue fills, then records are dropped.
		start := time.Now()
		for range decisionBuffer + 100 {
			d.Record(policyadmin.DecisionRecord{})
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("recording into a full queue took %s", took)
		}
		if d.Dropped() != 100 {
			t.Errorf("dropped %d, want 100", d.Dropped())
		}
	})
}

// TestDecisionLogEraseUser removes every decision taken by a user or about
// a resource of theirs, including those still queued when the erase
// begins, and leaves other users' and other tenants' decisions.
func TestDecisionLogEraseUser(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		tenant, other := testenv.Tenant(t), testenv.Tenant(t)
		t.Cleanup(func() { delKeys(rdb, decisionsKey(tenant), decisionsKey(other)) })
		rec := func(tenant, kind, id, user string) policyadmin.DecisionRecord {
			return policyadmin.DecisionRecord{
				Time: time.Now().UTC(), Principal: memory.Principal{Tenant: tenant, Kind: kind, ID: id},
				Action: memory.ActionRead, Resource: memory.Resource{Tenant: tenant, ID: memory.NewID("mem"), UserID: user}, Result: policyadmin.ResultAllow,
			}
		}
		tests := []struct {
			name string
			run  bool // a Run writes the log; otherwise the erase writes the queue itself
		}{{"with Run", true}, {"without Run", false}}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				delKeys(rdb, decisionsKey(tenant), decisionsKey(other))
				d := NewDecisions(rdb, DecisionOptions{})
				if tc.run {
					startRun(t, d)
				}
				gone := []policyadmin.DecisionRecord{
					rec(tenant, memory.KindAgent, "bot", "alice"),
					rec(tenant, memory.KindUser, "alice", "alice"),
					rec(tenant, memory.KindUser, "alice", "bob"), // alice read something of bob's
					rec(tenant, memory.KindAdmin, "root", "alice"),
				}
				kept := []policyadmin.DecisionRecord{
					rec(tenant, memory.KindAgent, "bot", "bob"),
					rec(tenant, memory.KindAgent, "alice", "bob"), // an agent named alice is not the user
					rec(other, memory.KindUser, "alice", "alice"), // another tenant's alice
				}
				for _, r := range append(append([]policyadmin.DecisionRecord{}, gone...), kept...) {
					d.Record(r)
				}
				n, err := d.EraseUser(t.Context(), tenant, "alice")
				if err != nil || n != int64(len(gone)) {
					t.Fatalf("EraseUser = %d, %v; want %d", n, err, len(gone))
				}
				if d.Place() != "decision_log" {
					t.Errorf("Place = %q", d.Place())
				}
				left, err := d.Decisions(t.Context(), tenant, policyadmin.DecisionQuery{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]policyadmin.DecisionRecord{kept[1], kept[0]}, left); diff != "" {
					t.Errorf("tenant's log after the erase (-want +got):\n%s", diff)
				}
				if o, err := d.Decisions(t.Context(), other, policyadmin.DecisionQuery{}); err != nil || len(o) != 1 {
					t.Errorf("other tenant's log: %+v, %v", o, err)
				}
				if again, err := d.EraseUser(t.Context(), tenant, "alice"); err != nil || again != 0 {
					t.Errorf("second erase = %d, %v; want 0", again, err)
				}
			})
		}
	})
}

// startRun runs d's writer until the test ends, and returns once it has
// started: a Flush before that writes the queue itself, beside the writer,
// and the two can push records out of order.
func startRun(t *testing.T, d *Decisions) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	for {
		d.mu.Lock()
		started := d.run != nil
		d.mu.Unlock()
		if started {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
