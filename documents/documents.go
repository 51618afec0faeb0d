// Package documents imports the documents of a knowledge base as shared
// knowledge: each section becomes a semantic (or, for steps, procedural)
// memory of the tenant or of a team, written through the memory write path
// (policy, guard, embedding, supersession by key), and linked to its
// document. A re-import writes only what changed: edited sections supersede
// their predecessor, removed ones are retired, the rest stay. Documents can
// be listed and removed as a whole.
package documents

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mneme/guard"
	"mneme/knowledge"
	"mneme/memory"
)

// QueueAbove is the number of sections above which an import is queued
// and answered with a job rather than written while the client waits.
const QueueAbove = 200

// JobImport is the job kind of a queued import.
const JobImport = "knowledge_import"

// Memory kinds of imported sections.
const (
	KindSection   = "kb_section"
	KindProcedure = "kb_procedure"
)

// Input errors of an import, as package knowledge finds them.
var (
	ErrEmpty    = knowledge.ErrEmpty
	ErrTooLarge = knowledge.ErrTooLarge
	ErrFormat   = knowledge.ErrFormat
	ErrID       = knowledge.ErrID
	ErrSections = knowledge.ErrSections
)

// ClaimFor bounds how long an import that never ends (its replica gone)
// keeps other scopes from its document.
const ClaimFor = 15 * time.Minute

// ErrOtherScope: a document is imported into one scope; moving it to
// another is a removal and a new import.
var ErrOtherScope = errors.New("documents: the document was imported into another scope: remove it first")

// ErrUnknownTeam: an import into a team that no agent of the tenant is in
// would be read by no one; most likely the team's name is mistyped.
var ErrUnknownTeam = errors.New("documents: no agent of this tenant is in that team: check its name, or give an agent the team first (PATCH /v1/principals/agent/{id})")

// ErrImportRunning: imports of one document run one at a time; each plans
// against what the one before it left, so that the later has the last word.
var ErrImportRunning = errors.New("documents: an import of the document is under way: retry when it ends")

// ImportRequest is one document to import.
type ImportRequest struct {
	// ID names the document: a re-import with the same id replaces it.
	ID      string `json:"id"`
	Format  string `json:"format"` // markdown, html or text
	Content string `json:"content"`
	// Scope is "tenant" (the default) or "team", with Team naming it.
	Scope string `json:"scope,omitempty"`
	Team  string `json:"team,omitempty"`
}

// Counts says what an import changed.
type Counts struct {
	Created    int `json:"created"`
	Superseded int `json:"superseded"`
	Retired    int `json:"retired"`
	Unchanged  int `json:"unchanged"`
	// Skipped sections hold nothing worth remembering (chit-chat, no
	// content), as the write path judges.
	Skipped int `json:"skipped"`
}

// Result is the answer to an import: its counts when it was written at
// once, or the job that will write it.
type Result struct {
	Document string            `json:"document"`
	Sections int               `json:"sections"`
	Counts   *Counts           `json:"counts,omitempty"`
	Job      *memory.JobStatus `json:"job,omitempty"`
}

// Info describes an imported document.
type Info struct {
	ID         string    `json:"id"`
	Title      string    `json:"title,omitempty"`
	Format     string    `json:"format"`
	Sections   int       `json:"sections"`
	ImportedAt time.Time `json:"imported_at"`
	Scope      string    `json:"scope"`
	ScopeID    string    `json:"scope_id,omitempty"`
}

// Placed is where a written memory sits in its document.
type Placed struct {
	MemoryID string
	Key      string
	Digest   string
	Headings []string
	Position int
	Part     int
	// Created is false when the write path found the text restating a
	// stored memory of the slot and reinforced that one instead.
	Created bool
	// Superseding: created as the new version of a section in force.
	Superseding bool
}

// Store keeps documents and their sections' links. Package graph/documents
// implements it on Neo4j.
type Store interface {
	// Document returns a document of the tenant (also one removed), or
	// memory.ErrNotFound.
	Document(ctx context.Context, tenant, id string) (Info, error)
	// Sections returns the active memories of the document's sections.
	Sections(ctx context.Context, tenant, id string) ([]knowledge.Stored, error)
	// Claim takes the document for an import into scope (kind, scopeID)
	// until until, atomically. It reports false, taking nothing, when the
	// document holds sections in force of another scope or an import into
	// another scope holds it. With run, the import is about to write: it
	// returns ErrImportRunning, taking nothing, while another import of the
	// document runs, and holds the document from others until the import's
	// last Record or its Release. A queued import claims without run when
	// it is accepted.
	Claim(ctx context.Context, tenant, id, kind, scopeID string, run bool, now, until time.Time) (bool, error)
	// Record stores the document and links the written memories to it;
	// with placed nil it is an import's last call and lets its claim go.
	Record(ctx context.Context, tenant string, d Info, placed []Placed) error
	// Retire archives the document's active memories ids (all of them
	// when ids is nil), valid until at, and returns how many it archived.
	Retire(ctx context.Context, tenant, id string, ids []string, at time.Time) (int, error)
	// List returns the tenant's documents not removed, by id.
	List(ctx context.Context, tenant string) ([]Info, error)
	// Remove archives the document's active memories, valid until at, and
	// marks it removed, in one step, returning how many it archived; while
	// an import holds the document it removes nothing and returns
	// memory.ErrConflict, and a document removed already (and not imported
	// since) is memory.ErrNotFound.
	Remove(ctx context.Context, tenant, id string, at time.Time) (int, error)
	// Release lets the claim of an import that failed go.
	Release(ctx context.Context, tenant, id string) error
}

// Teams tells whether a team has an agent; graph/keystore implements it.
type Teams interface {
	TeamHasAgent(ctx context.Context, tenant, team string) (bool, error)
}

// Writer writes memories through the write pipeline; memory.Service
// implements it.
type Writer interface {
	Write(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error)
}

// Options are a Service's dependencies; Queue and Now are optional (no
// queue: every import is written at once).
type Options struct {
	Store  Store
	Writer Writer
	// Authz decides whether a principal may read a document's knowledge,
	// as it does for the sections themselves: the listing shows only
	// what the policy lets the caller read.
	Authz memory.Decider
	Queue memory.JobQueue
	// Sync brings a tenant's policy up to date before a queued import is
	// applied outside a request.
	Sync func(ctx context.Context, tenant string) error
	// Quota admits a queued import's new sections when it is accepted, as
	// a write is admitted; nil admits everything.
	Quota memory.Quota
	// Audit records each import and removal in the tenant's audit trail,
	// done or failed (an admin's act changes what every agent recalls);
	// nil records nothing.
	Audit memory.Auditor
	// Teams refuses an import into a team no agent is in (ErrUnknownTeam);
	// nil checks nothing.
	Teams Teams
	Now   func() time.Time
}

// Audit actions of this package.
const (
	AuditImport = "knowledge.import"
	AuditRemove = "knowledge.remove"
)

// Service imports, lists and removes documents.
type Service struct {
	store  Store
	writer Writer
	authz  memory.Decider
	queue  memory.JobQueue
	sync   func(ctx context.Context, tenant string) error
	quota  memory.Quota
	audit  memory.Auditor
	teams  Teams
	now    func() time.Time
}

// New returns a Service, or an error naming each missing dependency.
func New(o Options) (*Service, error) {
	var missing []error
	if o.Store == nil {
		missing = append(missing, errors.New("documents: a store is required"))
	}
	if o.Writer == nil {
		missing = append(missing, errors.New("documents: a writer is required"))
	}
	if o.Authz == nil {
		missing = append(missing, errors.New("documents: an authorizer is required"))
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{store: o.Store, writer: o.Writer, authz: o.Authz, queue: o.Queue, sync: o.Sync, quota: o.Quota, audit: o.Audit, teams: o.Teams, now: o.Now}, nil
}

// record puts an act of p in the audit trail, unless policy refused a
// non-admin (memory.Audited).
func (s *Service) record(ctx context.Context, p memory.Principal, action, id string, err error, details map[string]string) {
	if s.audit == nil || !memory.Audited(p, err) {
		return
	}
	if guard.Masked(id) != id {
		id = "(refused: it holds what the guard does not keep)"
	}
	e := memory.NewAuditEvent(ctx, p, action, "document:"+id, err, auditReason(err))
	e.Time, e.Details = s.now().UTC(), details
	s.audit.Audit(ctx, e)
}

// auditReasons are this package's errors by the code the API answers them
// with, which the trail gives too.
var auditReasons = []struct {
	err  error
	code string
}{
	{ErrTooLarge, "document_too_large"}, {ErrSections, "document_too_many_sections"}, {ErrEmpty, "document_empty"},
	{ErrFormat, "document_format"}, {ErrID, "document_id"}, {ErrOtherScope, "document_scope"},
	{ErrImportRunning, "document_busy"}, {ErrUnknownTeam, "unknown_team"},
}

func auditReason(err error) string {
	for _, r := range auditReasons {
		if errors.Is(err, r.err) {
			return r.code
		}
	}
	return memory.AuditReason(err)
}

// scopeOf validates the scope an import names.
func scopeOf(r ImportRequest) (kind, id string, err error) {
	switch r.Scope {
	case "", memory.ScopeTenant:
		if r.Team != "" {
			return "", "", memory.Invalid("team", "is named only with scope team")
		}
		return memory.ScopeTenant, "", nil
	case memory.ScopeTeam:
		if !knowledge.ValidID(r.Team) {
			return "", "", memory.Invalid("team", "scope team needs a team: 1–64 letters, digits or -_.:/@")
		}
		return memory.ScopeTeam, r.Team, nil
	}
	return "", "", memory.Invalid("scope", "must be tenant or team")
}

// MaxImportBytes bounds the body of an import request: a document at its
// limit (knowledge.MaxDocumentBytes) escaped in JSON, where a quote or a
// line break takes two bytes, and the fields around it.
const MaxImportBytes = 2*knowledge.MaxDocumentBytes + 64<<10

// admin refuses every principal but the tenant's admins: shared knowledge
// is theirs to write (policy decides again on every memory written).
func admin(p memory.Principal) error {
	if p.Kind != memory.KindAdmin {
		return memory.ErrForbidden
	}
	return nil
}

// errIDGuarded is an id the guard would mask: every section's key holds
// it, and the guard would refuse each as if its text held a card number.
var errIDGuarded = fmt.Errorf("%w; nor may it look like a card, phone or identity number", ErrID)

// idSeparators reads an id's separators as dashes, which the guard reads
// between a card's or a phone's groups.
var idSeparators = strings.NewReplacer(".", "-", ":", "-", "/", "-", "@", "-", "_", "-")

// guardedID reports whether id holds what the guard masks, its separators
// read as dashes ("4111:1111:1111:1111" is a card too).
func guardedID(id string) bool {
	dashed := idSeparators.Replace(id)
	return guard.Masked(id) != id || guard.Masked(dashed) != dashed
}

func split(r ImportRequest) (knowledge.Document, error) {
	if knowledge.ValidID(r.ID) && guardedID(r.ID) {
		return knowledge.Document{}, errIDGuarded
	}
	f := knowledge.Format(r.Format)
	if r.Format == "" {
		f = knowledge.Markdown
	}
	return knowledge.Split(r.ID, f, []byte(r.Content), knowledge.Options{})
}

// Import splits a document and writes what changed since its last import.
// A document of more than QueueAbove sections is queued when a queue is
// configured: the result then carries the job.
func (s *Service) Import(ctx context.Context, p memory.Principal, r ImportRequest) (res Result, err error) {
	defer func() { s.record(ctx, p, AuditImport, r.ID, err, importDetails(res)) }()
	if err := admin(p); err != nil {
		return Result{}, err
	}
	kind, scopeID, err := scopeOf(r)
	if err != nil {
		return Result{}, err
	}
	doc, err := split(r)
	if err != nil {
		return Result{}, err
	}
	if err := s.knownTeam(ctx, p.Tenant, doc.ID, kind, scopeID); err != nil {
		return Result{}, err
	}
	res = Result{Document: doc.ID, Sections: len(doc.Sections)}
	if len(doc.Sections) > QueueAbove && s.queue != nil {
		if err := s.admit(ctx, p.Tenant, doc); err != nil {
			return Result{}, err
		}
		// The import holds the document from now, not from when a worker
		// takes it: a removal or an import into another scope meanwhile is
		// refused as while it runs. The job's own claim renews it.
		now := s.now().UTC()
		if ok, err := s.store.Claim(ctx, p.Tenant, doc.ID, kind, scopeID, false, now, now.Add(ClaimFor)); err != nil {
			return Result{}, err
		} else if !ok {
			return Result{}, ErrOtherScope
		}
		job, err := s.enqueue(ctx, p, r)
		if err != nil {
			return Result{}, errors.Join(err, s.store.Release(context.WithoutCancel(ctx), p.Tenant, doc.ID))
		}
		res.Job = &job
		return res, nil
	}
	counts, _, err := s.apply(ctx, p, r, doc, s.now().UTC(), false)
	if err != nil {
		return Result{}, err
	}
	res.Counts = &counts
	return res, nil
}

// knownTeam returns ErrUnknownTeam when an import into team scope names a
// team no agent of the tenant is in, as a grant naming no agent is
// refused. A document already in that team's scope may be imported again
// (or emptied) after its agents left: only a new scope must be read.
func (s *Service) knownTeam(ctx context.Context, tenant, id, kind, team string) error {
	if kind != memory.ScopeTeam || s.teams == nil {
		return nil
	}
	if d, err := s.store.Document(ctx, tenant, id); err == nil && d.Scope == memory.ScopeTeam && d.ScopeID == team {
		return nil
	} else if err != nil && !errors.Is(err, memory.ErrNotFound) {
		return err
	}
	ok, err := s.teams.TeamHasAgent(ctx, tenant, team)
	if err == nil && !ok {
		err = ErrUnknownTeam
	}
	return err
}

// admit asks the quota for room for what importing doc would write now:
// its new and changed sections.
func (s *Service) admit(ctx context.Context, tenant string, doc knowledge.Document) error {
	if s.quota == nil {
		return nil
	}
	stored, err := s.store.Sections(ctx, tenant, doc.ID)
	if err != nil {
		return err
	}
	plan := knowledge.PlanImport(stored, doc)
	secs := plan.Create
	for _, rep := range plan.Supersede {
		secs = append(secs, rep.New)
	}
	var chars int64
	for _, sec := range secs {
		chars += int64(utf8.RuneCountInString(sec.Content()))
	}
	return s.quota.Admit(ctx, tenant, int64(len(secs)), chars)
}

// apply plans the import of doc against what is stored and writes it,
// holding the document's claim until it ends. asked is when the import was
// asked for (now, or when its job was accepted): the document records it as
// its import time, which a queued import older than it yields to
// (errLaterImport), once it holds the document.
func (s *Service) apply(ctx context.Context, p memory.Principal, r ImportRequest, doc knowledge.Document, asked time.Time, queued bool) (_ Counts, _ []Placed, err error) {
	// A client that hangs up must not cut the import between a batch's
	// write and its link to the document, which would leave sections in
	// force outside it: once begun, an import runs to its end, within its
	// claim's time.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ClaimFor)
	defer cancel()
	kind, scopeID, err := scopeOf(r)
	if err != nil {
		return Counts{}, nil, err
	}
	now := s.now().UTC()
	if ok, err := s.store.Claim(ctx, p.Tenant, doc.ID, kind, scopeID, true, now, now.Add(ClaimFor)); err != nil {
		return Counts{}, nil, err
	} else if !ok {
		return Counts{}, nil, ErrOtherScope
	}
	defer func() {
		if err != nil { // a removal need not wait for the claim to run out
			err = errors.Join(err, s.store.Release(context.WithoutCancel(ctx), p.Tenant, doc.ID))
		}
	}()
	if queued {
		if d, err := s.store.Document(ctx, p.Tenant, doc.ID); err != nil && !errors.Is(err, memory.ErrNotFound) {
			return Counts{}, nil, err
		} else if err == nil && d.ImportedAt.After(asked) {
			return Counts{}, nil, errLaterImport
		}
	}
	stored, err := s.store.Sections(ctx, p.Tenant, doc.ID)
	if err != nil {
		return Counts{}, nil, err
	}
	plan := knowledge.PlanImport(stored, doc)
	c := Counts{Unchanged: len(plan.Unchanged)}
	write := make([]knowledge.Section, 0, len(plan.Create)+len(plan.Supersede))
	write = append(write, plan.Create...)
	for _, rep := range plan.Supersede {
		write = append(write, rep.New)
	}
	info := Info{ID: doc.ID, Title: guard.Masked(doc.Title), Format: string(formatOf(r)), Sections: len(doc.Sections), ImportedAt: asked, Scope: kind, ScopeID: scopeID}
	// Each batch is linked to the document as soon as it is written, so a
	// later batch's failure leaves nothing written outside the document:
	// the next import finds it and goes on from there.
	record := func(batch []Placed) error {
		if batch == nil {
			batch = []Placed{} // nil is the last call, which lets the claim go
		}
		return s.store.Record(ctx, p.Tenant, info, batch)
	}
	placed, skipped, err := s.write(ctx, p, kind, scopeID, doc.ID, write, record)
	if err != nil {
		return Counts{}, nil, err
	}
	c.Skipped = skipped
	// Supersession by key happened in the write; counted by what was
	// planned and written.
	written := map[string]bool{}
	for _, pl := range placed {
		written[pl.Key] = pl.Created
		if !pl.Created {
			c.Unchanged++
		}
	}
	for _, sec := range plan.Create {
		if written[sec.Key] {
			c.Created++
		}
	}
	superseding := map[string]bool{}
	for _, rep := range plan.Supersede {
		if written[rep.New.Key] {
			c.Superseded++
			superseding[rep.New.Key] = true
		}
	}
	for i := range placed {
		placed[i].Superseding = superseding[placed[i].Key]
	}
	if err := s.store.Record(ctx, p.Tenant, info, nil); err != nil {
		return Counts{}, nil, err
	}
	if len(plan.Retire) > 0 {
		ids := make([]string, len(plan.Retire))
		for i, st := range plan.Retire {
			ids[i] = st.ID
		}
		// A supersession above may already have closed a duplicate of a
		// rewritten slot: Retire counts only what it archives.
		n, err := s.store.Retire(ctx, p.Tenant, doc.ID, ids, now)
		if err != nil {
			return Counts{}, nil, err
		}
		c.Retired = n
	}
	return c, placed, nil
}

func formatOf(r ImportRequest) knowledge.Format {
	if r.Format == "" {
		return knowledge.Markdown
	}
	return knowledge.Format(r.Format)
}

// write writes sections as shared memories, a batch at a time, and returns
// where each written memory sits and how many sections were skipped.
func (s *Service) write(ctx context.Context, p memory.Principal, kind, scopeID, docID string, secs []knowledge.Section, record func([]Placed) error) ([]Placed, int, error) {
	var placed []Placed
	skipped, done := 0, 0
	for start := 0; start < len(secs); start += memory.MaxBatch {
		batch := secs[start:min(start+memory.MaxBatch, len(secs))]
		in := make([]memory.NewMemory, len(batch))
		for i, sec := range batch {
			in[i] = sectionMemory(kind, scopeID, docID, sec)
		}
		results, err := s.writer.Write(ctx, p, in)
		if err != nil {
			return nil, 0, fmt.Errorf("write sections %d–%d: %w", start, start+len(batch)-1, sectionNamed(err, batch))
		}
		for i, r := range results {
			if r.ID == "" {
				skipped++
				continue
			}
			sec := batch[i]
			placed = append(placed, Placed{
				MemoryID: r.ID, Key: sec.Key, Digest: sec.Digest, Headings: sec.Headings,
				Position: sec.Position, Part: sec.Part, Created: r.Outcome == memory.OutcomeCreated,
			})
		}
		if err := record(placed[done:]); err != nil {
			return nil, 0, err
		}
		done = len(placed)
	}
	return placed, skipped, nil
}

// sectionNamed makes a guard's refusal of memories[i] of a batch name the
// section as the document has it: its number and heading.
func sectionNamed(err error, batch []knowledge.Section) error {
	var ge *memory.GuardError
	var i int
	if !errors.As(err, &ge) {
		return err
	}
	if _, scanErr := fmt.Sscanf(ge.Field, "memories[%d]", &i); scanErr != nil || i < 0 || i >= len(batch) {
		return err
	}
	field := fmt.Sprintf("section %d", batch[i].Position+1)
	if h := batch[i].Headings; len(h) > 0 {
		field += fmt.Sprintf(" (%q)", h[len(h)-1])
	}
	return &memory.GuardError{Field: field, Kinds: ge.Kinds}
}

// sectionMemory is the memory a section becomes.
func sectionMemory(kind, scopeID, docID string, sec knowledge.Section) memory.NewMemory {
	n := memory.NewMemory{
		Type: memory.TypeSemantic, Kind: KindSection, Key: sec.Key, Content: sec.Content(),
		Source: "kb:" + docID, Scope: &memory.ScopeRef{Kind: kind, ID: scopeID},
	}
	if sec.Procedure {
		n.Type, n.Kind = memory.TypeProcedural, KindProcedure
	}
	return n
}

// List returns the tenant's documents whose knowledge the policy lets p
// read, decided as for the sections themselves (sectionResource): a
// document's id, title and scope are its knowledge's too. A decision that
// ran out of time fails the listing, as a read would; another error
// denies.
func (s *Service) List(ctx context.Context, p memory.Principal) ([]Info, error) {
	if err := admin(p); err != nil {
		return nil, err
	}
	all, err := s.store.List(ctx, p.Tenant)
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	var out []Info
	for _, d := range all {
		dec, err := s.authz.Decide(ctx, p, memory.ActionRead, sectionResource(p.Tenant, d), now)
		switch {
		case errors.Is(err, memory.ErrUnavailable):
			return nil, err
		case err == nil && dec.Allow:
			out = append(out, d)
		}
	}
	return out, nil
}

// sectionResource is the policy view of a document's sections: shared
// knowledge of its scope, written by an admin, of the sensitivity the
// write path gives a section.
func sectionResource(tenant string, d Info) memory.Resource {
	return memory.Resource{
		Tenant: tenant, Type: memory.TypeSemantic, Kind: KindSection, Sensitivity: memory.SensitivityInternal,
		Status: memory.StatusActive, Scope: d.Scope, ScopeID: d.ScopeID, Author: memory.AuthorAgent,
	}
}

// Remove retires every section of a document and marks it removed; the
// memories stay in the history, archived with valid_to.
func (s *Service) Remove(ctx context.Context, p memory.Principal, id string) (n int, err error) {
	defer func() { s.record(ctx, p, AuditRemove, id, err, map[string]string{"retired": strconv.Itoa(n)}) }()
	if err := admin(p); err != nil {
		return 0, err
	}
	if !knowledge.ValidID(id) || guardedID(id) {
		return 0, ErrID
	}
	if _, err := s.store.Document(ctx, p.Tenant, id); err != nil {
		return 0, err
	}
	// One step, refused while an import runs: retired between an import's
	// writes and its record, a document vanished from the list while the
	// import's sections stayed in force.
	n, err = s.store.Remove(ctx, p.Tenant, id, s.now().UTC())
	if errors.Is(err, memory.ErrConflict) {
		return 0, ErrImportRunning
	}
	return n, err
}

// importDetails are the counts of an import, or its job, for the trail.
func importDetails(r Result) map[string]string {
	d := map[string]string{"sections": strconv.Itoa(r.Sections)}
	if c := r.Counts; c != nil {
		d["created"], d["superseded"], d["retired"] = strconv.Itoa(c.Created), strconv.Itoa(c.Superseded), strconv.Itoa(c.Retired)
	}
	if r.Job != nil {
		d["job"] = r.Job.ID
	}
	return d
}
