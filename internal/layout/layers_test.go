package layout

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// layers ranks every package of the module. A package may import only
// packages of a lower rank: calls point down from the HTTP faces to the
// services, the domain and the leaves. Adapters (graph, policy, the
// Redis-backed parts, embedders) rank above the services because they
// implement the interfaces the services declare and so import their types.
// A new package must be given a rank here, which is the moment to decide
// where it belongs.
var layers = map[string]int{
	// Leaves: no Mneme imports.
	"mneme/guard":             0,
	"mneme/tokens":            0,
	"mneme/facts":             0,
	"mneme/rego":              0,
	"mneme/internal/httpjson": 0,
	"mneme/internal/testenv":  0,
	"mneme/internal/layout":   0,
	"mneme/internal/pushdown": 0,
	"mneme/scripts":           0,
	"mneme/leader":            0,
	"mneme/internal/testidp":  0,
	"mneme/knowledge/sight":   0,
	"mneme/client":            0,
	"mneme/deploy":            0,
	"mneme/relevance":         0,
	// The period a statement or a question names.
	"mneme/period":         0,
	"mneme/partitions":     0,
	"mneme/embedding/usem": 0,
	// Watches the stores for a stall; takes their pings as functions.
	"mneme/stall": 0,
	// The start of a write, which a user's erase fences off.
	"mneme/writefence": 0,
	// Recall's settings, below the service that reads them.
	"mneme/recallconfig": 1,
	// What a question about the user asks for; reads its period.
	"mneme/intent": 1,
	// Documents split into sections, of a page only what its reader sees.
	"mneme/knowledge": 1,
	// The domain.
	"mneme/memory": 2,
	// Per-model settings, chosen with the facts rules of dedup.
	"mneme/calibration": 2,
	// Services beside memory.
	"mneme/policyadmin": 3,
	"mneme/identity":    3,
	"mneme/janitor":     3,
	"mneme/reembed":     3,
	"mneme/export":      3,
	"mneme/quota":       3,
	"mneme/census":      3,
	"mneme/usernames":   3,
	// The rule of user ids: exact, and no two that differ only by case.
	"mneme/userids": 3,
	// Admins read the recall log.
	"mneme/recalllog": 3,
	// Analysts' graph queries under the compiled policy filter.
	"mneme/graphquery": 3,
	// Knowledge-base documents imported as shared knowledge.
	"mneme/documents": 3,
	// Working memory: open sessions, closed into memories.
	"mneme/workingmemory": 3,
	// Who a session id belongs to, open or closed.
	"mneme/sessionowners": 3,

	// The Neo4j stores' shared plumbing: transactions, error translation
	// into the domain's errors, record readers. No Cypher of its own.
	"mneme/graph/neo": 3,

	// Adapters: stores, engines, clients, Redis-backed parts.
	"mneme/graph":      4,
	"mneme/policy":     4,
	"mneme/embedding":  4,
	"mneme/extract":    4,
	"mneme/rerank":     4,
	"mneme/session":    4,
	"mneme/queue":      4,
	"mneme/journal":    4,
	"mneme/policysync": 4,
	"mneme/ratelimit":  4,
	"mneme/signouts":   4,
	"mneme/seed":       4,
	// Counters and decorators over the services' interfaces.
	"mneme/metrics": 4,
	"mneme/tracing": 4,

	// Stores beside graph, on its runner: identity records, the owners of
	// session ids.
	"mneme/graph/keystore": 4,
	"mneme/graph/sessions": 4,

	// Stores beside graph that put its scope predicate or its tally
	// fragments in their queries: the census, the sweeps, documents.
	"mneme/graph/tally":       5,
	"mneme/graph/upkeep":      5,
	"mneme/graph/documents":   5,
	"mneme/graph/exportstore": 5,
	// Stores beside graph that take its policy state's lock: policy
	// revisions and settings.
	"mneme/graph/policystore": 5,
	// The graph store on the test Neo4j, for the tests of the stores beside
	// graph and what reads through them.
	"mneme/graph/graphtest": 5,

	// Test suites over an adapter's interface.
	"mneme/graph/storetest": 5,
	"mneme/seed/eval":       5,
	// Recall over long conversations from a registry package.
	"mneme/seed/longconv": 5,
	// The analysts' query store: graph's scope predicate, its own Cypher.
	"mneme/graph/analysis": 5,
	// The HTTP faces.
	"mneme/handlers": 6,
	"mneme/mcp":      6,
	"mneme/web":      6,
	// The composition root and what stands on it.
	"mneme/app":                7,
	"mneme/internal/apptest":   8,
	"mneme/internal/pyclient":  8,
	"mneme/examples/twoagents": 8,
	"mneme/cmd/memoryd":        8,
	"mneme/cmd/memctl":         8,
	"mneme/cmd/memeval":        8,
	"mneme/bench":              8,
	"mneme/bench/ingest":       8,
	"mneme/bench/chaos":        8,
}

func TestImportsRunDownTheLayers(t *testing.T) {
	for _, p := range packages(t) {
		rank, ok := layers[p.path]
		if !ok {
			t.Errorf("package %s has no layer: give it one in layers", p.path)
			continue
		}
		for _, imp := range mnemeImports(p) {
			r, ok := layers[imp]
			if ok && r >= rank {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must run down the layers", p.path, rank, imp, r)
			}
		}
	}
}

// composers build or drive the whole service, so they may import as many
// packages as there are parts.
var composers = map[string]bool{
	"mneme/app": true, "mneme/internal/apptest": true,
	"mneme/cmd/memoryd": true, "mneme/cmd/memctl": true, "mneme/cmd/memeval": true,
}

func TestFewMnemeImports(t *testing.T) {
	const most = 5
	for _, p := range packages(t) {
		if composers[p.path] {
			continue
		}
		if imps := mnemeImports(p); len(imps) > most {
			t.Errorf("%s imports %d Mneme packages (at most %d outside the composition root): %s", p.path, len(imps), most, strings.Join(imps, ", "))
		}
	}
}

func TestNoPackageTooLarge(t *testing.T) {
	// Past about 3,000 lines of code (blank and comment lines not counted)
	// a package holds more than one job.
	const most = 3000
	for _, p := range packages(t) {
		n := 0
		for _, f := range p.files {
			n += codeLines(t, filepath.Join(p.dir, f))
		}
		if n > most {
			t.Errorf("%s has %d lines of non-test code (at most %d)", p.path, n, most)
		}
	}
}

// Third-party parts each belong to one package.
var owners = map[string][]string{
	"github.com/gin-gonic/gin":            {"mneme/handlers"},
	"github.com/open-policy-agent/opa":    {"mneme/policy"},
	"github.com/neo4j/neo4j-go-driver":    {"mneme/graph", "mneme/graph/neo", "mneme/graph/keystore", "mneme/graph/sessions", "mneme/graph/upkeep", "mneme/graph/analysis", "mneme/graph/tally", "mneme/graph/documents", "mneme/graph/policystore", "mneme/graph/exportstore", "mneme/internal/testenv"},
	"github.com/modelcontextprotocol":     {"mneme/mcp"},
	"github.com/prometheus/client_golang": {"mneme/metrics", "mneme/handlers", "mneme/app"},
}

func TestThirdPartyPartsStayWithTheirOwner(t *testing.T) {
	for _, p := range packages(t) {
		for _, imp := range p.imports {
			for prefix, allowed := range owners {
				if strings.HasPrefix(imp, prefix) && !contains(allowed, p.path) {
					t.Errorf("%s imports %s, which only %s may use", p.path, imp, strings.Join(allowed, ", "))
				}
			}
		}
	}
}

func TestRegoOnlyInRegoFolder(t *testing.T) {
	out := gitFiles(t, "*.rego")
	if len(out) < 2 {
		t.Fatal("no .rego file found: the scan is not reading the tree")
	}
	for _, f := range out {
		if !strings.HasPrefix(f, "rego/") {
			t.Errorf("%s: Rego lives in rego/ only, where package policy embeds it", f)
		}
	}
}

// gitFiles lists the files git tracks that match pattern, from the top of
// the checkout.
func gitFiles(t *testing.T, pattern string) []string {
	t.Helper()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	cmd := exec.Command("git", "ls-files", "--", ":(glob)**/"+pattern)
	cmd.Dir = strings.TrimSpace(string(top))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	return strings.Fields(string(out))
}

func mnemeImports(p pkg) []string {
	var out []string
	for _, imp := range p.imports {
		if imp == "mneme" || strings.HasPrefix(imp, "mneme/") {
			out = append(out, imp)
		}
	}
	sort.Strings(out)
	return out
}

// codeLines counts the lines of a Go file that hold code: neither blank nor
// only a // comment.
func codeLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "//") {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
