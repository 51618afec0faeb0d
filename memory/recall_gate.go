package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"mneme/intent"
	"mneme/relevance"
)

// SourceIntent names memories found because a question about the user asked
// for their kind or slot.
const SourceIntent = "intent"

// found is what the candidate sources returned, with what the gate needs to
// judge them: the question's weighed terms, what a question about the user
// asks for and the similarity of each graph neighbour to the question.
type found struct {
	// shared are the shared partition's nearest, also merged into vector.
	vector, text, intent, shared []Hit
	graph                        []Expansion
	ask                          intent.Ask
	question                     relevance.Question
	near                         map[string]float64
	// nearest are the user's own nearest memories (function nearest).
	nearest map[string]bool
	// leader is the user's nearest memory, nearer than the next by lead
	// (function lead).
	leader string
	lead   float64
}

// nearest are the ids of the first top of the user's own memories among
// the vector hits (in order of similarity): the ones a question about the
// user may reach at the subject floor.
func nearest(vector []Hit, user string, top int) map[string]bool {
	out := map[string]bool{}
	for _, h := range vector {
		if user != "" && h.Memory.UserID == user && len(out) < top {
			out[h.Memory.ID] = true
		}
	}
	return out
}

// lead returns the user's own memory nearest to the question among the
// vector hits (in order of similarity) and how much nearer it is than the
// user's next; none when the user has fewer than two.
func lead(vector []Hit, user string) (string, float64) {
	var first *Hit
	for i, h := range vector {
		if user == "" || h.Memory.UserID != user {
			continue
		}
		if first == nil {
			first = &vector[i]
			continue
		}
		return first.Memory.ID, first.Score - h.Score
	}
	return "", 0
}

// searchIntent returns the memories a question about the user asks for by
// slot, kind or type, inside the request's filters, in no order (intentHits
// orders them). The store keeps only active memories (or those valid at
// as_of), so a slot's current version is the one found.
func (s *Service) searchIntent(ctx context.Context, scope Scope, ask intent.Ask, filters SearchQuery, query []float32) ([]Hit, error) {
	q := filters
	q.Slots = &Slots{Keys: ask.Keys, Kinds: ask.Kinds, Types: ask.Types}
	q.Embedding = query
	return s.store.SearchVector(ctx, scope, q)
}

// intentHits adds to own (the user's intent hits) the shared partition's
// nearest that ask matches, and orders them all: the closest matches first,
// then by similarity. The shared partition is not scanned for the ask: all
// its rules and procedures match a question about rules by type, so the scan
// would read every one on every recall.
func intentHits(ask intent.Ask, own, shared []Hit) []Hit {
	out := own
	for _, h := range shared {
		if ask.Match(h.Memory.Type, h.Memory.Kind, h.Memory.Key) > 0 {
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(a, b Hit) int {
		if d := ask.Match(b.Memory.Type, b.Memory.Kind, b.Memory.Key) - ask.Match(a.Memory.Type, a.Memory.Kind, a.Memory.Key); d != 0 {
			return d
		}
		return cmp.Compare(b.Score, a.Score)
	})
	return out
}

// gate runs every candidate through the relevance gate and records the
// gate each passed. When none passes on its own evidence it returns the
// guesses of the subject and lead gates, if any, and nothing else:
// neighbours and session memories never stand alone. Guesses also join
// memories that passed only by sharing some of the question's words, when
// they are nearer the question than all of those ("what did he want a
// price for?" shares "want" with a memory about calls).
func (s *Service) gate(byID map[string]*Recalled, f found, named map[string]bool) []*Recalled {
	rules := s.recall.Rules()
	// A full-text hit outside the vector search's first candidates still
	// has its similarity measured: the gate judges it as it would there.
	measured := map[string]bool{}
	for _, h := range f.text {
		measured[h.Memory.ID] = h.Similarity != nil
	}
	evidence := func(c *Recalled) relevance.Evidence {
		e := c.Explain
		sim, near := f.near[c.Memory.ID]
		var lead float64
		if c.Memory.ID == f.leader {
			lead = f.lead
		}
		return relevance.Evidence{
			Vector: e.VectorRank > 0 || measured[c.Memory.ID], Similarity: e.VectorSimilarity, Lead: lead,
			Text: e.FullTextRank > 0, Coverage: e.TermCoverage, Identifier: f.question.HoldsIdentifier(c.Memory.Content),
			Named: named[c.Memory.ID], Intent: e.IntentRank > 0, Nearest: f.nearest[c.Memory.ID],
			Neighbour: e.GraphRank > 0 && near, NeighbourSimilarity: sim, Session: e.SessionRank > 0,
			Shared: c.Memory.UserID == "",
		}
	}
	// The user's nearest memories (the subject and lead gates) are
	// guesses: they answer only when nothing passes on stronger evidence.
	var passed, guesses, rest []*Recalled
	var own []relevance.Passed
	for _, c := range byID {
		c.Explain.TermCoverage = f.question.Coverage(strings.ToLower(c.Memory.Content))
		e := evidence(c)
		switch c.Explain.Gate = rules.First(f.question, e); c.Explain.Gate {
		case "":
			rest = append(rest, c)
		case relevance.GateSubject, relevance.GateLead:
			guesses = append(guesses, c)
		default:
			passed = append(passed, c)
			own = append(own, relevance.Passed{Gate: c.Explain.Gate, Evidence: e})
		}
	}
	if len(passed) == 0 {
		return guesses
	}
	if above, join := relevance.JoinAbove(own); join {
		var far []*Recalled
		for _, c := range guesses {
			if c.Explain.VectorSimilarity > above {
				passed = append(passed, c)
			} else {
				far = append(far, c)
			}
		}
		guesses = far
	}
	rest = append(rest, guesses...) // Ride judges them anew
	for _, c := range rest {
		if c.Explain.Gate = rules.Ride(evidence(c)); c.Explain.Gate != "" {
			passed = append(passed, c)
		}
	}
	return passed
}
