package graph

import (
	"strings"
	"testing"
)

// EnsureSchema skips a statement whose index or constraint exists by name,
// so every statement must name one, and no two the same.
func TestSchemaNames(t *testing.T) {
	seen := map[string]bool{}
	for _, ddl := range append(schema[:len(schema):len(schema)], vectorPartitioned.create, vectorWhole.create) {
		name := ddlName(ddl)
		if name == "" || strings.ContainsAny(name, "():") || seen[name] {
			t.Errorf("ddlName(%q) = %q: missing, not a name or seen before", ddl, name)
		}
		seen[name] = true
	}
}
