// Package policy is Mneme's authorization engine. It evaluates the Rego policy
// of package rego (package mneme.authz) with embedded OPA to decide single
// actions and to compute what a principal may read, and keeps the sharing
// grants that policy decides with. *Engine implements memory.Authorizer and
// policyadmin's PolicyEngine and Authorizer, and fails closed: an
// evaluation error, an undefined result or a deadline denies.
package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"

	"mneme/guard"
	"mneme/memory"
	"mneme/policyadmin"
	regofiles "mneme/rego"
)

// DefaultTimeout bounds one evaluation when Options.Timeout is zero.
const DefaultTimeout = 50 * time.Millisecond

// The queries the engine prepares. Their rules are the contract with the Rego
// policy: see the package comment of rego/authz.rego. write_ceiling is
// optional (a policy edited before it existed lacks it): collected, so
// that a missing rule leaves the decision defined.
const (
	decideQuery = "allow := data.mneme.authz.allow; reasons := data.mneme.authz.reasons; ceiling := [c | c := data.mneme.authz.write_ceiling]"
	scopeQuery  = "scope := data.mneme.authz.scope"
)

// ErrUndefined means the policy gave no result, e.g. because a rule is missing.
var ErrUndefined = errors.New("policy result undefined")

// Options configure an Engine.
type Options struct {
	// Logger receives grant reloads. Nil discards.
	Logger *slog.Logger
	// Timeout bounds each evaluation; zero means DefaultTimeout.
	Timeout time.Duration
	// Modules holds the Rego policy: every *.rego file except *_test.rego.
	// Nil means the default policy embedded from package rego.
	Modules fs.FS
	// Decisions, when set, receives a record of every Decide. It must not
	// block: the record is made on the request's path.
	Decisions DecisionSink
}

// DecisionSink receives decision records; the decision log implements it.
type DecisionSink interface {
	Record(r policyadmin.DecisionRecord)
}

// Revision is one compiled policy: its modules, the compiler that compiled
// them and the queries prepared against it. It is immutable once the engine
// uses it; a change of policy swaps in another Revision.
type Revision struct {
	// Number is the tenant's revision number; 0 is the bundled policy.
	Number   int64
	Digest   string
	Modules  map[string]*ast.Module
	Compiler *ast.Compiler
	decide   rego.PreparedEvalQuery
	scope    rego.PreparedEvalQuery
	// pd compiles this revision's read filters by partial evaluation.
	pd *pushdown
	// memo remembers its decisions while the data and clock they saw hold.
	memo *decisionMemo
	// guard decides what happens to the guard's findings (see guard.go).
	guard rego.PreparedEvalQuery
}

// tenantState is what the engine decides with for one tenant.
type tenantState struct {
	rev         *Revision
	epoch       int64
	grants      int64
	grantLoaded bool
	// settings is the grant revision the tenant's settings were loaded at.
	settings       int64
	settingsLoaded bool
}

// Engine evaluates the policy. It is safe for concurrent use.
type Engine struct {
	log     *slog.Logger
	timeout time.Duration
	store   storage.Store
	sink    DecisionSink
	// base is revision 0, which every tenant without a state runs.
	base *Revision
	// tenants maps a tenant to its state; it is replaced, never changed,
	// so that Decide reads it without a lock.
	tenants atomic.Pointer[map[string]tenantState]
	mu      sync.Mutex // serialises changes to tenants and cache
	// cache holds compiled revisions by digest and number, so that a
	// rollback or many tenants on one revision compile once.
	cache map[string]*Revision
	// grants are every tenant's grants as loaded, which the pushdown of a
	// newly compiled revision needs for the expiry of its cached filters.
	grants map[string][]memory.Grant
	// checks runs admin-supplied Rego one at a time under a heap budget.
	checks *checkGate
	// passed are the checks that passed, which pass again at once.
	passed *passedChecks
	// hot limits the evaluations of tenants whose policy ran out of time
	// (slow.go).
	hot *hotTenants
}

var _ memory.Authorizer = (*Engine)(nil)

// New compiles the policy and prepares its queries, once. It starts with no
// grants.
func New(ctx context.Context, opts Options) (*Engine, error) {
	e := &Engine{log: opts.Logger, timeout: opts.Timeout, sink: opts.Decisions, cache: map[string]*Revision{}, grants: map[string][]memory.Grant{}, checks: newCheckGate(), passed: newPassedChecks(maxPassedChecks), hot: newHotTenants(hotSlots(), time.Now)}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	e.tenants.Store(&map[string]tenantState{})
	fsys := opts.Modules
	if fsys == nil {
		fsys = regofiles.FS
	}
	modules, err := loadModules(fsys)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	e.store = inmem.NewFromObjectWithOpts(
		map[string]any{"grants": map[string]any{}, "settings": map[string]any{}},
		inmem.OptReturnASTValuesOnRead(true),
	)
	compiler := ast.NewCompiler().WithCapabilities(sandbox())
	if compiler.Compile(modules); compiler.Failed() {
		return nil, fmt.Errorf("policy: compile: %w", compiler.Errors)
	}
	if e.base, err = e.prepare(ctx, 0, "", modules, compiler); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return e, nil
}

// prepare prepares the engine's queries against a compiled policy.
func (e *Engine) prepare(ctx context.Context, number int64, digest string, modules map[string]*ast.Module, compiler *ast.Compiler) (*Revision, error) {
	r := &Revision{Number: number, Digest: digest, Modules: modules, Compiler: compiler}
	prepare := func(query string) (rego.PreparedEvalQuery, error) {
		return rego.New(
			rego.Query(query),
			rego.Compiler(compiler),
			rego.Store(e.store),
			rego.StrictBuiltinErrors(true),
		).PrepareForEval(ctx)
	}
	var err error
	if r.decide, err = prepare(decideQuery); err != nil {
		return nil, fmt.Errorf("prepare decide: %w", err)
	}
	if r.scope, err = prepare(scopeQuery); err != nil {
		return nil, fmt.Errorf("prepare scope: %w", err)
	}
	if r.guard, err = prepare(guardQuery); err != nil {
		return nil, fmt.Errorf("prepare guard: %w", err)
	}
	// The caller that puts r in use gives its pushdown the grants.
	r.pd, r.memo = newPushdown(ctx, compiler, e.store, e.log), newDecisionMemo()
	if number >= 0 { // a revision tenants may run, not a draft
		r.pd.hot = e.hot
	}
	return r, nil
}

// allGrants returns every tenant's grants as loaded.
func (e *Engine) allGrants() []memory.Grant {
	var out []memory.Grant
	for _, gs := range e.grants {
		out = append(out, gs...)
	}
	return out
}

// pushdowns returns the pushdown of every compiled revision, under e.mu.
func (e *Engine) pushdowns() []*pushdown {
	out := []*pushdown{e.base.pd}
	for _, r := range e.cache {
		out = append(out, r.pd)
	}
	return out
}

// Revision returns the revision the engine decides with for tenant.
func (e *Engine) Revision(tenant string) *Revision {
	return e.state(tenant).rev
}

func (e *Engine) state(tenant string) tenantState {
	st, ok := (*e.tenants.Load())[tenant]
	if !ok || st.rev == nil {
		st.rev = e.base
	}
	return st
}

// update changes one tenant's state under e.mu, copying the map.
func (e *Engine) update(tenant string, f func(st *tenantState)) {
	old := *e.tenants.Load()
	next := make(map[string]tenantState, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	st := next[tenant]
	f(&st)
	next[tenant] = st
	e.tenants.Store(&next)
}

// loadModules parses every policy module of fsys, skipping tests.
func loadModules(fsys fs.FS) (map[string]*ast.Module, error) {
	modules := map[string]*ast.Module{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(name) != ".rego" || strings.HasSuffix(name, "_test.rego") {
			return err
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		m, err := ast.ParseModuleWithOpts(name, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			return err
		}
		modules[name] = m
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(modules) == 0 {
		return nil, errors.New("no policy modules")
	}
	return modules, nil
}

// banned names the built-ins policies may not call beyond the
// non-deterministic ones: the network and runtime introspection.
func banned(b *ast.Builtin) bool {
	return b.Nondeterministic || strings.HasPrefix(b.Name, "net.") || strings.HasPrefix(b.Name, "http.") ||
		b.Name == "opa.runtime"
}

// sandbox returns the capabilities policies compile with: no network, no
// runtime introspection, and no clock or randomness (context.now is the
// clock), so that decisions are deterministic and admin-edited Rego cannot
// reach out.
func sandbox() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.AllowNet = []string{}
	caps.Builtins = slices.DeleteFunc(caps.Builtins, banned)
	return caps
}

// Decide evaluates data.mneme.authz.allow and .reasons for one action. Any
// error denies: the Decision is then the zero value and the error says why.
func (e *Engine) Decide(ctx context.Context, p memory.Principal, action string, r memory.Resource, now time.Time) (memory.Decision, error) {
	start := time.Now()
	st := e.state(p.Tenant)
	d, err := e.decide(ctx, st.rev, p, action, r, now)
	if e.sink != nil {
		rec := policyadmin.DecisionRecord{
			Time: now, Principal: p, Action: action, Resource: r, Result: policyadmin.ResultDeny, Reasons: d.Reasons,
			PolicyRevision: st.rev.Number, GrantRevision: st.grants, LatencyMicros: time.Since(start).Microseconds(),
		}
		if d.Allow {
			rec.Result = policyadmin.ResultAllow
		}
		if err != nil {
			rec.Error = err.Error()
		}
		e.sink.Record(rec)
	}
	return d, err
}

// tenantMismatch is the reason of a decision across tenants that the engine
// makes itself, whatever a tenant's policy says: a tenant's policy decides
// for that tenant only.
const tenantMismatch = "tenant mismatch"

func (e *Engine) decide(ctx context.Context, rev *Revision, p memory.Principal, action string, r memory.Resource, now time.Time) (memory.Decision, error) {
	if rev != e.base && (p.Tenant == "" || r.Tenant != p.Tenant) {
		return memory.Decision{Reasons: []string{tenantMismatch}}, nil
	}
	key := memoKey(p, action, r)
	gen, from, until := rev.pd.span(p.Tenant, now)
	if d, ok := rev.memo.get(gen, key, now); ok {
		return d, nil
	}
	tenant := p.Tenant
	if rev.Number < 0 { // a draft: no tenant runs it
		tenant = ""
	}
	b, err := e.eval(ctx, tenant, rev.decide, inputValue(p, action, r, now))
	if err != nil {
		return memory.Decision{}, fmt.Errorf("policy: decide %s: %w", action, err)
	}
	allow, ok := b["allow"].(bool)
	if !ok {
		return memory.Decision{}, fmt.Errorf("policy: decide %s: allow is %T, not a boolean", action, b["allow"])
	}
	reasons, err := stringSet(b["reasons"])
	if err != nil {
		return memory.Decision{}, fmt.Errorf("policy: decide %s: reasons: %w", action, err)
	}
	d := memory.Decision{Allow: allow, Reasons: capReasons(reasons)}
	if ceiling, ok := b["ceiling"].([]any); !allow && ok && len(ceiling) == 1 && action == memory.ActionWrite {
		if c, ok := ceiling[0].(string); ok && memory.SensitivityRank(c) >= 0 {
			d.Refusal = &policyadmin.CeilingError{Sensitivity: r.Sensitivity, Ceiling: c}
		}
	}
	rev.memo.put(gen, key, d, from, until)
	return d, nil
}

// Covers reports whether the scope s covers r (Matches).
func (e *Engine) Covers(s memory.Scope, r memory.Resource) bool { return Matches(s, r) }

// ReadScope compiles what p may read of userID's memories ("" = every user)
// by partial evaluation of the read policy (see pushdown.go) and returns it
// as a scope of p's tenant with a Filter. A policy it cannot translate gives
// an empty scope.
func (e *Engine) ReadScope(ctx context.Context, p memory.Principal, userID string, now time.Time) (memory.Scope, error) {
	evalCtx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	f, err := e.Revision(p.Tenant).pd.filter(evalCtx, p, userID, now)
	if err != nil {
		return memory.Scope{}, fmt.Errorf("policy: read scope: %w", e.timedOut(ctx, p.Tenant, err))
	}
	return memory.Scope{Tenant: p.Tenant, Filter: &f}, nil
}

// ClauseScope evaluates data.mneme.authz.scope for reading userID's memories
// ("" = every user) and returns it as a scope of p's tenant. An empty set of
// clauses is an empty scope, which matches nothing. It is the hand-written
// mirror of allow that ReadScope replaced, kept to compare the two.
func (e *Engine) ClauseScope(ctx context.Context, p memory.Principal, userID string, now time.Time) (memory.Scope, error) {
	r := memory.Resource{Tenant: p.Tenant, UserID: userID}
	b, err := e.eval(ctx, p.Tenant, e.Revision(p.Tenant).scope, inputValue(p, memory.ActionRead, r, now))
	if err != nil {
		return memory.Scope{}, fmt.Errorf("policy: read scope: %w", err)
	}
	clauses, err := toClauses(b["scope"])
	if err != nil {
		return memory.Scope{}, fmt.Errorf("policy: read scope: %w", err)
	}
	return memory.Scope{Tenant: p.Tenant, Clauses: clauses}, nil
}

// SetGrants replaces every tenant's grants, atomically: an evaluation sees
// either the old grants or the new ones. The grants are stored under
// data.grants[tenant][grantee], in the order given, as the JSON of
// memory.Grant with types never null.
func (e *Engine) SetGrants(ctx context.Context, grants []memory.Grant) error {
	byTenant := map[string]map[string][]memory.Grant{}
	for i, g := range grants {
		if g.Tenant == "" || g.Grantee == "" {
			return fmt.Errorf("policy: set grants: grant %d (%q) has no tenant or no grantee", i, g.ID)
		}
		if g.Types == nil {
			g.Types = []string{}
		}
		if byTenant[g.Tenant] == nil {
			byTenant[g.Tenant] = map[string][]memory.Grant{}
		}
		byTenant[g.Tenant][g.Grantee] = append(byTenant[g.Tenant][g.Grantee], g)
	}
	bs, err := json.Marshal(byTenant)
	if err != nil {
		return fmt.Errorf("policy: set grants: %w", err)
	}
	var value any
	if err := util.UnmarshalJSON(bs, &value); err != nil {
		return fmt.Errorf("policy: set grants: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := storage.WriteOne(ctx, e.store, storage.ReplaceOp, storage.Path{"grants"}, value); err != nil {
		return fmt.Errorf("policy: set grants: %w", err)
	}
	e.grants = map[string][]memory.Grant{}
	for _, g := range grants {
		e.grants[g.Tenant] = append(e.grants[g.Tenant], g)
	}
	for _, pd := range e.pushdowns() {
		pd.setGrants(grants)
	}
	// Every tenant's grants changed without a revision: whoever keeps
	// revisions must load them again.
	for tenant := range *e.tenants.Load() {
		e.update(tenant, func(st *tenantState) { st.grants, st.grantLoaded = 0, false })
	}
	e.log.InfoContext(ctx, "policy grants replaced", "grants", len(grants), "tenants", len(byTenant))
	return nil
}

// eval runs a prepared query of tenant's policy ("" for a draft) under the
// engine's deadline, in one of its slots while it is hot (slow.go), and
// returns the bindings of its only result.
func (e *Engine) eval(caller context.Context, tenant string, q rego.PreparedEvalQuery, input ast.Value) (rego.Vars, error) {
	ctx, cancel := context.WithTimeout(caller, e.timeout)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return nil, e.timedOut(caller, tenant, err)
	}
	release, err := e.hot.enter(ctx, tenant)
	if err != nil {
		return nil, e.shed(caller, tenant, err)
	}
	defer release()
	rs, err := q.Eval(ctx, rego.EvalParsedInput(input))
	// A deadline reached while evaluating may have cut the evaluation short,
	// with or without an error from OPA; either way it denies, and callers
	// can tell a timeout with errors.Is.
	if ctxErr := ctx.Err(); ctxErr != nil {
		if err != nil {
			return nil, e.timedOut(caller, tenant, fmt.Errorf("%w: %w", ctxErr, err))
		}
		return nil, e.timedOut(caller, tenant, ctxErr)
	}
	if err != nil {
		return nil, err
	}
	switch len(rs) {
	case 0:
		return nil, ErrUndefined
	case 1:
		return rs[0].Bindings, nil
	default:
		return nil, fmt.Errorf("%d results, want 1", len(rs))
	}
}

// outOfTime marks an evaluation cut by a deadline as memory.ErrUnavailable:
// on a busy host an evaluation can outlast its deadline through no fault of
// the request or the policy, and the client should retry. It still denies,
// and stays a context.DeadlineExceeded.
func outOfTime(err error) error {
	if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, memory.ErrUnavailable) {
		return fmt.Errorf("%w: policy evaluation ran out of time: %w", memory.ErrUnavailable, err)
	}
	return err
}

// stringSet converts a Rego set of strings to a sorted slice.
func stringSet(v any) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%T, not a set", v)
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("item %T, not a string", item)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

// capReasons keeps the first policyadmin.MaxReasons-1 reasons and says how
// many more there were, and cuts each to policyadmin.MaxReasonChars
// characters: a policy may emit any number of reasons of any length, and
// every decision is logged with them.
func capReasons(reasons []string) []string {
	const most, chars = policyadmin.MaxReasons, policyadmin.MaxReasonChars
	if len(reasons) > most {
		more := len(reasons) - (most - 1)
		reasons = append(reasons[:most-1:most-1], fmt.Sprintf("… and %d more reasons", more))
	}
	for i, r := range reasons {
		// One line, no marks that turn the text: a reason is shown in
		// explain, the decision log and the panel.
		if r = guard.QuoteLine(r); utf8.RuneCountInString(r) > chars {
			r = string([]rune(r)[:chars-1]) + "…"
		}
		reasons[i] = r
	}
	return reasons
}

// toClauses converts the Rego scope set to clauses, strictly: a field the Go
// side does not know would be dropped, widening the scope, so it is an error,
// as is an unknown max_sensitivity.
func toClauses(v any) ([]memory.Clause, error) {
	if _, ok := v.([]any); !ok {
		return nil, fmt.Errorf("scope is %T, not a set", v)
	}
	bs, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(bs))
	dec.DisallowUnknownFields()
	var clauses []memory.Clause
	if err := dec.Decode(&clauses); err != nil {
		return nil, fmt.Errorf("scope clause: %w", err)
	}
	for _, c := range clauses {
		if c.MaxSensitivity != "" && memory.SensitivityRank(c.MaxSensitivity) < 0 {
			return nil, fmt.Errorf("scope clause: unknown max_sensitivity %q", c.MaxSensitivity)
		}
	}
	if len(clauses) == 0 {
		return nil, nil
	}
	return clauses, nil
}
