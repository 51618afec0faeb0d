package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/util"

	"mneme/memory"
	"mneme/policyadmin"
	regofiles "mneme/rego"
)

// checkTimeout bounds the tests of one policy check.
const checkTimeout = 30 * time.Second

// The rules a policy must define: the engine's queries read them.
var requiredRules = []string{"data.mneme.authz.allow", "data.mneme.authz.reasons", "data.mneme.authz.scope"}

var (
	_ policyadmin.PolicyEngine = (*Engine)(nil)
	_ policyadmin.Authorizer   = (*Engine)(nil)
)

// BundledPolicy returns the modules of package rego, tests included, by
// name: revision 0.
func (e *Engine) BundledPolicy() []policyadmin.PolicyModule {
	out, err := readModules(regofiles.FS)
	if err != nil {
		// The embedded files were read once by New already.
		panic(fmt.Sprintf("policy: bundled modules: %v", err))
	}
	return out
}

func readModules(fsys fs.FS) ([]policyadmin.PolicyModule, error) {
	var out []policyadmin.PolicyModule
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(name) != ".rego" {
			return err
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		out = append(out, policyadmin.PolicyModule{Name: name, Source: string(src)})
		return nil
	})
	slices.SortFunc(out, func(a, b policyadmin.PolicyModule) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}

func isTest(name string) bool { return strings.HasSuffix(name, "_test.rego") }

func reject(code string, problems ...string) error {
	return &policyadmin.PolicyRejectedError{Code: code, Problems: problems}
}

// parse parses modules as Rego v1 and refuses calls to built-ins outside
// the sandbox, by name and place, before the compiler would say only
// "undefined function".
func parse(modules []policyadmin.PolicyModule) (policy, tests map[string]*ast.Module, err error) {
	policy, tests = map[string]*ast.Module{}, map[string]*ast.Module{}
	var problems []string
	for _, m := range modules {
		parsed, err := ast.ParseModuleWithOpts(m.Name, m.Source, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			problems = append(problems, astProblems(err)...)
			continue
		}
		if parsed == nil {
			problems = append(problems, m.Name+": no package")
			continue
		}
		if isTest(m.Name) {
			tests[m.Name] = parsed
		} else {
			policy[m.Name] = parsed
		}
	}
	if len(problems) > 0 {
		return nil, nil, reject(policyadmin.RejectParse, problems...)
	}
	forbidden := map[string]bool{}
	for _, b := range ast.CapabilitiesForThisVersion().Builtins {
		if banned(b) {
			forbidden[b.Name] = true
		}
	}
	for _, set := range []map[string]*ast.Module{policy, tests} {
		for _, name := range sortedKeys(set) {
			ast.WalkTerms(set[name], func(t *ast.Term) bool {
				call, ok := t.Value.(ast.Call)
				if ok && len(call) > 0 && forbidden[call[0].String()] {
					problems = append(problems, fmt.Sprintf("%s: %s is not allowed: policies may not reach the network, the runtime, the clock or randomness (time comes in input.context.now)", loc(t.Location), call[0]))
				}
				return false
			})
			ast.WalkExprs(set[name], func(x *ast.Expr) bool {
				if x.IsCall() && forbidden[x.Operator().String()] {
					problems = append(problems, fmt.Sprintf("%s: %s is not allowed: policies may not reach the network, the runtime, the clock or randomness (time comes in input.context.now)", loc(x.Location), x.Operator()))
				}
				return false
			})
		}
	}
	if len(problems) > 0 {
		return nil, nil, reject(policyadmin.RejectForbiddenBuiltin, problems...)
	}
	for _, name := range sortedKeys(policy) {
		problems = append(problems, foreignData(policy[name])...)
	}
	if len(problems) > 0 {
		return nil, nil, reject(policyadmin.RejectForeignData, problems...)
	}
	if len(policy) == 0 {
		return nil, nil, reject(policyadmin.RejectInvalid, "no policy module: every module is a _test.rego")
	}
	return policy, tests, nil
}

// tenantDocs are the documents of the engine's store, keyed by tenant.
var tenantDocs = []string{"grants", "settings"}

// ownTenant is the only key a policy may read tenantDocs by.
var ownTenant = ast.MustParseTerm("input.principal.tenant")

// foreignData lists the places in m that could read another tenant's data.
// One store holds every tenant's grants and settings, and a tenant's policy
// (or an admin's draft, whose reasons the admin reads) runs against it; so
// a policy reads data.grants and data.settings by its own tenant alone,
// never the whole of data, never rebinds input.principal, and defines
// nothing under those documents. Test modules run against an empty store.
func foreignData(m *ast.Module) []string {
	var problems []string
	add := func(l *ast.Location, what string) {
		problems = append(problems, fmt.Sprintf("%s: %s: a policy reads data.grants and data.settings only as data.grants[input.principal.tenant] and data.settings[input.principal.tenant]", loc(l), what))
	}
	if p := m.Package.Path; len(p) > 1 && isTenantDoc(p[1]) {
		add(m.Package.Location, "package "+p.String()+" lies under another tenant's data")
	}
	ast.WalkRefs(m, func(ref ast.Ref) bool {
		if !ref[0].Equal(ast.DefaultRootDocument) {
			return false
		}
		if len(ref) == 1 {
			add(ref[0].Location, "data reads the whole data document")
		} else if _, ok := ref[1].Value.(ast.String); !ok {
			add(ref[0].Location, ref.String()+" reads the whole data document")
		} else if isTenantDoc(ref[1]) && (len(ref) < 3 || !ref[2].Equal(ownTenant)) {
			add(ref[0].Location, ref.String()+" reads data of every tenant")
		}
		return false
	})
	ast.WalkExprs(m, func(x *ast.Expr) bool {
		for _, w := range x.With {
			if t, ok := w.Target.Value.(ast.Ref); ok && t.HasPrefix(ast.InputRootRef) && len(t) <= 3 && ownTenant.Value.(ast.Ref).HasPrefix(t) {
				add(w.Location, "with "+t.String()+" replaces the principal's tenant")
			}
		}
		return false
	})
	return problems
}

func isTenantDoc(t *ast.Term) bool {
	return slices.ContainsFunc(tenantDocs, func(d string) bool { return t.Equal(ast.StringTerm(d)) })
}

func loc(l *ast.Location) string {
	if l == nil {
		return "?"
	}
	return fmt.Sprintf("%s:%d", l.File, l.Row)
}

func astProblems(err error) []string {
	var errs ast.Errors
	if errors.As(err, &errs) {
		out := make([]string, 0, len(errs))
		for _, e := range errs {
			out = append(out, fmt.Sprintf("%s: %s", loc(e.Location), e.Message))
		}
		return out
	}
	return []string{err.Error()}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// strictCompiler is how admin-pushed policy compiles: strict mode, sandboxed
// capabilities.
func strictCompiler() *ast.Compiler {
	return ast.NewCompiler().WithCapabilities(sandbox()).WithStrict(true)
}

// compile parses and compiles modules into a prepared Revision, checking
// that the policy defines the rules the engine queries.
func (e *Engine) compile(ctx context.Context, number int64, modules []policyadmin.PolicyModule) (*Revision, map[string]*ast.Module, error) {
	policy, tests, err := parse(modules)
	if err != nil {
		return nil, nil, err
	}
	compiler := strictCompiler()
	if compiler.Compile(policy); compiler.Failed() {
		return nil, nil, reject(policyadmin.RejectCompile, astProblems(compiler.Errors)...)
	}
	var missing []string
	for _, r := range requiredRules {
		if len(compiler.GetRulesExact(ast.MustParseRef(r))) == 0 {
			missing = append(missing, "the policy must define "+r)
		}
	}
	if len(missing) > 0 {
		return nil, nil, reject(policyadmin.RejectCompile, missing...)
	}
	rev, err := e.prepare(ctx, number, policyadmin.PolicyDigest(modules), policy, compiler)
	if err != nil {
		return nil, nil, reject(policyadmin.RejectCompile, err.Error())
	}
	return rev, tests, nil
}

// CheckPolicy is what a policy must pass to become a revision and again to
// be activated: it parses as Rego v1, calls no built-in outside the sandbox,
// compiles in strict mode, defines allow, reasons and scope in package
// mneme.authz, has a read policy the pushdown can translate for every kind
// of principal, passes its own tests, the bundled tests and the bundled
// decision table, and decides each case of that table and a representative
// set of inputs for tenant within the engine's deadline (slow.go). Checks run one at a time under a memory budget
// (checkgate.go); modules that passed before pass again at once
// (checkcache.go).
func (e *Engine) CheckPolicy(ctx context.Context, tenant string, modules []policyadmin.PolicyModule) (report policyadmin.PolicyReport, err error) {
	// The timing check decides with the tenant's grants and settings: a
	// pass holds while they do.
	st := e.state(tenant)
	digest := fmt.Sprintf("%s@%d.%d", policyadmin.PolicyDigest(modules), st.grants, st.settings)
	if report, ok := e.passed.get(tenant, digest); ok {
		return report, nil
	}
	err = e.checks.run(ctx, tenant, func(ctx context.Context) error {
		report, err = e.checkPolicy(ctx, tenant, modules)
		return err
	})
	if err == nil {
		e.passed.put(tenant, digest, report)
	}
	return report, err
}

func (e *Engine) checkPolicy(ctx context.Context, tenant string, modules []policyadmin.PolicyModule) (policyadmin.PolicyReport, error) {
	rev, own, err := e.compile(ctx, -1, modules)
	if err != nil {
		return policyadmin.PolicyReport{}, err
	}
	report := policyadmin.PolicyReport{Digest: rev.Digest, Modules: len(modules)}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if err := e.checkPushdown(ctx, rev); err != nil {
		return policyadmin.PolicyReport{}, err
	}
	// Slow decisions first: the tests would meet them too, and run out of
	// time saying less. A decision case that allows otherwise than the
	// table says is reported after the tests, which say more.
	var table error
	report.DecisionCases, table = e.runDecisionTable(ctx, rev)
	var rejected *policyadmin.PolicyRejectedError
	if table != nil && (!errors.As(table, &rejected) || rejected.Code == policyadmin.RejectTooSlow) {
		return policyadmin.PolicyReport{}, table
	}
	if err := e.checkTiming(ctx, tenant, rev); err != nil {
		return policyadmin.PolicyReport{}, err
	}

	if report.OwnTests, err = runTests(ctx, "", rev.Modules, own); err != nil {
		return policyadmin.PolicyReport{}, err
	}
	bundled := map[string]*ast.Module{}
	for _, m := range e.BundledPolicy() {
		if isTest(m.Name) {
			parsed, err := ast.ParseModuleWithOpts("bundled/"+m.Name, m.Source, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				return policyadmin.PolicyReport{}, fmt.Errorf("policy: bundled test %s: %w", m.Name, err)
			}
			bundled["bundled/"+m.Name] = parsed
		}
	}
	if report.BundledTests, err = runTests(ctx, "bundled ", rev.Modules, bundled); err != nil {
		return policyadmin.PolicyReport{}, err
	}
	if table != nil {
		return policyadmin.PolicyReport{}, table
	}
	return report, nil
}

// runTests runs the tests among modules with OPA's tester against policy and
// returns how many ran, or a rejection naming those that failed.
func runTests(ctx context.Context, what string, policy, tests map[string]*ast.Module) (int, error) {
	if len(tests) == 0 {
		return 0, nil
	}
	all := make(map[string]*ast.Module, len(policy)+len(tests))
	for k, v := range policy {
		all[k] = v
	}
	for k, v := range tests {
		all[k] = v
	}
	ch, err := tester.NewRunner().
		SetCompiler(strictCompiler()).
		SetModules(all).
		SetTimeout(10*time.Second).
		RaiseBuiltinErrors(true).
		RunTests(ctx, nil)
	if err != nil {
		return 0, reject(policyadmin.RejectCompile, astProblems(err)...)
	}
	ran := 0
	var problems []string
	for r := range ch {
		ran++
		name := fmt.Sprintf("%s%stest %s (%s)", what, "", strings.TrimPrefix(r.Package, "data.")+"."+r.Name, loc(r.Location))
		switch {
		case r.Error != nil:
			problems = append(problems, fmt.Sprintf("%s: error: %v", name, r.Error))
		case r.Fail:
			problems = append(problems, name+" failed")
		}
	}
	if ctx.Err() != nil {
		problems = append(problems, "tests did not finish in time")
	}
	if len(problems) > 0 {
		return ran, reject(policyadmin.RejectTestFailed, problems...)
	}
	return ran, nil
}

// decisionCase is one row of rego/testdata/decisions.json.
type decisionCase struct {
	Name      string           `json:"name"`
	Principal memory.Principal `json:"principal"`
	Action    string           `json:"action"`
	Resource  memory.Resource  `json:"resource"`
	Grants    []memory.Grant   `json:"grants"`
	// Settings, when present, are the principal's tenant's settings.
	Settings *policyadmin.Settings `json:"settings,omitempty"`
	Now      time.Time             `json:"now"`
	Allow    bool                  `json:"allow"`
	// Reasons, when present, must equal the decision's reasons.
	Reasons []string `json:"reasons"`
}

// decisionTable reads the bundled decision table.
func decisionTable() ([]decisionCase, error) {
	raw, err := fs.ReadFile(regofiles.FS, "testdata/decisions.json")
	if err != nil {
		return nil, err
	}
	var table struct {
		Cases []decisionCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		return nil, err
	}
	return table.Cases, nil
}

// runDecisionTable checks the allow of every case of the bundled decision
// table against rev, each decided within the engine's deadline; reasons are
// the bundled policy's wording and are not compared.
func (e *Engine) runDecisionTable(ctx context.Context, rev *Revision) (int, error) {
	cases, err := decisionTable()
	if err != nil {
		return 0, fmt.Errorf("policy: decision table: %w", err)
	}
	var problems, slow []string
	for _, tc := range cases {
		grants, err := grantsValue(tc.Grants)
		if err != nil {
			return 0, fmt.Errorf("policy: decision table %q: %w", tc.Name, err)
		}
		settings, err := settingsValue(tc.Principal.Tenant, tc.Settings)
		if err != nil {
			return 0, fmt.Errorf("policy: decision table %q: %w", tc.Name, err)
		}
		store := inmem.NewFromObjectWithOpts(map[string]any{"grants": grants, "settings": settings}, inmem.OptReturnASTValuesOnRead(true))
		q, err := rego.New(
			rego.Query(decideQuery),
			rego.Compiler(rev.Compiler),
			rego.Store(store),
			rego.StrictBuiltinErrors(true),
		).PrepareForEval(ctx)
		if err != nil {
			return 0, reject(policyadmin.RejectCompile, astProblems(err)...)
		}
		rs, tooSlow, err := e.timedEval(ctx, q, inputValue(tc.Principal, tc.Action, tc.Resource, tc.Now))
		if tooSlow {
			if slow = append(slow, fmt.Sprintf("the decision of bundled decision case %q", tc.Name)); len(slow) == maxSlowProbes {
				break
			}
			continue
		}
		if err != nil && ctx.Err() != nil {
			return 0, err
		}
		allow := err == nil && len(rs) == 1 && rs[0].Bindings["allow"] == true
		if allow != tc.Allow {
			problems = append(problems, fmt.Sprintf("bundled decision case %q: allow = %v, want %v", tc.Name, allow, tc.Allow))
		}
	}
	switch {
	case len(slow) > 0:
		return len(cases), e.tooSlow(slow)
	case len(problems) > 0:
		return len(cases), reject(policyadmin.RejectTestFailed, problems...)
	}
	return len(cases), nil
}

// grantsValue files grants by tenant and grantee as data.grants, as
// SetGrants does.
func grantsValue(grants []memory.Grant) (any, error) {
	byTenant := map[string]map[string][]memory.Grant{}
	for i, g := range grants {
		if g.Tenant == "" || g.Grantee == "" {
			return nil, fmt.Errorf("grant %d (%q) has no tenant or no grantee", i, g.ID)
		}
		if g.Types == nil {
			g.Types = []string{}
		}
		if byTenant[g.Tenant] == nil {
			byTenant[g.Tenant] = map[string][]memory.Grant{}
		}
		byTenant[g.Tenant][g.Grantee] = append(byTenant[g.Tenant][g.Grantee], g)
	}
	return astValue(byTenant)
}

// settingsValue files one tenant's settings as data.settings; nil is none.
func settingsValue(tenant string, s *policyadmin.Settings) (any, error) {
	if s == nil {
		return astValue(map[string]any{})
	}
	return astValue(map[string]policyadmin.Settings{tenant: *s})
}

func astValue(v any) (any, error) {
	bs, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var value any
	if err := util.UnmarshalJSON(bs, &value); err != nil {
		return nil, err
	}
	return value, nil
}

// UsePolicy makes the revision the tenant's policy, unless the engine has a
// newer epoch for it already. Revision 0 is the bundled policy.
func (e *Engine) UsePolicy(ctx context.Context, tenant string, number, epoch int64, modules []policyadmin.PolicyModule) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if st, ok := (*e.tenants.Load())[tenant]; ok && st.rev != nil && epoch < st.epoch {
		return nil
	}
	rev := e.base
	if number != 0 {
		key := fmt.Sprintf("%s#%d", policyadmin.PolicyDigest(modules), number)
		if rev = e.cache[key]; rev == nil {
			var err error
			if rev, _, err = e.compile(ctx, number, modules); err != nil {
				return fmt.Errorf("policy: revision %d of %s: %w", number, tenant, err)
			}
			rev.pd.setGrants(e.allGrants())
			e.cache[key] = rev
		}
	}
	e.update(tenant, func(st *tenantState) { st.rev, st.epoch = rev, epoch })
	e.log.InfoContext(ctx, "policy revision in force", "tenant", tenant, "revision", number, "epoch", epoch)
	return nil
}

// UseGrants replaces the grants of one tenant, unless the engine has a newer
// grant revision for it already. An evaluation sees either the old grants or
// the new ones.
func (e *Engine) UseGrants(ctx context.Context, tenant string, revision int64, grants []memory.Grant) error {
	for i, g := range grants {
		if g.Tenant != tenant {
			return fmt.Errorf("policy: grants of %s: grant %d (%q) is of tenant %q", tenant, i, g.ID, g.Tenant)
		}
	}
	value, err := grantsValue(grants)
	if err != nil {
		return fmt.Errorf("policy: grants of %s: %w", tenant, err)
	}
	var mine any = map[string]any{}
	if m, ok := value.(map[string]any); ok && m[tenant] != nil {
		mine = m[tenant]
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if st, ok := (*e.tenants.Load())[tenant]; ok && st.grantLoaded && revision < st.grants {
		return nil
	}
	if err := storage.WriteOne(ctx, e.store, storage.AddOp, storage.Path{"grants", tenant}, mine); err != nil {
		return fmt.Errorf("policy: grants of %s: %w", tenant, err)
	}
	e.grants[tenant] = grants
	for _, pd := range e.pushdowns() {
		pd.setTenantGrants(tenant, grants)
	}
	e.update(tenant, func(st *tenantState) { st.grants, st.grantLoaded = revision, true })
	e.log.InfoContext(ctx, "grants in force", "tenant", tenant, "revision", revision, "grants", len(grants))
	return nil
}

// UseSettings replaces the policy settings of one tenant (data.settings),
// unless the engine has them from a newer grant revision already. Cached
// read filters are dropped, as the settings change what users read.
func (e *Engine) UseSettings(ctx context.Context, tenant string, revision int64, settings policyadmin.Settings) error {
	value, err := astValue(settings)
	if err != nil {
		return fmt.Errorf("policy: settings of %s: %w", tenant, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if st, ok := (*e.tenants.Load())[tenant]; ok && st.settingsLoaded && revision < st.settings {
		return nil
	}
	if err := storage.WriteOne(ctx, e.store, storage.AddOp, storage.Path{"settings", tenant}, value); err != nil {
		return fmt.Errorf("policy: settings of %s: %w", tenant, err)
	}
	for _, pd := range e.pushdowns() {
		pd.invalidate()
	}
	e.update(tenant, func(st *tenantState) { st.settings, st.settingsLoaded = revision, true })
	e.log.InfoContext(ctx, "settings in force", "tenant", tenant, "revision", revision, "user_max_sensitivity", settings.UserMaxSensitivity)
	return nil
}

// Loaded returns the revisions the engine decides with for tenant; false
// until both its policy and its grants were loaded.
func (e *Engine) Loaded(tenant string) (policyadmin.Revisions, bool) {
	st, ok := (*e.tenants.Load())[tenant]
	if !ok || st.rev == nil || !st.grantLoaded {
		return policyadmin.Revisions{}, false
	}
	return policyadmin.Revisions{Policy: st.rev.Number, PolicyEpoch: st.epoch, Grants: st.grants}, true
}

// draft compiles modules for a simulation, without the tests.
func (e *Engine) draft(ctx context.Context, modules []policyadmin.PolicyModule) (*Revision, error) {
	rev, _, err := e.compile(ctx, -1, modules)
	return rev, err
}

// Simulate decides in against modules with the engine's current grants and
// nothing recorded. With explain, it lists the rules OPA entered, left and
// failed on the way.
func (e *Engine) Simulate(ctx context.Context, modules []policyadmin.PolicyModule, in policyadmin.DecisionInput, explain bool) (sim policyadmin.Simulation, err error) {
	err = e.checks.run(ctx, in.Principal.Tenant, func(ctx context.Context) error {
		sim, err = e.simulate(ctx, modules, in, explain)
		return err
	})
	return sim, err
}

func (e *Engine) simulate(ctx context.Context, modules []policyadmin.PolicyModule, in policyadmin.DecisionInput, explain bool) (policyadmin.Simulation, error) {
	rev, err := e.draft(ctx, modules)
	if err != nil {
		return policyadmin.Simulation{}, err
	}
	if !explain {
		d, err := e.decide(ctx, rev, in.Principal, in.Action, in.Resource, in.Now)
		if err != nil {
			return policyadmin.Simulation{}, e.draftFailed(ctx, err)
		}
		return policyadmin.Simulation{Allow: d.Allow, Reasons: nonNil(d.Reasons)}, nil
	}
	tracer := topdown.NewBufferTracer()
	evalCtx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	rs, err := rev.decide.Eval(evalCtx, rego.EvalParsedInput(inputValue(in.Principal, in.Action, in.Resource, in.Now)), rego.EvalQueryTracer(tracer))
	if err == nil && evalCtx.Err() != nil {
		err = evalCtx.Err()
	}
	if err != nil {
		return policyadmin.Simulation{}, e.draftFailed(ctx, fmt.Errorf("policy: simulate: %w", err))
	}
	var sim policyadmin.Simulation
	if len(rs) == 1 {
		sim.Allow, _ = rs[0].Bindings["allow"].(bool)
		reasons, _ := stringSet(rs[0].Bindings["reasons"])
		sim.Reasons = capReasons(reasons)
	}
	if in.Principal.Tenant == "" || in.Resource.Tenant != in.Principal.Tenant {
		sim.Allow, sim.Reasons = false, []string{tenantMismatch}
	}
	sim.Reasons = nonNil(sim.Reasons)
	sim.Explanation = explainTrace(*tracer)
	return sim, nil
}

// draftFailed turns a draft's evaluation cut by the engine's deadline (ctx
// itself still live) into a RejectTooSlow, and an error the evaluation
// raised into a RejectEval: unlike a decision of the policy in force, which
// a busy host may delay, a retry would run the same draft.
func (e *Engine) draftFailed(ctx context.Context, err error) error {
	var evalErr *topdown.Error
	switch {
	case ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || topdown.IsCancel(err)):
		return reject(policyadmin.RejectTooSlow, fmt.Sprintf("the draft's decision takes longer than the %v a decision may take", e.timeout))
	case errors.As(err, &evalErr):
		return reject(policyadmin.RejectEval, "the draft's decision failed: "+evalErr.Error())
	}
	return err
}

// maxExplanation caps the lines of an explanation.
const maxExplanation = 300

// explainTrace keeps the rule-level events of a trace: which rules were
// entered, which held (exit) and which failed.
func explainTrace(events []*topdown.Event) []string {
	var out []string
	for _, ev := range events {
		var line string
		switch node := ev.Node.(type) {
		case *ast.Rule:
			switch ev.Op {
			case topdown.EnterOp:
				line = fmt.Sprintf("enter %s (%s)", node.Head.Ref(), loc(node.Location))
			case topdown.ExitOp:
				line = fmt.Sprintf("holds %s (%s)", node.Head.Ref(), loc(node.Location))
			}
		case *ast.Expr:
			// The expression that stopped a rule body: why a rule did not hold.
			if ev.Op == topdown.FailOp {
				line = fmt.Sprintf("fails %s (%s)", node, loc(node.Location))
			}
		}
		if line == "" {
			continue
		}
		if len(out) > 0 && out[len(out)-1] == line {
			continue
		}
		if len(out) == maxExplanation {
			out = append(out, "…")
			break
		}
		out = append(out, line)
	}
	return out
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// Replay decides every record again against modules with the engine's
// current grants, each at its own time; an evaluation error is a deny.
func (e *Engine) Replay(ctx context.Context, tenant string, modules []policyadmin.PolicyModule, records []policyadmin.DecisionRecord) (out []memory.Decision, err error) {
	err = e.checks.run(ctx, tenant, func(ctx context.Context) error {
		out, err = e.replay(ctx, modules, records)
		return err
	})
	return out, err
}

// DecideDraft decides each input against modules with the tenant's current
// grants and settings, as Replay does, each under the deadline of a
// decision: a decision that fails or outlasts it denies, saying why. It is
// as many decisions as a request makes, on a draft that passed the checks,
// so it takes no turn among them.
func (e *Engine) DecideDraft(ctx context.Context, tenant string, modules []policyadmin.PolicyModule, inputs []policyadmin.DecisionInput) ([]memory.Decision, error) {
	records := make([]policyadmin.DecisionRecord, len(inputs))
	for i, in := range inputs {
		if in.Principal.Tenant != tenant || in.Resource.Tenant != tenant {
			return nil, fmt.Errorf("policy: decide draft: an input of another tenant than %s", tenant)
		}
		records[i] = policyadmin.DecisionRecord{Time: in.Now, Principal: in.Principal, Action: in.Action, Resource: in.Resource}
	}
	return e.replay(ctx, modules, records)
}

func (e *Engine) replay(ctx context.Context, modules []policyadmin.PolicyModule, records []policyadmin.DecisionRecord) ([]memory.Decision, error) {
	rev, err := e.draft(ctx, modules)
	if err != nil {
		return nil, err
	}
	out := make([]memory.Decision, len(records))
	for i, r := range records {
		d, err := e.decide(ctx, rev, r.Principal, r.Action, r.Resource, r.Time)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			d = memory.Decision{Reasons: []string{"error: " + err.Error()}}
		}
		out[i] = d
	}
	return out, nil
}
