package policyadmin

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzValidModules checks the first gate of a policy upload on any module
// names (one per line) and source: what passes has distinct, clean,
// relative .rego names and UTF-8 sources within the size limit; what fails
// is an invalid-policy rejection naming each problem.
func FuzzValidModules(f *testing.F) {
	for _, names := range []string{"authz.rego", "authz.rego\nauthz.rego", "../etc/passwd.rego", "/abs.rego", ".hidden.rego", "a/./b.rego", "a//b.rego", "dir/x.rego\ndir/y.rego", "x.rego.txt", "", "a\x00.rego", "..rego"} {
		f.Add(names, "package mneme.authz\n")
	}
	f.Add("x.rego", "\xff")
	f.Fuzz(func(t *testing.T, names, source string) {
		var modules []PolicyModule
		for _, n := range strings.Split(names, "\n") {
			modules = append(modules, PolicyModule{Name: n, Source: source})
		}
		err := validModules(modules)
		if err != nil {
			var rej *PolicyRejectedError
			if !errors.As(err, &rej) || rej.Code != RejectInvalid || len(rej.Problems) == 0 {
				t.Fatalf("%q: refused with %v, want an invalid-policy rejection with problems", names, err)
			}
			return
		}
		if len(modules) > MaxPolicyModules || len(source) > MaxPolicyModuleBytes || !utf8.ValidString(source) {
			t.Fatalf("accepted %d modules of %d bytes (UTF-8 %v)", len(modules), len(source), utf8.ValidString(source))
		}
		seen := map[string]bool{}
		for _, m := range modules {
			switch {
			case seen[m.Name]:
				t.Fatalf("accepted %q twice", m.Name)
			case path.Ext(m.Name) != ".rego", path.IsAbs(m.Name), path.Clean(m.Name) != m.Name,
				strings.HasPrefix(m.Name, "."), strings.Contains(m.Name, ".."), len(m.Name) > 128:
				t.Fatalf("accepted the name %q", m.Name)
			}
			for _, part := range strings.Split(m.Name, "/") {
				if part == ".." || part == "." || part == "" {
					t.Fatalf("accepted the name %q with the part %q", m.Name, part)
				}
			}
			seen[m.Name] = true
		}
	})
}
