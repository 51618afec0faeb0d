package journal

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/internal/testenv"
	"mneme/memory"
)

func TestDecisionLog(t *testing.T) {
	rdb := testenv.Redis(t)
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)
	d := NewDecisions(rdb, DecisionOptions{Cap: 5})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { _ = rdb.Del(context.Background(), decisionsKey(tenant), decisionsKey(other)).Err() })

	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rec := func(i int, kind, id, action, result string) memory.DecisionRecord {
		return memory.DecisionRecord{
			Time: base.Add(time.Duration(i) * time.Minute), Principal: memory.Principal{Tenant: tenant, Kind: kind, ID: id},
			Action: action, Resource: memory.Resource{Tenant: tenant, ID: fmt.Sprintf("m%d", i), UserID: "alice"},
			Result: result, PolicyRevision: 1, GrantRevision: 2, LatencyMicros: 40,
		}
	}
	all := []memory.DecisionRecord{
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
		q    memory.DecisionQuery
		want []memory.DecisionRecord
	}{
		{"all, newest first, capped", memory.DecisionQuery{}, []memory.DecisionRecord{all[5], all[4], all[3], all[2], all[1]}},
		{"limit", memory.DecisionQuery{Limit: 2}, []memory.DecisionRecord{all[5], all[4]}},
		{"denied", memory.DecisionQuery{Result: "deny"}, []memory.DecisionRecord{all[4], all[1]}},
		{"principal id", memory.DecisionQuery{Principal: "a"}, []memory.DecisionRecord{all[4], all[2], all[1]}},
		{"principal kind and id", memory.DecisionQuery{Principal: "agent:a"}, []memory.DecisionRecord{all[4], all[1]}},
		{"action", memory.DecisionQuery{Action: "write"}, []memory.DecisionRecord{all[3]}},
		{"since", memory.DecisionQuery{Since: base.Add(3 * time.Minute)}, []memory.DecisionRecord{all[5], all[4], all[3]}},
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
	got, err := d.Decisions(context.Background(), other, memory.DecisionQuery{})
	if err != nil || len(got) != 1 || got[0].Resource.ID != "m9" {
		t.Errorf("other tenant's log: %+v, %v", got, err)
	}
}

func TestRecordNeverBlocks(t *testing.T) {
	rdb := testenv.Redis(t)
	d := NewDecisions(rdb, DecisionOptions{})
	// Nobody runs the log: the queue fills, then records are dropped.
	start := time.Now()
	for range decisionBuffer + 100 {
		d.Record(memory.DecisionRecord{})
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("recording into a full queue took %s", took)
	}
	if d.Dropped() != 100 {
		t.Errorf("dropped %d, want 100", d.Dropped())
	}
}
