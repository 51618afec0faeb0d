package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mneme "mneme/client"
	"mneme/internal/apptest"
)

func TestDocumentIDAndFormat(t *testing.T) {
	tests := []struct{ path, id, format string }{
		{"docs/Sales Handbook.md", "Sales-Handbook", "markdown"},
		{"/tmp/returns.html", "returns", "html"},
		{"notes.TXT", "notes", "text"},
		{"README", "README", "markdown"},
		{"slides.pdf", "slides", "pdf"},
		{"a/" + strings.Repeat("x", 80) + ".md", strings.Repeat("x", 64), "markdown"},
	}
	for _, tt := range tests {
		if id, f := documentID(tt.path), formatOf(tt.path); id != tt.id || f != tt.format {
			t.Errorf("%s: id %q, format %q; want %q, %q", tt.path, id, f, tt.id, tt.format)
		}
	}
}

// TestKnowledgeCommands imports a file with memctl, lists it, imports it
// again unchanged, and removes it; an agent's key is refused.
func TestKnowledgeCommands(t *testing.T) {
	f := apptest.Start(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "returns.md")
	text := "# Returns\n\n## Damaged items\n\n1. Ask for a photo of the damage.\n2. Open a replacement order within 24 hours.\n\n## Refund window\n\nRefunds are accepted within 14 days of delivery.\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	memctl := func(who string, args ...string) (string, error) {
		var out, errOut bytes.Buffer
		getenv := func(name string) string {
			switch name {
			case "MNEME_URL":
				return f.URL
			case "MNEME_API_KEY":
				return f.Keys[who]
			}
			return ""
		}
		err := run(t.Context(), args, getenv, &out, &errOut)
		return out.String(), err
	}
	if _, err := memctl("order-bot", "knowledge", "import", path); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("import as an agent: %v, want forbidden", err)
	}
	var imports struct{ Imports []mneme.KnowledgeImportResult }
	out, err := memctl(apptest.Admin, "knowledge", "import", "--scope", "team:orders", path)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if err := json.Unmarshal([]byte(out), &imports); err != nil || len(imports.Imports) != 1 || imports.Imports[0].Counts == nil ||
		*imports.Imports[0].Counts != (mneme.KnowledgeCounts{Created: 2}) {
		t.Fatalf("import printed %s, want 2 created", out)
	}
	out, err = memctl(apptest.Admin, "knowledge", "import", "--scope=team:orders", path)
	if err != nil || !strings.Contains(out, `"unchanged": 2`) {
		t.Errorf("import again: %s %v, want 2 unchanged", out, err)
	}
	out, err = memctl(apptest.Admin, "knowledge", "list")
	var list struct{ Documents []mneme.KnowledgeDocument }
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list.Documents) != 1 ||
		list.Documents[0].ID != "returns" || list.Documents[0].Scope != "team" || list.Documents[0].ScopeID != "orders" {
		t.Fatalf("list: %s %v", out, err)
	}
	out, err = memctl(apptest.Admin, "knowledge", "remove", "returns")
	if err != nil || !strings.Contains(out, `"retired": 2`) {
		t.Errorf("remove: %s %v, want 2 retired", out, err)
	}
}
