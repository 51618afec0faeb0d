// Package eval measures recall quality. It holds a fixed set of questions in
// Chinese and English (questions.json) over two datasets — the demo data and
// a larger generated one (Generate) with many users, distractors and
// superseded versions — each naming, by seed ref, the memories that must
// come back and those that must not. Run loads the datasets into fresh
// tenants through the memory service, asks every question through real
// recall under policy, and scores recall@5, MRR, forbidden memories returned
// and the share of unrelated questions that recall nothing.
package eval

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"mneme/memory"
	"mneme/seed"
)

//go:embed questions.json
var questionsJSON []byte

// K is how many memories each question asks for.
const K = 5

// Dataset names questions refer to.
const (
	DatasetDemo      = "demo"
	DatasetGenerated = "generated"
)

// Question is one evaluation question. Refs are seed refs of its dataset.
type Question struct {
	ID      string `json:"id"`
	Dataset string `json:"dataset"`
	Lang    string `json:"lang"` // language of the query: en or zh
	// As is who asks: an agent id, "user" for the user the question is
	// about, or "admin".
	As    string `json:"as"`
	User  string `json:"user"`
	Query string `json:"query"`
	// Expect are the memories that must come back, best first when it
	// matters; empty means the question is answered by nothing.
	Expect []string `json:"expect"`
	// Forbid are memories that must not come back, beyond those Run forbids
	// for every question: other users' memories, memories that are not
	// active, and memories policy hides from the asker.
	Forbid []string `json:"forbid,omitempty"`
	// Unrelated marks a question about nothing the user has: it must recall
	// nothing at all.
	Unrelated bool   `json:"unrelated,omitempty"`
	Note      string `json:"note,omitempty"`
	// Split is SplitTune or SplitHeldOut. Held-out questions are never
	// looked at while tuning recall (its lexicons, cues and thresholds);
	// their scores are the honest ones.
	Split string `json:"split"`
	// Category is what the question tests: seed (the datasets' own
	// sentences), seed-sentence (sentences users tried on the demo),
	// paraphrase (no word shared with the memory), cross-language,
	// about-user (generic questions about the user), old-vs-current,
	// chit-chat and unrelated.
	Category string `json:"category"`
}

// Splits of the question set.
const (
	SplitTune    = "tune"
	SplitHeldOut = "heldout"
)

// Categories are the kinds of question the set holds.
var Categories = []string{"seed", "seed-sentence", "paraphrase", "cross-language", "about-user", "old-vs-current", "chit-chat", "unrelated"}

// Questions returns the fixed question set, checked against the datasets.
func Questions() ([]Question, error) {
	dec := json.NewDecoder(bytes.NewReader(questionsJSON))
	dec.DisallowUnknownFields()
	var qs []Question
	if err := dec.Decode(&qs); err != nil {
		return nil, fmt.Errorf("eval: questions.json: %w", err)
	}
	demo, err := seed.Demo()
	if err != nil {
		return nil, err
	}
	if err := Check(qs, map[string]*seed.Dataset{DatasetDemo: demo, DatasetGenerated: Generate()}); err != nil {
		return nil, err
	}
	return qs, nil
}

// Check reports every question that names an unknown dataset, user, asker
// or ref, repeats an id, or contradicts itself.
func Check(qs []Question, datasets map[string]*seed.Dataset) error {
	var errs []error
	ids := map[string]bool{}
	for _, q := range qs {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("eval: question %s: "+format, append([]any{q.ID}, args...)...))
		}
		if q.ID == "" || ids[q.ID] {
			bad("id empty or repeated")
		}
		ids[q.ID] = true
		ds, ok := datasets[q.Dataset]
		if !ok {
			bad("unknown dataset %q", q.Dataset)
			continue
		}
		if q.Split != SplitTune && q.Split != SplitHeldOut {
			bad("split %q is not %s or %s", q.Split, SplitTune, SplitHeldOut)
		}
		if !slices.Contains(Categories, q.Category) {
			bad("category %q is not one of %v", q.Category, Categories)
		}
		if (q.Category == "chit-chat" || q.Category == "unrelated") != q.Unrelated {
			bad("chit-chat and unrelated questions, and only they, are unrelated")
		}
		if q.Lang != "en" && q.Lang != "zh" {
			bad("lang %q is not en or zh", q.Lang)
		}
		if strings.TrimSpace(q.Query) == "" {
			bad("empty query")
		}
		refs := map[string]seed.Memory{}
		for _, m := range ds.Memories {
			refs[m.Ref] = m
		}
		if !slices.ContainsFunc(ds.Users, func(u seed.User) bool { return u.ID == q.User }) {
			bad("unknown user %q", q.User)
		}
		if q.As != "user" && q.As != "admin" && !slices.ContainsFunc(ds.Agents, func(a seed.Agent) bool { return a.ID == q.As }) {
			bad("unknown asker %q", q.As)
		}
		for _, r := range q.Expect {
			m, ok := refs[r]
			switch {
			case !ok:
				bad("expects unknown ref %q", r)
			case m.UserID != q.User && m.UserID != "":
				// "" is the tenant's shared knowledge, recalled beside every user's memories.
				bad("expects %q, a memory of another user", r)
			case m.Status != "" && m.Status != memory.StatusActive:
				bad("expects %q, which is not active", r)
			case slices.Contains(q.Forbid, r):
				bad("both expects and forbids %q", r)
			}
		}
		for _, r := range q.Forbid {
			if _, ok := refs[r]; !ok {
				bad("forbids unknown ref %q", r)
			}
		}
		if q.Unrelated && len(q.Expect) > 0 {
			bad("is unrelated but expects memories")
		}
	}
	return errors.Join(errs...)
}

// Service is what Run needs from a running Mneme: *memory.Service.
type Service interface {
	Import(ctx context.Context, n memory.NewMemory, createdAt time.Time, status string) (memory.Memory, error)
	Recall(ctx context.Context, p memory.Principal, r memory.RecallRequest) (memory.RecallResult, error)
	Get(ctx context.Context, p memory.Principal, id string) (memory.Memory, error)
}

// Granter stores the dataset's sharing grants: *policyadmin.Service.
type Granter interface {
	PutGrant(ctx context.Context, g memory.Grant) error
}

// Directory registers agents and users: keystore.Store (package graph/keystore).
type Directory interface {
	EnsureAgent(ctx context.Context, tenant, id, team string) error
	EnsureUser(ctx context.Context, tenant, id, name string) error
}

// Loaded is a dataset in a tenant, with the id each ref received.
type Loaded struct {
	Dataset *seed.Dataset
	Tenant  string
	IDs     map[string]string // ref → memory id
	Refs    map[string]string // memory id → ref
}

// Load writes ds into tenant through the service, as the seed loader does,
// and records the id of every memory. API keys are not written: Run asks as
// principals directly.
func Load(ctx context.Context, svc Service, grants Granter, dir Directory, ds *seed.Dataset, tenant string) (*Loaded, error) {
	c := *ds
	c.Tenant, c.APIKeys = tenant, nil
	sink := &loadSink{svc: svc, grants: grants, dir: dir, l: &Loaded{Dataset: &c, Tenant: tenant, IDs: map[string]string{}, Refs: map[string]string{}}}
	if _, err := seed.Load(ctx, &c, sink); err != nil {
		return nil, err
	}
	return sink.l, nil
}

// Lister pages through a tenant's memories: *memory.Service.
type Lister interface {
	List(ctx context.Context, p memory.Principal, r memory.ListRequest) (memory.Page, error)
}

// Attach finds ds already loaded into tenant by an earlier Load — to ask the
// questions again after a change of ranking or a re-embedding, without
// loading again — and recovers the id of every ref from the idempotency keys
// Load gave the memories.
func Attach(ctx context.Context, svc Lister, ds *seed.Dataset, tenant string) (*Loaded, error) {
	c := *ds
	c.Tenant, c.APIKeys = tenant, nil
	l := &Loaded{Dataset: &c, Tenant: tenant, IDs: map[string]string{}, Refs: map[string]string{}}
	admin := memory.Principal{Tenant: tenant, Kind: memory.KindAdmin, ID: "admin", Roles: []string{"admin"}}
	prefix := seed.IdempotencyKey("")
	for _, status := range memory.Statuses {
		req := memory.ListRequest{Status: status, Limit: memory.MaxListSize}
		for {
			page, err := svc.List(ctx, admin, req)
			if err != nil {
				return nil, err
			}
			for _, m := range page.Memories {
				if ref, ok := strings.CutPrefix(m.IdempotencyKey, prefix); ok {
					l.IDs[ref], l.Refs[m.ID] = m.ID, ref
				}
			}
			if page.NextCursor == "" {
				break
			}
			req.Cursor = page.NextCursor
		}
	}
	if len(l.IDs) != len(ds.Memories) {
		return nil, fmt.Errorf("eval: tenant %s holds %d of the %d memories of the dataset", tenant, len(l.IDs), len(ds.Memories))
	}
	return l, nil
}

type loadSink struct {
	svc    Service
	grants Granter
	dir    Directory
	l      *Loaded
}

func (s *loadSink) PutAPIKey(context.Context, string, memory.Principal) error { return nil }

func (s *loadSink) EnsureAgent(ctx context.Context, tenant, id, team string) error {
	return s.dir.EnsureAgent(ctx, tenant, id, team)
}

func (s *loadSink) EnsureUser(ctx context.Context, tenant, id, name string) error {
	return s.dir.EnsureUser(ctx, tenant, id, name)
}

func (s *loadSink) PutGrant(ctx context.Context, g memory.Grant) error {
	return s.grants.PutGrant(ctx, g)
}

func (s *loadSink) WriteMemory(ctx context.Context, m memory.Memory) error {
	imp, conf := m.Importance, m.Confidence
	got, err := s.svc.Import(ctx, memory.NewMemory{
		Tenant: m.Tenant, UserID: m.UserID, AgentID: m.AgentID, SessionID: m.SessionID, Type: m.Type,
		Kind: m.Kind, Key: m.Key, Content: m.Content, Sensitivity: m.Sensitivity,
		Importance: &imp, Confidence: &conf, Source: m.Source, Entities: m.Entities,
		IdempotencyKey: m.IdempotencyKey, Scope: &memory.ScopeRef{Kind: memory.ScopeOf(m), ID: m.ScopeID}, ValidTo: m.ValidTo,
	}, m.CreatedAt, m.Status)
	if err != nil {
		return err
	}
	ref := strings.TrimPrefix(m.IdempotencyKey, seed.IdempotencyKey(""))
	s.l.IDs[ref], s.l.Refs[got.ID] = got.ID, ref
	return nil
}

// Outcome is what one question got.
type Outcome struct {
	Question  Question
	Got       []string // refs returned, in order
	Gates     []string // the relevance gate each of Got passed
	Hits      int      // expected refs among the first K
	RR        float64  // reciprocal rank of the first expected ref, 0 if none
	Forbidden []string // forbidden refs returned
	CrossLang bool     // the query's language differs from an expected memory's
}

// Run asks every question whose dataset is loaded and returns the outcomes.
func Run(ctx context.Context, svc Service, loaded map[string]*Loaded, qs []Question) ([]Outcome, error) {
	ps, err := Prepare(ctx, svc, loaded, qs)
	if err != nil {
		return nil, err
	}
	return Ask(ctx, svc, ps)
}

// Prepared is a question whose dataset is loaded, with the refs it must not
// bring back: what does not change between runs of recall.
type Prepared struct {
	Question  Question
	loaded    *Loaded
	forbidden map[string]bool
}

// Prepare finds, for every question whose dataset is loaded, what it must
// not bring back, so that Ask can ask it again and again (with recall tuned
// differently) without looking it up each time.
func Prepare(ctx context.Context, svc Service, loaded map[string]*Loaded, qs []Question) ([]Prepared, error) {
	var out []Prepared
	for _, q := range qs {
		l, ok := loaded[q.Dataset]
		if !ok {
			continue
		}
		forbidden, err := forbiddenRefs(ctx, svc, l, q, principal(l, q))
		if err != nil {
			return nil, fmt.Errorf("eval: question %s: %w", q.ID, err)
		}
		out = append(out, Prepared{Question: q, loaded: l, forbidden: forbidden})
	}
	return out, nil
}

// Ask asks prepared questions through svc's recall and returns the outcomes.
func Ask(ctx context.Context, svc Service, ps []Prepared) ([]Outcome, error) {
	out := make([]Outcome, 0, len(ps))
	for _, p := range ps {
		o, err := ask(ctx, svc, p)
		if err != nil {
			return out, fmt.Errorf("eval: question %s: %w", p.Question.ID, err)
		}
		out = append(out, o)
	}
	return out, nil
}

func ask(ctx context.Context, svc Service, pq Prepared) (Outcome, error) {
	q, l := pq.Question, pq.loaded
	res, err := svc.Recall(ctx, principal(l, q), memory.RecallRequest{UserID: q.User, Query: q.Query, K: K})
	if err != nil {
		return Outcome{}, err
	}
	forbidden := pq.forbidden
	o := Outcome{Question: q}
	for _, r := range res.Memories {
		ref, ok := l.Refs[r.Memory.ID]
		if !ok {
			ref = "?" + r.Memory.ID // not from the dataset: always wrong
			o.Forbidden = append(o.Forbidden, ref)
		}
		o.Got, o.Gates = append(o.Got, ref), append(o.Gates, r.Explain.Gate)
		if forbidden[ref] {
			o.Forbidden = append(o.Forbidden, ref)
		}
	}
	for i, ref := range o.Got {
		if !slices.Contains(q.Expect, ref) {
			continue
		}
		if i < K {
			o.Hits++
		}
		if o.RR == 0 {
			o.RR = 1 / float64(i+1)
		}
	}
	for _, m := range l.Dataset.Memories {
		if slices.Contains(q.Expect, m.Ref) && hasCJK(m.Content) != (q.Lang == "zh") {
			o.CrossLang = true
		}
	}
	return o, nil
}

// forbiddenRefs is every ref the question must not bring back: its own
// list, other users' memories, memories that are not active, and memories
// policy does not let the asker read.
func forbiddenRefs(ctx context.Context, svc Service, l *Loaded, q Question, p memory.Principal) (map[string]bool, error) {
	out := map[string]bool{}
	for _, r := range q.Forbid {
		out[r] = true
	}
	for _, m := range l.Dataset.Memories {
		switch {
		case m.UserID != q.User && m.UserID != "", m.Status != "" && m.Status != memory.StatusActive,
			m.ValidTo != nil && m.ValidTo.Before(time.Now()): // another user's, not active, or ended
			out[m.Ref] = true
		default:
			got, err := svc.Get(ctx, p, l.IDs[m.Ref])
			switch {
			case errors.Is(err, memory.ErrNotFound):
				out[m.Ref] = true
			case err != nil:
				return nil, err
			case got.Status != memory.StatusActive:
				out[m.Ref] = true // superseded by a later version of its slot
			}
		}
	}
	return out, nil
}

// principal is who asks q; an agent carries its team in the dataset, as its
// API key does.
func principal(l *Loaded, q Question) memory.Principal {
	tenant := l.Tenant
	switch q.As {
	case "user":
		return memory.Principal{Tenant: tenant, Kind: memory.KindUser, ID: q.User, Roles: []string{"user"}}
	case "admin":
		return memory.Principal{Tenant: tenant, Kind: memory.KindAdmin, ID: "admin", Roles: []string{"admin"}}
	}
	team := ""
	for _, a := range l.Dataset.Agents {
		if a.ID == q.As {
			team = a.Team
		}
	}
	return memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: q.As, Roles: []string{"agent"}, Team: team}
}

func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// Scores summarises outcomes.
type Scores struct {
	Questions  int     `json:"questions"`
	Answerable int     `json:"answerable"` // questions that expect memories
	RecallAt5  float64 `json:"recall_at_5"`
	MRR        float64 `json:"mrr"`
	Forbidden  int     `json:"forbidden"` // forbidden memories returned, over all questions
	Unrelated  int     `json:"unrelated"` // questions about nothing the user has
	// UnrelatedEmpty is the share of unrelated questions that recalled
	// nothing.
	UnrelatedEmpty float64 `json:"unrelated_empty"`
	// Unexpected is the mean number of memories an answerable question
	// recalled that it does not expect: what an agent reads for nothing.
	Unexpected float64 `json:"unexpected"`
}

// Score computes the scores of outcomes. Recall@5 is the mean, over
// answerable questions, of the share of expected memories among the first 5;
// MRR the mean reciprocal rank of the first expected memory; Unexpected the
// mean count of memories recalled that were not expected.
func Score(os []Outcome) Scores {
	var s Scores
	var empty int
	for _, o := range os {
		s.Questions++
		s.Forbidden += len(o.Forbidden)
		if o.Question.Unrelated {
			s.Unrelated++
			if len(o.Got) == 0 {
				empty++
			}
		}
		if n := len(o.Question.Expect); n > 0 {
			s.Answerable++
			s.RecallAt5 += float64(o.Hits) / float64(min(n, K))
			s.MRR += o.RR
			for _, g := range o.Got {
				if !slices.Contains(o.Question.Expect, g) {
					s.Unexpected++
				}
			}
		}
	}
	if s.Answerable > 0 {
		s.RecallAt5 /= float64(s.Answerable)
		s.MRR /= float64(s.Answerable)
		s.Unexpected /= float64(s.Answerable)
	}
	if s.Unrelated > 0 {
		s.UnrelatedEmpty = float64(empty) / float64(s.Unrelated)
	}
	return s
}

// Report is the scores overall and by group.
type Report struct {
	Overall Scores            `json:"overall"`
	Groups  map[string]Scores `json:"groups"`
}

// Summarise scores outcomes overall and per split ("heldout", "tune"), and
// within each split per dataset, query language, category and
// cross-language questions ("heldout/category=paraphrase", …).
func Summarise(os []Outcome) Report {
	groups := map[string][]Outcome{}
	for _, o := range os {
		q := o.Question
		for _, g := range []string{"", "/dataset=" + q.Dataset, "/lang=" + q.Lang, "/category=" + q.Category} {
			groups[q.Split+g] = append(groups[q.Split+g], o)
		}
		if o.CrossLang {
			groups[q.Split+"/cross-language"] = append(groups[q.Split+"/cross-language"], o)
		}
	}
	r := Report{Overall: Score(os), Groups: map[string]Scores{}}
	for name, g := range groups {
		r.Groups[name] = Score(g)
	}
	return r
}
