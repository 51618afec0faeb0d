package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mneme/memory"
	"mneme/workingmemory"
)

// Tool names.
const (
	ToolRemember = "remember"
	ToolRecall   = "recall"
	ToolIngest   = "ingest"
	ToolForget   = "forget"
	ToolList     = "list"
	ToolHistory  = "history"
	ToolConfirm  = "confirm"
)

// NewMemory is one memory for remember. The author is always the caller.
type NewMemory struct {
	UserID  string `json:"user_id,omitempty" jsonschema:"the user the memory is about; every memory but shared knowledge (scope) has one"`
	Type    string `json:"type" jsonschema:"episodic (what happened), semantic (facts and rules), procedural (how to do things) or profile (stable traits and preferences)"`
	Content string `json:"content" jsonschema:"the memory itself, one self-contained statement"`
	Kind    string `json:"kind,omitempty" jsonschema:"a refinement of the type, such as preference, order_status or budget; sharing grants may name it"`
	Key     string `json:"key,omitempty" jsonschema:"the slot the fact fills, such as budget: a new memory with the same user and key supersedes the old one and keeps it in the history"`
	// AgentID, when given, must be the caller's own id: memories are
	// written as the caller, and naming anyone else is refused.
	AgentID        string   `json:"agent_id,omitempty" jsonschema:"the author; leave it out (it is always the caller, and naming anyone else is refused)"`
	SessionID      string   `json:"session_id,omitempty" jsonschema:"the conversation the memory came from"`
	Sensitivity    string   `json:"sensitivity,omitempty" jsonschema:"public, internal (the default), confidential or restricted"`
	Importance     *float64 `json:"importance,omitempty" jsonschema:"0 to 1, default 0.5"`
	Confidence     *float64 `json:"confidence,omitempty" jsonschema:"0 to 1, default 1"`
	Source         string   `json:"source,omitempty" jsonschema:"where it came from; inferred stores it as a candidate until the user confirms it"`
	IdempotencyKey string   `json:"idempotency_key,omitempty" jsonschema:"a key of your own that makes a retried write store the memory once"`
	// ObservedAt and Scope are as in REST, and refused as there: so that
	// one request answers the same through either door.
	ObservedAt *time.Time       `json:"observed_at,omitempty" jsonschema:"when the fact was observed (RFC 3339), if earlier than now; only admins may backdate further than 5 minutes"`
	Scope      *memory.ScopeRef `json:"scope,omitempty" jsonschema:"shared knowledge about no user: kind tenant, team (with id) or agent (with id), as policy allows; leave it out for a memory about user_id"`
}

type rememberIn struct {
	Memories []NewMemory `json:"memories" jsonschema:"one or more memories, stored in one transaction"`
}

// Written is what became of one memory of a remember call.
type Written struct {
	// Outcome is created, reinforced (a near-duplicate strengthened the
	// memory it repeats) or skipped (chit-chat).
	Outcome  string         `json:"outcome"`
	Reason   string         `json:"reason,omitempty"`
	ID       string         `json:"id,omitempty"`
	Status   string         `json:"status,omitempty"`
	Redacted []string       `json:"redacted,omitempty"`
	Memory   *memory.Memory `json:"memory,omitempty"`
}

// RememberOut answers remember, one result per memory sent, in order.
type RememberOut struct {
	Results []Written `json:"results"`
}

type recallIn struct {
	UserID    string   `json:"user_id" jsonschema:"the user to recall memories about"`
	Query     string   `json:"query" jsonschema:"what you need to know, in the user's words or yours"`
	SessionID string   `json:"session_id,omitempty" jsonschema:"the open session, whose recent turns and memories join the answer"`
	Types     []string `json:"types,omitempty" jsonschema:"only these memory types"`
	Kinds     []string `json:"kinds,omitempty" jsonschema:"only these kinds"`
	K         int      `json:"k,omitempty" jsonschema:"at most this many memories, up to 50 (0 or left out: the default, 5)"`
	Budget    int      `json:"budget,omitempty" jsonschema:"at most this many characters of memory content, up to 100000 (0 or left out: no cap beyond k)"`
}

// Recalled is one recalled memory with its id, for follow-up calls.
type Recalled struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Kind      string    `json:"kind,omitempty"`
	Key       string    `json:"key,omitempty"`
	Content   string    `json:"content"`
	Status    string    `json:"status"`
	AgentID   string    `json:"agent_id"`
	UpdatedAt time.Time `json:"updated_at"`
	Score     float64   `json:"score"`
}

// RecallOut answers recall: the block to put into a prompt, and the
// memories it was made of.
type RecallOut struct {
	Context   string     `json:"context"`
	Memories  []Recalled `json:"memories"`
	Truncated bool       `json:"truncated"`
}

type ingestIn struct {
	UserID    string        `json:"user_id" jsonschema:"the user the conversation was with"`
	SessionID string        `json:"session_id,omitempty" jsonschema:"the conversation's id"`
	Turns     []memory.Turn `json:"turns" jsonschema:"the turns, oldest first; only what the user says becomes facts about them"`
}

type idIn struct {
	MemoryID string `json:"memory_id" jsonschema:"the memory's id, as recall, list or remember gave it"`
}

type listIn struct {
	UserID string `json:"user_id,omitempty" jsonschema:"only memories about this user"`
	Type   string `json:"type,omitempty" jsonschema:"only this memory type"`
	Kind   string `json:"kind,omitempty" jsonschema:"only this kind"`
	Status string `json:"status,omitempty" jsonschema:"only this status: active, candidate, superseded, archived or expired"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many, 1 to 500 (left out: 50)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page"`
}

// HistoryOut is a memory's chain of versions, newest first.
type HistoryOut struct {
	Memories []memory.Memory `json:"memories"`
}

// register adds every tool to s.
func (t *tools) register(s *sdk.Server) error {
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	destructive := true
	errs := []error{
		addTool(t, s, &sdk.Tool{
			Name: ToolRemember,
			Description: "Store one or more memories about a user, in one transaction. " +
				"A near-duplicate reinforces the memory it repeats; chit-chat is skipped; a memory with the key of an " +
				"existing one supersedes it. Secrets and ID numbers are refused, bank cards and phone numbers masked.",
		}, handle(t, ToolRemember, t.remember), map[string]rule{
			"memories": items(1, memory.MaxBatch), "memories.type": oneOf(memory.Types),
			"memories.sensitivity": oneOf(memory.Sensitivities),
			"memories.importance":  between(0, 1), "memories.confidence": between(0, 1),
		}),
		addTool(t, s, &sdk.Tool{
			Name: ToolRecall,
			Description: "Recall what is known about a user that matters for a question: the memories you may read, " +
				"ranked by relevance, recency and importance. Put the returned context block into your prompt; " +
				"the memories carry ids for forget, history and confirm.",
			Annotations: readOnly,
		}, handle(t, ToolRecall, t.recall), map[string]rule{
			"types": oneOf(memory.Types), "k": between(0, memory.MaxRecallK), "budget": between(0, memory.MaxRecallBudget),
		}),
		addTool(t, s, &sdk.Tool{
			Name: ToolIngest,
			Description: "Learn from conversation turns: preferences, budgets, orders, dates, companies and places the " +
				"user states become typed memories, written as you; greetings store nothing.",
		}, handle(t, ToolIngest, t.ingest), map[string]rule{
			"turns": items(1, workingmemory.MaxIngestTurns), "turns.role": oneOf(memory.Roles),
		}),
		addTool(t, s, &sdk.Tool{
			Name:        ToolForget,
			Description: "Erase a memory with every version of it you may delete; a content-free tombstone stays. Returns a receipt.",
			Annotations: &sdk.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: true},
		}, handle(t, ToolForget, t.forget), nil),
		addTool(t, s, &sdk.Tool{
			Name:        ToolList,
			Description: "List the memories you may read, newest first, a page at a time.",
			Annotations: readOnly,
		}, handle(t, ToolList, t.list), map[string]rule{
			"type": oneOf(memory.Types), "status": oneOf(memory.Statuses), "limit": between(1, memory.MaxListSize),
		}),
		addTool(t, s, &sdk.Tool{
			Name:        ToolHistory,
			Description: "A memory's versions, newest first: what it said before each change that superseded it.",
			Annotations: readOnly,
		}, handle(t, ToolHistory, t.history), nil),
		addTool(t, s, &sdk.Tool{
			Name: ToolConfirm,
			Description: "Confirm a candidate memory (an agent's inference, or a preference seen once) so that it becomes " +
				"active. Only the user the memory is about, and admins, may.",
			Annotations: &sdk.ToolAnnotations{IdempotentHint: true},
		}, handle(t, ToolConfirm, t.confirm), nil),
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// handle adapts a service call to a typed tool handler: the caller comes
// from the authenticated request, a domain error becomes a ToolError.
func handle[In, Out any](t *tools, name string, call func(ctx context.Context, p memory.Principal, in In) (Out, error)) sdk.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
		var zero Out
		p, err := t.caller(ctx)
		if err != nil {
			return nil, zero, err
		}
		out, err := call(ctx, p, in)
		if err != nil {
			return nil, zero, t.fail(ctx, name, err)
		}
		return nil, out, nil
	}
}

// addTool adds a typed tool whose input schema is inferred from In and
// narrowed by rules (by dotted paths into the schema; arrays are walked
// through), and the check of its arguments, which holds them to that
// schema: what tools/list shows a caller is what a call is held to.
func addTool[In, Out any](t *tools, s *sdk.Server, tool *sdk.Tool, h sdk.ToolHandlerFor[In, Out], rules map[string]rule) error {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return fmt.Errorf("mcp: tool %s: %w", tool.Name, err)
	}
	for path, narrow := range rules {
		at := schema
		for _, name := range strings.Split(path, ".") {
			if at.Items != nil {
				at = at.Items
			}
			if at = at.Properties[name]; at == nil {
				return fmt.Errorf("mcp: tool %s: no property %s", tool.Name, path)
			}
		}
		narrow(at)
	}
	tool.InputSchema = schema
	t.checks[tool.Name] = argumentsOf[In](schema)
	sdk.AddTool(s, tool, h)
	return nil
}

// A rule narrows the schema of one property to what the service accepts.
type rule func(*jsonschema.Schema)

// oneOf allows only values, or, of an array, only values in it.
func oneOf(values []string) rule {
	return func(s *jsonschema.Schema) {
		if s.Items != nil {
			s = s.Items
		}
		s.Enum = make([]any, len(values))
		for i, v := range values {
			s.Enum[i] = v
		}
	}
}

// between allows only numbers from lo to hi.
func between(lo, hi float64) rule {
	return func(s *jsonschema.Schema) { s.Minimum, s.Maximum = &lo, &hi }
}

// items makes a property an array (not null, which a Go slice would also
// allow) of lo to hi items.
func items(lo, hi int) rule {
	return func(s *jsonschema.Schema) {
		s.Type, s.Types = "array", nil
		s.MinItems, s.MaxItems = &lo, &hi
	}
}

func (t *tools) remember(ctx context.Context, p memory.Principal, in rememberIn) (RememberOut, error) {
	batch := make([]memory.NewMemory, len(in.Memories))
	for i, n := range in.Memories {
		batch[i] = memory.NewMemory{
			UserID: n.UserID, AgentID: n.AgentID, SessionID: n.SessionID, Type: n.Type, Kind: n.Kind, Key: n.Key,
			Content: n.Content, Sensitivity: n.Sensitivity, Importance: n.Importance, Confidence: n.Confidence,
			Source: n.Source, IdempotencyKey: n.IdempotencyKey, ObservedAt: n.ObservedAt, Scope: n.Scope,
		}
	}
	results, err := t.svc.Write(ctx, p, batch)
	var inv *memory.InvalidError
	if len(batch) == 1 && errors.As(err, &inv) && inv.Field != "" && !strings.HasPrefix(inv.Field, "memories[") {
		// The service names the item of a batch of more than one; remember
		// always sends a list, so its one memory is named as well.
		err = memory.Invalid("memories[0]."+inv.Field, inv.Reason)
	}
	t.observe.Wrote(p.Tenant, results, err)
	if err != nil {
		return RememberOut{}, err
	}
	out := RememberOut{Results: make([]Written, len(results))}
	for i, r := range results {
		out.Results[i] = Written{Outcome: r.Outcome, Reason: r.Reason, ID: r.ID, Status: r.Status, Redacted: r.Redacted, Memory: r.Memory}
	}
	return out, nil
}

func (t *tools) recall(ctx context.Context, p memory.Principal, in recallIn) (RecallOut, error) {
	res, err := t.svc.Recall(ctx, p, memory.RecallRequest{
		UserID: in.UserID, Query: in.Query, SessionID: in.SessionID, Types: in.Types, Kinds: in.Kinds, K: in.K, Budget: in.Budget,
	})
	if err != nil {
		return RecallOut{}, err
	}
	t.observe.Recalled(p.Tenant, res)
	out := RecallOut{Context: res.Context, Truncated: res.Truncated, Memories: make([]Recalled, len(res.Memories))}
	for i, r := range res.Memories {
		m := r.Memory
		out.Memories[i] = Recalled{
			ID: m.ID, Type: m.Type, Kind: m.Kind, Key: m.Key, Content: m.Content, Status: m.Status,
			AgentID: m.AgentID, UpdatedAt: m.UpdatedAt, Score: r.Score,
		}
	}
	return out, nil
}

func (t *tools) ingest(ctx context.Context, p memory.Principal, in ingestIn) (memory.IngestResult, error) {
	res, err := t.ingester.Ingest(ctx, p, memory.IngestRequest{UserID: in.UserID, SessionID: in.SessionID, Turns: in.Turns}, "")
	if err != nil {
		return memory.IngestResult{}, err
	}
	t.observe.Conversation(p.Tenant)
	return res, nil
}

func (t *tools) forget(ctx context.Context, p memory.Principal, in idIn) (memory.Receipt, error) {
	// An analyst never deletes and learns it first, as over REST, not
	// whether the memory exists or is out of their sight.
	if p.Kind == memory.KindAnalyst {
		return memory.Receipt{}, memory.ErrForbidden
	}
	r, err := t.svc.Delete(ctx, p, in.MemoryID, "forgotten through MCP")
	if err != nil {
		return memory.Receipt{}, err
	}
	t.observe.Deleted(r)
	return r, nil
}

func (t *tools) list(ctx context.Context, p memory.Principal, in listIn) (memory.Page, error) {
	return t.svc.List(ctx, p, memory.ListRequest{
		UserID: in.UserID, Type: in.Type, Kind: in.Kind, Status: in.Status, Limit: in.Limit, Cursor: in.Cursor,
	})
}

func (t *tools) history(ctx context.Context, p memory.Principal, in idIn) (HistoryOut, error) {
	ms, err := t.svc.History(ctx, p, in.MemoryID)
	return HistoryOut{Memories: ms}, err
}

func (t *tools) confirm(ctx context.Context, p memory.Principal, in idIn) (memory.Memory, error) {
	if p.Kind == memory.KindAnalyst { // as forget
		return memory.Memory{}, memory.ErrForbidden
	}
	return t.svc.Confirm(ctx, p, in.MemoryID)
}
