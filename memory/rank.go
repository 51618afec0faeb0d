package memory

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"mneme/facts"
	"mneme/relevance"
)

// Source names in Explain.Sources; SourceSession ("session", in
// recall_session.go) names memories of the caller's session.
const (
	SourceVector   = "vector"
	SourceFullText = "fulltext"
	SourceGraph    = "graph"
	SourceAdjacent = "adjacent"
)

// rank fuses the sources by weighted reciprocal rank, keeps what clears the
// relevance floor, weighs each memory by age, importance and type, and sorts
// by the result (ties by id).
//
// Every candidate goes through the relevance gate (gate, relevance.Rules)
// whatever source found it: a memory passes on its similarity, on covering
// the question's informative words, on an entity the question names or on
// being what a question about the user asks for; neighbours and session
// memories ride along only beside one that passed, so an unrelated question
// recalls nothing.
func (s *Service) rank(f found, now time.Time) []Recalled {
	cfg := s.recall
	byID := map[string]*Recalled{}
	get := func(m Memory) *Recalled {
		c, ok := byID[m.ID]
		if !ok {
			c = &Recalled{Memory: m}
			byID[m.ID] = c
		}
		return c
	}
	for i, h := range f.vector {
		c := get(h.Memory)
		c.Explain.VectorSimilarity = h.Score
		c.Explain.VectorRank = i + 1
	}
	for i, h := range f.text {
		c := get(h.Memory)
		c.Explain.FullTextScore = h.Score
		c.Explain.FullTextRank = i + 1
		if c.Explain.VectorRank == 0 && h.Similarity != nil {
			c.Explain.VectorSimilarity = *h.Similarity
		}
	}
	graphRank, sessionRank, adjacentRank := 0, 0, 0
	named := map[string]bool{}
	for _, x := range f.graph {
		c := get(x.Memory)
		e := &c.Explain
		if x.Via == "session" {
			if e.SessionRank == 0 {
				sessionRank++
				e.SessionRank = sessionRank
			}
			continue
		}
		if e.GraphRank == 0 {
			graphRank++
			e.GraphRank, e.GraphHops, e.GraphPath = graphRank, x.Hop, x.Path
		}
		if x.Via == "adjacent" && e.AdjacentRank == 0 {
			adjacentRank++
			e.AdjacentRank = adjacentRank
		}
		if x.Via == "entity" && x.Hop == 1 { // a second hop mentions another entity
			named[x.Memory.ID] = true
		}
	}

	for i, h := range f.intent {
		c := get(h.Memory)
		c.Explain.IntentRank, c.Explain.Intent = i+1, f.ask.Names
		if c.Explain.VectorRank == 0 {
			c.Explain.VectorSimilarity = h.Score
		}
	}

	admitted := s.gate(byID, f, named)
	out := make([]Recalled, 0, len(admitted))
	for _, c := range admitted {
		e := &c.Explain
		// Each source a memory is found by adds its weighted reciprocal
		// rank. A vector hit below the floor does not count as a source
		// (every memory has some similarity to every question) unless it
		// passed as one of the user's nearest (the subject and lead gates);
		// such a hit weighs by its similarity's share of the floor, so that
		// memories with stronger evidence rank above it.
		var fused float64
		add := func(on bool, source string, weight float64, rank int) {
			if on {
				e.Sources = append(e.Sources, source)
				fused += weight / (cfg.RRFK + float64(rank))
			}
		}
		add(e.VectorRank > 0 && (e.VectorSimilarity >= cfg.VectorFloor || e.Gate == relevance.GateSubject || e.Gate == relevance.GateLead), SourceVector, cfg.VectorWeight*min(1, e.VectorSimilarity/cfg.VectorFloor), e.VectorRank)
		add(e.FullTextRank > 0 && (e.TermCoverage >= cfg.AgreedCoverage || e.Gate == relevance.GateText), SourceFullText, cfg.FullTextWeight, e.FullTextRank)
		add(e.GraphRank > 0, SourceGraph, cfg.GraphWeight, e.GraphRank)
		add(e.SessionRank > 0, SourceSession, cfg.SessionWeight, e.SessionRank)
		add(e.AdjacentRank > 0, SourceAdjacent, cfg.AdjacentWeight, e.AdjacentRank)
		add(e.IntentRank > 0, SourceIntent, cfg.IntentWeight, e.IntentRank)
		if len(e.Sources) == 0 {
			continue
		}
		e.Fused = fused
		s.weigh(c, now, f.question.HoldsIdentifier(c.Memory.Content))
		out = append(out, *c)
	}
	slices.SortStableFunc(out, func(a, b Recalled) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Memory.ID, b.Memory.ID))
	})
	return out
}

// weigh sets the score of a fused candidate: fused × decay × importance ×
// profile priority. A memory that holds a code the question names (named)
// does not decay: it is what the question asks about, whatever its age,
// and a newer memory of another order must not rank above it.
func (s *Service) weigh(c *Recalled, now time.Time, named bool) {
	e := &c.Explain
	m := c.Memory
	at := m.UpdatedAt
	if at.IsZero() {
		at = m.CreatedAt
	}
	e.AgeDays = max(0, now.Sub(at).Hours()/24)
	e.DecayFactor = 1
	if !named {
		floor := s.recall.DecayFloor
		e.DecayFactor = floor + (1-floor)*math.Exp(-s.recall.DecayPerDay[m.Type]*e.AgeDays)
	}
	e.ImportanceFactor = 0.75 + 0.5*m.Importance
	e.ProfileFactor = 1
	if m.Type == TypeProfile {
		e.ProfileFactor = s.recall.ProfileBoost
	}
	if ScopeOf(m) != ScopeUser && (m.Type == TypeSemantic || m.Type == TypeProcedural) {
		e.ProfileFactor = s.recall.RuleBoost
	}
	c.Score = e.Fused * e.DecayFactor * e.ImportanceFactor * e.ProfileFactor
}

// diversify reorders the first n candidates by maximal marginal relevance:
// each pick maximises λ·relevance − (1−λ)·(highest cosine to the picks so
// far), relevance being the score as a share of the best one (the rerank
// score when the reranker ran). The rest keep their order after them.
func (s *Service) diversify(ranked []Recalled, n int) []Recalled {
	n = min(n, len(ranked))
	pool := append([]Recalled(nil), ranked[:n]...)
	rel := make([]float64, n)
	// Rerank scores may be negative logits: shift them to start at 0.
	shift := 0.0
	for i, c := range pool {
		rel[i] = c.Score
		if c.Explain.RerankScore != nil {
			rel[i] = *c.Explain.RerankScore
		}
		shift = min(shift, rel[i])
	}
	best := 0.0
	for i := range rel {
		rel[i] -= shift
		best = max(best, rel[i])
	}
	for i := range rel {
		if best > 0 {
			rel[i] /= best
		} else {
			rel[i] = 1
		}
	}
	lambda := s.recall.MMRLambda
	out := make([]Recalled, 0, len(ranked))
	taken := make([]bool, n)
	for range n {
		pick, pickVal, pickSim := -1, math.Inf(-1), 0.0
		for i := range pool {
			if taken[i] {
				continue
			}
			sim := 0.0
			for _, o := range out {
				sim = max(sim, facts.Cosine(pool[i].Memory.Embedding, o.Memory.Embedding))
			}
			if v := lambda*rel[i] - (1-lambda)*sim; v > pickVal {
				pick, pickVal, pickSim = i, v, sim
			}
		}
		taken[pick] = true
		c := pool[pick]
		c.Explain.MMRMaxSimilarity = &pickSim
		out = append(out, c)
	}
	return append(out, ranked[n:]...)
}
