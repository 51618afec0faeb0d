package memory

import (
	"context"
	"errors"

	"testing"
)

// fakeSweeper is a Sweeper that reports an empty sweep and counts the runs.
type fakeSweeper struct{ swept int }

func (f *fakeSweeper) Sweep(_ context.Context, _ string, dryRun bool) (SweepReport, error) {
	f.swept++
	return SweepReport{DryRun: dryRun, At: testNow, Changes: []Change{}}, nil
}

func TestSweepNeedsAnAdmin(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	f.authz.decide = func(p Principal, action string, _ Resource) (Decision, error) {
		return Decision{Allow: p.Kind == KindAdmin && action == ActionManage}, nil
	}
	if _, err := f.svc.Sweep(context.Background(), agentSupport, true); !errors.Is(err, ErrForbidden) {
		t.Errorf("agent sweep err = %v, want ErrForbidden", err)
	}
	if r, err := f.svc.Sweep(context.Background(), adminAcme, true); err != nil || !r.DryRun || f.sweeper.swept != 1 {
		t.Errorf("admin sweep = %+v, %v", r, err)
	}
}
