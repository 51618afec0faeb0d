package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"

	"mneme/memory"
	"mneme/policyadmin"
)

// Pushdown compiles the read policy into a memory.Filter by partial
// evaluation: data.mneme.authz.allow is evaluated with the principal, the
// action "read", the clock and the grants known and input.resource unknown.
// OPA leaves the conditions on the resource as residual queries (and support
// rules for the sets they count); translate turns those into a filter over
// memory.FilterFields, and the graph store turns the filter into a Cypher
// predicate. The translation is exact for what it accepts and refuses
// everything else: an operator, built-in, property or shape it does not know
// fails the read with policyadmin.ErrPolicyUntranslatable (an empty answer
// would look like no memories, and writes would skip dedup), and checkPolicy
// refuses such a policy before it can be activated (pushcheck.go).

// pushdownQuery is the query partial evaluation compiles: the same rule
// Decide evaluates, so that the filter and the per-memory check cannot drift
// apart.
const pushdownQuery = "data.mneme.authz.allow == true"

// pushdownUnknowns is what partial evaluation leaves unknown.
var pushdownUnknowns = []string{"input.resource"}

// maxPushdownCache bounds the cached filters of one policy; a full cache is
// dropped as a whole.
const maxPushdownCache = 10_000

// maxSupportDepth bounds how deep support rules may refer to one another.
const maxSupportDepth = 8

// pushdown compiles and caches read filters for one compiled policy and its
// store. Cached filters are keyed by principal (they cover every user) and
// belong to one generation of grants: setGrants starts a new generation.
type pushdown struct {
	log   *slog.Logger
	query rego.PreparedPartialQuery
	// err, when set, is why this policy cannot be compiled to filters (no
	// allow rule, say); every filter call returns it, as Decide fails on
	// such a policy.
	err error

	// compiles counts partial evaluations, for tests.
	compiles atomic.Int64
	// hot limits the partial evaluations of tenants whose policy ran out
	// of time (slow.go); nil for a draft's.
	hot *hotTenants

	mu    sync.Mutex
	gen   uint64
	cache map[pushdownKey]pushdownEntry
	// expiries holds, per tenant, the instants at which a grant expires,
	// sorted: the only instants at which the bundled policy's answer for a
	// fixed principal changes with the clock.
	expiries map[string][]time.Time
}

type pushdownKey struct {
	gen                           uint64
	tenant, kind, id, roles, team string
}

// pushdownEntry is a compiled filter and the interval of instants [from,
// until) in which no grant of its tenant expires, so that it holds for every
// now in it. A zero until is the end of time.
type pushdownEntry struct {
	filter memory.Filter
	// err is why the policy cannot be translated for this principal.
	err         error
	from, until time.Time
}

func (e pushdownEntry) holdsAt(now time.Time) bool {
	return !now.Before(e.from) && (e.until.IsZero() || now.Before(e.until))
}

// newPushdown prepares partial evaluation of compiler's policy. A policy it
// cannot prepare (no allow rule, an allow that is not a boolean) does not
// stop the engine: its filters fail as its decisions do.
func newPushdown(ctx context.Context, compiler *ast.Compiler, store storage.Store, log *slog.Logger) *pushdown {
	pd := &pushdown{log: log, cache: map[pushdownKey]pushdownEntry{}, expiries: map[string][]time.Time{}}
	if len(compiler.GetRulesExact(allowRef)) == 0 {
		pd.err = ErrUndefined
		return pd
	}
	pd.query, pd.err = rego.New(
		rego.Query(pushdownQuery),
		rego.Compiler(compiler),
		rego.Store(store),
		rego.Unknowns(pushdownUnknowns),
		rego.StrictBuiltinErrors(true),
	).PrepareForPartial(ctx)
	return pd
}

var allowRef = ast.MustParseRef("data.mneme.authz.allow")

// setGrants starts a new generation of cached filters for new grants.
func (pd *pushdown) setGrants(grants []memory.Grant) {
	expiries := map[string][]time.Time{}
	for _, g := range grants {
		if g.ExpiresAt != nil {
			expiries[g.Tenant] = append(expiries[g.Tenant], g.ExpiresAt.UTC())
		}
	}
	for _, ts := range expiries {
		slices.SortFunc(ts, time.Time.Compare)
	}
	pd.mu.Lock()
	defer pd.mu.Unlock()
	pd.gen++
	pd.cache = map[pushdownKey]pushdownEntry{}
	pd.expiries = expiries
}

// invalidate starts a new generation of cached filters, for a change of
// data (tenant settings) that moves no grant expiry.
func (pd *pushdown) invalidate() {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	pd.gen++
	pd.cache = map[pushdownKey]pushdownEntry{}
}

// setTenantGrants starts a new generation of cached filters for new grants
// of one tenant, keeping the other tenants' expiries.
func (pd *pushdown) setTenantGrants(tenant string, grants []memory.Grant) {
	var expiries []time.Time
	for _, g := range grants {
		if g.ExpiresAt != nil {
			expiries = append(expiries, g.ExpiresAt.UTC())
		}
	}
	slices.SortFunc(expiries, time.Time.Compare)
	pd.mu.Lock()
	defer pd.mu.Unlock()
	pd.gen++
	pd.cache = map[pushdownKey]pushdownEntry{}
	next := make(map[string][]time.Time, len(pd.expiries)+1)
	for t, ts := range pd.expiries {
		next[t] = ts
	}
	next[tenant] = expiries
	pd.expiries = next
}

// filter returns the read filter of p for userID's memories ("" = every
// user) at now. It errs when partial evaluation does (a deadline, say) and
// when the residual cannot be translated (ErrPolicyUntranslatable).
//
// Partial evaluation never sees the user (the resource is what it leaves
// unknown), so it runs once per principal, for every user, and is cached
// while its generation of grants holds at now; a user's filter is derived
// from it by deciding the conditions on user_id, which takes microseconds
// where partial evaluation takes milliseconds to tens of them.
func (pd *pushdown) filter(ctx context.Context, p memory.Principal, userID string, now time.Time) (memory.Filter, error) {
	if pd.err != nil {
		return memory.Filter{}, pd.err
	}
	if err := ctx.Err(); err != nil {
		return memory.Filter{}, err
	}
	now = now.UTC()
	key := pushdownKey{tenant: p.Tenant, kind: p.Kind, id: p.ID, roles: strings.Join(p.Roles, "\x00"), team: p.Team}
	pd.mu.Lock()
	key.gen = pd.gen
	entry, ok := pd.cache[key]
	from, until := window(pd.expiries[p.Tenant], now)
	pd.mu.Unlock()
	if ok && entry.holdsAt(now) {
		if entry.err != nil {
			return memory.Filter{}, entry.err
		}
		return forUser(entry.filter, userID), nil
	}

	release, err := pd.hot.enter(ctx, p.Tenant)
	if err != nil {
		return memory.Filter{}, err
	}
	all, err := pd.compile(ctx, p, now)
	release()
	if errors.Is(err, ErrUntranslatable) {
		pd.log.ErrorContext(ctx, "policy pushdown cannot translate the read policy; refusing reads",
			"tenant", p.Tenant, "principal_kind", p.Kind, "principal", p.ID, "err", err)
		err = fmt.Errorf("%w: %w: %w", memory.ErrUnavailable, policyadmin.ErrPolicyUntranslatable, err)
	} else if err != nil {
		return memory.Filter{}, err
	}
	pd.mu.Lock()
	if pd.gen == key.gen { // grants changed meanwhile: do not cache a stale filter
		if len(pd.cache) >= maxPushdownCache {
			pd.cache = map[pushdownKey]pushdownEntry{}
		}
		pd.cache[key] = pushdownEntry{filter: all, err: err, from: from, until: until}
	}
	pd.mu.Unlock()
	if err != nil {
		return memory.Filter{}, err
	}
	return forUser(all, userID), nil
}

// forUser narrows the filter of every user to userID's memories ("" =
// every user): conditions on user_id are decided for userID, and the
// equality is added for the store.
func forUser(all memory.Filter, userID string) memory.Filter {
	if userID == "" {
		return all
	}
	return simplify(memory.Filter{Op: memory.FilterAnd, Args: []memory.Filter{
		{Op: memory.FilterEq, Field: "user_id", Values: []string{userID}}, assume(all, "user_id", userID),
	}})
}

// span returns the generation of the data and the interval around now in
// which no grant of tenant expires: what a decision made now holds for.
func (pd *pushdown) span(tenant string, now time.Time) (gen uint64, from, until time.Time) {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	from, until = window(pd.expiries[tenant], now)
	return pd.gen, from, until
}

// window returns the interval around now in which no instant of sorted
// expiries falls: [last expiry at or before now, first expiry after now).
// A grant is live while now is strictly before its expiry.
func window(expiries []time.Time, now time.Time) (from, until time.Time) {
	i := sort.Search(len(expiries), func(i int) bool { return expiries[i].After(now) })
	if i > 0 {
		from = expiries[i-1]
	}
	if i < len(expiries) {
		until = expiries[i]
	}
	return from, until
}

// compile runs partial evaluation and translates its result: the filter of
// what p may read of every user's memories.
func (pd *pushdown) compile(ctx context.Context, p memory.Principal, now time.Time) (memory.Filter, error) {
	pd.compiles.Add(1)
	input := ast.NewObject(
		item("principal", principalTerm(p)),
		item("action", ast.StringTerm(memory.ActionRead)),
		item("context", ast.ObjectTerm(item("now", ast.StringTerm(now.Format(time.RFC3339Nano))))),
	)
	pq, err := pd.query.Partial(ctx, rego.EvalParsedInput(input))
	// As in eval: a deadline reached while evaluating may have cut the
	// evaluation short, with or without an error from OPA.
	if ctxErr := ctx.Err(); ctxErr != nil {
		if err != nil {
			return memory.Filter{}, fmt.Errorf("%w: %w", ctxErr, err)
		}
		return memory.Filter{}, ctxErr
	}
	if err != nil {
		return memory.Filter{}, err
	}
	f, err := translate(pq)
	if err != nil {
		return memory.Filter{}, err
	}
	// The store reads only p's tenant: conditions on it are decided here.
	return simplify(assume(f, "tenant", p.Tenant)), nil
}

// ErrUntranslatable wraps every reason translate refuses a residual policy.
var ErrUntranslatable = fmt.Errorf("cannot translate to a filter")

func untranslatable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUntranslatable, fmt.Sprintf(format, args...))
}

// translate turns the result of partially evaluating pushdownQuery into a
// filter: the queries are OR-ed, the expressions of each are AND-ed.
func translate(pq *rego.PartialQueries) (memory.Filter, error) {
	t := translator{support: map[string][]*ast.Rule{}}
	for _, m := range pq.Support {
		for _, r := range m.Rules {
			path := m.Package.Path.Extend(r.Head.Ref().GroundPrefix()).String()
			t.support[path] = append(t.support[path], r)
		}
	}
	or := memory.Filter{Op: memory.FilterOr}
	for _, q := range pq.Queries {
		f, err := t.body(q)
		if err != nil {
			return memory.Filter{}, err
		}
		or.Args = append(or.Args, f)
	}
	return simplify(or), nil
}

type translator struct {
	// support holds the support rules by the path of the document they
	// define.
	support map[string][]*ast.Rule
	depth   int
}

// scope is what translating one body knows about its variables: how often
// each occurs in the body, and those bound to a resource field.
type scope struct {
	uses   map[ast.Var]int
	fields map[ast.Var]string
}

// body translates a conjunction: a query, or the body of a support rule.
// Only whether a body holds matters, never the value it gives a rule's head,
// so variables used only in the head count as unused.
func (t *translator) body(b ast.Body) (memory.Filter, error) {
	sc := scope{uses: map[ast.Var]int{}, fields: map[ast.Var]string{}}
	for _, e := range b {
		ast.WalkVars(e, func(v ast.Var) bool { sc.uses[v]++; return false })
	}
	// Bindings of a variable to a field: the variable then stands for the
	// field wherever it is used. Two bindings would also compare the fields.
	for _, e := range b {
		if v, field, ok := fieldBinding(e); ok {
			if _, dup := sc.fields[v]; dup {
				return memory.Filter{}, untranslatable("%v: variable %v bound to two fields", e, v)
			}
			sc.fields[v] = field
		}
	}
	and := memory.Filter{Op: memory.FilterAnd}
	for _, e := range b {
		if _, _, ok := fieldBinding(e); ok {
			continue
		}
		f, err := t.expr(e, sc)
		if err != nil {
			return memory.Filter{}, err
		}
		and.Args = append(and.Args, f)
	}
	return and, nil
}

// fieldBinding recognises "v = field" (or "field = v") with v a variable.
func fieldBinding(e *ast.Expr) (ast.Var, string, bool) {
	if e.Negated || len(e.With) > 0 || !e.IsEquality() {
		return "", "", false
	}
	ops := e.Operands()
	for i := range 2 {
		v, ok := ops[i].Value.(ast.Var)
		if !ok || v.IsWildcard() {
			continue
		}
		if field, ok, err := fieldOf(ops[1-i], scope{}); ok && err == nil {
			return v, field, true
		}
	}
	return "", "", false
}

func (t *translator) expr(e *ast.Expr, sc scope) (memory.Filter, error) {
	if len(e.With) > 0 {
		return memory.Filter{}, untranslatable("%v: with modifier", e)
	}
	if e.Negated {
		inner := e.Copy()
		inner.Negated = false
		f, err := t.expr(inner, sc)
		if err != nil {
			return memory.Filter{}, err
		}
		return memory.Filter{Op: memory.FilterNot, Args: []memory.Filter{f}}, nil
	}
	if term, ok := e.Terms.(*ast.Term); ok {
		return t.term(term, sc)
	}
	if !e.IsCall() {
		return memory.Filter{}, untranslatable("%v: not a call or term", e)
	}
	op, ops := e.Operator().String(), e.Operands()
	switch op {
	case "eq", "equal":
		if len(ops) == 2 {
			return t.compare(e, ops[0], ops[1], memory.FilterEq, sc)
		}
	case "neq":
		if len(ops) == 2 {
			return t.compare(e, ops[0], ops[1], memory.FilterNe, sc)
		}
	case "internal.member_2":
		if len(ops) == 2 {
			return member(e, ops[0], ops[1], sc)
		}
	case "gt", "gte":
		if len(ops) == 2 {
			return t.countCompare(e, op, ops[0], ops[1], sc)
		}
	}
	// A call with its output as last operand, f(args, out), is f(args) = out.
	if decl, ok := ast.BuiltinMap[op]; ok && len(ops) == len(decl.Decl.FuncArgs().Args)+1 {
		call := ast.CallTerm(append([]*ast.Term{e.OperatorTerm()}, ops[:len(ops)-1]...)...)
		return t.compare(e, call, ops[len(ops)-1], memory.FilterEq, sc)
	}
	return memory.Filter{}, untranslatable("%v: operator %s", e, op)
}

// term translates an expression that is a single term: true, or a reference
// to a boolean rule that partial evaluation left as support.
func (t *translator) term(term *ast.Term, sc scope) (memory.Filter, error) {
	switch v := term.Value.(type) {
	case ast.Boolean:
		return constant(bool(v)), nil
	case ast.Ref:
		return t.exists(term, v, true)
	}
	return memory.Filter{}, untranslatable("%v: term", term)
}

// exists translates "the document at ref is defined" (value true for a
// boolean rule) into the OR of the bodies of the support rules that define
// it.
func (t *translator) exists(term *ast.Term, ref ast.Ref, boolean bool) (memory.Filter, error) {
	rules, ok := t.support[ref.String()]
	if !ok || !ref.IsGround() {
		return memory.Filter{}, untranslatable("%v: reference to unknown document", term)
	}
	if t.depth >= maxSupportDepth {
		return memory.Filter{}, untranslatable("%v: support rules nested too deep", term)
	}
	t.depth++
	defer func() { t.depth-- }()
	or := memory.Filter{Op: memory.FilterOr}
	for _, r := range rules {
		switch {
		case r.Else != nil:
			return memory.Filter{}, untranslatable("%v: support rule with else", term)
		case r.Default:
			if !boolean || !r.Head.Value.Equal(ast.BooleanTerm(false)) {
				return memory.Filter{}, untranslatable("%v: default support rule", term)
			}
			continue // "default x := false" never makes x true
		case boolean && r.Head.Value != nil && !r.Head.Value.Equal(ast.BooleanTerm(true)):
			return memory.Filter{}, untranslatable("%v: support rule with value %v", term, r.Head.Value)
		case !boolean && r.Head.Value != nil && r.Head.Key == nil:
			return memory.Filter{}, untranslatable("%v: support rule is not a set", term)
		}
		f, err := t.body(r.Body)
		if err != nil {
			return memory.Filter{}, err
		}
		or.Args = append(or.Args, f)
	}
	return or, nil
}

// countCompare translates count(x) > 0 and count(x) >= 1, where x is a set
// defined by support rules or a ground collection.
func (t *translator) countCompare(e *ast.Expr, op string, a, b *ast.Term, sc scope) (memory.Filter, error) {
	call, ok := a.Value.(ast.Call)
	n, isNum := b.Value.(ast.Number)
	if !ok || !isNum || len(call) != 2 || call[0].String() != "count" {
		return memory.Filter{}, untranslatable("%v: comparison", e)
	}
	limit, ok := n.Int()
	if !ok || (op == "gt" && limit != 0) || (op == "gte" && limit != 1) {
		return memory.Filter{}, untranslatable("%v: count compared with %v", e, n)
	}
	switch x := call[1].Value.(type) {
	case ast.Ref:
		return t.exists(call[1], x, false)
	case ast.Set:
		return constant(x.Len() > 0), nil
	case *ast.Array:
		return constant(x.Len() > 0), nil
	case ast.Object:
		return constant(x.Len() > 0), nil
	}
	return memory.Filter{}, untranslatable("%v: count of %v", e, call[1])
}

// compare translates a = b, a == b or a != b.
func (t *translator) compare(e *ast.Expr, a, b *ast.Term, op string, sc scope) (memory.Filter, error) {
	for _, pair := range [][2]*ast.Term{{a, b}, {b, a}} {
		x, y := pair[0], pair[1]
		field, ok, err := fieldOf(x, sc)
		if err != nil {
			return memory.Filter{}, err
		}
		if ok && isScalar(y) {
			s, isString := y.Value.(ast.String)
			if !isString {
				// Every field is a string: it never equals another scalar.
				return constant(op == memory.FilterNe), nil
			}
			return memory.Filter{Op: op, Field: field, Values: []string{string(s)}}, nil
		}
		// A variable that occurs nowhere else, bound to a value that always
		// exists: the binding always succeeds and constrains nothing.
		if v, isVar := x.Value.(ast.Var); isVar && op == memory.FilterEq && (v.IsWildcard() || sc.uses[v] == 1) {
			if total(y, sc) {
				return constant(true), nil
			}
		}
	}
	if a.IsGround() && b.IsGround() && isScalar(a) && isScalar(b) {
		return constant((a.Value.Compare(b.Value) == 0) == (op == memory.FilterEq)), nil
	}
	return memory.Filter{}, untranslatable("%v: comparison", e)
}

// member translates x in collection, x a field and the collection a
// constant (a ground reference inside it may be undefined or a field).
func member(e *ast.Expr, x, coll *ast.Term, sc scope) (memory.Filter, error) {
	field, ok, err := fieldOf(x, sc)
	if err != nil {
		return memory.Filter{}, err
	}
	if !ok || !ast.IsConstant(coll.Value) {
		return memory.Filter{}, untranslatable("%v: membership", e)
	}
	var values []string
	opaque := false
	add := func(v *ast.Term) {
		switch s := v.Value.(type) {
		case ast.String:
			values = append(values, string(s))
		case ast.Number, ast.Boolean, ast.Null, *ast.Array, ast.Set, ast.Object:
			// Every field is a string: these members never match.
		default:
			// A member that evaluates to a value ($"a", a template string)
			// may be a string: dropping it would refuse what policy allows.
			opaque = true
		}
	}
	switch c := coll.Value.(type) {
	case *ast.Array:
		c.Foreach(add)
	case ast.Set:
		c.Foreach(add)
	case ast.Object:
		c.Foreach(func(_, v *ast.Term) { add(v) })
	default:
		return memory.Filter{}, untranslatable("%v: membership in %v", e, coll)
	}
	if opaque {
		return memory.Filter{}, untranslatable("%v: membership in %v", e, coll)
	}
	return memory.Filter{Op: memory.FilterIn, Field: field, Values: values}, nil
}

// fieldOf recognises a resource field: input.resource.F,
// object.get(input.resource, "F", default) or a variable bound to one. F must
// be one of memory.FilterFields, which policy input always carries (so
// object.get never falls back to its default); another property is an error.
func fieldOf(term *ast.Term, sc scope) (string, bool, error) {
	switch v := term.Value.(type) {
	case ast.Var:
		field, ok := sc.fields[v]
		return field, ok, nil
	case ast.Ref:
		if !v.HasPrefix(inputResource) {
			return "", false, nil
		}
		if len(v) != 3 {
			return "", false, untranslatable("%v: reference into the resource", term)
		}
		return whitelisted(v[2])
	case ast.Call:
		if len(v) != 4 || v[0].String() != "object.get" {
			return "", false, nil
		}
		if obj, ok := v[1].Value.(ast.Ref); !ok || !obj.Equal(inputResource) {
			return "", false, nil
		}
		return whitelisted(v[2])
	}
	return "", false, nil
}

var inputResource = ast.MustParseRef("input.resource")

func whitelisted(key *ast.Term) (string, bool, error) {
	s, ok := key.Value.(ast.String)
	if !ok || !slices.Contains(memory.FilterFields, string(s)) {
		return "", false, untranslatable("resource property %v is not one a filter may compare", key)
	}
	return string(s), true, nil
}

// total reports whether evaluating term always succeeds: a constant, the
// resource or one of its fields, or sprintf of such terms. A ground
// reference is not one: input.r is ground and undefined.
func total(term *ast.Term, sc scope) bool {
	if ast.IsConstant(term.Value) {
		return true
	}
	if ref, ok := term.Value.(ast.Ref); ok && ref.Equal(inputResource) {
		return true
	}
	if _, ok, err := fieldOf(term, sc); ok && err == nil {
		return true
	}
	call, ok := term.Value.(ast.Call)
	if !ok || len(call) != 3 || call[0].String() != "sprintf" || !ast.IsConstant(call[1].Value) {
		return false
	}
	args, ok := call[2].Value.(*ast.Array)
	if !ok {
		return false
	}
	all := true
	args.Foreach(func(a *ast.Term) { all = all && total(a, sc) })
	return all
}

func isScalar(t *ast.Term) bool {
	switch t.Value.(type) {
	case ast.String, ast.Number, ast.Boolean, ast.Null:
		return true
	}
	return false
}

func constant(b bool) memory.Filter {
	if b {
		return memory.Filter{Op: memory.FilterTrue}
	}
	return memory.Filter{Op: memory.FilterFalse}
}
