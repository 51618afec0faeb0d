package policy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"mneme/memory"
	"mneme/policyadmin"
	regofiles "mneme/rego"
)

// withModule returns the bundled policy with one module's source edited.
func withModule(t testing.TB, e *Engine, name string, edit func(string) string) []policyadmin.PolicyModule {
	t.Helper()
	modules := e.BundledPolicy()
	found := false
	for i, m := range modules {
		if m.Name == name {
			modules[i].Source = edit(m.Source)
			found = true
		}
	}
	if !found {
		modules = append(modules, policyadmin.PolicyModule{Name: name, Source: edit("")})
	}
	return modules
}

func withoutTests(modules []policyadmin.PolicyModule) []policyadmin.PolicyModule {
	var out []policyadmin.PolicyModule
	for _, m := range modules {
		if !strings.HasSuffix(m.Name, "_test.rego") {
			out = append(out, m)
		}
	}
	return out
}

// denySecretKind is the bundled policy with one more guard: no read of a
// memory of kind "secret-plan", by anyone.
func denySecretKind(t testing.TB, e *Engine) []policyadmin.PolicyModule {
	return withModule(t, e, "authz.rego", func(s string) string {
		s = strings.Replace(s, "\tknown_sensitivity\n}", "\tknown_sensitivity\n\tnot secret_plan\n}", 1)
		return s + `
secret_plan if input.resource.kind == "secret-plan"

denials contains "secret plans are never read" if secret_plan
`
	})
}

func TestCheckPolicy(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{})

	t.Run("bundled policy passes its own admission", func(t *testing.T) {
		report, err := e.CheckPolicy(ctx, "t1", e.BundledPolicy())
		if err != nil {
			t.Fatal(err)
		}
		if report.OwnTests < minRegoTests || report.BundledTests < minRegoTests || report.DecisionCases < 25 {
			t.Errorf("report %+v: too few tests ran", report)
		}
		if report.Digest != policyadmin.PolicyDigest(e.BundledPolicy()) {
			t.Errorf("digest %s", report.Digest)
		}
	})
	t.Run("an added guard with its own test passes", func(t *testing.T) {
		modules := append(denySecretKind(t, e), policyadmin.PolicyModule{Name: "secret_test.rego", Source: `package mneme.authz_test

test_secret_plans_are_never_read if {
	not allowed(admin, "read", mem({"kind": "secret-plan"}))
}
`})
		report, err := e.CheckPolicy(ctx, "t1", modules)
		if err != nil {
			t.Fatal(err)
		}
		if report.OwnTests != report.BundledTests+1 {
			t.Errorf("own tests %d, bundled %d: the new test did not run", report.OwnTests, report.BundledTests)
		}
	})

	tests := []struct {
		name     string
		modules  []policyadmin.PolicyModule
		code     string
		contains string
	}{
		{
			name: "http.send",
			modules: withModule(t, e, "authz.rego", func(s string) string {
				return s + "\nphone_home if http.send({\"method\": \"GET\", \"url\": \"http://127.0.0.1:1/\"}).status_code == 200\n"
			}),
			code: policyadmin.RejectForbiddenBuiltin, contains: authzLine(t, 2) + " http.send is not allowed",
		},
		{
			name: "http.send nested in a term",
			modules: withModule(t, e, "extra.rego", func(string) string {
				return "package mneme.extra\n\nx := [http.send({\"method\": \"GET\", \"url\": \"http://x/\"})]\n"
			}),
			code: policyadmin.RejectForbiddenBuiltin, contains: "extra.rego:3: http.send",
		},
		{
			name: "net.lookup_ip_addr in a test",
			modules: withModule(t, e, "x_test.rego", func(string) string {
				return "package x_test\n\ntest_net if net.lookup_ip_addr(\"localhost\")\n"
			}),
			code: policyadmin.RejectForbiddenBuiltin, contains: "net.lookup_ip_addr",
		},
		{
			name:    "clock",
			modules: withModule(t, e, "authz.rego", func(s string) string { return s + "\nlate if time.now_ns() > 0\n" }),
			code:    policyadmin.RejectForbiddenBuiltin, contains: "time.now_ns",
		},
		{
			name: "every tenant's grants in a reason",
			modules: withModule(t, e, "authz.rego", func(s string) string {
				return s + "\npermits contains sprintf(\"%v %v\", [data.grants, data.settings]) if true\n"
			}),
			code: policyadmin.RejectForeignData, contains: "data.grants reads data of every tenant",
		},
		{
			name:    "another tenant's settings",
			modules: withModule(t, e, "x.rego", func(string) string { return "package mneme.x\n\ns := data.settings.globex\n" }),
			code:    policyadmin.RejectForeignData, contains: "x.rego:3: data.settings.globex reads data of every tenant",
		},
		{
			name:    "the whole data document",
			modules: withModule(t, e, "x.rego", func(string) string { return "package mneme.x\n\nall := json.marshal(data)\n" }),
			code:    policyadmin.RejectForeignData, contains: "data reads the whole data document",
		},
		{
			name:    "data by a variable",
			modules: withModule(t, e, "x.rego", func(string) string { return "package mneme.x\n\nroots contains k if data[k]\n" }),
			code:    policyadmin.RejectForeignData, contains: "reads the whole data document",
		},
		{
			name:    "an import of every tenant's grants",
			modules: withModule(t, e, "x.rego", func(string) string { return "package mneme.x\n\nimport data.grants\n\nn := count(grants)\n" }),
			code:    policyadmin.RejectForeignData, contains: "data.grants reads data of every tenant",
		},
		{
			name: "another tenant by rebinding the principal",
			modules: withModule(t, e, "x.rego", func(string) string {
				return "package mneme.x\n\ngs contains g if {\n\tg := data.grants[input.principal.tenant] with input.principal.tenant as \"globex\"\n}\n"
			}),
			code: policyadmin.RejectForeignData, contains: "replaces the principal's tenant",
		},
		{
			name:    "a package under the grants",
			modules: withModule(t, e, "x.rego", func(string) string { return "package grants.globex\n\nx := 1\n" }),
			code:    policyadmin.RejectForeignData, contains: "lies under another tenant's data",
		},
		{
			name: "syntax error",
			modules: withModule(t, e, "authz.rego", func(s string) string {
				return strings.Replace(s, "default allow := false", "default allow := ", 1)
			}),
			code: policyadmin.RejectParse, contains: "authz.rego:",
		},
		{
			name:    "Rego v0 syntax",
			modules: withModule(t, e, "old.rego", func(string) string { return "package mneme.old\n\np { true }\n" }),
			code:    policyadmin.RejectParse, contains: "old.rego:",
		},
		{
			name: "fails a bundled test",
			modules: withoutTests(withModule(t, e, "roles.rego", func(s string) string {
				return strings.Replace(s, `"types": ["procedural", "semantic"],`, `"types": ["procedural", "semantic", "profile"],`, 1)
			})),
			code: policyadmin.RejectTestFailed, contains: "bundled test",
		},
		{
			name: "fails its own test",
			modules: withModule(t, e, "mine_test.rego", func(string) string {
				return "package mneme.authz_test\n\nimport data.mneme.authz\n\ntest_admins_cannot_read if not authz.allow with input as {\"principal\": admin, \"action\": \"read\", \"resource\": mem({}), \"context\": {\"now\": now}} with data.grants as {}\n"
			}),
			code: policyadmin.RejectTestFailed, contains: "test mneme.authz_test.test_admins_cannot_read",
		},
		{
			name: "fails the decision table only",
			modules: withModule(t, e, "authz.rego", func(s string) string {
				// u5 appears in the table, never in the Rego tests.
				return strings.Replace(s, "\tinput.principal.kind == \"admin\"\n}", "\tinput.principal.kind == \"admin\"\n\tobject.get(input.resource, \"user_id\", \"\") != \"u5\"\n}", 1)
			}),
			code: policyadmin.RejectTestFailed, contains: "bundled decision case",
		},
		{
			name: "strict mode: unused variable",
			modules: withModule(t, e, "authz.rego", func(s string) string {
				return s + "\nunused if {\n\tx := 1\n\ttrue\n}\n"
			}),
			code: policyadmin.RejectCompile, contains: authzLine(t, 3) + " assigned var x unused",
		},
		{
			name:    "missing scope",
			modules: []policyadmin.PolicyModule{{Name: "p.rego", Source: "package mneme.authz\n\ndefault allow := false\n\nreasons := set()\n"}},
			code:    policyadmin.RejectCompile, contains: "must define data.mneme.authz.scope",
		},
		{
			name: "read scope the pushdown cannot translate",
			modules: withModule(t, e, "authz.rego", func(s string) string {
				return strings.Replace(s, "\tinput.resource.tenant == input.principal.tenant\n", "\tlower(input.resource.tenant) == lower(input.principal.tenant)\n", 1)
			}),
			code: policyadmin.RejectCompile, contains: "user u1, admin root, analyst ana (roles analyst), analyst ana (roles analyst_full), analyst ana): lower(input.resource.tenant",
		},
		{
			name: "untranslatable for an agent in a team only",
			modules: withModule(t, e, "authz.rego", func(s string) string {
				return s + "\npermits contains \"team prefix\" if {\n\tinput.principal.team != \"\"\n\tinput.action == \"read\"\n\tstartswith(input.resource.id, \"mem_\")\n}\n"
			}),
			code: policyadmin.RejectCompile, contains: "(for agent support-bot (team support)): startswith(input.resource.id",
		},
		{
			// The table's clock is 2025-06-01; a rule that turned on since
			// is tried at now too.
			name: "untranslatable from a date past the table's",
			modules: withModule(t, e, "authz.rego", func(s string) string {
				return s + "\npermits contains \"after the change\" if {\n\tinput.context.now > \"2025-12-01\"\n\tinput.action == \"read\"\n\tstartswith(input.resource.id, \"mem_\")\n}\n"
			}),
			code: policyadmin.RejectCompile, contains: "startswith(input.resource.id",
		},
		{
			name:    "only tests",
			modules: []policyadmin.PolicyModule{{Name: "p_test.rego", Source: "package p_test\n\ntest_x if true\n"}},
			code:    policyadmin.RejectInvalid, contains: "no policy module",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.CheckPolicy(ctx, "t1", tc.modules)
			var rej *policyadmin.PolicyRejectedError
			if !errors.As(err, &rej) {
				t.Fatalf("err = %v, want a rejection", err)
			}
			if rej.Code != tc.code || !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("rejected %s: %v\nwant %s containing %q", rej.Code, err, tc.code, tc.contains)
			}
		})
	}
}

func TestUsePolicyPerTenant(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{})
	secret := orderM
	secret.Kind = "secret-plan"
	other := admin
	other.Tenant = "globex"
	otherSecret := secret
	otherSecret.Tenant = "globex"
	allowed := func(p memory.Principal, r memory.Resource) bool {
		t.Helper()
		d, err := e.Decide(ctx, p, memory.ActionRead, r, testNow)
		if err != nil {
			t.Fatal(err)
		}
		return d.Allow
	}
	if !allowed(admin, secret) || !allowed(other, otherSecret) {
		t.Fatal("the bundled policy denies an admin")
	}
	if _, ok := e.Loaded("acme"); ok {
		t.Error("Loaded before anything was loaded")
	}
	if err := e.UsePolicy(ctx, "acme", 1, 1, denySecretKind(t, e)); err != nil {
		t.Fatal(err)
	}
	if err := e.UseGrants(ctx, "acme", 3, nil); err != nil {
		t.Fatal(err)
	}
	if allowed(admin, secret) {
		t.Error("revision 1 of acme is not in force")
	}
	if !allowed(other, otherSecret) {
		t.Error("acme's policy changed what globex decides")
	}
	if got, ok := e.Loaded("acme"); !ok || got != (policyadmin.Revisions{Policy: 1, PolicyEpoch: 1, Grants: 3}) {
		t.Errorf("Loaded = %+v, %v", got, ok)
	}
	// An older epoch arriving late changes nothing.
	if err := e.UsePolicy(ctx, "acme", 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	if allowed(admin, secret) {
		t.Error("a stale epoch replaced the newer revision")
	}
	// Rollback to the bundled policy is a newer epoch.
	if err := e.UsePolicy(ctx, "acme", 0, 2, nil); err != nil {
		t.Fatal(err)
	}
	if !allowed(admin, secret) {
		t.Error("the rollback to revision 0 is not in force")
	}
	// A tenant's revision never decides across tenants, whatever it says.
	permissive := withModule(t, e, "authz.rego", func(s string) string {
		return strings.Replace(s, "same_tenant if {\n\tinput.principal.tenant != \"\"\n\tinput.resource.tenant == input.principal.tenant\n}", "same_tenant := true", 1)
	})
	if err := e.UsePolicy(ctx, "acme", 2, 3, permissive); err != nil {
		t.Fatal(err)
	}
	if allowed(admin, otherSecret) {
		t.Error("a tenant's policy allowed a read across tenants")
	}
}

func TestUseGrantsPerTenant(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{})
	globexG := grantG1
	globexG.Tenant = "globex"
	if err := e.UseGrants(ctx, "acme", 1, []memory.Grant{globexG}); err == nil {
		t.Error("UseGrants took another tenant's grant")
	}
	if err := e.UseGrants(ctx, "acme", 1, []memory.Grant{grantG1}); err != nil {
		t.Fatal(err)
	}
	if err := e.UseGrants(ctx, "globex", 1, []memory.Grant{globexG}); err != nil {
		t.Fatal(err)
	}
	read := func(tenant string) bool {
		p, r := support, orderM
		p.Tenant, r.Tenant = tenant, tenant
		d, err := e.Decide(ctx, p, memory.ActionRead, r, testNow)
		if err != nil {
			t.Fatal(err)
		}
		return d.Allow
	}
	if !read("acme") || !read("globex") {
		t.Fatal("grant not in force")
	}
	if err := e.UseGrants(ctx, "acme", 2, nil); err != nil {
		t.Fatal(err)
	}
	if read("acme") {
		t.Error("revoked grant still in force")
	}
	if !read("globex") {
		t.Error("revoking acme's grant changed globex")
	}
	if err := e.UseGrants(ctx, "acme", 1, []memory.Grant{grantG1}); err != nil {
		t.Fatal(err)
	}
	if read("acme") {
		t.Error("an older grant revision replaced a newer one")
	}
}

func TestSimulateExplains(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{})
	secret := orderM
	secret.Kind = "secret-plan"
	sim, err := e.Simulate(ctx, denySecretKind(t, e), policyadmin.DecisionInput{Principal: admin, Action: memory.ActionRead, Resource: secret, Now: testNow}, true)
	if err != nil {
		t.Fatal(err)
	}
	if sim.Allow || len(sim.Reasons) != 1 || sim.Reasons[0] != "secret plans are never read" {
		t.Errorf("simulation %+v", sim)
	}
	joined := strings.Join(sim.Explanation, "\n")
	for _, want := range []string{"holds secret_plan", "fails not data.mneme.authz.secret_plan", "holds denials"} {
		if !strings.Contains(joined, want) {
			t.Errorf("explanation lacks %q:\n%s", want, joined)
		}
	}
	// Nothing was recorded and the live policy did not change.
	d, err := e.Decide(ctx, admin, memory.ActionRead, secret, testNow)
	if err != nil || !d.Allow {
		t.Errorf("live decision %+v, %v", d, err)
	}
}

// TestDecideWhileRevisionsChange decides and computes scopes while grants
// and revisions change underneath; run with -race it checks that the swaps
// are safe, and every answer must come from a complete state.
func TestDecideWhileRevisionsChange(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{})
	secret := denySecretKind(t, e)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := e.Decide(ctx, support, memory.ActionRead, orderM, testNow); err != nil {
					t.Error(err)
					return
				}
				if _, err := e.ReadScope(ctx, support, "u1", testNow); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := range int64(20) {
		if err := e.UseGrants(ctx, "acme", i, []memory.Grant{grantG1}[:i%2]); err != nil {
			t.Fatal(err)
		}
		mods, number := secret, int64(1)
		if i%3 == 0 {
			mods, number = nil, 0
		}
		if err := e.UsePolicy(ctx, "acme", number, i, mods); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	got, ok := e.Loaded("acme")
	if !ok || got.PolicyEpoch != 19 || got.Grants != 19 || got.Policy != 1 {
		t.Errorf("Loaded = %+v, %v", got, ok)
	}
}

// authzLine is the position "authz.rego:N:" of the n-th line after the end of
// the bundled authz.rego, where the tests append their rules.
func authzLine(t *testing.T, n int) string {
	t.Helper()
	src, err := fs.ReadFile(regofiles.FS, "authz.rego")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("authz.rego:%d:", strings.Count(string(src), "\n")+n)
}
