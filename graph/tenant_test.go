package graph

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// crossTenantAllowlist names the only queries that may read without a tenant
// predicate, and why. Keep it this short.
var crossTenantAllowlist = map[string]string{
	// ListGrants(ctx, ""): the policy engine loads every tenant's grants at
	// start-up and on reload. No client input reaches this form.
	"cypherListAllGrants": "policy engine loads all grants at start-up",
	// The janitor sweeps every tenant; this names them and reads nothing else.
	"cypherListTenants": "janitor lists the tenants to sweep",
	// Reconciling the tallies names the tenants that hold memories, and
	// reads nothing else.
	"cypherMemoryTenants":  "tally reconciliation lists the tenants",
	"cypherPendingTenants": "tally reconciliation lists the tenants marked untallied",
	// The one-time mark of tenants whose memories predate tallies, run by
	// EnsureSchema. No client input reaches it.
	"cypherTallyPending": "one-time mark of untallied tenants at start-up",
	// A schema migration run by EnsureSchema: it sets a derived property on
	// every tenant's memories once. No client input reaches it.
	"cypherOldPartitions": "one-time partition backfill at start-up",
	"cypherSetPartitions": "one-time partition backfill at start-up",
	// Entity names move from the entity to the mention that gave them.
	"cypherNamedEntities":   "one-time entity name backfill at start-up",
	"cypherMoveEntityNames": "one-time entity name backfill at start-up",
	// The same for the dedup digests: read the memories that lack them,
	// then set them by element id.
	"cypherMissingFactSignatures": "one-time fact signature backfill at start-up",
	"cypherSetFactSignatures":     "one-time fact signature backfill at start-up",
	// The same for users' folded ids (keystore.EnsureUserFolds).
	"cypherUsersWithoutFold": "one-time user id fold backfill at start-up",
	"cypherSetUserFolds":     "one-time user id fold backfill at start-up",
	// analysis.Census counts nodes carrying labels the graph never uses,
	// in any tenant or none, for tests that prove queries wrote nothing.
	// It reads counts only, and no client input reaches it.
	"cypherStrangers": "census of foreign labels for tests",
	// Labels and property keys belong to the database, not to a tenant.
	"ddlMakeTokens": "makes the names statements use at start-up",
}

var (
	// cypherKeyword marks a string as Cypher worth checking.
	cypherKeyword = regexp.MustCompile(`(?i)\b(MATCH|MERGE|CREATE)\b|\bCALL\s+db\.`)
	// ddlStatement is schema DDL (and its inspection), exempt: it describes
	// every tenant at once.
	ddlStatement = regexp.MustCompile(`(?is)^\s*(?:CYPHER\s+\d+\s+)?(?:(?:CREATE|DROP)\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT|(?:RANGE\s+|TEXT\s+|POINT\s+|LOOKUP\s+|FULLTEXT\s+|VECTOR\s+)?INDEX)\b|SHOW\s|CALL\s+db\.awaitIndex)`)
	// labelledNode finds the start of a node pattern with a label: "(x:Label"
	// or "(:Label".
	labelledNode = regexp.MustCompile("\\(\\s*([A-Za-z_][A-Za-z0-9_]*)?\\s*:\\s*[A-Za-z_`]")
	inlineTenant = regexp.MustCompile(`\btenant\s*:\s*\$tenant\b`)
	indexCall    = regexp.MustCompile(`(?i)\bCALL\s+db\.index\.`)
	nodeTenant   = regexp.MustCompile(`\bnode\.tenant\s*=\s*\$tenant\b`)
	tenantParam  = regexp.MustCompile(`\$tenant\b`)
)

// tenantProblems returns why a query is not tenant-scoped, or nothing. DDL is
// exempt. Otherwise the query must use $tenant; every labelled node pattern
// must carry {tenant: $tenant} or have its variable constrained by
// "x.tenant = $tenant"; and a db.index.* call must filter its yielded node
// by "node.tenant = $tenant".
func tenantProblems(cypher string) []string {
	if ddlStatement.MatchString(cypher) {
		return nil
	}
	var problems []string
	if !tenantParam.MatchString(cypher) {
		problems = append(problems, "never uses $tenant")
	}
	for _, loc := range labelledNode.FindAllStringSubmatchIndex(cypher, -1) {
		start := loc[0]
		end := closingParen(cypher, start)
		pattern := cypher[start:end]
		if inlineTenant.MatchString(pattern) {
			continue
		}
		if loc[2] >= 0 {
			v := cypher[loc[2]:loc[3]]
			where := regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\.tenant\s*=\s*\$tenant\b`)
			if where.MatchString(cypher) {
				continue
			}
		}
		problems = append(problems, fmt.Sprintf("node pattern %s has no tenant predicate", pattern))
	}
	if indexCall.MatchString(cypher) && !nodeTenant.MatchString(cypher) {
		problems = append(problems, "index call without node.tenant = $tenant")
	}
	return problems
}

// closingParen returns the index just past the parenthesis that closes the
// one at start, skipping quoted strings.
func closingParen(s string, start int) int {
	depth := 0
	var quote byte
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// cypherText is one Cypher string found in Go source.
type cypherText struct {
	name string // constant name, or file:line for a literal
	text string
}

// cypherInSource collects every string constant (with + and references to
// other constants folded, those of other packages from qualified, by
// "pkg.Name") and every other string literal that looks like Cypher.
func cypherInSource(fset *token.FileSet, files []*ast.File, qualified map[string]string) []cypherText {
	consts := map[string]ast.Expr{}
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							consts[n.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	var eval func(e ast.Expr, depth int) (string, bool)
	eval = func(e ast.Expr, depth int) (string, bool) {
		if depth > 50 {
			return "", false
		}
		switch x := e.(type) {
		case *ast.BasicLit:
			if x.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		case *ast.Ident:
			if c, ok := consts[x.Name]; ok {
				return eval(c, depth+1)
			}
		case *ast.ParenExpr:
			return eval(x.X, depth+1)
		case *ast.SelectorExpr:
			if pkg, ok := x.X.(*ast.Ident); ok {
				v, ok := qualified[pkg.Name+"."+x.Sel.Name]
				return v, ok
			}
		case *ast.BinaryExpr:
			if x.Op == token.ADD {
				l, ok1 := eval(x.X, depth+1)
				r, ok2 := eval(x.Y, depth+1)
				return l + r, ok1 && ok2
			}
		}
		return "", false
	}
	isCypher := func(s string) bool { return cypherKeyword.MatchString(s) && strings.Contains(s, "(") }

	var out []cypherText
	for name, e := range consts {
		if s, ok := eval(e, 0); ok && isCypher(s) {
			out = append(out, cypherText{name: name, text: s})
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GenDecl); ok && g.Tok == token.CONST {
				return false // checked above, folded
			}
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && isCypher(s) {
					p := fset.Position(lit.Pos())
					out = append(out, cypherText{name: fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line), text: s})
				}
			}
			return true
		})
	}
	slices.SortFunc(out, func(a, b cypherText) int { return strings.Compare(a.name, b.name) })
	return out
}

// packageFiles parses the non-test Go files of dir.
// storeDirs returns the package's folder and those of the stores beside it,
// its sub-packages; storetest is a suite of tests over a store, whose
// inputs include hostile text that looks like Cypher.
func storeDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{"."}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "testdata" && e.Name() != "storetest" {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

func packageFiles(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// TestCypherIsTenantScoped proves that every query of the package and of
// the stores beside it (its sub-packages) filters on tenant, except the
// allowlisted ones.
func TestCypherIsTenantScoped(t *testing.T) {
	texts := statements(t)
	if len(texts) < 20 {
		t.Fatalf("found only %d Cypher texts; is the collector broken?", len(texts))
	}
	seen := map[string]bool{}
	for _, c := range texts {
		t.Run(c.name, func(t *testing.T) {
			seen[c.name] = true
			problems := tenantProblems(c.text)
			if _, ok := crossTenantAllowlist[c.name]; ok {
				if len(problems) == 0 {
					t.Errorf("%s is allowlisted but tenant-scoped; remove it from the allowlist", c.name)
				}
				return
			}
			for _, p := range problems {
				t.Errorf("%s: %s\n%s", c.name, p, c.text)
			}
		})
	}
	for name := range crossTenantAllowlist {
		if !seen[name] {
			t.Errorf("allowlisted query %s no longer exists; remove it from the allowlist", name)
		}
	}
}

func TestTenantProblems(t *testing.T) {
	tests := []struct {
		name   string
		cypher string
		ok     bool
	}{
		{"inline", `MATCH (m:Memory {tenant: $tenant, id: $id}) RETURN m`, true},
		{"where", `MATCH (m:Memory) WHERE m.id = $id AND m.tenant = $tenant RETURN m`, true},
		{"anonymous inline", `MATCH (:Memory {tenant: $tenant, id: $id})-[:SUPERSEDES*0..]-(m:Memory {tenant: $tenant}) RETURN m`, true},
		{"index call filtered", `CALL db.index.fulltext.queryNodes('i', $q) YIELD node WHERE node.tenant = $tenant RETURN node`, true},
		{"unlabelled hops from a scoped node", `MATCH (m:Memory {tenant: $tenant})-[:ABOUT]->(u) RETURN u`, true},
		{"DDL", `CREATE CONSTRAINT x IF NOT EXISTS FOR (n:Memory) REQUIRE (n.tenant, n.id) IS UNIQUE`, true},
		{"DDL index", `CREATE VECTOR INDEX x IF NOT EXISTS FOR (n:Memory) ON (n.embedding)`, true},

		{"no predicate", `MATCH (m:Memory {id: $id}) RETURN m`, false},
		{"no predicate, where", `MATCH (m:Memory) WHERE m.id = $id RETURN m`, false},
		{"second node unscoped", `MATCH (m:Memory {tenant: $tenant})-[:ABOUT]->(u:User) RETURN u`, false},
		{"anonymous unscoped", `MATCH (m:Memory {tenant: $tenant})-[:ABOUT]->(:User {id: $u}) RETURN m`, false},
		{"other variable scoped", `MATCH (m:Memory), (u:User) WHERE m.tenant = $tenant RETURN u`, false},
		{"another parameter", `MATCH (m:Memory {tenant: $tenantx}) RETURN m`, false},
		{"literal tenant", `MATCH (m:Memory {tenant: 't1'}) RETURN m`, false},
		{"index call unfiltered", `CALL db.index.vector.queryNodes('i', 5, $v) YIELD node RETURN node`, false},
		{"index call filtered late", `CALL db.index.vector.queryNodes('i', 5, $v) YIELD node WITH node AS m WHERE m.user_id = $tenant RETURN m`, false},
		{"merge unscoped", `MERGE (u:User {id: $id})`, false},
		{"create unscoped", `CREATE (t:Tombstone {id: $id})`, false},
		{"lowercase", `match (m:Memory) return m`, false},
		{"label expression", "MATCH (m:`Memory`) RETURN m", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems := tenantProblems(tc.cypher)
			if ok := len(problems) == 0; ok != tc.ok {
				t.Errorf("tenantProblems(%q) = %v, want ok=%v", tc.cypher, problems, tc.ok)
			}
		})
	}
}

// TestCypherCollectorRejectsUnscopedSource runs the whole pipeline, parsing
// included, over a package that has an unscoped query in a constant, in a
// folded constant and in a bare literal.
func TestCypherCollectorRejectsUnscopedSource(t *testing.T) {
	const src = `package bad

const good = "MATCH (m:Memory {tenant: $tenant}) RETURN m"
const part = "MATCH (m:Memory) "
const folded = part + "WHERE m.id = $id RETURN m"
const (
	unscoped = ` + "`MATCH (g:Grant) RETURN g`" + `
	msg      = "not cypher: create a memory"
)

func f() string { return "MERGE (u:User {id: $id})" }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "bad.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var rejected []string
	for _, c := range cypherInSource(fset, []*ast.File{f}, nil) {
		if len(tenantProblems(c.text)) > 0 {
			rejected = append(rejected, c.name)
		}
	}
	want := []string{"bad.go:11", "folded", "part", "unscoped"}
	if !slices.Equal(rejected, want) {
		t.Errorf("rejected %v, want %v", rejected, want)
	}
}

// TestPackageComments enforces a package comment on graph, the stores
// beside it and storetest.
func TestPackageComments(t *testing.T) {
	for _, dir := range append(storeDirs(t), "storetest") {
		_, files := packageFiles(t, dir)
		documented := false
		for _, f := range files {
			if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package "+f.Name.Name+" ") {
				documented = true
			}
		}
		if !documented {
			t.Errorf("package in %s has no package comment", dir)
		}
	}
}
