package memory

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"mneme/facts"
)

// Limits on what a client may send.
const (
	MaxContentChars = 8000
	MaxBatch        = 100
	DefaultListSize = 50
	MaxListSize     = 500
	// MaxEntityAliases caps the other names one entity may carry.
	MaxEntityAliases = 16
	// MaxEntities caps the entities one memory mentions: each pair of them
	// is a co-mention the graph queries walk.
	MaxEntities = 64
)

// Options configures a Service. Every dependency is required unless its
// comment says otherwise; where one type implements several (graph.Store),
// it is passed for each.
type Options struct {
	Store  Store
	Authz  Authorizer
	Embed  Embedder
	Logger *slog.Logger
	// Now returns the current time; defaults to time.Now.
	Now func() time.Time
	// Recall tunes recall; zero values take defaults.
	Recall RecallConfig
	// Guard decides what becomes of the guard's findings in a write.
	Guard GuardPolicy
	// Writes commits the write pipeline's writes, deduplicated.
	Writes DedupStore
	// Warm runs a write's queries and rolls them back (WarmUp).
	Warm WriteWarmer
	// Confirm makes candidate memories active.
	Confirm Confirmer
	// Forget erases from the graph.
	Forget Forgetter
	// Fence orders a user's erase against the user's queued writes.
	Fence Fencer
	// Erasers are the places outside the graph that hold user data; an
	// erase asks each of them.
	Erasers []Eraser
	// MemoryErasers are the places that can also forget single memories;
	// deleting a memory asks each of them. It may be empty: no place of
	// memoryd's holds memory contents outside the graph today.
	MemoryErasers []MemoryEraser
	// Janitor serves admin-triggered sweeps.
	Janitor Sweeper
	// Sessions keeps working memory.
	Sessions SessionStore
	// Write tunes the write pipeline; zero values take defaults.
	Write WriteConfig
	// Queue takes asynchronous writes.
	Queue JobQueue
	// Search adds the vector index and graph expansion to recall.
	Search SearchStore
	// Recorder takes note of answered recalls (access counts, recall log).
	Recorder RecallRecorder

	// Audit records administrative acts: erases, admins' deletes, sweeps.
	Audit Auditor
	// Quota admits writes against the tenant's quotas; nil admits all.
	Quota Quota
	// Names tells the names users are known by (package usernames), which
	// recall takes as naming the user; nil: users are known by their ids
	// alone.
	Names UserNames
}

// Service is the entry point for everything a principal does with memories.
// Every read is decided by the Authorizer twice: once to narrow the query,
// and again for each memory before it leaves.
type Service struct {
	store         Store
	authz         Authorizer
	embed         Embedder
	log           *slog.Logger
	now           func() time.Time
	recall        RecallConfig
	guardPolicy   GuardPolicy
	writes        DedupStore
	warm          WriteWarmer
	confirm       Confirmer
	forget        Forgetter
	fence         Fencer
	erasers       []Eraser
	memoryErasers []MemoryEraser
	janitor       Sweeper
	sessions      SessionStore
	write         WriteConfig
	queue         JobQueue

	searchStore SearchStore
	recorder    RecallRecorder

	auditor Auditor
	quota   Quota
	names   UserNames
}

// NewService returns a Service, or an error naming every required
// dependency opts lacks.
func NewService(opts Options) (*Service, error) {
	if missing := opts.missing(); len(missing) > 0 {
		return nil, fmt.Errorf("memory: options lack %s", strings.Join(missing, ", "))
	}
	s := &Service{
		store: opts.Store, authz: opts.Authz, embed: opts.Embed,
		log: cmp.Or(opts.Logger, slog.Default()), now: opts.Now, recall: opts.Recall.WithDefaults(),
		guardPolicy: opts.Guard, writes: opts.Writes, warm: opts.Warm, confirm: opts.Confirm,
		forget: opts.Forget, fence: opts.Fence, erasers: opts.Erasers, memoryErasers: opts.MemoryErasers,
		janitor: opts.Janitor, sessions: opts.Sessions,
		write: opts.Write.withDefaults(), queue: opts.Queue, searchStore: opts.Search, recorder: opts.Recorder,
		auditor: opts.Audit, quota: opts.Quota, names: opts.Names,
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// missing names the required dependencies o lacks.
func (o Options) missing() []string {
	var out []string
	for _, d := range []struct {
		name string
		set  bool
	}{
		{"Store", o.Store != nil}, {"Authz", o.Authz != nil}, {"Embed", o.Embed != nil}, {"Guard", o.Guard != nil},
		{"Writes", o.Writes != nil}, {"Warm", o.Warm != nil}, {"Confirm", o.Confirm != nil},
		{"Forget", o.Forget != nil}, {"Fence", o.Fence != nil}, {"Erasers", len(o.Erasers) > 0},
		{"Janitor", o.Janitor != nil}, {"Sessions", o.Sessions != nil},
		{"Queue", o.Queue != nil}, {"Search", o.Search != nil}, {"Recorder", o.Recorder != nil},
		{"Audit", o.Audit != nil},
	} {
		if !d.set {
			out = append(out, d.name)
		}
	}
	return out
}

// NewMemory is what a client sends to create a memory.
type NewMemory struct {
	Tenant         string   `json:"tenant,omitempty"`
	UserID         string   `json:"user_id"`
	AgentID        string   `json:"agent_id,omitempty"`
	SessionID      string   `json:"session_id,omitempty"`
	Type           string   `json:"type"`
	Kind           string   `json:"kind,omitempty"`
	Key            string   `json:"key,omitempty"`
	Content        string   `json:"content"`
	Sensitivity    string   `json:"sensitivity,omitempty"`
	Importance     *float64 `json:"importance,omitempty"`
	Confidence     *float64 `json:"confidence,omitempty"`
	Source         string   `json:"source,omitempty"`
	Entities       []Entity `json:"entities,omitempty"`
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
	// ObservedAt is when the fact was observed, when that was before the
	// write (observed.go); the memory is valid and dated from then.
	ObservedAt *time.Time `json:"observed_at,omitempty"`
	// Scope, when set to another scope than user, shares the memory as
	// knowledge of the tenant, a team or an agent; UserID is then empty.
	Scope *ScopeRef `json:"scope,omitempty"`
	// ValidTo ends a temporary memory: after it, it is no longer recalled.
	ValidTo *time.Time `json:"valid_to,omitempty"`
}

// ScopeRef names a scope: its kind (Scopes) and, for a team or an agent,
// its id.
type ScopeRef struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
}

// sharedScope validates the scope of a new memory and returns it: "" for a
// memory about a user. Shared knowledge is about no user and in no
// session; an agent's own knowledge is written as that agent, and the
// tenant's and teams' as no agent. Policy decides who may write which.
func sharedScope(n NewMemory, agent *string) (string, string, error) {
	if n.Scope == nil || *n.Scope == (ScopeRef{Kind: ScopeUser}) {
		return "", "", nil
	}
	kind, id := n.Scope.Kind, n.Scope.ID
	if n.UserID != "" || n.SessionID != "" ||
		!(kind == ScopeTenant && id == "" || (kind == ScopeTeam || kind == ScopeAgent) && ValidName(id)) {
		return "", "", Invalid("scope", "shared knowledge is of the tenant (no id), a team or an agent (an id), about no user_id and in no session_id")
	}
	*agent = map[bool]string{true: id}[kind == ScopeAgent]
	return kind, id, nil
}

// Import stores a memory on behalf of the system (the seed loader), without
// a principal. It still validates, embeds and supersedes. An empty status
// means active.
func (s *Service) Import(ctx context.Context, n NewMemory, createdAt time.Time, status string) (Memory, error) {
	p := Principal{Tenant: n.Tenant, Kind: KindAgent, ID: n.AgentID}
	m, err := s.build(p, n, createdAt.UTC())
	if err != nil {
		return Memory{}, err
	}
	if status != "" {
		if !slices.Contains(Statuses, status) {
			return Memory{}, Invalid("status", "must be one of "+strings.Join(Statuses, ", "))
		}
		m.Status = status
	}
	if err := s.embedInto(ctx, &m); err != nil {
		return Memory{}, err
	}
	out, err := s.store.CreateMemories(ctx, []Memory{m})
	if err != nil {
		return Memory{}, err
	}
	return out[0], nil
}

// KindRule says which kinds ValidKind accepts.
const KindRule = "must be at most 64 bytes, without control or invisible characters, line separators, no-break spaces, surrounding spaces, full-width forms or Latin letters mixed with Cyrillic or Greek ones"

// ValidKind reports whether k, composed (facts.Composed), may be a memory's
// kind: one that reads as the kind it is (facts.Label), so that a grant
// naming it names that kind; grants' kinds follow it too.
func ValidKind(k string) bool { return len(k) <= 64 && facts.Label(k) }

func (s *Service) build(p Principal, n NewMemory, now time.Time) (Memory, error) {
	// Text that looks alike is stored alike: one form of "é", one slot.
	n.Content, n.Kind, n.Key = facts.Composed(n.Content), facts.Composed(n.Kind), facts.Composed(n.Key)
	tenant := cmp.Or(n.Tenant, p.Tenant)
	// An agent writes as itself, a user as "user:" and their id (what a user
	// writes about themselves has no agent author; the prefix keeps it apart
	// from every agent id); an admin names the author. Naming another is
	// not a parameter policy can widen: the memory would be read back as
	// that author's own.
	agent, own := n.AgentID, map[string]string{KindAgent: p.ID, KindUser: "user:" + p.ID}[p.Kind]
	if p.Kind == KindAnalyst {
		// An analyst never writes, whatever the memory holds: first,
		// before any field is judged.
		return Memory{}, ErrForbidden
	}
	if (p.Kind == KindAgent || p.Kind == KindUser) && cmp.Or(agent, own) != own {
		return Memory{}, ForbiddenAuthor()
	}
	agent = cmp.Or(agent, own)
	scope, scopeID, err := sharedScope(n, &agent)
	if err != nil {
		return Memory{}, err
	}
	switch {
	case !ValidTenant(tenant):
		return Memory{}, Invalid("tenant", "must be 1–64 letters, digits or -.:@")
	case tenant != p.Tenant: // whatever policy says
		return Memory{}, &ForbiddenFieldError{InvalidError{"tenant", "names another tenant than the API key's: a key writes in its own tenant only; leave tenant out"}}
	case scope == "" && !ValidName(n.UserID):
		return Memory{}, Invalid("user_id", "is missing or not a user id: 1–64 ASCII letters, digits or -_.:@, not dots alone")
	case n.ValidTo != nil && !n.ValidTo.After(now):
		return Memory{}, Invalid("valid_to", "must be in the future")
	case (scope == "" || agent != "") && !validAuthor(agent):
		return Memory{}, Invalid("agent_id", "is required for this principal: 1–64 letters, digits or -_.:@")
	case n.SessionID != "" && !ValidName(n.SessionID):
		return Memory{}, Invalid("session_id", "must be 1–64 letters, digits or -_.:@")
	case !slices.Contains(Types, n.Type):
		return Memory{}, Invalid("type", "must be one of "+strings.Join(Types, ", "))
	case facts.Blank(n.Content):
		return Memory{}, Invalid("content", "must not be empty or blank")
	case !utf8.ValidString(n.Content) || strings.ContainsRune(n.Content, 0):
		return Memory{}, Invalid("content", "must be valid UTF-8 without NUL characters")
	case utf8.RuneCountInString(n.Content) > MaxContentChars:
		return Memory{}, Invalid("content", fmt.Sprintf("must be at most %d characters", MaxContentChars))
	case !ValidKind(n.Kind):
		// A kind a grant names must be the kind it reads as: no zero-width
		// "pre\u200bference", no Cyrillic е or full-width ｅ in "preference".
		return Memory{}, Invalid("kind", KindRule)
	case len(n.Key) > 128 || !facts.Label(n.Key):
		return Memory{}, Invalid("key", "must be at most 128 bytes, without control or invisible characters, line separators, no-break spaces, surrounding spaces, full-width forms or Latin letters mixed with Cyrillic or Greek ones")
	case len(n.Source) > 64:
		return Memory{}, Invalid("source", "must be at most 64 bytes")
	case len(n.IdempotencyKey) > 128:
		return Memory{}, Invalid("idempotency_key", "must be at most 128 bytes")
	}
	sens := cmp.Or(n.Sensitivity, SensitivityInternal)
	if SensitivityRank(sens) < 0 {
		return Memory{}, Invalid("sensitivity", "must be one of "+strings.Join(Sensitivities, ", "))
	}
	importance, err := unit("importance", n.Importance, 0.5)
	confidence, cerr := unit("confidence", n.Confidence, 1)
	if err = cmp.Or(err, cerr); err != nil {
		return Memory{}, err
	}
	if len(n.Entities) > MaxEntities {
		return Memory{}, Invalid("entities", fmt.Sprintf("a memory mentions at most %d entities", MaxEntities))
	}
	for _, e := range n.Entities {
		if e.ID == "" || len(e.ID) > 128 || len(e.Name) > 256 || len(e.Kind) > 64 || strings.ContainsFunc(e.ID, facts.Invisible) || strings.ContainsFunc(e.Kind+e.Name, unicode.IsControl) {
			return Memory{}, Invalid("entities", "each entity needs an id (≤ 128 bytes, no invisible characters), kind ≤ 64, name ≤ 256, none with control characters")
		}
		if len(e.Aliases) > MaxEntityAliases {
			return Memory{}, Invalid("entities", fmt.Sprintf("an entity has at most %d aliases", MaxEntityAliases))
		}
		for _, a := range e.Aliases {
			if strings.TrimSpace(a) == "" || len(a) > 256 {
				return Memory{}, Invalid("entities", "each alias is 1–256 bytes")
			}
		}
	}
	return observed(p, n.ObservedAt, now, Memory{
		ID: NewID("mem"), Tenant: tenant, UserID: n.UserID, AgentID: agent, SessionID: n.SessionID,
		Type: n.Type, Kind: n.Kind, Key: n.Key, Content: n.Content, Status: StatusActive,
		Sensitivity: sens, Importance: importance, Confidence: confidence, Source: n.Source,
		Entities: n.Entities, ValidFrom: now, ValidTo: n.ValidTo, CreatedAt: now, UpdatedAt: now, Version: 1,
		IdempotencyKey: n.IdempotencyKey, Scope: scope, ScopeID: scopeID,
	})
}

// embedOne returns the embedding of one text.
func (s *Service) embedOne(ctx context.Context, text string) ([]float32, error) {
	vecs, err := s.embedTexts(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// embedTexts embeds texts and checks that the embedder kept its side of
// the bargain: one vector per text, each of its dimension.
func (s *Service) embedTexts(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := s.embed.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed: %d vectors for %d texts", len(vecs), len(texts))
	}
	for _, v := range vecs {
		if len(v) != s.embed.Dimension() {
			return nil, fmt.Errorf("embed: a vector of dimension %d from model %s of dimension %d",
				len(v), s.embed.Model(), s.embed.Dimension())
		}
	}
	return vecs, nil
}

// embedInto embeds m's content into m and records the model that made it.
func (s *Service) embedInto(ctx context.Context, m *Memory) error {
	vec, err := s.embedOne(ctx, m.Content)
	if err != nil {
		return err
	}
	s.setEmbedding(m, vec)
	return nil
}

// setEmbedding stores vec on m with the name and size of the model, so that
// a later change of model can find the vectors it must renew.
func (s *Service) setEmbedding(m *Memory, vec []float32) {
	m.Embedding, m.EmbeddingModel, m.EmbeddingDim = vec, s.embed.Model(), len(vec)
	if isZero(vec) {
		// Text with no content words embeds to the zero vector, whose cosine
		// is undefined (Neo4j refuses it): the memory keeps no vector and is
		// found by its words, entities and session instead.
		m.Embedding = nil
	}
}

// embedAll sets the embedding of each memory of ms in place.
func (s *Service) embedAll(ctx context.Context, ms []Memory) error {
	texts := make([]string, len(ms))
	for i, m := range ms {
		texts[i] = m.Content
	}
	vecs, err := s.embedTexts(ctx, texts)
	if err != nil {
		return err
	}
	for i := range ms {
		s.setEmbedding(&ms[i], vecs[i])
	}
	return nil
}

// Get returns one memory the principal may read.
func (s *Service) Get(ctx context.Context, p Principal, id string) (Memory, error) {
	m, err := s.store.GetMemory(ctx, p.Tenant, id)
	if err != nil {
		return Memory{}, err
	}
	if !s.allowed(ctx, p, ActionRead, m) {
		return Memory{}, ErrNotFound
	}
	return m, nil
}

// ListRequest filters a listing; the cursor comes from a previous Page.
type ListRequest struct {
	UserID, Type, Kind, Status string
	From, To                   time.Time
	// Agent and Text: see ListQuery's AgentID and Text.
	Agent, Text string
	Shared      bool // see ListQuery's Shared
	Cursor      string
	Limit       int
}

// Page is one page of a listing.
type Page struct {
	Memories   []Memory `json:"memories"`
	NextCursor string   `json:"next_cursor,omitempty"`
}

// List returns the memories the principal may read, newest first.
func (s *Service) List(ctx context.Context, p Principal, r ListRequest) (Page, error) {
	q := ListQuery{UserID: r.UserID, Type: r.Type, Kind: r.Kind, Status: r.Status, From: r.From, To: r.To, AgentID: r.Agent, Text: r.Text, Shared: r.Shared, Limit: r.Limit}
	switch {
	case r.UserID != "" && !ValidName(r.UserID):
		return Page{}, Invalid("user_id", "must be 1–64 letters, digits or -_.:@")
	case r.Type != "" && !slices.Contains(Types, r.Type):
		return Page{}, Invalid("type", "must be one of "+strings.Join(Types, ", "))
	case r.Agent != "" && !ValidName(r.Agent):
		return Page{}, Invalid("agent", "must be 1–64 letters, digits or -_.:@")
	case utf8.RuneCountInString(r.Text) > 200:
		return Page{}, Invalid("text", "must be at most 200 characters")
	case r.Status != "" && !slices.Contains(Statuses, r.Status):
		return Page{}, Invalid("status", "must be one of "+strings.Join(Statuses, ", "))
	case r.Limit < 0 || r.Limit > MaxListSize:
		return Page{}, Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxListSize))
	case !r.From.IsZero() && !r.To.IsZero() && !r.From.Before(r.To):
		return Page{}, Invalid("from", "must be before to")
	}
	q.Limit = cmp.Or(q.Limit, DefaultListSize)
	if r.Cursor != "" {
		c, err := decodeCursor(r.Cursor)
		if err != nil {
			return Page{}, Invalid("cursor", "is not a cursor this service issued")
		}
		q.After = &c
	}
	now := s.now().UTC()
	scope, err := s.authz.ReadScope(ctx, p, r.UserID, now)
	if err != nil {
		return Page{}, fmt.Errorf("read scope: %w", err)
	}
	// Ask for one more than the page to know whether another page follows.
	q.Limit++
	ms, err := s.store.ListMemories(ctx, scope, q)
	if err != nil {
		return Page{}, err
	}
	var page Page
	if len(ms) == q.Limit {
		ms = ms[:q.Limit-1]
		last := ms[len(ms)-1]
		page.NextCursor = encodeCursor(Cursor{CreatedAt: last.CreatedAt, ID: last.ID})
	}
	page.Memories = s.visible(ctx, p, ms, now)
	return page, nil
}

// UpdateRequest changes a memory; nil fields keep their value.
type UpdateRequest struct {
	Content     *string  `json:"content,omitempty"`
	Kind        *string  `json:"kind,omitempty"`
	Sensitivity *string  `json:"sensitivity,omitempty"`
	Importance  *float64 `json:"importance,omitempty"`
	Confidence  *float64 `json:"confidence,omitempty"`
}

// Update writes a new version of a memory. ifMatch > 0 must equal the
// current version, else ErrConflict.
func (s *Service) Update(ctx context.Context, p Principal, id string, ifMatch int, u UpdateRequest) (Memory, error) {
	if u == (UpdateRequest{}) { // a version that changes nothing
		return Memory{}, Invalid("body", "nothing to change: give content, kind, sensitivity, importance or confidence")
	}
	prev, err := s.Get(ctx, p, id)
	if err != nil {
		return Memory{}, err
	}
	n := NewMemory{
		Tenant: prev.Tenant, UserID: prev.UserID, AgentID: prev.AgentID, SessionID: prev.SessionID,
		Type: prev.Type, Kind: prev.Kind, Key: prev.Key, Content: prev.Content, Sensitivity: prev.Sensitivity,
		Importance: &prev.Importance, Confidence: &prev.Confidence, Source: prev.Source, Entities: prev.Entities,
		Scope: &ScopeRef{Kind: ScopeOf(prev), ID: prev.ScopeID},
	}
	// What the request leaves out keeps its value.
	n.Content, n.Kind, n.Sensitivity = *cmp.Or(u.Content, &n.Content), *cmp.Or(u.Kind, &n.Kind), *cmp.Or(u.Sensitivity, &n.Sensitivity)
	n.Importance, n.Confidence = cmp.Or(u.Importance, n.Importance), cmp.Or(u.Confidence, n.Confidence)
	now := s.now().UTC()
	// The new version keeps the original author; the principal needs write
	// permission on the result, as if it wrote it afresh.
	author := Principal{Tenant: prev.Tenant, Kind: KindAgent, ID: prev.AgentID}
	next, err := s.build(author, n, now)
	if err != nil {
		return Memory{}, err
	}
	// A new version of a temporary memory ends when it did; the store
	// refuses one of a version no longer current. One of a candidate is
	// still a guess: only the user's confirmation makes it active.
	next.ValidTo = prev.ValidTo
	if prev.Status == StatusCandidate {
		next.Status = StatusCandidate
	}
	if err := s.require(ctx, p, ActionWrite, ResourceOf(next), now); err != nil {
		return Memory{}, err
	}
	if _, err := s.guard(ctx, p, &next, now); err != nil {
		return Memory{}, err
	}
	// A new version is stored beside the old one: it counts.
	if err := s.admit(ctx, prev.Tenant, []Memory{next}); err != nil {
		return Memory{}, err
	}
	if err := s.embedInto(ctx, &next); err != nil {
		return Memory{}, err
	}
	return s.store.ReplaceMemory(ctx, p.Tenant, prev.ID, ifMatch, next)
}

// History returns the versions of a memory the principal may read, newest
// first.
func (s *Service) History(ctx context.Context, p Principal, id string) ([]Memory, error) {
	if _, err := s.Get(ctx, p, id); err != nil {
		return nil, err
	}
	chain, err := s.store.History(ctx, p.Tenant, id)
	if err != nil {
		return nil, err
	}
	return s.visible(ctx, p, chain, s.now().UTC()), nil
}

// require returns nil when policy allows the action (see Require).
func (s *Service) require(ctx context.Context, p Principal, action string, r Resource, now time.Time) error {
	return Require(ctx, s.authz, p, action, r, now, s.log)
}

func (s *Service) allowed(ctx context.Context, p Principal, action string, m Memory) bool {
	return s.require(ctx, p, action, ResourceOf(m), s.now().UTC()) == nil
}

// visible keeps the memories policy lets p read. The store already narrowed
// the query; this second check is what guarantees nothing slips through.
func (s *Service) visible(ctx context.Context, p Principal, ms []Memory, now time.Time) []Memory {
	ds, errs := s.decideReads(ctx, p, len(ms), func(i int) Memory { return ms[i] }, now)
	out := make([]Memory, 0, len(ms))
	for i, m := range ms {
		if errs[i] == nil && ds[i].Allow {
			out = append(out, m)
			continue
		}
		s.log.WarnContext(ctx, "memory outside policy scope dropped", "memory", m.ID, "err", errs[i])
	}
	return out
}

// decideReads decides whether p may read each of n memories, one after the
// other on the caller's goroutine. On goroutines of their own each decision
// grew a fresh stack through the policy's evaluation, which cost more CPU
// than the evaluation, and on two processors more time as well.
func (s *Service) decideReads(ctx context.Context, p Principal, n int, memoryAt func(int) Memory, now time.Time) ([]Decision, []error) {
	ds, errs := make([]Decision, n), make([]error, n)
	for i := range n {
		ds[i], errs[i] = s.authz.Decide(ctx, p, ActionRead, ResourceOf(memoryAt(i)), now)
	}
	return ds, errs
}

func unit(field string, v *float64, def float64) (float64, error) {
	if v == nil {
		return def, nil
	}
	if *v < 0 || *v > 1 {
		return 0, Invalid(field, "must be between 0 and 1")
	}
	return *v, nil
}
