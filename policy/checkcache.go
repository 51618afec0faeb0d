package policy

import (
	"slices"
	"sync"

	"mneme/policyadmin"
)

// Activating or rolling back to a stored revision checks it again, though
// it passed the same check when it was pushed. The check reads the modules
// and the bundled policy, tests and decision table, which are fixed for an
// engine, so modules that passed once pass again: passedChecks keeps the
// report of each check that passed, and CheckPolicy answers a check of the
// same modules from it without taking a turn at the gate. Other tenants'
// slow checks then no longer hold up an activation, and a revision pushed
// and then activated is checked once. A failure is not kept: it is checked
// again, as before. (The pushdown probes also try the read rules at the
// time of the check; a rule that turns on at a later date is judged as of
// the first check, as it is for the revision already active.) The timing
// check decides with the tenant's grants and settings, so a pass is kept
// for the grant revision it ran at: after a change of grants or settings,
// the modules are checked again.
//
// Reports are kept by tenant as well as digest, so that how fast a check
// answers tells a tenant nothing about another's policies.

// maxPassedChecks bounds the reports kept (a few hundred bytes each); past
// it, the one used longest ago goes.
const maxPassedChecks = 256

type passedKey struct{ tenant, digest string }

// passedChecks is a bounded set of passed checks, least recently used
// first.
type passedChecks struct {
	mu      sync.Mutex
	max     int
	order   []passedKey // least recently used first
	reports map[passedKey]policyadmin.PolicyReport
}

func newPassedChecks(limit int) *passedChecks {
	return &passedChecks{max: limit, reports: map[passedKey]policyadmin.PolicyReport{}}
}

// get returns the report of a passed check of digest by tenant.
func (c *passedChecks) get(tenant, digest string) (policyadmin.PolicyReport, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := passedKey{tenant, digest}
	r, ok := c.reports[k]
	if ok {
		c.touch(k)
	}
	return r, ok
}

// put keeps the report of a check of digest by tenant that passed.
func (c *passedChecks) put(tenant, digest string, r policyadmin.PolicyReport) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := passedKey{tenant, digest}
	if _, ok := c.reports[k]; !ok && len(c.reports) >= c.max {
		delete(c.reports, c.order[0])
		c.order = c.order[1:]
	}
	c.reports[k] = r
	c.touch(k)
}

// touch makes k the most recently used.
func (c *passedChecks) touch(k passedKey) {
	if i := slices.Index(c.order, k); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
	c.order = append(c.order, k)
}
