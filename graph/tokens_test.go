package graph

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/internal/testenv"
	"mneme/memory"
)

var (
	// labelIn finds a label in a pattern or predicate: "(m:Memory",
	// "(:Entity", "x:Entity".
	labelIn = regexp.MustCompile("(?:^|[\\s(,])[A-Za-z_]*\\s*:\\s*`?([A-Z][A-Za-z]*)\\b")
	// typeIn finds the relationship types of a pattern: "[r:MENTIONS]",
	// "[:ABOUT|WRITTEN_BY".
	typeIn = regexp.MustCompile(`\[\s*[A-Za-z_]*\s*:\s*([A-Z_|]+)`)
	// propertyIn finds a property read or written: "m.content"; a
	// parameter's field ("$args.tenant") is no property.
	propertyIn = regexp.MustCompile(`([$\w]*)\.([a-z_][a-z0-9_]*)\b`)
	// patternMap finds the map of a labelled node pattern, whose keys are
	// properties: "(u:User {tenant: $tenant, id: $id})".
	patternMap = regexp.MustCompile(`\(\s*[A-Za-z_]*\s*(?::\s*[A-Z][A-Za-z]*\s*)+\{([^}]*)\}`)
	mapKey     = regexp.MustCompile(`([a-z_][a-z0-9_]*)\s*:`)
)

// namesIn returns the labels, relationship types and property keys a
// statement names.
func namesIn(cypher string) (labels, types, props []string) {
	for _, m := range labelIn.FindAllStringSubmatch(cypher, -1) {
		labels = append(labels, m[1])
	}
	for _, m := range typeIn.FindAllStringSubmatch(cypher, -1) {
		types = append(types, strings.Split(m[1], "|")...)
	}
	for _, m := range propertyIn.FindAllStringSubmatch(cypher, -1) {
		if owner := m[1]; owner != "" && !strings.HasPrefix(owner, "$") && owner != "db" && owner != "index" && owner != "fulltext" && owner != "vector" {
			props = append(props, m[2])
		}
	}
	for _, m := range patternMap.FindAllStringSubmatch(cypher, -1) {
		for _, k := range mapKey.FindAllStringSubmatch(m[1], -1) {
			props = append(props, k[1])
		}
	}
	return labels, types, props
}

// statements are the Cypher texts of the package and of the stores beside
// it. The first pass learns each package's constants, which statements of
// the others (graph.TallyUp) fold in on the second.
func statements(t *testing.T) []cypherText {
	t.Helper()
	qualified := map[string]string{}
	for _, dir := range storeDirs(t) {
		fset, files := packageFiles(t, dir)
		for _, c := range cypherInSource(fset, files, nil) {
			qualified[files[0].Name.Name+"."+c.name] = c.text
		}
	}
	var texts []cypherText
	for _, dir := range storeDirs(t) {
		fset, files := packageFiles(t, dir)
		texts = append(texts, cypherInSource(fset, files, qualified)...)
	}
	return texts
}

// TestTokensCoverEveryStatement proves that ensureTokens makes every
// label, relationship type and property key a statement names, so that none
// is first made while users wait (Neo4j then plans everything again).
func TestTokensCoverEveryStatement(t *testing.T) {
	texts := statements(t)
	if len(texts) < 20 {
		t.Fatalf("found only %d Cypher texts; is the collector broken?", len(texts))
	}
	missing := map[string][]string{}
	for _, c := range texts {
		labels, types, props := namesIn(c.text)
		for _, l := range labels {
			if !slices.Contains(tokenLabels, l) {
				missing["label "+l] = append(missing["label "+l], c.name)
			}
		}
		for _, ty := range types {
			if !slices.Contains(tokenTypes, ty) {
				missing["type "+ty] = append(missing["type "+ty], c.name)
			}
		}
		for _, p := range props {
			if !slices.Contains(tokenProperties, p) {
				missing["property "+p] = append(missing["property "+p], c.name)
			}
		}
	}
	for name, in := range missing {
		t.Errorf("%s (used by %s) is not made by ensureTokens", name, strings.Join(in, ", "))
	}
}

// namesIn reads names the way the statements write them.
func TestNamesIn(t *testing.T) {
	labels, types, props := namesIn("MATCH (m:Memory {tenant: $tenant, id: $id})-[r:MENTIONS|ABOUT]->(e:Entity) " +
		"WHERE x:Tombstone AND m.status = $args.status SET m.access_count = 1 RETURN m {.*, hash: null}")
	if !slices.Equal(labels, []string{"Memory", "Entity", "Tombstone"}) || !slices.Equal(types, []string{"MENTIONS", "ABOUT"}) ||
		!slices.Equal(props, []string{"status", "access_count", "tenant", "id"}) {
		t.Errorf("labels %q, types %q, properties %q", labels, types, props)
	}
}

// The names are made on a real Neo4j: a statement naming them no longer
// draws Neo4j's warning about an unknown label, type or property key, which
// it gives before. Making them twice changes nothing.
func TestMakeTokens(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	suffix := strings.ReplaceAll(memory.NewID("t"), "-", "_")
	label, typ, prop := "Tok"+suffix, "TOK_"+strings.ToUpper(suffix), "tok_"+suffix
	probe := "EXPLAIN MATCH (n:" + label + ")-[:" + typ + "]->() WHERE n." + prop + " = 1 RETURN n"
	unknown := func() []string {
		t.Helper()
		res, err := neo4j.ExecuteQuery(ctx, testenv.Neo4j(t), probe, nil, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range res.Summary.Notifications() {
			if strings.Contains(n.Code(), "Unknown") {
				out = append(out, n.Code())
			}
		}
		slices.Sort(out)
		return out
	}
	want := []string{"Neo.ClientNotification.Statement.UnknownLabelWarning", "Neo.ClientNotification.Statement.UnknownPropertyKeyWarning",
		"Neo.ClientNotification.Statement.UnknownRelationshipTypeWarning"}
	if got := unknown(); !slices.Equal(got, want) {
		t.Fatalf("before: warnings %q, want %q", got, want)
	}
	for range 2 {
		if err := s.makeTokens(ctx, []string{label}, []string{typ}, []string{prop}); err != nil {
			t.Fatal(err)
		}
	}
	if got := unknown(); len(got) != 0 {
		t.Errorf("after: warnings %q, want none", got)
	}
	if err := s.ensureTokens(ctx); err != nil {
		t.Fatal(err)
	}
}
