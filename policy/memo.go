package policy

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mneme/memory"
)

// decisionMemo remembers the decisions of one revision. A decision is a
// function of the principal, the action, the resource, the data (grants and
// settings) and the clock, which the policy reads only through grant
// expiries: the memo keys each decision by the data's generation and keeps it
// for the interval of instants in which no grant of its tenant expires, as
// the pushdown keeps read filters (see pushdown.span). A recall decides each
// memory it returns, and the same memories come back to the same caller turn
// after turn.
type decisionMemo struct {
	// misses counts decisions not found, which the engine evaluates; for
	// tests.
	misses atomic.Int64

	mu      sync.Mutex
	gen     uint64
	entries map[decisionKey]decisionEntry
}

type decisionKey struct {
	principal, action string
	resource          memory.Resource
}

type decisionEntry struct {
	decision    memory.Decision
	from, until time.Time
}

// maxMemoEntries bounds the memo (a few hundred bytes an entry); a full
// memo starts afresh.
const maxMemoEntries = 20_000

func newDecisionMemo() *decisionMemo {
	return &decisionMemo{entries: map[decisionKey]decisionEntry{}}
}

func memoKey(p memory.Principal, action string, r memory.Resource) decisionKey {
	who := strings.Join(append([]string{p.Tenant, p.Kind, p.ID, p.Team}, p.Roles...), "\x00")
	return decisionKey{principal: who, action: action, resource: r}
}

// get returns the decision remembered for k at now in generation gen.
func (m *decisionMemo) get(gen uint64, k decisionKey, now time.Time) (memory.Decision, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok || m.gen != gen || now.Before(e.from) || (!e.until.IsZero() && !now.Before(e.until)) {
		m.misses.Add(1)
		return memory.Decision{}, false
	}
	return memory.Decision{Allow: e.decision.Allow, Reasons: slices.Clone(e.decision.Reasons)}, true
}

// put remembers d for k over [from, until) in generation gen, which the
// caller read before it evaluated: a decision made while the data changed
// belongs to a generation that is over, and is dropped.
func (m *decisionMemo) put(gen uint64, k decisionKey, d memory.Decision, from, until time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen != m.gen {
		if gen < m.gen {
			return
		}
		m.gen, m.entries = gen, map[decisionKey]decisionEntry{}
	}
	if len(m.entries) >= maxMemoEntries {
		m.entries = map[decisionKey]decisionEntry{}
	}
	m.entries[k] = decisionEntry{decision: memory.Decision{Allow: d.Allow, Reasons: slices.Clone(d.Reasons)}, from: from, until: until}
}
