package policy

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"sync"
	"time"

	"mneme/policyadmin"
)

// Admin-supplied Rego (a policy check, a simulation, a replay) can ask for
// any amount of memory: count([x | some x in numbers.range(1, 1e7)]) holds a
// gigabyte. OPA bounds time but not memory, so checks run one at a time per
// process, and a watchdog stops the one running when the heap grows past a
// budget: with one at a time, that growth is its own.

// Defaults of the check gate.
const (
	// checkWait is how long a check waits for the one running to end.
	checkWait = 5 * time.Second
	// checkHeapBudget is how much the live heap may grow during a check.
	checkHeapBudget = 256 << 20
	// checkSampleEvery is how often the watchdog reads the heap.
	checkSampleEvery = 5 * time.Millisecond
)

// heapMetric is the heap marked live by the last GC: garbage of other
// requests does not count, and a check that allocates fast makes GCs
// frequent, so it follows the check's own growth closely.
const heapMetric = "/gc/heap/live:bytes"

// errOverBudget is the cause a check is cancelled with by the watchdog.
var errOverBudget = errors.New("policy check over its memory budget")

// checkGate runs admin-supplied evaluations one at a time under a heap
// budget.
type checkGate struct {
	slot   chan struct{}
	wait   time.Duration
	budget uint64
	// heap reads the live heap; a field so that tests can stage growth.
	heap func() uint64
}

func newCheckGate() *checkGate {
	return &checkGate{slot: make(chan struct{}, 1), wait: checkWait, budget: checkHeapBudget, heap: liveHeap}
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// run waits for the slot (at most g.wait, or until ctx ends) and runs f
// with a context the watchdog cancels when the heap grows past the budget;
// f's error is then a RejectTooMuchMemory. A wait in vain is a
// *policyadmin.CheckBusyError.
func (g *checkGate) run(ctx context.Context, f func(context.Context) error) error {
	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	select {
	case g.slot <- struct{}{}:
	case <-timer.C:
		return &policyadmin.CheckBusyError{RetryAfter: g.wait}
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g.slot }()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := g.watch(ctx, cancel)
	err := f(ctx)
	stop()
	if errors.Is(context.Cause(ctx), errOverBudget) {
		return reject(policyadmin.RejectTooMuchMemory, fmt.Sprintf("the check used more than %d MiB of memory and was stopped: bound what it builds (numbers.range, comprehensions, strings)", g.budget>>20))
	}
	return err
}

// watch cancels ctx when the heap grows past the budget from where it is
// now, until ctx ends or stop is called; stop waits for it.
func (g *checkGate) watch(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	base := g.heap()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(checkSampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if h := g.heap(); h > base && h-base > g.budget {
					cancel(errOverBudget)
					return
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
