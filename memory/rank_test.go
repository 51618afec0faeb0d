package memory

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"mneme/facts"
)

// fakeSearch is a SearchStore with canned answers.
type fakeSearch struct {
	mu         sync.Mutex
	partition  int
	sizes      map[string]int // by user id, when set; "" is shared knowledge
	sizeCalls  int
	approx     func(fetch int) []Hit
	fetches    []int
	approxReqs []SearchQuery
	expansions []Expansion // answer to the question/session expansion
	seeded     []Expansion // answer to the first-hits expansion
	expandReqs []ExpandQuery
}

var _ SearchStore = (*fakeSearch)(nil)

func (f *fakeSearch) PartitionSize(_ context.Context, _, userID string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sizeCalls++
	if n, ok := f.sizes[userID]; ok {
		return n, nil
	}
	return f.partition, nil
}

func (f *fakeSearch) SearchVectorApprox(_ context.Context, _ Scope, q SearchQuery, fetch int) ([]Hit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetches = append(f.fetches, fetch)
	f.approxReqs = append(f.approxReqs, q)
	if f.approx == nil {
		return nil, nil
	}
	return f.approx(fetch), nil
}

func (f *fakeSearch) Expand(_ context.Context, _ Scope, q ExpandQuery) ([]Expansion, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expandReqs = append(f.expandReqs, q)
	xs := f.expansions
	if len(q.Seeds) > 0 {
		xs = f.seeded
	}
	// As the store: with a query vector, each memory's similarity to it.
	out := slices.Clone(xs)
	for i, x := range out {
		if v := q.Filters.Embedding; len(v) > 0 && len(x.Memory.Embedding) == len(v) {
			sim := facts.Cosine(v, x.Memory.Embedding)
			out[i].Similarity = &sim
		}
	}
	return out, nil
}

// searchFixture is a fixture whose Service also has a fakeSearch.
func searchFixture(t *testing.T, cfg RecallConfig, fs *fakeSearch) *fixture {
	t.Helper()
	f := newFixture(t, cfg)
	f.search = fs
	opts := f.options(t, cfg)
	opts.Search = fs
	f.svc = f.service(t, opts)
	f.authz.scope = aliceScope
	return f
}

func idsOf(rs []Recalled) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Memory.ID)
	}
	return out
}

func TestRecallGraphSourcesAndFloor(t *testing.T) {
	hit, linked, session := stored("mem_hit", "hit"), stored("mem_linked", "linked"), stored("mem_session", "session")
	named := stored("mem_named", "named")
	// The question "q" embeds as (1, 1): linked is near it, unrelated
	// orthogonal and opposed far from it.
	linked.Embedding = []float32{1, 1}
	unrelated, opposed := stored("mem_unrelated", "unrelated"), stored("mem_opposed", "opposed")
	unrelated.Embedding, opposed.Embedding = []float32{1, -1}, []float32{-1, -1}
	via := func(m Memory) Expansion {
		return Expansion{Memory: m, Hop: 1, Via: "hit", Path: []string{"Memory:mem_hit", "Entity:e", "Memory:" + m.ID}}
	}
	tests := []struct {
		name       string
		vector     []Hit
		fullText   []Hit
		expansions []Expansion
		seeded     []Expansion
		want       []string
		wantSrc    map[string][]string
	}{
		{
			name:       "an unrelated question recalls not even the session",
			vector:     []Hit{{Memory: hit, Score: 0.1}},
			expansions: []Expansion{{Memory: session, Hop: 1, Via: "session"}},
			want:       []string{},
		},
		{
			name:       "an entity named in the question is relevant alone",
			expansions: []Expansion{{Memory: named, Hop: 1, Via: "entity", Path: []string{"query", "Entity:e", "Memory:mem_named"}}},
			want:       []string{"mem_named"},
			wantSrc:    map[string][]string{"mem_named": {SourceGraph}},
		},
		{
			// Two hops out, a memory mentions another entity than the one
			// the question names (the company of the order it names): it
			// does not pass as named. Reached without its embedding, it is
			// no neighbour either; the expansion from first hits, which
			// reads embeddings, lets in those near the question.
			name: "a second hop from a named entity is not named",
			expansions: []Expansion{
				{Memory: named, Hop: 1, Via: "entity", Path: []string{"query", "Entity:e", "Memory:mem_named"}},
				{Memory: linked, Hop: 2, Via: "entity", Path: []string{"query", "Entity:e", "Memory:mem_named", "Entity:f", "Memory:mem_linked"}},
				{Memory: unrelated, Hop: 2, Via: "entity", Path: []string{"query", "Entity:e", "Memory:mem_named", "Entity:f", "Memory:mem_unrelated"}},
			},
			want: []string{"mem_named"},
		},
		{
			name:       "session and first-hit entities ride along with a relevant hit",
			vector:     []Hit{{Memory: hit, Score: 0.9}},
			expansions: []Expansion{{Memory: session, Hop: 1, Via: "session"}},
			seeded:     []Expansion{{Memory: linked, Hop: 1, Via: "hit", Path: []string{"Memory:mem_hit", "Entity:e", "Memory:mem_linked"}}},
			want:       []string{"mem_hit", "mem_linked", "mem_session"},
			wantSrc: map[string][]string{
				"mem_hit": {SourceVector}, "mem_linked": {SourceGraph}, "mem_session": {SourceSession},
			},
		},
		{
			// "thank you so much, have a nice day" and a note on 30-day
			// terms: a full-text hit that covers too little of the
			// question passes no gate and lends its entities nothing.
			name:     "a full-text hit that passes no gate lends its entities nothing",
			vector:   []Hit{{Memory: hit, Score: 0.1}},
			fullText: []Hit{{Memory: hit, Score: 2}},
			seeded:   []Expansion{via(linked)},
			want:     []string{},
		},
		{
			// The other speaker's reply to the turn the question matched:
			// a graph neighbour through the session, and a source of its own.
			name:   "the turn said next to a hit rides along, through its session",
			vector: []Hit{{Memory: hit, Score: 0.9}},
			seeded: []Expansion{
				{Memory: linked, Hop: 1, Via: "adjacent", Path: []string{"Memory:mem_hit", "Session:s-1", "Memory:mem_linked"}},
				{Memory: unrelated, Hop: 1, Via: "adjacent", Path: []string{"Memory:mem_hit", "Session:s-1", "Memory:mem_unrelated"}},
			},
			// Found by two sources at the first rank, the reply leads.
			want:    []string{"mem_linked", "mem_hit"},
			wantSrc: map[string][]string{"mem_hit": {SourceVector}, "mem_linked": {SourceGraph, SourceAdjacent}},
		},
		{
			name:   "an unrelated question lends no turn of its session",
			vector: []Hit{{Memory: hit, Score: 0.1}},
			seeded: []Expansion{{Memory: linked, Hop: 1, Via: "adjacent", Path: []string{"Memory:mem_hit", "Session:s-1", "Memory:mem_linked"}}},
			want:   []string{},
		},
		{
			name:   "a neighbour unrelated to the question is not recalled through expansion",
			vector: []Hit{{Memory: hit, Score: 0.9}},
			seeded: []Expansion{via(linked), via(unrelated), via(opposed)},
			want:   []string{"mem_hit", "mem_linked"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := &fakeSearch{partition: 3, expansions: tt.expansions, seeded: tt.seeded}
			f := searchFixture(t, recallConfig, fs)
			f.store.vector, f.store.fullText = tt.vector, tt.fullText
			got, err := f.svc.Recall(context.Background(), agentSupport, RecallRequest{UserID: "alice", Query: "q", SessionID: "s1", K: 10})
			if err != nil {
				t.Fatal(err)
			}
			if ids := idsOf(got.Memories); !slices.Equal(ids, tt.want) {
				t.Fatalf("recalled %v, want %v", ids, tt.want)
			}
			for _, q := range fs.expandReqs {
				if len(q.Seeds) > 0 && len(tt.vector) > 0 && tt.vector[0].Score < recallConfig.VectorFloor {
					t.Errorf("expanded from seeds %v below the vector floor", q.Seeds)
				}
				if len(q.Seeds) > 0 && q.Partition != fs.partition {
					t.Errorf("expanded from seeds with a partition of %d, want its size, %d (the hub bound)", q.Partition, fs.partition)
				}
			}
			for id, want := range tt.wantSrc {
				for _, r := range got.Memories {
					if r.Memory.ID == id && !slices.Equal(r.Explain.Sources, want) {
						t.Errorf("%s sources = %v, want %v", id, r.Explain.Sources, want)
					}
				}
			}
		})
	}
}

// A memory that passed because the question asks for its kind ("tell me my
// preferences") lends its entities nothing: the question's words did not
// choose it, so what it links to (the user's company, every order naming
// it) says nothing about the question.
func TestRecallIntentLendsNoNeighbours(t *testing.T) {
	pref := stored("mem_pref", "email only, never phone")
	pref.Type, pref.Kind, pref.Key = TypeProfile, "preference", "contact_channel"
	linked := stored("mem_linked", "an order for the same company")
	linked.Embedding = vectorOf("tell me my preferences")
	fs := &fakeSearch{partition: 2, seeded: []Expansion{{Memory: linked, Hop: 1, Via: "hit", Path: []string{"Memory:mem_pref", "Entity:e", "Memory:mem_linked"}}}}
	f := searchFixture(t, recallConfig, fs)
	f.store.vector = []Hit{{Memory: pref, Score: 0.05}}
	got, err := f.svc.Recall(context.Background(), agentSupport, RecallRequest{UserID: "alice", Query: "tell me my preferences", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if ids := idsOf(got.Memories); !slices.Equal(ids, []string{"mem_pref"}) {
		t.Fatalf("recalled %v, want only the preference", ids)
	}
	if g := got.Memories[0].Explain.Gate; g != "intent" {
		t.Errorf("the preference passed %q, want intent", g)
	}
	for _, q := range fs.expandReqs {
		if len(q.Seeds) > 0 {
			t.Errorf("expanded from %v", q.Seeds)
		}
	}
}

func TestRecallVectorPathChoice(t *testing.T) {
	a := stored("mem_a", "a")
	tests := []struct {
		name        string
		partition   int
		cfg         RecallConfig
		approx      func(fetch int) []Hit
		wantPath    string
		wantFetches []int
		wantExact   int
		wantDone    bool
	}{
		{name: "small partition: exact", partition: 5, cfg: RecallConfig{ExactMax: 5},
			wantPath: VectorExact, wantExact: 1, wantDone: true},
		{name: "large partition: the index fills the candidates", partition: 100, cfg: RecallConfig{ExactMax: 5},
			approx:   func(int) []Hit { return slices.Repeat([]Hit{{Memory: a, Score: 0.9}}, 7) },
			wantPath: VectorIndex, wantFetches: []int{70}, wantDone: true},
		{name: "index short: ask for more, then scan exactly", partition: 100, cfg: RecallConfig{ExactMax: 5, IndexMaxFetch: 500},
			approx:   func(int) []Hit { return []Hit{{Memory: a, Score: 0.9}} },
			wantPath: VectorIndexExact, wantFetches: []int{70, 280, 500}, wantExact: 1, wantDone: true},
		{name: "index short without fallback says so", partition: 100, cfg: RecallConfig{ExactMax: 5, IndexMaxFetch: 70, IndexNoFallback: true},
			approx:   func(int) []Hit { return []Hit{{Memory: a, Score: 0.9}} },
			wantPath: VectorIndex, wantFetches: []int{70}, wantDone: false},
		{name: "a partition smaller than the candidates is complete when all are found", partition: 10, cfg: RecallConfig{ExactMax: 5, IndexNoFallback: true},
			approx:   func(int) []Hit { return slices.Repeat([]Hit{{Memory: a, Score: 0.9}}, 10) },
			wantPath: VectorIndex, wantFetches: []int{70}, wantDone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Candidates, cfg.VectorFloor, cfg.NoGraph = 7, 0.3, true
			fs := &fakeSearch{partition: tt.partition, approx: tt.approx}
			f := searchFixture(t, cfg, fs)
			got, err := f.svc.Recall(context.Background(), agentSupport, RecallRequest{UserID: "alice", Query: "q"})
			if err != nil {
				t.Fatal(err)
			}
			s := got.Search
			if s.VectorPath != tt.wantPath || s.VectorComplete != tt.wantDone || s.PartitionSize != tt.partition {
				t.Errorf("search = %+v, want path %s, complete %v", s, tt.wantPath, tt.wantDone)
			}
			if !slices.Equal(fs.fetches, tt.wantFetches) {
				t.Errorf("index fetches = %v, want %v", fs.fetches, tt.wantFetches)
			}
			if n := len(f.store.vectorCalls); n != tt.wantExact {
				t.Errorf("exact scans = %d, want %d", n, tt.wantExact)
			}
		})
	}
	t.Run("shared knowledge is a partition of its own", func(t *testing.T) {
		// A few memories of alice's, many shared: alice's are scanned
		// exactly, the shared ones asked of the index, and both recalled.
		rule := stored("mem_rule", "rule q")
		rule.UserID = ""
		fs := &fakeSearch{sizes: map[string]int{"alice": 3, "": 100}, approx: func(int) []Hit { return slices.Repeat([]Hit{{Memory: rule, Score: 0.8}}, 7) }}
		f := searchFixture(t, RecallConfig{ExactMax: 5, Candidates: 7, VectorFloor: 0.3, NoGraph: true}, fs)
		f.authz.scope = Scope{Tenant: "acme", Filter: &Filter{Op: FilterTrue}}
		f.store.vector = []Hit{{Memory: a, Score: 0.9}}
		got, err := f.svc.Recall(context.Background(), agentSupport, RecallRequest{UserID: "alice", Query: "q"})
		if err != nil {
			t.Fatal(err)
		}
		if s := got.Search; s.VectorPath != VectorExact || s.PartitionSize != 3 || !s.VectorComplete {
			t.Errorf("search = %+v, want alice's partition of 3 scanned exactly", s)
		}
		if n := len(f.store.vectorCalls); n != 1 || f.store.vectorCalls[0].UserID != "alice" || f.store.vectorCalls[0].Shared {
			t.Errorf("exact scans = %+v, want one of alice's partition alone", f.store.vectorCalls)
		}
		if len(fs.approxReqs) != 1 || fs.approxReqs[0].UserID != "" || !fs.approxReqs[0].Shared {
			t.Errorf("index searches = %+v, want one of the shared knowledge alone", fs.approxReqs)
		}
		if ids := idsOf(got.Memories); !slices.Contains(ids, "mem_a") || !slices.Contains(ids, "mem_rule") {
			t.Errorf("recalled %v, want alice's memory and the shared rule", ids)
		}
	})
	t.Run("a small shared partition is scanned with the user's", func(t *testing.T) {
		// Both partitions small: one exact scan of both, no index search.
		rule := stored("mem_rule", "rule q")
		rule.UserID = ""
		fs := &fakeSearch{sizes: map[string]int{"alice": 3, "": 4}}
		f := searchFixture(t, RecallConfig{ExactMax: 5, Candidates: 7, VectorFloor: 0.3, NoGraph: true}, fs)
		f.authz.scope = Scope{Tenant: "acme", Filter: &Filter{Op: FilterTrue}}
		f.store.vector = []Hit{{Memory: a, Score: 0.9}, {Memory: rule, Score: 0.8}}
		got, err := f.svc.Recall(context.Background(), agentSupport, RecallRequest{UserID: "alice", Query: "q"})
		if err != nil {
			t.Fatal(err)
		}
		if s := got.Search; s.VectorPath != VectorExact || s.PartitionSize != 3 || !s.VectorComplete {
			t.Errorf("search = %+v, want alice's partition of 3 scanned exactly", s)
		}
		if n := len(f.store.vectorCalls); n != 1 || f.store.vectorCalls[0].UserID != "alice" || !f.store.vectorCalls[0].Shared {
			t.Errorf("exact scans = %+v, want one of alice's partition and the shared one", f.store.vectorCalls)
		}
		if len(fs.approxReqs) != 0 {
			t.Errorf("index searches = %+v, want none", fs.approxReqs)
		}
		if ids := idsOf(got.Memories); !slices.Contains(ids, "mem_a") || !slices.Contains(ids, "mem_rule") {
			t.Errorf("recalled %v, want alice's memory and the shared rule", ids)
		}
	})
	t.Run("a question about the rules finds a shared rule the user's memories outrank", func(t *testing.T) {
		// Alice's two memories fill the merged vector candidates; the rule,
		// far below the floor, comes only from the shared partition's own
		// nearest, and the ask for rules admits it.
		rule := stored("mem_rule", "Orders above 50k CNY need approval.")
		rule.UserID, rule.Type, rule.Kind = "", TypeSemantic, "rule"
		sop := stored("mem_sop", "To handle damaged items, photograph them first.")
		sop.UserID, sop.Type = "", TypeProcedural
		a2 := stored("mem_a2", "Alice likes tea.")
		fs := &fakeSearch{sizes: map[string]int{"alice": 3, "": 100}, approx: func(int) []Hit { return []Hit{{Memory: rule, Score: 0.05}, {Memory: sop, Score: 0.04}} }}
		f := searchFixture(t, RecallConfig{ExactMax: 5, Candidates: 2, VectorFloor: 0.3, NoGraph: true}, fs)
		f.authz.scope = Scope{Tenant: "acme", Filter: &Filter{Op: FilterTrue}}
		f.store.vector = []Hit{{Memory: a, Score: 0.9}, {Memory: a2, Score: 0.85}}
		got, err := f.svc.Recall(context.Background(), agentSupport, RecallRequest{UserID: "alice", Query: "按老规矩处理"})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.Index(idsOf(got.Memories), "mem_rule")
		if i < 0 {
			t.Fatalf("recalled %v, want the shared rule (search %+v)", idsOf(got.Memories), got.Search)
		}
		if e := got.Memories[i].Explain; e.IntentRank == 0 || e.Gate != "intent" {
			t.Errorf("the rule's explain = %+v, want it found and admitted by the ask", e)
		}
	})
}

// An episode observed long ago keeps half its score: it still ranks above
// a fresh memory less than half as relevant, so imported history can be
// recalled at all.
func TestRecallDecayFloor(t *testing.T) {
	fresh := stored("mem_fresh", "fresh q")
	fresh.Type, fresh.UpdatedAt = TypeEpisodic, testNow
	old := stored("mem_old", "old q")
	old.Type, old.UpdatedAt = TypeEpisodic, testNow.Add(-400*24*time.Hour)

	f := newFixture(t, recallConfig)
	f.authz.scope = aliceScope
	// The old episode is first by vector and by full text; the fresh one
	// is second by full text only.
	f.store.vector = []Hit{{Memory: old, Score: 0.9}}
	f.store.fullText = []Hit{{Memory: old, Score: 1}, {Memory: fresh, Score: 1}}
	got, err := f.svc.Recall(context.Background(), agentSupport, RecallRequest{UserID: "alice", Query: "q", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if ids := idsOf(got.Memories); !slices.Equal(ids, []string{"mem_old", "mem_fresh"}) {
		t.Fatalf("order = %v, want the relevant old episode before the fresh one", ids)
	}
	if d := got.Memories[0].Explain.DecayFactor; d < 0.5 || d > 0.5001 {
		t.Errorf("400-day-old episode decays to %v, want its floor, 0.5", d)
	}
}

func TestRecallDecayAndProfile(t *testing.T) {
	fresh := stored("mem_fresh", "fresh q")
	fresh.Type, fresh.UpdatedAt = TypeEpisodic, testNow
	old := stored("mem_old", "old q")
	old.Type, old.UpdatedAt = TypeEpisodic, testNow.Add(-30*24*time.Hour)
	profile := stored("mem_profile", "profile q")
	profile.Type, profile.UpdatedAt = TypeProfile, testNow

	f := newFixture(t, recallConfig)
	f.authz.scope = aliceScope
	// The old episode ranks first by full text, but a quarter of its score
	// decays (half of what lies above the floor); the profile memory ranks
	// last and its priority lifts it to the top.
	f.store.fullText = []Hit{{Memory: old, Score: 1}, {Memory: fresh, Score: 1}, {Memory: profile, Score: 1}}
	got, err := f.svc.Recall(context.Background(), agentSupport, RecallRequest{UserID: "alice", Query: "q", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if ids := idsOf(got.Memories); !slices.Equal(ids, []string{"mem_profile", "mem_fresh", "mem_old"}) {
		t.Fatalf("order = %v, want profile, fresh, old", ids)
	}
	e := got.Memories[2].Explain
	if math.Abs(e.AgeDays-30) > 1e-9 || math.Abs(e.DecayFactor-0.75) > 1e-9 {
		t.Errorf("30-day-old episode: age %v, decay %v; want 30 days, 0.75 (half of what lies above the floor of 0.5; episodic half-life 30 days)", e.AgeDays, e.DecayFactor)
	}
	if p := got.Memories[0].Explain.ProfileFactor; p != 1.2 {
		t.Errorf("profile factor = %v, want 1.2", p)
	}
	for _, r := range got.Memories {
		x := r.Explain
		if want := x.Fused * x.DecayFactor * x.ImportanceFactor * x.ProfileFactor; math.Abs(r.Score-want) > 1e-12 {
			t.Errorf("%s: score %v is not the product of its parts %v", r.Memory.ID, r.Score, want)
		}
	}
}

// fakeReranker answers with fixed scores or an error.
type fakeReranker struct {
	scores []float64
	err    error
}

func (f fakeReranker) Rerank(_ context.Context, _ string, docs []string) ([]float64, error) {
	return f.scores[:min(len(f.scores), len(docs))], f.err
}

func TestRecallRerankAndDiversify(t *testing.T) {
	x, y, z := stored("mem_x", "q x"), stored("mem_y", "q y"), stored("mem_z", "q z")
	x.Embedding, y.Embedding, z.Embedding = []float32{1, 0}, []float32{0.99, 0.1}, []float32{0, 1}
	text := []Hit{{Memory: x, Score: 10}, {Memory: y, Score: 9}, {Memory: z, Score: 8}}
	tests := []struct {
		name       string
		reranker   Reranker
		diversify  bool
		want       []string
		wantRerank string
	}{
		{"fused order", nil, false, []string{"mem_x", "mem_y", "mem_z"}, RerankOff},
		{"rerank reorders", fakeReranker{scores: []float64{0.1, 0.2, 0.9}}, false, []string{"mem_z", "mem_y", "mem_x"}, RerankApplied},
		{"rerank error keeps the fused order", fakeReranker{err: errTest("down")}, false, []string{"mem_x", "mem_y", "mem_z"}, RerankFailed},
		{"rerank with too few scores keeps the fused order", fakeReranker{scores: []float64{1}}, false, []string{"mem_x", "mem_y", "mem_z"}, RerankFailed},
		{"MMR moves the near-duplicate down", nil, true, []string{"mem_x", "mem_z", "mem_y"}, RerankOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := recallConfig
			cfg.Reranker = tt.reranker
			f := newFixture(t, cfg)
			f.authz.scope = aliceScope
			f.store.fullText = text
			got, err := f.svc.Recall(context.Background(), agentSupport, RecallRequest{UserID: "alice", Query: "q", K: 10, Diversify: tt.diversify})
			if err != nil {
				t.Fatal(err)
			}
			if ids := idsOf(got.Memories); !slices.Equal(ids, tt.want) {
				t.Errorf("order = %v, want %v", ids, tt.want)
			}
			if got.Search.Rerank != tt.wantRerank || (got.Search.RerankError != "") != (tt.wantRerank == RerankFailed) {
				t.Errorf("rerank = %q (%q), want %q", got.Search.Rerank, got.Search.RerankError, tt.wantRerank)
			}
			if got.Search.Diversified != tt.diversify {
				t.Errorf("diversified = %v", got.Search.Diversified)
			}
			if tt.diversify && f.store.fullTextCalls[0].Embeddings != true {
				t.Error("MMR did not ask for embeddings")
			}
		})
	}
}
