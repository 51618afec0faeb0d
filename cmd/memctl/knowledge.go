package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	mneme "mneme/client"
)

// knowledge runs `memctl knowledge import|list|remove`.
func (c client) knowledge(ctx context.Context, args []string) error {
	switch {
	case args[0] == "list" && len(args) == 1:
		ds, err := c.api.KnowledgeDocuments(ctx)
		return c.print(map[string][]mneme.KnowledgeDocument{"documents": ds}, err)
	case args[0] == "remove" && len(args) == 2:
		n, err := c.api.RemoveKnowledge(ctx, args[1])
		return c.print(map[string]any{"document": args[1], "retired": n}, err)
	case args[0] == "import" && len(args) > 1:
		return c.importKnowledge(ctx, args[1:])
	}
	return errUsage
}

// importKnowledge imports each file as a document named by its file name
// (without its extension), waiting for queued imports to finish.
func (c client) importKnowledge(ctx context.Context, args []string) error {
	var scope, team, format string
	var paths []string
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			paths = append(paths, args[i])
			continue
		}
		if !hasVal {
			if i+1 == len(args) {
				return fmt.Errorf("flag %s needs a value", args[i])
			}
			i++
			val = args[i]
		}
		switch name {
		case "scope":
			scope, team, _ = strings.Cut(val, ":")
		case "format":
			format = val
		default:
			return fmt.Errorf("unknown flag %s: use --scope tenant|team:NAME, --format markdown|html|text", args[i])
		}
	}
	if len(paths) == 0 {
		return errUsage
	}
	results := make([]mneme.KnowledgeImportResult, 0, len(paths))
	for _, p := range paths {
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !utf8.Valid(body) {
			return fmt.Errorf("%s: not UTF-8 text", p)
		}
		f := format
		if f == "" {
			f = formatOf(p)
		}
		res, err := c.api.ImportKnowledge(ctx, mneme.KnowledgeImport{ID: documentID(p), Format: f, Content: string(body), Scope: scope, Team: team})
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if res.Job != nil {
			job, err := c.api.WaitJob(ctx, res.Job.ID, 500*time.Millisecond)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			res.Job = &job
		}
		results = append(results, res)
	}
	return c.print(map[string][]mneme.KnowledgeImportResult{"imports": results}, nil)
}

var notInID = regexp.MustCompile(`[^A-Za-z0-9_.:@-]+`)

// documentID names a file's document: its base name without extension, in
// the letters a document id allows.
func documentID(path string) string {
	base := filepath.Base(path)
	id := notInID.ReplaceAllString(strings.TrimSuffix(base, filepath.Ext(base)), "-")
	if len(id) > 64 {
		id = id[:64]
	}
	return id
}

// formatOf is the format a file's extension implies; the server refuses
// what it does not know.
func formatOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm", ".xhtml":
		return "html"
	case ".txt", ".text":
		return "text"
	case ".md", ".markdown", ".mdown", "":
		return "markdown"
	}
	return strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
}
