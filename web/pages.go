package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"mneme/memory"
	"mneme/metrics"
	"mneme/policyadmin"
)

// userCounts are one user's memories by type and by status.
type userCounts struct {
	User     string
	Total    int64
	ByType   map[string]int64
	ByStatus map[string]int64
}

type overviewData struct {
	Users []userCounts
	// Total is every memory of the tenant the viewer may read, counted at
	// CountedAt.
	Total     int64
	CountedAt time.Time
	Types     []string
	States    []string

	Policy policyadmin.PolicyState
	// Hour and Day are the four figures over the last hour and day.
	Hour, Day metrics.Figures
	Series    string // JSON of the history for the charts
	Queue     metrics.QueueState
	QueueOK   bool
	HasFigs   bool
}

// overview counts every memory of the tenant the admin may read, by user,
// type and status, in one query under the read policy, beside the policy's
// revisions and this replica's figures. The sources are independent, so
// they are read at once: the page takes as long as the slowest.
func (p *Panel) overview(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := adminOnly(c); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := overviewData{Types: memory.Types, States: memory.Statuses}
	var counts []Count
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		t0 := time.Now()
		counts, d.CountedAt, err = p.census.Count(gctx, c.Principal)
		record(gctx, "census", time.Since(t0))
		return err
	})
	g.Go(func() (err error) {
		d.Policy, err = timed(gctx, "policy", func() (policyadmin.PolicyState, error) { return p.admin.PolicyStatus(gctx, c.Principal) })
		return err
	})
	if p.metrics != nil {
		d.HasFigs = true
		// A queue that cannot be read shows as not read; the page stands.
		g.Go(func() error {
			t0 := time.Now()
			q, ok, err := p.metrics.Queue(gctx)
			record(gctx, "queue", time.Since(t0))
			d.Queue, d.QueueOK = q, ok && err == nil
			return nil
		})
		t0 := time.Now()
		h := p.metrics.History(c.Tenant)
		d.Hour, d.Day = h.Figures(time.Hour), h.Figures(24*time.Hour)
		d.Series = series(h.Points(24 * time.Hour))
		record(ctx, "history", time.Since(t0))
	}
	if err := g.Wait(); err != nil {
		return err
	}
	byUser := map[string]*userCounts{}
	for _, n := range counts {
		u := byUser[n.UserID]
		if u == nil {
			u = &userCounts{User: n.UserID, ByType: map[string]int64{}, ByStatus: map[string]int64{}}
			byUser[n.UserID] = u
		}
		u.Total += n.N
		u.ByType[n.Type] += n.N
		u.ByStatus[n.Status] += n.N
		d.Total += n.N
	}
	for _, u := range byUser {
		d.Users = append(d.Users, *u)
	}
	slices.SortFunc(d.Users, func(a, b userCounts) int { return strings.Compare(a.User, b.User) })
	// The shared knowledge (no user) goes last, on a row that links to its
	// own page.
	if len(d.Users) > 0 && d.Users[0].User == "" {
		d.Users = append(d.Users[1:], d.Users[0])
	}
	return p.page(w, r, c, "overview", "Overview", d)
}

// series turns the history into the columns uPlot charts: times, then one
// column per line, hourly totals derived from the buckets.
func series(pts []metrics.Point) string {
	cols := make([][]float64, 6)
	for _, pt := range pts {
		cols[0] = append(cols[0], float64(pt.Start.Unix()))
		cols[1] = append(cols[1], float64(pt.Writes))
		cols[2] = append(cols[2], float64(pt.Recalls))
		cols[3] = append(cols[3], float64(pt.Deletes))
		cols[4] = append(cols[4], pt.RecallP50)
		cols[5] = append(cols[5], pt.RecallP95)
	}
	b, _ := json.Marshal(cols)
	return string(b)
}

// userFilter is the user page's filter form.
type userFilter struct {
	Type, Kind, Status, Agent, Query, From, To, History, Explain string
}

// lastRecall is a memory's part in the latest recall that returned it.
type lastRecall struct {
	ID      string
	Record  memory.RecallRecord
	Score   float64
	Explain *memory.Explain
}

type userData struct {
	User     string
	Filter   userFilter
	Memories []memory.Memory
	More     string // the next page's URL
	History  []memory.Memory
	// Explain is the memory Filter.Explain names in its last recall; nil
	// when the recall log holds none.
	Explain *lastRecall
	Admin   bool
	Types   []string
	States  []string
	Self    bool
	Back    string
}

// me is an end user's own page. An analyst or an admin has no memories of
// its own, and its id may be a user's too: the page would be that user's.
func (p *Panel) me(w http.ResponseWriter, r *http.Request, c caller) error {
	if c.Kind != memory.KindUser {
		return memory.ErrNotFound
	}
	return p.userPage(w, r, c, c.ID)
}

func (p *Panel) user(w http.ResponseWriter, r *http.Request, c caller) error {
	id := r.PathValue("id")
	if !c.Admin() && (c.Kind != memory.KindUser || id != c.ID) {
		return memory.ErrNotFound
	}
	return p.userPage(w, r, c, id)
}

// userPage lists a user's memories, filtered, with a memory's version
// history when one is asked for. End users see their own; policy decides
// what each memory shows.
func (p *Panel) userPage(w http.ResponseWriter, r *http.Request, c caller, id string) error {
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	q := r.URL.Query()
	f := userFilter{
		Type: q.Get("type"), Kind: q.Get("kind"), Status: q.Get("status"), Agent: q.Get("agent"),
		Query: q.Get("q"), From: q.Get("from"), To: q.Get("to"), History: q.Get("history"), Explain: q.Get("explain"),
	}
	req := memory.ListRequest{
		UserID: id, Type: f.Type, Kind: f.Kind, Status: f.Status, Agent: f.Agent, Text: f.Query,
		Cursor: q.Get("cursor"), Limit: memory.DefaultListSize,
	}
	var err error
	if req.From, err = day(f.From, "from"); err != nil {
		return err
	}
	if req.To, err = day(f.To, "to"); err != nil {
		return err
	}
	page, err := timed(ctx, "list", func() (memory.Page, error) { return p.svc.List(ctx, c.Principal, req) })
	if err != nil {
		return err
	}
	d := userData{
		User: id, Filter: f, Memories: page.Memories, Types: memory.Types, States: memory.Statuses,
		Self: id == c.ID && c.Kind == memory.KindUser, Back: r.URL.RequestURI(), Admin: c.Admin(),
	}
	if page.NextCursor != "" {
		next := r.URL.Query()
		next.Set("cursor", page.NextCursor)
		d.More = r.URL.Path + "?" + next.Encode()
	}
	if f.History != "" {
		if d.History, err = p.svc.History(ctx, c.Principal, f.History); err != nil {
			return err
		}
	}
	if f.Explain != "" && c.Admin() {
		if d.Explain, err = p.lastRecall(ctx, c, id, f.Explain); err != nil {
			return err
		}
	}
	return p.page(w, r, c, "user", "Memories of "+id, d)
}

// lastRecall finds memory id in the newest recall of user's log that
// returned it, if the memory is one the admin may read.
func (p *Panel) lastRecall(ctx context.Context, c caller, user, id string) (*lastRecall, error) {
	if _, err := p.svc.Get(ctx, c.Principal, id); err != nil {
		return nil, err
	}
	recs, err := p.recallLog.RecallLog(ctx, c.Principal, user, recallsListed)
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		for _, rm := range rec.Memories {
			if rm.ID == id {
				return &lastRecall{ID: id, Record: rec, Score: rm.Score, Explain: rm.Explain}, nil
			}
		}
	}
	return &lastRecall{ID: id}, nil
}

// day parses a YYYY-MM-DD filter.
func day(s, field string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return time.Time{}, memory.Invalid(field, "must be a date such as 2026-01-31")
	}
	return t, nil
}

func (p *Panel) deleteMemory(w http.ResponseWriter, r *http.Request, c caller) error {
	rec, err := p.svc.Delete(r.Context(), c.Principal, r.PathValue("id"), "deleted in the panel")
	if err != nil {
		return err
	}
	p.census.Forget(c.Tenant)
	if p.metrics != nil {
		p.metrics.Deleted(rec)
	}
	back(w, r, "/panel/me")
	return nil
}

func (p *Panel) confirmMemory(w http.ResponseWriter, r *http.Request, c caller) error {
	if _, err := p.svc.Confirm(r.Context(), c.Principal, r.PathValue("id")); err != nil {
		return err
	}
	p.census.Forget(c.Tenant)
	back(w, r, "/panel/me")
	return nil
}

// forgetUser erases a user everywhere and shows the receipt. A user who
// forgets themselves loses their key with everything else, so the session
// ends with this page.
func (p *Panel) forgetUser(w http.ResponseWriter, r *http.Request, c caller) error {
	id := r.PathValue("id")
	if r.PostFormValue("confirm") != id {
		return memory.Invalid("confirm", "type the user's id to confirm")
	}
	rec, err := p.svc.EraseUser(r.Context(), c.Principal, id)
	if err != nil {
		return err
	}
	p.census.Forget(c.Tenant)
	if p.metrics != nil {
		p.metrics.Erased(rec)
	}
	if id == c.ID {
		http.SetCookie(w, cookie(r, sessionCookie, "", 0))
	}
	places := make([]string, 0, len(rec.Counts))
	for k := range rec.Counts {
		places = append(places, k)
	}
	slices.Sort(places)
	return p.page(w, r, c, "receipt", "Forgotten", receiptData{Receipt: rec, Places: places})
}

type receiptData struct {
	Receipt memory.Receipt
	Places  []string
}

// recallView is one recall of the log with the memories it returned, each
// read again under the caller's principal (a deleted one shows as gone),
// and the context block handed over, rebuilt from those memories: the log
// keeps no content.
type recallView struct {
	Record   memory.RecallRecord
	Memories []recalledView
	Context  string
	// Whole is true when the rebuilt block is as long as the one handed
	// over: no memory of it has gone since.
	Whole bool
}

type recalledView struct {
	ID      string
	Score   float64
	Explain *memory.Explain
	Memory  *memory.Memory
}

type recallsData struct {
	User    string
	Recalls []recallView
}

// recallsShown caps the recalls the page shows.
const recallsShown = 10

func (p *Panel) recalls(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := adminOnly(c); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := recallsData{User: r.URL.Query().Get("user")}
	if d.User != "" {
		recs, err := p.recallLog.RecallLog(ctx, c.Principal, d.User, recallsShown)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			v := recallView{Record: rec}
			var shown []memory.Recalled
			for _, rm := range rec.Memories {
				rv := recalledView{ID: rm.ID, Score: rm.Score, Explain: rm.Explain}
				if m, err := p.svc.Get(ctx, c.Principal, rm.ID); err == nil {
					rv.Memory = &m
					shown = append(shown, memory.Recalled{Memory: m})
				}
				v.Memories = append(v.Memories, rv)
			}
			v.Context = memory.ContextBlock(shown)
			v.Whole = utf8.RuneCountInString(v.Context) == rec.ContextChars
			d.Recalls = append(d.Recalls, v)
		}
	}
	return p.page(w, r, c, "recalls", "Recalls", d)
}

type deletionsData struct {
	Events []memory.AuditEvent
}

// deletions lists deletes and erases from the audit trail: who, when, what
// (an id, never the content) and how it ended.
func (p *Panel) deletions(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := adminOnly(c); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	var d deletionsData
	for _, action := range []string{memory.AuditMemoryDelete, memory.AuditUserErase} {
		es, err := p.admin.AuditTrail(ctx, c.Principal, memory.AuditQuery{Action: action, Limit: 200})
		if err != nil {
			return err
		}
		d.Events = append(d.Events, es...)
	}
	slices.SortFunc(d.Events, func(a, b memory.AuditEvent) int { return b.Time.Compare(a.Time) })
	return p.page(w, r, c, "deletions", "Deletions", d)
}

type policyData struct {
	State     policyadmin.PolicyState
	Revisions []policyadmin.PolicyRevision
	Grants    policyadmin.GrantSet
	Decisions []policyadmin.DecisionRecord
	Filter    url.Values
	DiffA     string
	DiffB     string
	Diff      string
	SimInput  string
	// SimOf is the revision the simulation form names; empty means the
	// active one.
	SimOf string
	Sim   *policyadmin.Simulation
	// Edit is the grant the grant form edits; nil makes a new one.
	Edit          *memory.Grant
	Types         []string
	Sensitivities []string
	// Replay is a draft's replay against the recent decisions: a stored
	// revision (ReplayOf), or the active revision with one module pasted
	// (DraftModule, DraftSource); DraftError is why a draft was refused.
	ReplayOf    string
	Replay      *policyadmin.ReplayReport
	DraftModule string
	DraftSource string
	DraftError  string
	// Refused says the policy in force refused the caller the grants or
	// the decision log: the page still shows the state and revisions,
	// which a tenant's admin may always read and roll back.
	Refused string
	// status is the page's HTTP status: a refused draft is shown on the
	// page itself, with the status the API would answer.
	status int
}

func (p *Panel) policy(w http.ResponseWriter, r *http.Request, c caller) error {
	return p.policyPage(w, r, c, policyData{})
}

// policyPage renders the policy page; d carries what a form post adds
// (a simulation or a replay).
func (p *Panel) policyPage(w http.ResponseWriter, r *http.Request, c caller, d policyData) error {
	if err := adminOnly(c); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	q := r.URL.Query()
	d.Filter, d.DiffA, d.DiffB = q, q.Get("a"), q.Get("b")
	d.Types, d.Sensitivities = memory.Types, memory.Sensitivities
	if d.SimInput == "" {
		d.SimInput = `{"principal": {"kind": "agent", "id": "support-bot"}, "action": "read", "resource": {"user_id": "alice", "type": "profile", "agent_id": "order-bot", "sensitivity": "internal"}}`
	}
	var err error
	if d.State, err = p.admin.PolicyStatus(ctx, c.Principal); err != nil {
		return err
	}
	if d.Revisions, err = p.admin.ListPolicies(ctx, c.Principal); err != nil {
		return err
	}
	d.Grants, err = p.admin.Grants(ctx, c.Principal)
	if refusedByPolicy(err) {
		d.Refused = err.Error()
	} else if err != nil {
		return err
	}
	if edit := q.Get("edit"); edit != "" {
		for i, g := range d.Grants.Grants {
			if g.ID == edit {
				d.Edit = &d.Grants.Grants[i]
			}
		}
		if d.Edit == nil {
			return memory.ErrNotFound
		}
	}
	d.Decisions, err = p.admin.Decisions(ctx, c.Principal, policyadmin.DecisionQuery{
		Principal: q.Get("principal"), Result: q.Get("result"), Action: q.Get("action"), Limit: 50,
	})
	if refusedByPolicy(err) {
		d.Refused = err.Error()
	} else if err != nil {
		return err
	}
	if d.DraftModule == "" {
		d.DraftModule = "authz.rego"
	}
	if d.DraftSource == "" {
		active, err := p.admin.Policy(ctx, c.Principal, d.State.Active)
		if err != nil {
			return err
		}
		if m, ok := module(active.Modules, d.DraftModule); ok {
			d.DraftSource = m.Source
		}
	}
	if d.DiffA != "" && d.DiffB != "" {
		a, errA := strconv.ParseInt(d.DiffA, 10, 64)
		b, errB := strconv.ParseInt(d.DiffB, 10, 64)
		if errA != nil || errB != nil {
			return memory.Invalid("a", "revisions are whole numbers")
		}
		if d.Diff, err = p.admin.DiffPolicies(ctx, c.Principal, a, b); err != nil {
			return err
		}
	}
	return p.policyView(w, r, c, d)
}

// refusedByPolicy reports whether err is the policy in force refusing the
// caller, or running out of time deciding: what rolling it back undoes.
func refusedByPolicy(err error) bool {
	return errors.Is(err, memory.ErrForbidden) || errors.Is(err, policyadmin.ErrPolicyTimeout)
}

// simulate decides one input against a stored revision and shows it on the
// policy page: the revision the form names, or the active one when it
// names none. The input's principal is always in the caller's tenant.
func (p *Panel) simulate(w http.ResponseWriter, r *http.Request, c caller) error {
	raw := r.PostFormValue("input")
	var in policyadmin.DecisionInput
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return memory.Invalid("input", "is not a decision input in JSON")
	}
	in.Principal.Tenant, in.Resource.Tenant = c.Tenant, c.Tenant
	of := strings.TrimSpace(r.PostFormValue("revision"))
	var n int64
	if of == "" {
		state, err := p.admin.PolicyStatus(r.Context(), c.Principal)
		if err != nil {
			return err
		}
		n = state.Active
	} else {
		var err error
		if n, err = strconv.ParseInt(of, 10, 64); err != nil {
			return memory.Invalid("revision", "must be a revision number (empty: the active one)")
		}
	}
	sim, err := p.admin.Simulate(r.Context(), c.Principal, policyadmin.SimulateRequest{Revision: &n, Input: in, Explain: true})
	if err != nil {
		return err
	}
	return p.policyPage(w, r, c, policyData{SimInput: raw, SimOf: of, Sim: &sim})
}

// replay decides the recent logged decisions again against a draft, and
// shows those that would change: a stored revision that is not active, or
// the active revision with one module replaced by Rego pasted in the form.
func (p *Panel) replay(w http.ResponseWriter, r *http.Request, c caller) error {
	if _, pasted := r.PostForm["source"]; pasted {
		return p.replayPasted(w, r, c)
	}
	raw := r.PostFormValue("revision")
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return memory.Invalid("revision", "must be a revision number")
	}
	rep, err := p.admin.Replay(r.Context(), c.Principal, policyadmin.ReplayRequest{Revision: &n})
	if err != nil {
		return err
	}
	return p.policyPage(w, r, c, policyData{ReplayOf: raw, Replay: &rep})
}

// grantForm reads the grant form: lists are comma-separated, the expiry a
// date (empty: none).
func grantForm(r *http.Request) (policyadmin.NewGrant, error) {
	list := func(s string) []string {
		var out []string
		for _, x := range strings.Split(s, ",") {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
		return out
	}
	n := policyadmin.NewGrant{
		Grantee: strings.TrimSpace(r.PostFormValue("grantee")), Source: strings.TrimSpace(r.PostFormValue("source")),
		Types: r.PostForm["types"], Kinds: list(r.PostFormValue("kinds")), MaxSensitivity: r.PostFormValue("max_sensitivity"),
	}
	expires, err := day(r.PostFormValue("expires"), "expires")
	if err != nil {
		return n, err
	}
	if !expires.IsZero() {
		n.ExpiresAt = &expires
	}
	return n, nil
}

func (p *Panel) createGrant(w http.ResponseWriter, r *http.Request, c caller) error {
	n, err := grantForm(r)
	if err != nil {
		return err
	}
	if _, _, err := p.admin.CreateGrant(r.Context(), c.Principal, n); err != nil {
		return err
	}
	http.Redirect(w, r, "/panel/policy", http.StatusSeeOther)
	return nil
}

// editGrant replaces every field of a grant with the form's.
func (p *Panel) editGrant(w http.ResponseWriter, r *http.Request, c caller) error {
	n, err := grantForm(r)
	if err != nil {
		return err
	}
	kinds := n.Kinds
	if kinds == nil {
		kinds = []string{}
	}
	change := policyadmin.GrantChange{
		Grantee: &n.Grantee, Source: &n.Source, Types: &n.Types, Kinds: &kinds,
		MaxSensitivity: &n.MaxSensitivity, ExpiresAt: n.ExpiresAt, NoExpiry: n.ExpiresAt == nil,
	}
	if _, err := p.admin.UpdateGrant(r.Context(), c.Principal, r.PathValue("id"), change); err != nil {
		return err
	}
	http.Redirect(w, r, "/panel/policy", http.StatusSeeOther)
	return nil
}

func (p *Panel) activate(w http.ResponseWriter, r *http.Request, c caller) error {
	n, err := strconv.ParseInt(r.PostFormValue("number"), 10, 64)
	if err != nil {
		return memory.Invalid("number", "must be a revision number")
	}
	if _, err := p.admin.ActivatePolicy(r.Context(), c.Principal, n); err != nil {
		return err
	}
	http.Redirect(w, r, "/panel/policy", http.StatusSeeOther)
	return nil
}

func (p *Panel) rollback(w http.ResponseWriter, r *http.Request, c caller) error {
	if _, err := p.admin.RollbackPolicy(r.Context(), c.Principal, nil); err != nil {
		return err
	}
	http.Redirect(w, r, "/panel/policy", http.StatusSeeOther)
	return nil
}

func (p *Panel) deleteGrant(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := p.admin.DeleteGrant(r.Context(), c.Principal, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, "/panel/policy", http.StatusSeeOther)
	return nil
}

// knowledgeScope is one scope's shared knowledge, each memory with its
// versions.
type knowledgeScope struct {
	Name     string // "tenant", "team:<id>" or "agent:<id>"
	Memories []knowledgeItem
}

type knowledgeItem struct {
	Memory   memory.Memory
	Versions []memory.Memory
}

// knowledge lists the tenant's shared knowledge by scope, every status,
// each memory with its version history.
func (p *Panel) knowledge(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := adminOnly(c); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	page, err := p.svc.List(ctx, c.Principal, memory.ListRequest{Shared: true, Limit: memory.MaxListSize})
	if err != nil {
		return err
	}
	var scopes []knowledgeScope
	at := map[string]int{}
	for _, m := range page.Memories {
		name := memory.ScopeOf(m)
		if m.ScopeID != "" {
			name += ":" + m.ScopeID
		}
		i, ok := at[name]
		if !ok {
			i = len(scopes)
			at[name] = i
			scopes = append(scopes, knowledgeScope{Name: name})
		}
		item := knowledgeItem{Memory: m}
		if item.Versions, err = p.svc.History(ctx, c.Principal, m.ID); err != nil {
			return err
		}
		scopes[i].Memories = append(scopes[i].Memories, item)
	}
	slices.SortStableFunc(scopes, func(a, b knowledgeScope) int { return strings.Compare(a.Name, b.Name) })
	return p.page(w, r, c, "knowledge", "Shared knowledge", struct {
		Scopes []knowledgeScope
		More   bool
	}{scopes, page.NextCursor != ""})
}
