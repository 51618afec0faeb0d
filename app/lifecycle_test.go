package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

// recordingAuditor keeps the events it is given.
type recordingAuditor struct {
	mu     sync.Mutex
	events []memory.AuditEvent
}

var _ memory.Auditor = (*recordingAuditor)(nil)

func (r *recordingAuditor) Audit(_ context.Context, e memory.AuditEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// sweeper sweeps every tenant but those in fail.
type sweeper struct{ fail map[string]bool }

var _ memory.Sweeper = sweeper{}

func (s sweeper) Sweep(_ context.Context, tenant string, dryRun bool) (memory.SweepReport, error) {
	if s.fail[tenant] {
		return memory.SweepReport{}, memory.ErrUnavailable
	}
	return memory.SweepReport{DryRun: dryRun, Tenants: 1, Scanned: 3, Expired: 1}, nil
}

func TestScheduledSweepIsAuditedPerTenant(t *testing.T) {
	audit := &recordingAuditor{}
	tenants := func(context.Context) ([]string, error) { return []string{"acme", "globex"}, nil }
	err := sweepAll(context.Background(), tenants, sweeper{fail: map[string]bool{"globex": true}}, audit, slog.New(slog.DiscardHandler))
	if !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("err = %v, want globex's failure", err)
	}
	type brief struct{ Tenant, Actor, Action, Target, Outcome, Error, Expired string }
	var got []brief
	for _, e := range audit.events {
		got = append(got, brief{e.Tenant, e.Actor, e.Action, e.Target, e.Outcome, e.Error, e.Details["expired"]})
	}
	want := []brief{
		{"acme", "system", memory.AuditJanitorSweep, "tenant:acme", memory.AuditOK, "", "1"},
		{"globex", "system", memory.AuditJanitorSweep, "tenant:globex", memory.AuditFailed, "unavailable", "0"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("audit events (-want +got):\n%s", d)
	}
}
