package longconv

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"mneme/memory"
)

// Writer writes memories through the write pipeline (policy, guard,
// worth-remembering, embedding, dedup): *memory.Service.
type Writer interface {
	Write(ctx context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error)
}

// Recaller answers questions: *memory.Service.
type Recaller interface {
	Recall(ctx context.Context, p memory.Principal, r memory.RecallRequest) (memory.RecallResult, error)
}

// Loaded is a conversation written into a tenant.
type Loaded struct {
	Conversation Conversation
	Tenant       string
	// IDs maps each stored turn to its memory; a turn the pipeline skipped
	// or refused has none. Turns folded into an earlier identical one share
	// its memory.
	IDs map[string]string
	// Turn maps each memory to the first turn stored as it.
	Turn map[string]string
	// Skipped counts turns the pipeline found not worth remembering,
	// Refused those it refused (the guard), Folded those dedup folded into
	// an earlier memory.
	Skipped, Refused, Folded int
}

// Agent is who the turns' memories are written by: the assistant the user
// talked to.
const Agent = "assistant"

// Load writes c into tenant one memory per turn, session by session in
// order: episodic, in the turn's session, observed when the turn was said,
// with the entities ex finds in it. It writes as the tenant's admin, the
// one principal that may date a memory in the past; the memories are about
// c.User.
func Load(ctx context.Context, svc Writer, ex memory.Extractor, tenant string, c Conversation) (*Loaded, error) {
	l := &Loaded{Conversation: c, Tenant: tenant, IDs: map[string]string{}, Turn: map[string]string{}}
	admin := memory.Principal{Tenant: tenant, Kind: memory.KindAdmin, ID: "admin", Roles: []string{"admin"}}
	for _, s := range c.Sessions {
		for start := 0; start < len(s.Turns); start += memory.MaxBatch {
			turns := s.Turns[start:min(start+memory.MaxBatch, len(s.Turns))]
			batch := make([]memory.NewMemory, len(turns))
			for i, t := range turns {
				n, err := newMemory(ctx, ex, c, s, t)
				if err != nil {
					return nil, err
				}
				batch[i] = n
			}
			if err := l.write(ctx, svc, admin, turns, batch); err != nil {
				return nil, fmt.Errorf("longconv: %s session %s: %w", c.ID, s.ID, err)
			}
		}
	}
	return l, nil
}

func newMemory(ctx context.Context, ex memory.Extractor, c Conversation, s Session, t Turn) (memory.NewMemory, error) {
	content := t.Content
	if t.Speaker != "" {
		content = t.Speaker + ": " + content
	}
	found, err := ex.Extract(ctx, []memory.Turn{{Role: t.Role, Content: t.Content, At: t.At}})
	if err != nil {
		return memory.NewMemory{}, fmt.Errorf("longconv: extract turn %s: %w", t.ID, err)
	}
	var entities []memory.Entity
	for _, f := range found {
		for _, e := range f.Entities {
			if !slices.ContainsFunc(entities, func(x memory.Entity) bool { return x.ID == e.ID }) {
				entities = append(entities, e)
			}
		}
	}
	at := t.At
	return memory.NewMemory{
		UserID: c.User, SessionID: s.ID, Type: memory.TypeEpisodic, Content: content,
		AgentID: Agent, Source: "conversation", Entities: entities, ObservedAt: &at,
		IdempotencyKey: "longconv:" + c.ID + ":" + t.ID,
	}, nil
}

// write writes one batch; a batch the guard refuses as a whole (one turn
// it rejects refuses all) is written again turn by turn, and only the
// turns refused alone count as refused.
func (l *Loaded) write(ctx context.Context, svc Writer, p memory.Principal, turns []Turn, batch []memory.NewMemory) error {
	res, err := svc.Write(ctx, p, batch)
	if err == nil {
		for i, r := range res {
			l.record(turns[i], r)
		}
		return nil
	}
	var refused *memory.GuardError
	if !errors.As(err, &refused) {
		return err
	}
	if len(batch) == 1 {
		l.Refused++
		return nil
	}
	for i := range batch {
		if err := l.write(ctx, svc, p, turns[i:i+1], batch[i:i+1]); err != nil {
			return err
		}
	}
	return nil
}

func (l *Loaded) record(t Turn, r memory.WriteResult) {
	if r.Outcome == memory.OutcomeSkipped || r.ID == "" {
		l.Skipped++
		return
	}
	l.IDs[t.ID] = r.ID
	if _, ok := l.Turn[r.ID]; ok {
		l.Folded++
		return
	}
	l.Turn[r.ID] = t.ID
}

// Outcome is what one question got.
type Outcome struct {
	Question Question
	Split    string
	// Sessions is how many sessions the question's evidence spans.
	Sessions int
	// Found counts the evidence turns whose memory came back among the
	// first K; Unstored those the pipeline did not store, which no recall
	// can find.
	Found, Unstored int
	// Got are the turns of the memories returned, in order.
	Got []string
}

// Recall is the share of the question's evidence turns found.
func (o Outcome) Recall() float64 {
	return float64(o.Found) / float64(len(o.Question.Evidence))
}

// Ask asks every question about a loaded conversation through recall, as
// the conversation's user, and scores what came back.
func Ask(ctx context.Context, svc Recaller, loaded map[string]*Loaded, qs []Question) ([]Outcome, error) {
	var out []Outcome
	for _, q := range qs {
		l, ok := loaded[q.Conversation]
		if !ok {
			continue
		}
		user := l.Conversation.User
		p := memory.Principal{Tenant: l.Tenant, Kind: memory.KindUser, ID: user, Roles: []string{"user"}}
		res, err := svc.Recall(ctx, p, memory.RecallRequest{UserID: user, Query: q.Query, K: K})
		if err != nil {
			return nil, fmt.Errorf("longconv: question %s: %w", q.ID, err)
		}
		o := Outcome{Question: q, Split: Split(q), Sessions: spans(l.Conversation, q.Evidence)}
		top := map[string]bool{}
		for i, r := range res.Memories {
			if i == K {
				break
			}
			top[r.Memory.ID] = true
			o.Got = append(o.Got, l.Turn[r.Memory.ID])
		}
		for _, e := range q.Evidence {
			id, ok := l.IDs[e]
			switch {
			case !ok:
				o.Unstored++
			case top[id]:
				o.Found++
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// spans counts the distinct sessions holding any of turns; a session may
// recur further on in a conversation.
func spans(c Conversation, turns []string) int {
	ids := map[string]bool{}
	for _, s := range c.Sessions {
		if slices.ContainsFunc(s.Turns, func(t Turn) bool { return slices.Contains(turns, t.ID) }) {
			ids[s.ID] = true
		}
	}
	return len(ids)
}

// Scores sum up a group of outcomes.
type Scores struct {
	Questions int `json:"questions"`
	// RecallAtK is the mean share of evidence turns found among the first
	// K; AnyAtK the share of questions with at least one found, AllAtK
	// with all of them.
	RecallAtK float64 `json:"recall_at_5"`
	AnyAtK    float64 `json:"any_at_5"`
	AllAtK    float64 `json:"all_at_5"`
	// Unstored counts evidence turns the write pipeline did not store.
	Unstored int `json:"unstored_evidence"`
}

// Score sums up outcomes.
func Score(os []Outcome) Scores {
	var s Scores
	for _, o := range os {
		s.Questions++
		s.RecallAtK += o.Recall()
		if o.Found > 0 {
			s.AnyAtK++
		}
		if o.Found == len(o.Question.Evidence) {
			s.AllAtK++
		}
		s.Unstored += o.Unstored
	}
	if s.Questions > 0 {
		n := float64(s.Questions)
		s.RecallAtK, s.AnyAtK, s.AllAtK = s.RecallAtK/n, s.AnyAtK/n, s.AllAtK/n
	}
	return s
}

// Report holds scores by group: "all", each split, and within all the
// questions and within each split each category and "single-session" or
// "multi-session" evidence, named all/group and split/group.
type Report map[string]Scores

// Summarise scores outcomes by group.
func Summarise(os []Outcome) Report {
	groups := map[string][]Outcome{}
	for _, o := range os {
		span := "single-session"
		if o.Sessions > 1 {
			span = "multi-session"
		}
		for _, g := range []string{"all", "all/" + o.Question.Category, "all/" + span, o.Split, o.Split + "/" + o.Question.Category, o.Split + "/" + span} {
			groups[g] = append(groups[g], o)
		}
	}
	r := Report{}
	for g, os := range groups {
		r[g] = Score(os)
	}
	return r
}
