package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pkg is one package of the module as `go list` reports it.
type pkg struct {
	path, dir, doc string
	imports        []string
	files          []string
}

func packages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .Imports \",\"}}\t{{join .GoFiles \",\"}}", "mneme/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		p := pkg{path: f[0], dir: f[1], imports: strings.Split(f[2], ","), files: strings.Split(f[3], ",")}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func TestEveryPackageIsDocumented(t *testing.T) {
	for _, p := range packages(t) {
		documented := false
		for _, f := range p.files {
			file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if file.Doc != nil && strings.TrimSpace(file.Doc.Text()) != "" {
				documented = true
			}
		}
		if !documented {
			t.Errorf("package %s has no package comment", p.path)
		}
	}
}

// cypher spots Cypher clauses in Go string literals.
var cypher = regexp.MustCompile(`\b(MATCH|MERGE|DETACH DELETE|UNWIND)\s*[\(\$a-z]|CALL db\.`)

func TestCypherOnlyInGraph(t *testing.T) {
	inGraph := 0
	for _, p := range packages(t) {
		graph := p.path == "mneme/graph" || strings.HasPrefix(p.path, "mneme/graph/")
		for _, f := range p.files {
			for _, lit := range stringLiterals(t, filepath.Join(p.dir, f)) {
				switch {
				case !cypher.MatchString(lit):
				case graph:
					inGraph++
				default:
					t.Errorf("%s/%s holds Cypher outside graph: %.60q", p.path, f, lit)
				}
			}
		}
	}
	// The same scan must find graph's own queries, or it proves nothing.
	if inGraph < 10 {
		t.Errorf("found only %d Cypher literals in graph: the scan is not reading them", inGraph)
	}
}

func TestCypherDetectorWorks(t *testing.T) {
	for _, s := range []string{"MATCH (m:Memory) RETURN m", "CALL db.index.vector.queryNodes('x', 1, $v)", "UNWIND $ids AS id"} {
		if !cypher.MatchString(s) {
			t.Errorf("detector misses %q", s)
		}
	}
	for _, s := range []string{"the memories match", "Merge these records", "memory: call the store"} {
		if cypher.MatchString(s) {
			t.Errorf("detector flags prose %q", s)
		}
	}
}

func TestDependenciesPointOneWay(t *testing.T) {
	forbidden := map[string][]string{
		// The domain sees no transport, no store driver and no concrete parts.
		"mneme/memory":    {"github.com/gin-gonic/gin", "github.com/neo4j/", "github.com/redis/", "mneme/graph", "mneme/policy", "mneme/handlers", "mneme/embedding", "mneme/app", "mneme/policyadmin", "mneme/identity"},
		"mneme/graph":     {"github.com/gin-gonic/gin", "mneme/policy", "mneme/handlers", "mneme/embedding"},
		"mneme/policy":    {"github.com/gin-gonic/gin", "github.com/neo4j/", "mneme/graph", "mneme/handlers"},
		"mneme/embedding": {"github.com/gin-gonic/gin", "github.com/neo4j/", "mneme/graph", "mneme/policy", "mneme/handlers"},
		"mneme/seed":      {"github.com/gin-gonic/gin", "github.com/neo4j/", "mneme/graph", "mneme/handlers"},
		// The guard only detects: no store, no policy, no domain.
		"mneme/guard": {"github.com/", "mneme/"},
		// The leader lock is Redis only; it knows nothing of memories.
		"mneme/leader":  {"github.com/gin-gonic/gin", "github.com/neo4j/", "mneme/graph", "mneme/policy", "mneme/handlers", "mneme/memory"},
		"mneme/extract": {"github.com/gin-gonic/gin", "github.com/neo4j/", "github.com/redis/", "mneme/graph", "mneme/policy", "mneme/handlers", "mneme/app"},
		"mneme/session": {"github.com/gin-gonic/gin", "github.com/neo4j/", "mneme/graph", "mneme/policy", "mneme/handlers", "mneme/embedding"},
		// The write queue knows Redis and the domain's job types, nothing else.
		"mneme/queue": {"github.com/gin-gonic/gin", "github.com/neo4j/", "mneme/graph", "mneme/policy", "mneme/handlers", "mneme/embedding", "mneme/app"},
		// The model endpoints' JSON POST is the standard library only.
		"mneme/internal/httpjson": {"github.com/", "mneme/"},
		// The rerank client is HTTP only.
		"mneme/rerank": {"github.com/gin-gonic/gin", "github.com/neo4j/", "github.com/redis/", "mneme/graph", "mneme/policy", "mneme/handlers"},
		// Policy administration works through the interfaces it declares;
		// graph, policy, journal and policysync implement them.
		"mneme/policyadmin": {"github.com/gin-gonic/gin", "github.com/neo4j/", "github.com/redis/", "mneme/graph", "mneme/policy", "mneme/handlers", "mneme/journal", "mneme/policysync"},
		// Identity resolves keys through the KeyStore it declares.
		"mneme/identity": {"github.com/gin-gonic/gin", "github.com/neo4j/", "mneme/graph", "mneme/handlers"},
		// Handlers call the services; they never reach past them.
		"mneme/handlers": {"github.com/neo4j/", "mneme/graph", "mneme/policy", "mneme/journal", "mneme/policysync"},
		// Redis-backed parts: one job each, nothing of the graph or policy.
		"mneme/journal":    {"github.com/gin-gonic/gin", "github.com/neo4j/", "mneme/graph", "mneme/policy", "mneme/handlers"},
		"mneme/policysync": {"github.com/gin-gonic/gin", "github.com/neo4j/", "mneme/graph", "mneme/policy", "mneme/handlers", "mneme/journal"},
		// The tokenizer is a leaf: recall and the built-in embedder share it.
		"mneme/tokens": {"github.com/", "mneme/"},
	}
	seen := 0
	for _, p := range packages(t) {
		bad, ok := forbidden[p.path]
		if !ok {
			continue
		}
		seen++
		for _, imp := range p.imports {
			for _, b := range bad {
				if within(imp, b) {
					t.Errorf("%s imports %s", p.path, imp)
				}
			}
		}
	}
	if seen != len(forbidden) {
		t.Errorf("checked %d of %d packages: a package moved?", seen, len(forbidden))
	}
}

// within reports whether the import path imp is the package or folder b or
// below it: "mneme/policy" forbids mneme/policy, not mneme/policyadmin;
// "github.com/neo4j/" forbids everything under it.
func within(imp, b string) bool {
	return imp == strings.TrimSuffix(b, "/") || strings.HasPrefix(imp, strings.TrimSuffix(b, "/")+"/")
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		imp, b string
		want   bool
	}{
		{"mneme/policy", "mneme/policy", true},
		{"mneme/policy/sub", "mneme/policy", true},
		{"mneme/policyadmin", "mneme/policy", false},
		{"mneme/policysync", "mneme/policy", false},
		{"github.com/neo4j/neo4j-go-driver/v5/neo4j", "github.com/neo4j/", true},
		{"github.com/gin-gonic/gin/binding", "github.com/gin-gonic/gin", true},
		{"mneme/memory", "mneme/", true},
		{"github.com/redis/go-redis/v9", "github.com/", true},
	} {
		if got := within(c.imp, c.b); got != c.want {
			t.Errorf("within(%q, %q) = %v, want %v", c.imp, c.b, got, c.want)
		}
	}
}

// stringLiterals returns every string literal of a Go file, unquoted.
func stringLiterals(t *testing.T, path string) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(file, func(n ast.Node) bool {
		if _, ok := n.(*ast.ImportSpec); ok {
			return false
		}
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}
