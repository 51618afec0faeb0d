package policy

import (
	"context"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"mneme/identity"
	"mneme/memory"
	"mneme/policyadmin"
	regofiles "mneme/rego"
)

var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// newEngine returns an engine with a generous deadline unless opts sets
// one, so that a loaded machine (or -race) does not make tests flaky.
func newEngine(t testing.TB, opts Options) *Engine {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	e, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// engineWithGrantExpiring returns an engine whose one grant, grantG1,
// expires at at.
func engineWithGrantExpiring(t testing.TB, at time.Time) *Engine {
	t.Helper()
	e := newEngine(t, Options{})
	expiring := grantG1
	expiring.ExpiresAt = &at
	setGrants(t, e, expiring)
	return e
}

func setGrants(t testing.TB, e *Engine, grants ...memory.Grant) {
	t.Helper()
	if err := e.SetGrants(context.Background(), grants); err != nil {
		t.Fatal(err)
	}
}

func TestDecisionTable(t *testing.T) {
	f, err := regofiles.FS.Open("testdata/decisions.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	var table struct {
		Cases []decisionCase `json:"cases"`
	}
	if err := dec.Decode(&table); err != nil {
		t.Fatal(err)
	}
	if len(table.Cases) < 25 {
		t.Fatalf("%d cases in the decision table, want at least 25", len(table.Cases))
	}

	e := newEngine(t, Options{})
	for i, tc := range table.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			setGrants(t, e, tc.Grants...)
			var settings policyadmin.Settings
			if tc.Settings != nil {
				settings = *tc.Settings
			}
			if err := e.UseSettings(context.Background(), tc.Principal.Tenant, int64(i+1), settings); err != nil {
				t.Fatal(err)
			}
			got, err := e.Decide(context.Background(), tc.Principal, tc.Action, tc.Resource, tc.Now)
			if err != nil {
				t.Fatal(err)
			}
			if got.Allow != tc.Allow {
				t.Errorf("Allow = %v, want %v (reasons %q)", got.Allow, tc.Allow, got.Reasons)
			}
			if tc.Reasons != nil {
				if diff := cmp.Diff(tc.Reasons, got.Reasons); diff != "" {
					t.Errorf("reasons (-want +got):\n%s", diff)
				}
			}
		})
	}
}

var (
	admin   = memory.Principal{Tenant: "acme", Kind: memory.KindAdmin, ID: "root"}
	support = memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot"}
	orderM  = memory.Resource{
		Tenant: "acme", ID: "m1", UserID: "u1", AgentID: "order-bot",
		Type: memory.TypeEpisodic, Kind: "order", Sensitivity: memory.SensitivityInternal, Status: memory.StatusActive,
	}
	grantG1 = memory.Grant{
		ID: "g1", Tenant: "acme", Grantee: "support-bot", Source: "order-bot",
		Types: []string{memory.TypeEpisodic}, MaxSensitivity: memory.SensitivityInternal,
	}
)

func TestFailClosed(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), testNow)
	t.Cleanup(cancel)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	with := func(r memory.Resource, f func(*memory.Resource)) memory.Resource { f(&r); return r }

	tests := []struct {
		name    string
		ctx     context.Context
		opts    Options
		p       memory.Principal
		r       memory.Resource
		wantErr error // nil: a plain deny without error
	}{
		{name: "deadline exceeded", ctx: expired, p: admin, r: orderM, wantErr: context.DeadlineExceeded},
		{name: "canceled", ctx: canceled, p: admin, r: orderM, wantErr: context.Canceled},
		{name: "engine timeout", opts: Options{Timeout: time.Nanosecond}, p: admin, r: orderM, wantErr: context.DeadlineExceeded},
		{
			name: "slow policy cut at the deadline",
			opts: Options{Timeout: 20 * time.Millisecond, Modules: fstest.MapFS{"slow.rego": {Data: []byte(`package mneme.authz
slow if count([1 | some i in numbers.range(1, 5000); some j in numbers.range(1, 5000)]) > 0
allow if slow
reasons := set()
scope contains {} if slow
`)}}},
			p: admin, r: orderM, wantErr: context.DeadlineExceeded,
		},
		{name: "unknown principal kind", p: memory.Principal{Tenant: "acme", Kind: "robot", ID: "r2"}, r: orderM},
		{name: "principal without kind", p: memory.Principal{Tenant: "acme", ID: "root"}, r: orderM},
		{name: "unknown sensitivity", p: admin, r: with(orderM, func(r *memory.Resource) { r.Sensitivity = "top-secret" })},
		{name: "missing sensitivity", p: admin, r: with(orderM, func(r *memory.Resource) { r.Sensitivity = "" })},
		{
			name: "missing policy",
			opts: Options{Modules: fstest.MapFS{"other.rego": {Data: []byte("package mneme.other\nallow := true\n")}}},
			p:    admin, r: orderM, wantErr: ErrUndefined,
		},
		{
			name: "policy error",
			opts: Options{Modules: fstest.MapFS{"err.rego": {Data: []byte(`package mneme.authz
allow if to_number(input.action) > 0
reasons := set()
scope contains {"user_id": to_number(input.action)}
`)}}},
			p: admin, r: orderM, wantErr: errAny,
		},
		{
			name: "allow of the wrong type",
			opts: Options{Modules: fstest.MapFS{"bad.rego": {Data: []byte("package mneme.authz\nallow := \"yes\"\nreasons := set()\nscope := {{\"statuses\": [\"active\"]}}\n")}}},
			p:    admin, r: orderM, wantErr: errAny,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			e := newEngine(t, tc.opts)
			d, err := e.Decide(ctx, tc.p, memory.ActionRead, tc.r, testNow)
			if d.Allow {
				t.Errorf("Decide allowed: %+v", d)
			}
			checkErr(t, "Decide", err, tc.wantErr)
			// Running out of time is the engine being busy: a deny the
			// client may retry (503), unlike a broken or refusing policy.
			outOfTime := errors.Is(tc.wantErr, context.DeadlineExceeded)
			if errors.Is(err, memory.ErrUnavailable) != outOfTime {
				t.Errorf("Decide: error %v; wrapping memory.ErrUnavailable should be %v", err, outOfTime)
			}
			if tc.wantErr != nil {
				s, err := e.ReadScope(ctx, tc.p, "", testNow)
				checkErr(t, "ReadScope", err, tc.wantErr)
				if errors.Is(err, memory.ErrUnavailable) != outOfTime {
					t.Errorf("ReadScope: error %v; wrapping memory.ErrUnavailable should be %v", err, outOfTime)
				}
				if !s.Empty() {
					t.Errorf("ReadScope gave %+v with an error", s)
				}
			}
		})
	}
}

// errAny stands for "some error" in tables.
var errAny = errors.New("any error")

func checkErr(t *testing.T, what string, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Errorf("%s: unexpected error %v", what, err)
	case want == errAny && err == nil, want != nil && want != errAny && !errors.Is(err, want):
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}

func TestSandbox(t *testing.T) {
	for _, src := range []string{
		`allow if http.send({"method": "GET", "url": "http://127.0.0.1/"}).status_code == 200`,
		`allow if count(net.lookup_ip_addr("localhost")) > 0`,
		`allow if opa.runtime().env`,
		`allow if time.now_ns() > 0`,
	} {
		t.Run(src, func(t *testing.T) {
			fsys := fstest.MapFS{"p.rego": {Data: []byte("package mneme.authz\n" + src + "\n")}}
			if _, err := New(context.Background(), Options{Modules: fsys}); err == nil {
				t.Error("New compiled a policy that escapes the sandbox")
			}
		})
	}
}

func TestNewRejectsEmptyPolicy(t *testing.T) {
	fsys := fstest.MapFS{"a_test.rego": {Data: []byte("package x\ntest_a if true\n")}}
	if _, err := New(context.Background(), Options{Modules: fsys}); err == nil {
		t.Error("New accepted a policy without modules")
	}
}

func TestSetGrants(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{})
	allowed := func() bool {
		t.Helper()
		d, err := e.Decide(ctx, support, memory.ActionRead, orderM, testNow)
		if err != nil {
			t.Fatal(err)
		}
		return d.Allow
	}
	if allowed() {
		t.Fatal("allowed before any grant")
	}
	setGrants(t, e, grantG1)
	if !allowed() {
		t.Fatal("denied with grant g1")
	}
	noTenant := grantG1
	noTenant.Tenant = ""
	if err := e.SetGrants(ctx, []memory.Grant{noTenant}); err == nil {
		t.Fatal("SetGrants accepted a grant without tenant")
	}
	if !allowed() {
		t.Fatal("a rejected SetGrants changed the grants")
	}
	other := grantG1
	other.ID, other.Grantee = "g2", "billing-bot"
	setGrants(t, e, other)
	if allowed() {
		t.Fatal("SetGrants kept the replaced grant g1")
	}
	expiring := grantG1
	at := testNow.In(time.FixedZone("CEST", 2*3600)).Add(time.Nanosecond)
	expiring.ExpiresAt = &at
	setGrants(t, e, expiring)
	if !allowed() {
		t.Fatal("denied with a grant that expires 1ns after now")
	}
	setGrants(t, e)
	if allowed() {
		t.Fatal("allowed after clearing the grants")
	}
}

// TestInputShape pins the input documented to policy authors: every field
// of the memory types under its JSON name, always present.
func TestInputShape(t *testing.T) {
	tests := []struct {
		name string
		p    memory.Principal
		r    memory.Resource
		want string
	}{
		{
			name: "full",
			p:    memory.Principal{Tenant: "acme", Kind: "analyst", ID: "ana", Roles: []string{"analyst", "x"}},
			r:    orderM,
			want: `{
				"principal": {"tenant": "acme", "kind": "analyst", "id": "ana", "roles": ["analyst", "x"], "team": ""},
				"action": "read",
				"resource": {"tenant": "acme", "id": "m1", "user_id": "u1", "agent_id": "order-bot",
					"type": "episodic", "kind": "order", "sensitivity": "internal", "status": "active",
					"scope": "user", "scope_id": "", "author": "agent"},
				"context": {"now": "2025-06-01T12:00:00Z"}
			}`,
		},
		{
			name: "what a user said about themselves",
			p:    memory.Principal{Tenant: "acme", Kind: "agent", ID: "order-bot"},
			r:    memory.Resource{Tenant: "acme", ID: "m2", UserID: "u1", AgentID: "user:u1", Type: "profile", Sensitivity: "internal", Status: "active"},
			want: `{
				"principal": {"tenant": "acme", "kind": "agent", "id": "order-bot", "roles": [], "team": ""},
				"action": "read",
				"resource": {"tenant": "acme", "id": "m2", "user_id": "u1", "agent_id": "user:u1",
					"type": "profile", "kind": "", "sensitivity": "internal", "status": "active",
					"scope": "user", "scope_id": "", "author": "user"},
				"context": {"now": "2025-06-01T12:00:00Z"}
			}`,
		},
		{
			name: "empty",
			want: `{
				"principal": {"tenant": "", "kind": "", "id": "", "roles": [], "team": ""},
				"action": "read",
				"resource": {"tenant": "", "id": "", "user_id": "", "agent_id": "",
					"type": "", "kind": "", "sensitivity": "", "status": "", "scope": "user", "scope_id": "", "author": "agent"},
				"context": {"now": "2025-06-01T12:00:00Z"}
			}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := ast.MustParseTerm(tc.want).Value
			got := inputValue(tc.p, "read", tc.r, testNow.In(time.FixedZone("X", 3600)))
			if want.Compare(got) != 0 {
				t.Errorf("input\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestRanks keeps Ranks, memory.Sensitivities and the Rego ranks equal.
func TestRanks(t *testing.T) {
	ctx := context.Background()
	modules, err := loadModules(regofiles.FS)
	if err != nil {
		t.Fatal(err)
	}
	opts := []func(*rego.Rego){rego.Query("ranks := data.mneme.authz.ranks; top := data.mneme.authz.top_sensitivity")}
	for _, m := range modules {
		opts = append(opts, rego.ParsedModule(m))
	}
	rs, err := rego.New(opts...).Eval(ctx)
	if err != nil || len(rs) != 1 {
		t.Fatalf("eval: %v, %d results", err, len(rs))
	}
	regoRanks := map[string]int{}
	for k, v := range rs[0].Bindings["ranks"].(map[string]any) {
		n, err := v.(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		regoRanks[k] = int(n)
	}
	if diff := cmp.Diff(Ranks(), regoRanks); diff != "" {
		t.Errorf("Rego ranks differ from Ranks() (-go +rego):\n%s", diff)
	}
	top := memory.Sensitivities[len(memory.Sensitivities)-1]
	if got := rs[0].Bindings["top"]; got != top {
		t.Errorf("top_sensitivity = %v, want %v", got, top)
	}
	if diff := cmp.Diff([]string{"public", "internal"}, SensitivitiesUpTo("internal")); diff != "" {
		t.Errorf("SensitivitiesUpTo(internal) (-want +got):\n%s", diff)
	}
	if got := SensitivitiesUpTo("secret"); got != nil {
		t.Errorf("SensitivitiesUpTo(secret) = %v, want nil", got)
	}
}

// TestConcurrentDecideAndSetGrants runs under -race in CI: decisions made
// while the grants change see either the old grants or the new ones.
func TestConcurrentDecideAndSetGrants(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{Timeout: time.Second})
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	for w := range workers {
		wg.Go(func() {
			for range rounds {
				if w%2 == 0 {
					if _, err := e.ReadScope(ctx, support, "", testNow); err != nil {
						errs <- err
						return
					}
					continue
				}
				d, err := e.Decide(ctx, support, memory.ActionRead, orderM, testNow)
				if err != nil {
					errs <- err
					return
				}
				want := []string{"no rule permits agent read"}
				if d.Allow {
					want = []string{"grant g1 from order-bot"}
				}
				if !cmp.Equal(want, d.Reasons) {
					errs <- errors.New("inconsistent decision")
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range rounds {
			grants := []memory.Grant{grantG1}
			if i%2 == 1 {
				grants = nil
			}
			if err := e.SetGrants(ctx, grants); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPackageComments checks that policy and rego each have one package
// comment, in the usual form.
func TestPackageComments(t *testing.T) {
	for dir, name := range map[string]string{".": "policy", "../rego": "rego"} {
		t.Run(name, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			var docs []string
			for _, file := range files {
				if strings.HasSuffix(file, "_test.go") {
					continue
				}
				f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
				if err != nil {
					t.Fatal(err)
				}
				if f.Doc != nil {
					docs = append(docs, f.Doc.Text())
				}
			}
			if len(docs) != 1 || !strings.HasPrefix(docs[0], "Package "+name+" ") {
				t.Errorf("package comments %q, want one starting %q", docs, "Package "+name+" ")
			}
		})
	}
}

// TestAnalystRoles keeps identity.AnalystRoles, the roles an analyst may be
// given, equal to the bundled policy's analyst_roles.
func TestAnalystRoles(t *testing.T) {
	modules, err := loadModules(regofiles.FS)
	if err != nil {
		t.Fatal(err)
	}
	opts := []func(*rego.Rego){rego.Query("roles := object.keys(data.mneme.authz.analyst_roles)")}
	for _, m := range modules {
		opts = append(opts, rego.ParsedModule(m))
	}
	rs, err := rego.New(opts...).Eval(context.Background())
	if err != nil || len(rs) != 1 {
		t.Fatalf("eval: %v, %d results", err, len(rs))
	}
	var got []string
	for _, r := range rs[0].Bindings["roles"].([]any) {
		got = append(got, r.(string))
	}
	slices.Sort(got)
	if diff := cmp.Diff(identity.AnalystRoles, got); diff != "" {
		t.Errorf("identity.AnalystRoles differ from the Rego analyst_roles (-go +rego):\n%s", diff)
	}
}
