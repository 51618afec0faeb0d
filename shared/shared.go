// Package shared writes the knowledge a tenant shares — its rules, a team's,
// an agent's own procedures, sections of imported documents — through the
// memory write pipeline, so that policy, the guard, dedup and supersession
// by key run on it as on any write. Recall reads it beside each user's
// memories (memory.Service.Recall).
package shared

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"mneme/memory"
)

// Writer is the write pipeline: memory.Service implements it.
type Writer interface {
	Write(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error)
}

// Draft is one piece of shared knowledge to write.
type Draft struct {
	// Scope is where it is shared: the tenant, a team or an agent.
	Scope memory.ScopeRef `json:"scope"`
	// Key names its slot in the scope: a draft with the key of the active
	// memory of its scope supersedes it ("approval_threshold").
	Key     string `json:"key,omitempty"`
	Type    string `json:"type"` // semantic (a rule) or procedural (a procedure)
	Kind    string `json:"kind,omitempty"`
	Content string `json:"content"`
	// Sensitivity defaults to internal.
	Sensitivity string   `json:"sensitivity,omitempty"`
	Importance  *float64 `json:"importance,omitempty"`
	// ValidTo ends a temporary rule.
	ValidTo *time.Time `json:"valid_to,omitempty"`
	// Triggers name the kinds of task or problem the knowledge is for, in
	// any language ("damaged item", "破损"): a question that names one
	// recalls it, through the graph as an entity the question names.
	Triggers []string `json:"triggers,omitempty"`
	// Document, when set, is the document the draft comes from (an
	// imported knowledge base): recorded as its source, kb:<document>.
	Document string `json:"document,omitempty"`
	// IdempotencyKey lets a client retry the write safely.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// Entity kinds the drafts' metadata becomes.
const (
	EntityTrigger  = "trigger"
	EntityDocument = "document"
)

// SourcePrefix starts the source of a memory imported from a document.
const SourcePrefix = "kb:"

// Service writes shared knowledge.
type Service struct {
	w Writer
}

// New returns a Service that writes through w.
func New(w Writer) (*Service, error) {
	if w == nil {
		return nil, errors.New("shared: a writer is required")
	}
	return &Service{w: w}, nil
}

// Write stores drafts as p, in one write: all of them or none. Policy
// decides who may write which scope (rego/authz.rego): admins the tenant's
// and the teams' knowledge, an agent its own procedures, end users none.
// The results are in the order of drafts.
func (s *Service) Write(ctx context.Context, p memory.Principal, drafts []Draft) ([]memory.WriteResult, error) {
	in := make([]memory.NewMemory, len(drafts))
	for i, d := range drafts {
		n, err := NewMemory(d)
		if err != nil {
			return nil, fmt.Errorf("drafts[%d]: %w", i, err)
		}
		in[i] = n
	}
	return s.w.Write(ctx, p, in)
}

// NewMemory is the memory a draft asks the write pipeline for.
func NewMemory(d Draft) (memory.NewMemory, error) {
	if d.Scope.Kind == "" || d.Scope.Kind == memory.ScopeUser {
		return memory.NewMemory{}, memory.Invalid("scope", "shared knowledge needs the scope tenant, team or agent")
	}
	scope := d.Scope
	n := memory.NewMemory{
		Scope: &scope, Type: d.Type, Kind: d.Kind, Key: d.Key, Content: d.Content, Sensitivity: d.Sensitivity,
		Importance: d.Importance, ValidTo: d.ValidTo, IdempotencyKey: d.IdempotencyKey,
	}
	if d.Document != "" {
		n.Source = SourcePrefix + d.Document
		n.Entities = append(n.Entities, memory.Entity{ID: "document:" + d.Document, Kind: EntityDocument, Name: d.Document})
	}
	for _, t := range d.Triggers {
		t = strings.TrimSpace(t)
		if t == "" {
			return memory.NewMemory{}, memory.Invalid("triggers", "each trigger names a task: not blank")
		}
		n.Entities = append(n.Entities, memory.Entity{ID: "trigger:" + strings.ToLower(t), Kind: EntityTrigger, Name: t})
	}
	return n, nil
}
