package policy

import (
	"context"
	"io/fs"
	"path"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"

	regofiles "mneme/rego"
)

// minRegoTests is a floor on the number of Rego tests, so that a loader
// change that finds no test cannot pass this test vacuously.
const minRegoTests = 70

// TestRego runs every _test.rego of package rego through OPA's tester, as
// `opa test rego/` does.
func TestRego(t *testing.T) {
	modules := map[string]*ast.Module{}
	err := fs.WalkDir(regofiles.FS, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(name) != ".rego" {
			return err
		}
		src, err := fs.ReadFile(regofiles.FS, name)
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
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ch, err := tester.NewRunner().
		SetModules(modules).
		SetTimeout(10*time.Second).
		RaiseBuiltinErrors(true).
		RunTests(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for r := range ch {
		ran++
		switch {
		case r.Error != nil:
			t.Errorf("%s: %s: error: %v", r.Location, r.Name, r.Error)
		case r.Skip:
			t.Errorf("%s: %s: skipped; do not commit todo_ tests", r.Location, r.Name)
		case r.Fail:
			t.Errorf("%s: %s: fail", r.Location, r.Name)
		}
	}
	t.Logf("%d Rego tests ran", ran)
	if ran < minRegoTests {
		t.Errorf("%d Rego tests ran, want at least %d", ran, minRegoTests)
	}
}
