// Package rego holds Mneme's authorization policy as Rego source: the modules
// of package mneme.authz (authz, grants, scope, roles), their _test.rego
// suites, and the decision table in testdata/. They are embedded so that the
// policy engine (package policy) ships them inside the binary; `opa test rego/`
// runs the same files.
package rego

import "embed"

// FS holds every *.rego file of this directory (policies and their tests) and
// testdata/.
//
//go:embed *.rego testdata
var FS embed.FS
