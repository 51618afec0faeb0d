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
//
// So that one tenant's admin cannot keep the others out, a tenant has at
// most one check running or waiting (another is refused at once), the
// waiting checks take their turns in arrival order, and a check waits
// longer than the longest check runs (checkTimeout): another tenant's
// check is delayed by at most one of each other tenant's. A check of
// modules that passed before does not come here (checkcache.go).

// Defaults of the check gate.
const (
	// checkWait is how long a check waits for its turn.
	checkWait = checkTimeout + 5*time.Second
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
	// slot is held by the check running; a channel's waiting senders are
	// served in the order they came.
	slot chan struct{}
	mu   sync.Mutex
	// tenants have a check running or waiting.
	tenants map[string]bool
	wait    time.Duration
	budget  uint64
	// heap reads the live heap; a field so that tests can stage growth.
	heap func() uint64
}

func newCheckGate() *checkGate {
	return &checkGate{slot: make(chan struct{}, 1), tenants: map[string]bool{}, wait: checkWait, budget: checkHeapBudget, heap: liveHeap}
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// run waits for the slot (at most g.wait, or until ctx ends) and runs f for
// tenant with a context the watchdog cancels when the heap grows past the
// budget; f's error is then a RejectTooMuchMemory. A wait in vain, or a
// check of a tenant that has one running or waiting, is a
// *policyadmin.CheckBusyError.
func (g *checkGate) run(ctx context.Context, tenant string, f func(context.Context) error) error {
	g.mu.Lock()
	own := g.tenants[tenant]
	g.tenants[tenant] = true
	g.mu.Unlock()
	if own {
		return &policyadmin.CheckBusyError{RetryAfter: g.wait, Own: true}
	}
	defer func() {
		g.mu.Lock()
		delete(g.tenants, tenant)
		g.mu.Unlock()
	}()
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
