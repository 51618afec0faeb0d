// Package seed holds Mneme's demo dataset and its loader. The dataset (a
// B2B-commerce tenant with three agents, three users, their API keys, sharing
// grants and a few dozen memories in English and Chinese) is embedded from
// demo.json; Demo parses and validates it and Load applies it, in file order
// and idempotently, through the small Sink interface the caller provides.
package seed

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"mneme/memory"
)

//go:embed demo.json
var demoJSON []byte

// MinMemories is the least number of memories a dataset must hold to be a
// useful demo.
const MinMemories = 50

// Dataset is one tenant's seed data as stored in demo.json.
type Dataset struct {
	Tenant   string         `json:"tenant"`
	Agents   []Agent        `json:"agents"`
	Users    []User         `json:"users"`
	APIKeys  []APIKey       `json:"api_keys"`
	Grants   []memory.Grant `json:"grants"`
	Memories []Memory       `json:"memories"`
}

// Agent is an agent of the tenant and the team it belongs to.
type Agent struct {
	ID   string `json:"id"`
	Team string `json:"team"`
}

// User is an end user the agents serve.
type User struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// APIKey is a demo key in clear text and the principal it stands for. Keys
// have the form mn_<tenant>_<suffix>; the tenant is read from the key.
type APIKey struct {
	Key   string   `json:"key"`
	Kind  string   `json:"kind"` // a memory.Kind* principal kind
	ID    string   `json:"id"`
	Roles []string `json:"roles,omitempty"`
}

// Memory is one seed memory. Ref names it inside the dataset and makes its
// idempotency key; Status defaults to active.
type Memory struct {
	Ref         string          `json:"ref"`
	UserID      string          `json:"user_id"`
	AgentID     string          `json:"agent_id"`
	SessionID   string          `json:"session_id,omitempty"`
	Type        string          `json:"type"`
	Kind        string          `json:"kind,omitempty"`
	Key         string          `json:"key,omitempty"`
	Content     string          `json:"content"`
	Status      string          `json:"status,omitempty"`
	Sensitivity string          `json:"sensitivity"`
	Importance  float64         `json:"importance"`
	Confidence  float64         `json:"confidence"`
	Source      string          `json:"source,omitempty"`
	Entities    []memory.Entity `json:"entities,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	// Scope and ScopeID make the memory knowledge shared in the tenant, a
	// team or an agent, about no user (user_id empty); ValidTo ends a
	// temporary one.
	Scope   string     `json:"scope,omitempty"`
	ScopeID string     `json:"scope_id,omitempty"`
	ValidTo *time.Time `json:"valid_to,omitempty"`
}

// IdempotencyKey is the key Load gives the memory with this ref.
func IdempotencyKey(ref string) string { return "seed:" + ref }

// Demo returns the embedded demo dataset, parsed and validated.
func Demo() (*Dataset, error) {
	return Parse(demoJSON)
}

// Parse decodes a dataset in demo.json's format and validates it. Unknown
// fields are an error, so a typo in a fixture does not pass silently.
func Parse(data []byte) (*Dataset, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var ds Dataset
	if err := dec.Decode(&ds); err != nil {
		return nil, fmt.Errorf("seed: decode dataset: %w", err)
	}
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	return &ds, nil
}

var (
	tenantPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	keyPattern    = regexp.MustCompile(`^mn_([a-z0-9][a-z0-9-]*)_[A-Za-z0-9]{16,}$`)
)

// KeyOf returns the API key of each principal of the dataset by id.
func (ds *Dataset) KeyOf() map[string]string {
	keys := make(map[string]string, len(ds.APIKeys))
	for _, k := range ds.APIKeys {
		keys[k.ID] = k.Key
	}
	return keys
}

// KeyTenant returns the tenant named in an API key of the form
// mn_<tenant>_<suffix>, or false if the key does not have that form.
func KeyTenant(key string) (string, bool) {
	m := keyPattern.FindStringSubmatch(key)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// Validate checks the dataset and returns every problem found, joined.
func (ds *Dataset) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("seed: "+format, args...))
	}

	if !tenantPattern.MatchString(ds.Tenant) {
		bad("tenant %q: want lower-case letters, digits and '-'", ds.Tenant)
	}

	agents := map[string]bool{}
	for i, a := range ds.Agents {
		switch {
		case a.ID == "":
			bad("agents[%d]: empty id", i)
		case agents[a.ID]:
			bad("agents[%d]: duplicate id %q", i, a.ID)
		case a.Team == "":
			bad("agent %q: empty team", a.ID)
		}
		agents[a.ID] = true
	}
	users := map[string]bool{}
	for i, u := range ds.Users {
		switch {
		case u.ID == "":
			bad("users[%d]: empty id", i)
		case users[u.ID]:
			bad("users[%d]: duplicate id %q", i, u.ID)
		}
		users[u.ID] = true
	}

	keys := map[string]bool{}
	for i, k := range ds.APIKeys {
		if keys[k.Key] {
			bad("api_keys[%d]: duplicate key", i)
		}
		keys[k.Key] = true
		if t, ok := KeyTenant(k.Key); !ok || t != ds.Tenant {
			bad("api_keys[%d]: key must look like mn_%s_<16+ letters or digits>", i, ds.Tenant)
		}
		switch k.Kind {
		case memory.KindAgent:
			if !agents[k.ID] {
				bad("api_keys[%d]: unknown agent %q", i, k.ID)
			}
		case memory.KindUser:
			if !users[k.ID] {
				bad("api_keys[%d]: unknown user %q", i, k.ID)
			}
		case memory.KindAdmin, memory.KindAnalyst:
			if k.ID == "" {
				bad("api_keys[%d]: empty id", i)
			}
		default:
			bad("api_keys[%d]: unknown principal kind %q", i, k.Kind)
		}
	}

	grants := map[string]bool{}
	for i, g := range ds.Grants {
		if g.ID == "" || grants[g.ID] {
			bad("grants[%d]: id %q empty or duplicate", i, g.ID)
		}
		grants[g.ID] = true
		if g.Tenant != "" && g.Tenant != ds.Tenant {
			bad("grant %q: tenant %q is not %q", g.ID, g.Tenant, ds.Tenant)
		}
		if !agents[g.Grantee] {
			bad("grant %q: unknown grantee %q", g.ID, g.Grantee)
		}
		if g.Source != "*" && !agents[g.Source] {
			bad("grant %q: unknown source %q", g.ID, g.Source)
		}
		if len(g.Types) == 0 {
			bad("grant %q: no types", g.ID)
		}
		for _, t := range g.Types {
			if !slices.Contains(memory.Types, t) {
				bad("grant %q: unknown type %q", g.ID, t)
			}
		}
		if memory.SensitivityRank(g.MaxSensitivity) < 0 {
			bad("grant %q: unknown max_sensitivity %q", g.ID, g.MaxSensitivity)
		}
		if g.CreatedAt.IsZero() {
			bad("grant %q: no created_at", g.ID)
		}
	}

	refs := map[string]bool{}
	for i, m := range ds.Memories {
		where := fmt.Sprintf("memories[%d] (%s)", i, m.Ref)
		if m.Ref == "" || refs[m.Ref] {
			bad("%s: ref empty or duplicate", where)
		}
		refs[m.Ref] = true
		switch m.Scope {
		case "", memory.ScopeUser:
			if !users[m.UserID] {
				bad("%s: unknown user %q", where, m.UserID)
			}
		case memory.ScopeTenant, memory.ScopeTeam, memory.ScopeAgent:
			if m.UserID != "" || (m.Scope == memory.ScopeTenant) != (m.ScopeID == "") {
				bad("%s: shared knowledge is about no user, with a scope_id for a team or an agent", where)
			}
			if m.Scope == memory.ScopeAgent && m.AgentID != m.ScopeID {
				bad("%s: an agent's knowledge is written by that agent", where)
			}
		default:
			bad("%s: unknown scope %q", where, m.Scope)
		}
		if m.ValidTo != nil && !m.ValidTo.After(m.CreatedAt) {
			bad("%s: valid_to before created_at", where)
		}
		shared := m.Scope == memory.ScopeTenant || m.Scope == memory.ScopeTeam
		if !agents[m.AgentID] && !(shared && m.AgentID == "") {
			bad("%s: unknown agent %q", where, m.AgentID)
		}
		if !slices.Contains(memory.Types, m.Type) {
			bad("%s: unknown type %q", where, m.Type)
		}
		if m.Status != "" && !slices.Contains(memory.Statuses, m.Status) {
			bad("%s: unknown status %q", where, m.Status)
		}
		if memory.SensitivityRank(m.Sensitivity) < 0 {
			bad("%s: unknown sensitivity %q", where, m.Sensitivity)
		}
		if strings.TrimSpace(m.Content) == "" {
			bad("%s: empty content", where)
		}
		if m.Importance < 0 || m.Importance > 1 || m.Confidence < 0 || m.Confidence > 1 {
			bad("%s: importance and confidence must be in [0, 1]", where)
		}
		if m.CreatedAt.IsZero() {
			bad("%s: no created_at", where)
		}
		for j, e := range m.Entities {
			if e.ID == "" || e.Kind == "" {
				bad("%s: entities[%d] needs id and kind", where, j)
			}
		}
	}
	if len(ds.Memories) < MinMemories {
		bad("%d memories, want at least %d", len(ds.Memories), MinMemories)
	}
	return errors.Join(errs...)
}

// Sink receives the dataset. Every method must tolerate being called again
// with the same arguments: Load is run on every start of a demo.
type Sink interface {
	// PutAPIKey stores key (the sink hashes it) for principal p.
	PutAPIKey(ctx context.Context, key string, p memory.Principal) error
	EnsureAgent(ctx context.Context, tenant, id, team string) error
	// EnsureUser registers the user with the name the user is known by.
	EnsureUser(ctx context.Context, tenant, id, name string) error
	// PutGrant creates or replaces the grant with g.ID.
	PutGrant(ctx context.Context, g memory.Grant) error
	// WriteMemory embeds m, assigns its id and supersedes the active memory of
	// the same (tenant, user, key); a repeated m.IdempotencyKey is a no-op.
	WriteMemory(ctx context.Context, m memory.Memory) error
}

// Report counts what Load applied.
type Report struct {
	Tenant   string `json:"tenant"`
	Agents   int    `json:"agents"`
	Users    int    `json:"users"`
	APIKeys  int    `json:"api_keys"`
	Grants   int    `json:"grants"`
	Memories int    `json:"memories"`
}

// Load applies ds through sink: agents, users, API keys, grants, then the
// memories in file order, so a later memory with the same key supersedes an
// earlier one. Each memory carries IdempotencyKey(ref) and each grant its
// fixed id, so loading twice leaves the same state as loading once. Load
// validates ds before writing anything, stops at the first error and reports
// what was applied before it.
func Load(ctx context.Context, ds *Dataset, sink Sink) (Report, error) {
	rep := Report{Tenant: ds.Tenant}
	if err := ds.Validate(); err != nil {
		return rep, err
	}
	for _, a := range ds.Agents {
		if err := sink.EnsureAgent(ctx, ds.Tenant, a.ID, a.Team); err != nil {
			return rep, fmt.Errorf("seed: agent %q: %w", a.ID, err)
		}
		rep.Agents++
	}
	for _, u := range ds.Users {
		if err := sink.EnsureUser(ctx, ds.Tenant, u.ID, u.Name); err != nil {
			return rep, fmt.Errorf("seed: user %q: %w", u.ID, err)
		}
		rep.Users++
	}
	teams := map[string]string{}
	for _, a := range ds.Agents {
		teams[a.ID] = a.Team
	}
	for i, k := range ds.APIKeys {
		p := memory.Principal{Tenant: ds.Tenant, Kind: k.Kind, ID: k.ID, Roles: slices.Clone(k.Roles)}
		if k.Kind == memory.KindAgent {
			p.Team = teams[k.ID] // an agent's key reads its team's knowledge
		}
		if err := sink.PutAPIKey(ctx, k.Key, p); err != nil {
			return rep, fmt.Errorf("seed: api_keys[%d] (%s %s): %w", i, k.Kind, k.ID, err)
		}
		rep.APIKeys++
	}
	for _, g := range ds.Grants {
		g.Tenant = ds.Tenant
		g.CreatedAt = g.CreatedAt.UTC()
		g.Types = slices.Clone(g.Types)
		g.Kinds = slices.Clone(g.Kinds)
		if err := sink.PutGrant(ctx, g); err != nil {
			return rep, fmt.Errorf("seed: grant %q: %w", g.ID, err)
		}
		rep.Grants++
	}
	for _, m := range ds.Memories {
		if err := sink.WriteMemory(ctx, m.toMemory(ds.Tenant)); err != nil {
			return rep, fmt.Errorf("seed: memory %q: %w", m.Ref, err)
		}
		rep.Memories++
	}
	return rep, nil
}

// toMemory is the memory as the sink receives it: no id, version or
// embedding yet; valid from its creation; times in UTC.
func (m Memory) toMemory(tenant string) memory.Memory {
	status := m.Status
	if status == "" {
		status = memory.StatusActive
	}
	return memory.Memory{
		Tenant:         tenant,
		UserID:         m.UserID,
		AgentID:        m.AgentID,
		SessionID:      m.SessionID,
		Type:           m.Type,
		Kind:           m.Kind,
		Key:            m.Key,
		Content:        m.Content,
		Status:         status,
		Sensitivity:    m.Sensitivity,
		Importance:     m.Importance,
		Confidence:     m.Confidence,
		Source:         m.Source,
		Entities:       slices.Clone(m.Entities),
		ValidFrom:      m.CreatedAt.UTC(),
		CreatedAt:      m.CreatedAt.UTC(),
		UpdatedAt:      m.CreatedAt.UTC(),
		IdempotencyKey: IdempotencyKey(m.Ref),
		Scope:          map[bool]string{true: m.Scope}[m.Scope != memory.ScopeUser],
		ScopeID:        m.ScopeID,
		ValidTo:        m.ValidTo,
	}
}
