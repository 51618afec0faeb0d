// Package recallconfig holds the settings that tune recall — the
// relevance gate's floors, the fusion weights, the candidate counts, decay,
// the reranker — and their defaults. memory.RecallConfig is its Config.
package recallconfig

import (
	"context"
	"math"

	"mneme/relevance"
	"mneme/tokens"
)

// Config tunes recall. Zero values take the defaults of WithDefaults.
type Config struct {
	// VectorFloor is the cosine similarity a memory needs to count as
	// relevant on the vector side alone.
	VectorFloor float64
	// ExpansionFloor is the cosine similarity to the question that a memory
	// reached from a first hit's entities must exceed. It is lower than
	// VectorFloor, as such a memory is recalled for its link to a relevant
	// one (a handling note of the product a shipment names), but not for
	// none: zero keeps out the neighbours unrelated to the question.
	ExpansionFloor float64
	// StrongFloor is the similarity that passes the vector gate whatever
	// the question's words; between VectorFloor and it, a question mostly
	// of words none of the user's memories contains (a share of UnseenMax
	// or more) passes nothing on the vector side (relevance.Rules).
	StrongFloor, UnseenMax float64
	// Coverage is the weighted share of the question's informative words a
	// full-text hit must contain to pass alone; AgreedCoverage passes with
	// a similarity of AgreeFloor or more. A hit on one common word ("day",
	// "订单") covers too little.
	Coverage, AgreedCoverage, AgreeFloor float64
	// SubjectFloor is the similarity one of the user's SubjectTop nearest
	// memories needs to pass for a question about the user
	// (intent.About); 0 turns that gate off (relevance.Rules).
	SubjectFloor float64
	SubjectTop   int
	// LeadFloor is the similarity the user's nearest memory needs to
	// answer a question when it leads the next by LeadMargin; 0 turns that
	// gate off (relevance.Rules).
	LeadFloor, LeadMargin float64
	// RRFK is the k of reciprocal rank fusion.
	RRFK float64
	// Weights per source for fusion. Graph counts memories reached from
	// entities (named in the question or mentioned by the first hits);
	// Session counts memories of the caller's session; Intent those a
	// question about the user asks for by kind or slot.
	VectorWeight, FullTextWeight, GraphWeight, SessionWeight, IntentWeight float64
	// AdjacentWeight adds to a graph neighbour said just before or after a
	// first hit in its session (the reply to the turn a question matched)
	// a source of its own, ranked in the order the expansion found them.
	AdjacentWeight float64
	// Candidates is how many hits each source contributes before fusion.
	Candidates int
	// Keywords, when set, replaces tokens.Keywords in turning a question
	// into full-text search terms (tests use it); it should drop function
	// words so that "what is the weather today" finds nothing in a memory
	// that merely says "today".
	Keywords func(string) []string

	// ExactMax is the largest partition (a user's memories) searched by
	// exact cosine; larger ones go through the vector index, which searches
	// inside the partition. An exact scan grows with the partition and the
	// index hardly does; below the limit the exact answer is cheap enough.
	ExactMax int
	// IndexOverfetch multiplies Candidates for the first vector-index ask;
	// each retry asks four times as many, up to IndexMaxFetch.
	IndexOverfetch, IndexMaxFetch int
	// IndexNoFallback stops recall from scanning the partition exactly when
	// the vector index could not fill Candidates; the answer then says the
	// vector results may be incomplete.
	IndexNoFallback bool

	// GraphHops is how far entities named in the question are expanded (1
	// or 2); GraphSeeds is how many first hits lend their entities.
	// NoGraph turns graph expansion off.
	GraphHops, GraphSeeds int
	NoGraph               bool

	// DecayPerDay is λ per memory type in the decay factor
	// DecayFloor + (1−DecayFloor)·exp(−λ·days since the memory was last
	// updated). Missing types take the defaults: episodic events fade in
	// weeks, semantic and procedural knowledge in years, profile traits
	// barely.
	DecayPerDay map[string]float64
	// DecayFloor is the share of its score a memory keeps however old. Age
	// orders memories of like relevance, but must not outweigh relevance:
	// without a floor an event a year old keeps 2^-12 of its score at a
	// 30-day half-life, and any unrelated memory of last week ranks above
	// it, so imported history could never be recalled.
	DecayFloor float64
	// ProfileBoost multiplies the score of profile memories; RuleBoost that
	// of shared rules and procedures (semantic and procedural knowledge of
	// the tenant, a team or an agent), which govern how the caller works.
	ProfileBoost, RuleBoost float64
	// MMRLambda trades relevance (1) against diversity (0) when a request
	// asks for diversity.
	MMRLambda float64

	// Reranker, when set, reorders the best RerankTop candidates by a
	// cross-encoder score. It is optional in production too: a deployment
	// without a reranker URL recalls without one.
	Reranker  Reranker
	RerankTop int
}

// Default decay rates: half-lives of 30 days (episodic), a year (semantic,
// procedural) and two years (profile).
// The keys are memory's types (memory.TypeEpisodic, …), which this package
// cannot name: memory imports it.
var defaultDecay = map[string]float64{
	"episodic":   math.Ln2 / 30,
	"semantic":   math.Ln2 / 365,
	"procedural": math.Ln2 / 365,
	"profile":    math.Ln2 / 730,
}

// WithDefaults returns c with every zero value set to its default.
func (c Config) WithDefaults() Config {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.VectorFloor, 0.25)
	def(&c.StrongFloor, c.VectorFloor+0.1)
	def(&c.UnseenMax, 0.5)
	def(&c.Coverage, 0.5)
	def(&c.AgreedCoverage, 0.25)
	def(&c.AgreeFloor, c.VectorFloor*0.6)
	def(&c.RRFK, 60)
	def(&c.VectorWeight, 1)
	def(&c.FullTextWeight, 1)
	def(&c.GraphWeight, 0.8)
	def(&c.SessionWeight, 0.5)
	def(&c.IntentWeight, 0.8)
	def(&c.AdjacentWeight, 0.4)
	def(&c.ProfileBoost, 1.2)
	def(&c.RuleBoost, 1.2)
	def(&c.MMRLambda, 0.5)
	def(&c.DecayFloor, 0.5)
	defInt(&c.Candidates, 30)
	defInt(&c.SubjectTop, 3)
	defInt(&c.ExactMax, 1_000)
	defInt(&c.IndexOverfetch, 10)
	defInt(&c.IndexMaxFetch, 5_000)
	defInt(&c.GraphHops, 2)
	defInt(&c.GraphSeeds, 3)
	defInt(&c.RerankTop, 20)
	decay := make(map[string]float64, len(defaultDecay))
	for t, l := range defaultDecay {
		decay[t] = l
	}
	for t, l := range c.DecayPerDay {
		decay[t] = l
	}
	c.DecayPerDay = decay
	if c.Keywords == nil {
		c.Keywords = tokens.Keywords
	}
	return c
}

// Reranker scores documents against a query with a cross-encoder; higher is
// more relevant. It returns one score per document, in order.
type Reranker interface {
	Rerank(ctx context.Context, query string, docs []string) ([]float64, error)
}

// Rules are the relevance gate's thresholds of c.
func (c Config) Rules() relevance.Rules {
	return relevance.Rules{
		VectorFloor: c.VectorFloor, StrongFloor: c.StrongFloor, UnseenMax: c.UnseenMax,
		Coverage: c.Coverage, AgreedCoverage: c.AgreedCoverage, AgreeFloor: c.AgreeFloor,
		NeighbourFloor: c.ExpansionFloor, SubjectFloor: c.SubjectFloor,
		LeadFloor: c.LeadFloor, LeadMargin: c.LeadMargin,
	}
}
