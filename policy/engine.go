// Package policy is Mneme's authorization engine. It evaluates the Rego policy
// of package rego (package mneme.authz) with embedded OPA to decide single
// actions and to compute what a principal may read, and keeps the sharing
// grants that policy decides with. *Engine implements memory.Authorizer and
// fails closed: an evaluation error, an undefined result or a deadline denies.
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
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"

	"mneme/memory"
	regofiles "mneme/rego"
)

// DefaultTimeout bounds one evaluation when Options.Timeout is zero.
const DefaultTimeout = 50 * time.Millisecond

// The queries the engine prepares. Their rules are the contract with the Rego
// policy: see the package comment of rego/authz.rego.
const (
	decideQuery = "allow := data.mneme.authz.allow; reasons := data.mneme.authz.reasons"
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
}

// Engine evaluates the policy. It is safe for concurrent use.
type Engine struct {
	log     *slog.Logger
	timeout time.Duration
	store   storage.Store
	decide  rego.PreparedEvalQuery
	scope   rego.PreparedEvalQuery
	pd      *pushdown
}

var _ memory.Authorizer = (*Engine)(nil)

// New compiles the policy and prepares its queries, once. It starts with no
// grants.
func New(ctx context.Context, opts Options) (*Engine, error) {
	e := &Engine{log: opts.Logger, timeout: opts.Timeout}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	fsys := opts.Modules
	if fsys == nil {
		fsys = regofiles.FS
	}
	modules, err := loadModules(fsys)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	compiler := ast.NewCompiler().WithCapabilities(sandbox())
	if compiler.Compile(modules); compiler.Failed() {
		return nil, fmt.Errorf("policy: compile: %w", compiler.Errors)
	}
	e.store = inmem.NewFromObjectWithOpts(
		map[string]any{"grants": map[string]any{}},
		inmem.OptReturnASTValuesOnRead(true),
	)
	prepare := func(query string) (rego.PreparedEvalQuery, error) {
		return rego.New(
			rego.Query(query),
			rego.Compiler(compiler),
			rego.Store(e.store),
			rego.StrictBuiltinErrors(true),
		).PrepareForEval(ctx)
	}
	if e.decide, err = prepare(decideQuery); err != nil {
		return nil, fmt.Errorf("policy: prepare decide: %w", err)
	}
	if e.scope, err = prepare(scopeQuery); err != nil {
		return nil, fmt.Errorf("policy: prepare scope: %w", err)
	}
	e.pd = newPushdown(ctx, compiler, e.store, e.log)
	return e, nil
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

// sandbox returns the capabilities policies compile with: no network, no
// runtime introspection, and no clock or randomness (context.now is the
// clock), so that decisions are deterministic and admin-edited Rego cannot
// reach out.
func sandbox() *ast.Capabilities {
	banned := map[string]bool{
		"http.send": true, "net.lookup_ip_addr": true, "opa.runtime": true,
		"time.now_ns": true, "rand.intn": true, "uuid.rfc4122": true,
	}
	caps := ast.CapabilitiesForThisVersion()
	caps.AllowNet = []string{}
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool { return banned[b.Name] })
	return caps
}

// Decide evaluates data.mneme.authz.allow and .reasons for one action. Any
// error denies: the Decision is then the zero value and the error says why.
func (e *Engine) Decide(ctx context.Context, p memory.Principal, action string, r memory.Resource, now time.Time) (memory.Decision, error) {
	b, err := e.eval(ctx, e.decide, inputValue(p, action, r, now))
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
	return memory.Decision{Allow: allow, Reasons: reasons}, nil
}

// ReadScope compiles what p may read of userID's memories ("" = every user)
// by partial evaluation of the read policy (see pushdown.go) and returns it
// as a scope of p's tenant with a Filter. A policy it cannot translate gives
// an empty scope.
func (e *Engine) ReadScope(ctx context.Context, p memory.Principal, userID string, now time.Time) (memory.Scope, error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	f, err := e.pd.filter(ctx, p, userID, now)
	if err != nil {
		return memory.Scope{}, fmt.Errorf("policy: read scope: %w", err)
	}
	return memory.Scope{Tenant: p.Tenant, Filter: &f}, nil
}

// ClauseScope evaluates data.mneme.authz.scope for reading userID's memories
// ("" = every user) and returns it as a scope of p's tenant. An empty set of
// clauses is an empty scope, which matches nothing. It is the hand-written
// mirror of allow that ReadScope replaced, kept to compare the two.
func (e *Engine) ClauseScope(ctx context.Context, p memory.Principal, userID string, now time.Time) (memory.Scope, error) {
	r := memory.Resource{Tenant: p.Tenant, UserID: userID}
	b, err := e.eval(ctx, e.scope, inputValue(p, memory.ActionRead, r, now))
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
	if err := storage.WriteOne(ctx, e.store, storage.ReplaceOp, storage.Path{"grants"}, value); err != nil {
		return fmt.Errorf("policy: set grants: %w", err)
	}
	e.pd.setGrants(grants)
	e.log.InfoContext(ctx, "policy grants replaced", "grants", len(grants), "tenants", len(byTenant))
	return nil
}

// eval runs a prepared query under the engine's deadline and returns the
// bindings of its only result.
func (e *Engine) eval(ctx context.Context, q rego.PreparedEvalQuery, input ast.Value) (rego.Vars, error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rs, err := q.Eval(ctx, rego.EvalParsedInput(input))
	// A deadline reached while evaluating may have cut the evaluation short,
	// with or without an error from OPA; either way it denies, and callers
	// can tell a timeout with errors.Is.
	if ctxErr := ctx.Err(); ctxErr != nil {
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ctxErr, err)
		}
		return nil, ctxErr
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
