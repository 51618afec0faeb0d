package metrics

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"mneme/memory"
	"mneme/policyadmin"
	"mneme/workingmemory"
)

// Write outcomes counted beside memory's own (created, reinforced, …).
const (
	// OutcomeCandidate: created, but waiting to be confirmed.
	OutcomeCandidate = "candidate"
	// OutcomeSuperseded: created as a new version of its slot's fact.
	OutcomeSuperseded = "superseded"
	// OutcomeRejectedGuard: the guard refused the write.
	OutcomeRejectedGuard = "rejected_guard"
)

var writeOutcomes = []string{
	memory.OutcomeCreated, memory.OutcomeReinforced, memory.OutcomeSkipped, OutcomeCandidate,
	OutcomeSuperseded, memory.OutcomeDuplicate, memory.OutcomeStale, memory.OutcomeDeleted, OutcomeRejectedGuard,
}

// Recalled counts one answered recall in tenant: its stages, the memories
// returned and the size of the context handed over.
func (m *Metrics) Recalled(tenant string, res memory.RecallResult) {
	st := res.Search.Stages
	for _, s := range []struct {
		name string
		ms   float64
	}{
		{"scope", st.Scope}, {"embed", st.Embed}, {"candidates", st.Candidates}, {"vector", st.Vector},
		{"fulltext", st.FullText}, {"graph", st.Graph}, {"seeds", st.Seeds}, {"rank", st.Rank},
		{"rerank", st.Rerank}, {"policy", st.Policy}, {"total", st.Total},
	} {
		m.recallStages.WithLabelValues(s.name).Observe(s.ms / 1000)
	}
	chars := utf8.RuneCountInString(res.Context)
	m.recallMemories.Observe(float64(len(res.Memories)))
	m.recallChars.Observe(float64(chars))
	m.history.of(tenant).recall(time.Duration(st.Total*float64(time.Millisecond)), chars)
}

// Wrote counts the outcome of each memory of a synchronous write in tenant,
// or the write's refusal by the guard.
func (m *Metrics) Wrote(tenant string, results []memory.WriteResult, err error) {
	var guarded *memory.GuardError
	if errors.As(err, &guarded) {
		m.writes.WithLabelValues(OutcomeRejectedGuard).Inc()
		return
	}
	if err != nil {
		return
	}
	for _, r := range results {
		var stored memory.Memory
		if r.Memory != nil {
			stored = *r.Memory
		}
		m.wrote(tenant, r.Outcome, r.Status, stored)
	}
}

// wrote counts one memory's outcome. A created memory is also counted as a
// candidate or, when it is a later version of its slot, as superseding.
func (m *Metrics) wrote(tenant, outcome, status string, stored memory.Memory) {
	m.writes.WithLabelValues(outcomeLabel(outcome)).Inc()
	if outcome != memory.OutcomeCreated {
		return
	}
	if status == memory.StatusCandidate {
		m.writes.WithLabelValues(OutcomeCandidate).Inc()
	}
	if stored.Version > 1 {
		m.writes.WithLabelValues(OutcomeSuperseded).Inc()
	}
	size := len(stored.Content) + 4*len(stored.Embedding)
	m.writtenBytes.Add(float64(size))
	m.history.of(tenant).write(size)
}

// outcomeLabel keeps the label to the known outcomes.
func outcomeLabel(o string) string {
	for _, k := range writeOutcomes {
		if o == k {
			return o
		}
	}
	return "other"
}

// Jobs wraps the queue's handler of memory jobs so that the outcomes of
// queued writes are counted like those of synchronous ones. A queued
// ingestion some of whose memories the guard refused counts as one write
// the guard refused, as a synchronous one does (ExtractedWrites); its
// other refusals are policy's, which the decisions count.
func (m *Metrics) Jobs(next func(context.Context, []memory.Job) ([]memory.JobResult, error)) func(context.Context, []memory.Job) ([]memory.JobResult, error) {
	return func(ctx context.Context, jobs []memory.Job) ([]memory.JobResult, error) {
		rs, err := next(ctx, jobs)
		// Results stand in the order of their jobs.
		for i, r := range rs {
			tenant := ""
			if i < len(jobs) {
				tenant = jobs[i].Tenant
			}
			guarded := false
			for _, jm := range r.Memories {
				if jm.Outcome == workingmemory.OutcomeRefused {
					guarded = guarded || jm.Reason == workingmemory.ReasonGuard
					continue
				}
				m.wrote(tenant, jm.Outcome, jm.Status, memory.Memory{})
			}
			if guarded {
				m.writes.WithLabelValues(OutcomeRejectedGuard).Inc()
			}
		}
		return rs, err
	}
}

// ExtractedWrites wraps the writer of what conversations leave so that
// every memory an ingestion or a closed session writes now is counted as
// the API's writes are, whichever door the conversation came through and
// when the expiry worker closes a session. The memory jobs a queued
// ingestion applies pass through: Jobs counts that ingestion.
func (m *Metrics) ExtractedWrites(next workingmemory.Memories) workingmemory.Memories {
	return extractedWrites{Memories: next, m: m}
}

type extractedWrites struct {
	workingmemory.Memories
	m *Metrics
}

func (w extractedWrites) Write(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error) {
	rs, err := w.Memories.Write(ctx, p, in)
	w.m.Wrote(p.Tenant, rs, err)
	return rs, err
}

// MemoryWriter writes memories as a principal; memory.Service is one.
type MemoryWriter interface {
	Write(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error)
}

// Writes wraps a writer that no handler counts for, a knowledge import's,
// so that each memory it writes, and each write the guard refuses, counts
// as the API's writes do, whether the import is written at once or
// queued. Its jobs then pass through Jobs uncounted.
func (m *Metrics) Writes(next MemoryWriter) MemoryWriter {
	return counted{next: next, m: m}
}

type counted struct {
	next MemoryWriter
	m    *Metrics
}

func (w counted) Write(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error) {
	rs, err := w.next.Write(ctx, p, in)
	w.m.Wrote(p.Tenant, rs, err)
	return rs, err
}

// Deleted counts a memory deleted through the API.
func (m *Metrics) Deleted(r memory.Receipt) {
	m.deletes.WithLabelValues("memory").Inc()
	m.history.of(r.Tenant).delete(1)
}

// Erased counts a user erased with everything they had.
func (m *Metrics) Erased(r memory.Receipt) {
	m.deletes.WithLabelValues("user").Inc()
	m.history.of(r.Tenant).delete(int(r.Counts[memory.PlaceGraphMemories]))
}

// Conversation counts a conversation of tenant handed over for extraction.
func (m *Metrics) Conversation(tenant string) {
	m.conversations.Inc()
	m.history.of(tenant).conversation()
}

// StoreError counts an error from a store, "neo4j" or "redis".
func (m *Metrics) StoreError(store string) {
	m.storeErrors.WithLabelValues(store).Inc()
}

// DecisionSink is where the policy engine records its decisions.
type DecisionSink interface {
	Record(r policyadmin.DecisionRecord)
}

// Decisions wraps the decision log: every decision is counted by action and
// result, timed, and then recorded by next.
func (m *Metrics) Decisions(next DecisionSink) DecisionSink {
	return decisionSink{m: m, next: next}
}

type decisionSink struct {
	m    *Metrics
	next DecisionSink
}

// actions are the policy actions, the only values the action label takes.
var actions = map[string]bool{
	memory.ActionRead: true, memory.ActionWrite: true, memory.ActionDelete: true, memory.ActionManage: true, memory.ActionConfirm: true,
}

func (d decisionSink) Record(r policyadmin.DecisionRecord) {
	action := r.Action
	if !actions[action] {
		action = "other"
	}
	result := r.Result
	if result != policyadmin.ResultAllow {
		result = policyadmin.ResultDeny
	}
	d.m.decisions.WithLabelValues(action, result).Inc()
	d.m.decisionLatency.WithLabelValues(result).Observe(float64(r.LatencyMicros) / 1e6)
	if result == policyadmin.ResultDeny {
		d.m.history.of(r.Principal.Tenant).deny()
	}
	d.next.Record(r)
}

// Sweeper wraps the janitor so that what each real sweep changed is counted.
func (m *Metrics) Sweeper(next memory.Sweeper) memory.Sweeper {
	return sweeper{m: m, next: next}
}

type sweeper struct {
	m    *Metrics
	next memory.Sweeper
}

func (s sweeper) Sweep(ctx context.Context, tenant string, dryRun bool) (memory.SweepReport, error) {
	r, err := s.next.Sweep(ctx, tenant, dryRun)
	if !dryRun {
		s.m.janitor.WithLabelValues("expired").Add(float64(r.Expired))
		s.m.janitor.WithLabelValues("archived_unused").Add(float64(r.ArchivedUnused))
		s.m.janitor.WithLabelValues("archived_over_cap").Add(float64(r.ArchivedOverCap))
	}
	return r, err
}
