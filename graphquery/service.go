package graphquery

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"mneme/memory"
)

// Store reads the graph for the queries, each read narrowed by the scope's
// compiled predicate. Memories come back with their metadata and content;
// counting reads come back as ClassCount rows, grouped by the decision
// class fields they are given.
type Store interface {
	// Start returns the node ref names, or memory.ErrNotFound when it does
	// not exist in the scope's tenant or no memory in scope touches it.
	Start(ctx context.Context, scope memory.Scope, ref NodeRef) (Node, error)
	// Expand returns the nodes one step from frontier — memories in scope
	// that match f, and what those memories point to — and the edges that
	// reach them, at most limit of each.
	Expand(ctx context.Context, scope memory.Scope, f MemoryFilter, frontier []NodeRef, limit int) ([]Node, []Edge, error)
	Paths(ctx context.Context, scope memory.Scope, q PathQuery) ([]Path, error)
	CoMentions(ctx context.Context, scope memory.Scope, q CoMentionQuery, class []string, most int) ([]ClassCount, error)
	Aggregate(ctx context.Context, scope memory.Scope, q AggregateQuery, class []string, most int) ([]ClassCount, error)
	Timeline(ctx context.Context, scope memory.Scope, q TimelineQuery) ([]memory.Memory, error)
	Entities(ctx context.Context, scope memory.Scope, q EntityQuery, class []string, most int) ([]ClassCount, error)
}

// Authorizer is the policy engine as the queries see it.
type Authorizer interface {
	Decide(ctx context.Context, p memory.Principal, action string, r memory.Resource, now time.Time) (memory.Decision, error)
	ReadScope(ctx context.Context, p memory.Principal, userID string, now time.Time) (memory.Scope, error)
}

// Options configures a Service. Store, Authz and Audit are required.
type Options struct {
	Store  Store
	Authz  Authorizer
	Audit  memory.Auditor
	Logger *slog.Logger
	Now    func() time.Time
	// Timeout bounds one query (default DefaultTimeout).
	Timeout time.Duration
	// Disagreed, when set, is told of every memory or decision class the
	// store's filter let through and the per-memory decision refused. The
	// two should never disagree; a count above zero is a fault in the
	// filter, which the second check kept from the answer.
	Disagreed func(shape string, n int)
	// Unchecked turns the per-memory check off. Tests only: it shows what
	// the filter alone would answer.
	Unchecked bool
}

// Service answers analysts' graph queries.
type Service struct {
	store     Store
	authz     Authorizer
	auditor   memory.Auditor
	log       *slog.Logger
	now       func() time.Time
	timeout   time.Duration
	disagreed func(string, int)
	unchecked bool
}

// New returns a Service, or an error naming each required option missing.
func New(opts Options) (*Service, error) {
	var missing []error
	if opts.Store == nil {
		missing = append(missing, errors.New("graphquery: Store is required"))
	}
	if opts.Authz == nil {
		missing = append(missing, errors.New("graphquery: Authz is required"))
	}
	if opts.Audit == nil {
		missing = append(missing, errors.New("graphquery: Audit is required"))
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	s := &Service{
		store: opts.Store, authz: opts.Authz, auditor: opts.Audit, log: opts.Logger, now: opts.Now,
		timeout: opts.Timeout, disagreed: opts.Disagreed, unchecked: opts.Unchecked,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	return s, nil
}

// Query shapes, as the audit trail names them ("graph.<shape>").
const (
	ShapeNeighbourhood = "neighbourhood"
	ShapePaths         = "paths"
	ShapeCoMentions    = "co_mentions"
	ShapeTimeline      = "timeline"
	ShapeAggregate     = "aggregate"
	ShapeEntities      = "entities"
	ShapeCypher        = "cypher"
)

// AuditPrefix starts the audit action of every graph query.
const AuditPrefix = "graph."

// run is one query: access, scope, deadline, the work, the audit record.
// work returns the rows it answers with.
type run struct {
	s      *Service
	ctx    context.Context
	p      memory.Principal
	shape  string
	target string
	params map[string]string
	scope  memory.Scope
	now    time.Time
	cache  map[string]bool
	denied int
}

func (s *Service) do(ctx context.Context, p memory.Principal, shape, target string, params map[string]string, work func(r *run) (int, error)) error {
	start := time.Now()
	r := &run{s: s, p: p, shape: shape, target: target, params: params, now: s.now(), cache: map[string]bool{}}
	rows, err := s.exec(ctx, r, work)
	s.record(ctx, r, rows, time.Since(start), err)
	return err
}

func (s *Service) exec(ctx context.Context, r *run, work func(r *run) (int, error)) (int, error) {
	if r.p.Kind != memory.KindAnalyst && r.p.Kind != memory.KindAdmin {
		return 0, memory.ErrForbidden
	}
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	r.ctx = qctx
	rows, err := s.scopedWork(r, work)
	if err != nil && ctx.Err() == nil && pastDeadline(qctx) {
		err = ErrTimeout
	}
	if r.denied > 0 {
		s.log.WarnContext(ctx, "graph query: the store's filter let through what policy refuses", "shape", r.shape, "count", r.denied)
		if s.disagreed != nil {
			s.disagreed(r.shape, r.denied)
		}
	}
	return rows, err
}

// pastDeadline is whether ctx ran out of time. The driver may fail on its
// own reading of the deadline a moment before the context's timer fires, so
// the clock is asked as well as the context.
func pastDeadline(ctx context.Context) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// scopedWork reads the principal's scope, then runs the query under it;
// both count against the query's time limit.
func (s *Service) scopedWork(r *run, work func(r *run) (int, error)) (int, error) {
	var err error
	if r.scope, err = s.authz.ReadScope(r.ctx, r.p, "", r.now); err != nil {
		return 0, err
	}
	return work(r)
}

// record writes the query to the audit trail: who, which shape, its
// parameters (ids and limits, never content), rows and time.
func (s *Service) record(ctx context.Context, r *run, rows int, took time.Duration, err error) {
	if !memory.Audited(r.p, err) {
		return
	}
	reason := memory.AuditReason(err)
	var lim *LimitError
	switch {
	case errors.As(err, &lim):
		reason = "limit_exceeded"
	case errors.Is(err, ErrTimeout):
		reason = "query_timeout"
	case errors.Is(err, ErrCypherRefused):
		reason = "cypher_refused"
	}
	e := memory.NewAuditEvent(ctx, r.p, AuditPrefix+r.shape, r.target, err, reason)
	e.Time = r.now.UTC()
	e.Details = map[string]string{"rows": strconv.Itoa(rows), "duration_ms": strconv.FormatInt(took.Milliseconds(), 10)}
	for k, v := range r.params {
		if v != "" {
			e.Details[k] = v
		}
	}
	s.auditor.Audit(ctx, e)
}

// allowed decides one memory again; a memory the store returned but policy
// refuses is left out and counted as a disagreement.
func (r *run) allowed(m memory.Memory) (bool, error) {
	return r.decide(m.ID, memory.ResourceOf(m))
}

// allowedClass decides a decision class by one of its memories, once per
// class: every memory of a class has the same values in every field the
// policy's compiled filter reads, so policy decides them alike.
func (r *run) allowedClass(c ClassCount) (bool, error) {
	return r.decide("class\x00"+strings.Join(c.Class, "\x00"), c.Rep)
}

func (r *run) decide(key string, res memory.Resource) (bool, error) {
	if r.s.unchecked {
		return true, nil
	}
	if ok, seen := r.cache[key]; seen {
		return ok, nil
	}
	d, err := r.s.authz.Decide(r.ctx, r.p, memory.ActionRead, res, r.now)
	if err != nil {
		return false, err
	}
	r.cache[key] = d.Allow
	if !d.Allow {
		r.denied++
	}
	return d.Allow, nil
}

// classFields are the memory fields the scope's filter reads: the fields a
// read decision for this caller depends on. Memories alike in them are
// decided alike, so counts are summed per class and one memory of each
// class is decided for all of it.
func classFields(s memory.Scope) []string {
	set := map[string]bool{}
	if s.Filter != nil {
		var walk func(f memory.Filter)
		walk = func(f memory.Filter) {
			if f.Field != "" && f.Field != "tenant" {
				set[f.Field] = true
			}
			for _, a := range f.Args {
				walk(a)
			}
		}
		walk(*s.Filter)
	} else {
		for _, c := range s.Clauses {
			if c.UserID != "" {
				set["user_id"] = true
			}
			if len(c.AgentIDs) > 0 {
				set["agent_id"] = true
			}
			if len(c.Types) > 0 {
				set["type"] = true
			}
			if len(c.Kinds) > 0 {
				set["kind"] = true
			}
			if c.MaxSensitivity != "" {
				set["sensitivity"] = true
			}
			if len(c.Authors) > 0 {
				set["author"] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// checkText refuses ids and texts that are empty when required or too long.
func checkText(field, v string, required bool) error {
	switch {
	case required && v == "":
		return memory.Invalid(field, "is required")
	case len(v) > MaxText:
		return memory.Invalid(field, "must be at most "+strconv.Itoa(MaxText)+" bytes")
	}
	return nil
}

func checkFilter(f MemoryFilter) error {
	lists := map[string][]string{"type": f.Types, "kind": f.Kinds, "status": f.Statuses, "agent": f.Agents, "sensitivity": f.Sensitivity}
	for field, vs := range lists {
		if len(vs) > 50 {
			return &LimitError{Field: field, Max: 50}
		}
		for _, v := range vs {
			if err := checkText(field, v, true); err != nil {
				return err
			}
		}
	}
	// A typo among the closed sets (status=archive) would read as a filter
	// that matches nothing: an empty answer that looks like a true one.
	for field, c := range map[string]struct{ got, known []string }{
		"type": {f.Types, memory.Types}, "status": {f.Statuses, memory.Statuses}, "sensitivity": {f.Sensitivity, memory.Sensitivities},
	} {
		for _, v := range c.got {
			if !slices.Contains(c.known, v) {
				return memory.Invalid(field, "must be one of "+strings.Join(c.known, ", "))
			}
		}
	}
	if err := checkText("user", f.User, false); err != nil {
		return err
	}
	if err := checkText("entity", f.Entity, false); err != nil {
		return err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Until.Before(f.Since) {
		return memory.Invalid("until", "must not be before since")
	}
	return nil
}

// filterParams are a filter's parameters for the audit trail.
func filterParams(f MemoryFilter, into map[string]string) {
	into["types"] = strings.Join(f.Types, ",")
	into["kinds"] = strings.Join(f.Kinds, ",")
	into["statuses"] = strings.Join(f.Statuses, ",")
	into["agents"] = strings.Join(f.Agents, ",")
	into["sensitivities"] = strings.Join(f.Sensitivity, ",")
	into["user"] = f.User
	into["entity"] = f.Entity
	if !f.Since.IsZero() {
		into["since"] = f.Since.UTC().Format(time.RFC3339)
	}
	if !f.Until.IsZero() {
		into["until"] = f.Until.UTC().Format(time.RFC3339)
	}
}
