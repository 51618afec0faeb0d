package client

import (
	"context"
	"net/http"
	"time"
)

// KnowledgeImport is one knowledge-base document to import as shared
// knowledge (admins).
type KnowledgeImport struct {
	ID      string `json:"id"`
	Format  string `json:"format,omitempty"` // markdown (default), html or text
	Content string `json:"content"`
	Scope   string `json:"scope,omitempty"` // tenant (default) or team
	Team    string `json:"team,omitempty"`
}

// KnowledgeCounts says what an import changed.
type KnowledgeCounts struct {
	Created    int `json:"created"`
	Superseded int `json:"superseded"`
	Retired    int `json:"retired"`
	Unchanged  int `json:"unchanged"`
	Skipped    int `json:"skipped"`
}

// KnowledgeImportResult is an import's counts, or its job when the
// document was large enough to be queued.
type KnowledgeImportResult struct {
	Document string           `json:"document"`
	Sections int              `json:"sections"`
	Counts   *KnowledgeCounts `json:"counts,omitempty"`
	Job      *Job             `json:"job,omitempty"`
}

// KnowledgeDocument is an imported document.
type KnowledgeDocument struct {
	ID         string    `json:"id"`
	Title      string    `json:"title,omitempty"`
	Format     string    `json:"format"`
	Sections   int       `json:"sections"`
	ImportedAt time.Time `json:"imported_at"`
	Scope      string    `json:"scope"`
	ScopeID    string    `json:"scope_id,omitempty"`
}

// ImportKnowledge imports a document: its counts, or its job when queued
// (poll it with Job or WaitJob).
func (c *Client) ImportKnowledge(ctx context.Context, r KnowledgeImport) (KnowledgeImportResult, error) {
	var out KnowledgeImportResult
	_, err := c.send(ctx, call{method: http.MethodPost, path: "/v1/knowledge/import", body: r}, &out)
	return out, err
}

// KnowledgeDocuments lists the tenant's imported documents.
func (c *Client) KnowledgeDocuments(ctx context.Context) ([]KnowledgeDocument, error) {
	var out struct {
		Documents []KnowledgeDocument `json:"documents"`
	}
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/v1/knowledge/documents"}, &out)
	return out.Documents, err
}

// RemoveKnowledge retires every section of a document and returns how many
// it archived.
func (c *Client) RemoveKnowledge(ctx context.Context, id string) (int, error) {
	var out struct {
		Retired int `json:"retired"`
	}
	_, err := c.send(ctx, call{method: http.MethodDelete, path: "/v1/knowledge/documents" + pathOf(id)}, &out)
	return out.Retired, err
}
