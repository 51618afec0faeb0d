package policy

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mneme/policyadmin"
)

// The gate runs one check at a time, lets a second wait its turn or refuses
// it as busy, and stops a check whose heap grows past the budget.
func TestCheckGate(t *testing.T) {
	ctx := context.Background()
	// untilCancelled stands for a check that allocates until stopped.
	untilCancelled := func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
			return nil
		}
	}
	tests := []struct {
		name string
		// busyFor holds the slot that long before the check asks for it.
		busyFor time.Duration
		growth  uint64 // heap growth per reading
		f       func(context.Context) error
		code    string // a rejection's code, or "busy", or "" for no error
	}{
		{"alone, within budget", 0, 0, func(context.Context) error { return nil }, ""},
		{"waits for the one running", 50 * time.Millisecond, 0, func(context.Context) error { return nil }, ""},
		{"refused when the one running outlasts the wait", time.Second, 0, func(context.Context) error { return nil }, "busy"},
		{"stopped past the heap budget", 0, 64 << 20, untilCancelled, policyadmin.RejectTooMuchMemory},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var heap atomic.Uint64
			g := newCheckGate()
			g.wait, g.budget = 200*time.Millisecond, 256<<20
			g.heap = func() uint64 { return heap.Add(tc.growth) }
			if tc.busyFor > 0 {
				g.slot <- struct{}{}
				time.AfterFunc(tc.busyFor, func() { <-g.slot })
			}
			err := g.run(ctx, "t1", tc.f)
			var busy *policyadmin.CheckBusyError
			var rej *policyadmin.PolicyRejectedError
			switch {
			case tc.code == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.code == "busy" && !errors.As(err, &busy):
				t.Errorf("err = %v, want busy", err)
			case tc.code != "" && tc.code != "busy" && (!errors.As(err, &rej) || rej.Code != tc.code):
				t.Errorf("err = %v, want a %s rejection", err, tc.code)
			}
			if len(g.slot) != 0 && tc.busyFor == 0 {
				t.Error("the slot is still held")
			}
		})
	}
}

// One tenant's admin cannot keep another's out: a tenant's second check
// while its first runs or waits is refused at once, and a check waiting
// behind one that runs gets the next turn, before a later one of the
// tenant running.
func TestCheckGateIsFairAcrossTenants(t *testing.T) {
	ctx := context.Background()
	g := newCheckGate()
	g.wait = 2 * time.Second
	release := make(chan struct{})
	started := make(chan struct{})
	var order []string
	var mu sync.Mutex
	ran := func(who string) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			order = append(order, who)
			mu.Unlock()
			return nil
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := g.run(ctx, "attacker", func(context.Context) error { close(started); <-release; return nil }); err != nil {
			t.Errorf("attacker's first check: %v", err)
		}
	})
	<-started
	var busy *policyadmin.CheckBusyError
	if err := g.run(ctx, "attacker", ran("attacker again")); !errors.As(err, &busy) || !busy.Own {
		t.Errorf("the tenant's second check while its first runs: %v, want busy (own)", err)
	}
	wg.Go(func() {
		if err := g.run(ctx, "victim", ran("victim")); err != nil {
			t.Errorf("victim's check: %v", err)
		}
	})
	time.Sleep(50 * time.Millisecond) // the victim waits
	close(release)
	// The attacker asks again at once; the victim, waiting since before,
	// goes first.
	for {
		err := g.run(ctx, "attacker", ran("attacker later"))
		if err == nil {
			break
		}
		if !errors.As(err, &busy) {
			t.Fatalf("attacker's later check: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	if len(order) != 2 || order[0] != "victim" {
		t.Errorf("checks ran in the order %v, want the victim before the attacker's later check", order)
	}
}

// A test that builds ten million numbers is stopped by the real heap
// watchdog, not after its 10 s of OPA time and 1.5 GB.
func TestCheckPolicyMemoryBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MB")
	}
	e := newEngine(t, Options{})
	modules := append(e.BundledPolicy(), policyadmin.PolicyModule{Name: "big_test.rego",
		Source: "package mneme.authz_test\n\ntest_big if {\n\tcount([x | some x in numbers.range(1, 10000000)]) > 0\n}\n"})
	_, err := e.CheckPolicy(context.Background(), "t1", modules)
	var rej *policyadmin.PolicyRejectedError
	if !errors.As(err, &rej) || rej.Code != policyadmin.RejectTooMuchMemory {
		t.Fatalf("err = %v, want a %s rejection", err, policyadmin.RejectTooMuchMemory)
	}
}
