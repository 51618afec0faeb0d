package analysis

import (
	"context"
	"maps"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph"
	"mneme/graph/neo"
	"mneme/graphquery"
	"mneme/memory"
)

var _ graphquery.Store = (*Store)(nil)

// Predicate turns a scope into a Cypher predicate over the memory bound to
// m, with its parameters.
type Predicate func(memory.Scope) (string, map[string]any)

// Store runs analysts' queries in read transactions. It is safe for
// concurrent use.
type Store struct {
	tx   *neo.Runner
	pred Predicate
}

// Options configures a Store.
type Options struct {
	// Predicate narrows every read (default graph.ScopePredicate). Tests
	// swap in a broken one to show the checks catch it.
	Predicate Predicate
}

// New returns a Store that runs its queries through tx, usually the graph
// store's (graph.Store.Runner).
func New(tx *neo.Runner, opts Options) *Store {
	s := &Store{tx: tx, pred: opts.Predicate}
	if s.pred == nil {
		s.pred = graph.ScopePredicate
	}
	return s
}

// read runs work in a read transaction bounded by ctx's deadline.
func (s *Store) read(ctx context.Context, work func(tx neo4j.ManagedTransaction) error) error {
	timeout := neo.DefaultTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	return s.tx.Run(ctx, neo4j.AccessModeRead, timeout, work)
}

// where returns the conditions every memory of a query must meet — the
// tenant, the scope predicate and the filter — and their parameters.
func (s *Store) where(scope memory.Scope, f graphquery.MemoryFilter) (string, map[string]any) {
	pred, params := s.pred(scope)
	if params == nil {
		params = map[string]any{}
	}
	params = maps.Clone(params)
	params["tenant"] = scope.Tenant
	// m.id IS NOT NULL lets the planner seek the (tenant, id) index
	// rather than scan every tenant's memories.
	conds := []string{"m.tenant = $tenant", "m.id IS NOT NULL", pred}
	add := func(cond, name string, v any) {
		conds = append(conds, cond)
		params[name] = v
	}
	if len(f.Types) > 0 {
		add("m.type IN $f_types", "f_types", f.Types)
	}
	if len(f.Kinds) > 0 {
		add("m.kind IN $f_kinds", "f_kinds", f.Kinds)
	}
	if len(f.Statuses) > 0 {
		add("m.status IN $f_statuses", "f_statuses", f.Statuses)
	}
	if len(f.Agents) > 0 {
		add("m.agent_id IN $f_agents", "f_agents", f.Agents)
	}
	if len(f.Sensitivity) > 0 {
		add("m.sensitivity IN $f_sens", "f_sens", f.Sensitivity)
	}
	if f.User != "" {
		add("m.user_id = $f_user", "f_user", f.User)
	}
	if f.Entity != "" {
		add(condMentions, "f_entity", f.Entity)
	}
	if !f.Since.IsZero() {
		add("m.created_at >= $f_since", "f_since", f.Since.UTC())
	}
	if !f.Until.IsZero() {
		add("m.created_at < $f_until", "f_until", f.Until.UTC())
	}
	return "(" + strings.Join(conds, " AND ") + ")", params
}

// Short local names for package neo's readers.
var (
	str     = neo.Str
	integer = neo.Integer
	float   = neo.Float
	timeOf  = neo.TimeOf
)

// labelOf maps a graph label to the API's; "" for a node no query shows.
func labelOf(labels []string) string {
	for _, l := range labels {
		if a, ok := apiLabel[l]; ok {
			return a
		}
	}
	return ""
}

var apiLabel = map[string]string{
	"Entity": graphquery.LabelEntity, "User": graphquery.LabelUser, "Agent": graphquery.LabelAgent,
	"Memory": graphquery.LabelMemory, "Session": graphquery.LabelSession,
}

// decodeMemory reads a memoryMap projection.
func decodeMemory(v any) memory.Memory {
	p, _ := v.(map[string]any)
	m := memory.Memory{
		ID: str(p["id"]), Tenant: str(p["tenant"]), UserID: str(p["user_id"]), AgentID: str(p["agent_id"]),
		SessionID: str(p["session_id"]), Type: str(p["type"]), Kind: str(p["kind"]), Key: str(p["key"]),
		Content: str(p["content"]), Status: str(p["status"]), Sensitivity: str(p["sensitivity"]),
		Importance: float(p["importance"]), Confidence: float(p["confidence"]), Source: str(p["source"]),
		ValidFrom: timeOf(p["valid_from"]), CreatedAt: timeOf(p["created_at"]), UpdatedAt: timeOf(p["updated_at"]),
		Version: int(integer(p["version"])), Supersedes: str(p["supersedes"]),
		ScopeID: str(p["scope_id"]),
	}
	// A memory about a user answers no scope, as the rest of the API does.
	if sc := str(p["scope"]); sc != memory.ScopeUser {
		m.Scope = sc
	}
	if t := timeOf(p["valid_to"]); !t.IsZero() {
		m.ValidTo = &t
	}
	es, _ := p["entities"].([]any)
	for _, e := range es {
		em, _ := e.(map[string]any)
		m.Entities = append(m.Entities, memory.Entity{ID: str(em["id"]), Kind: str(em["kind"]), Name: str(em["name"])})
	}
	return m
}

// memoryNode makes a memory an answer's node.
func memoryNode(m memory.Memory) graphquery.Node {
	return graphquery.Node{Key: graphquery.LabelMemory + ":" + m.ID, Label: graphquery.LabelMemory, ID: m.ID, Kind: m.Kind, Memory: &m}
}

// otherNode reads a node that is not a memory from its columns.
func otherNode(labels []string, id, name, kind string) (graphquery.Node, bool) {
	l := labelOf(labels)
	if l == "" || l == graphquery.LabelMemory {
		return graphquery.Node{}, false
	}
	return graphquery.Node{Key: l + ":" + id, Label: l, ID: id, Name: name, Kind: kind}, true
}
