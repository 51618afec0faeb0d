package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/internal/testenv"
	"mneme/memory"
)

// The index search walks the user's partition (and the tenant's shared
// one) alone: other users and tenants whose memories crowd the question's
// neighbourhood take none of the fetch, and none of theirs come back, even
// under a scope that admits the whole tenant.
func TestSearchVectorApproxKeepsToThePartition(t *testing.T) {
	s := testStore(t)
	vec, err := s.vectorIndex(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !vec.partitioned {
		t.Skip("the server's vector index knows no partition")
	}
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)
	r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	question := make([]float32, testenv.EmbeddingDimension)
	for i := range question {
		question[i] = float32(r.NormFloat64())
	}
	// near returns the question moved by noise of the given size: the
	// crowd is nearer than the user's memories.
	near := func(noise float64) []float32 {
		v := slices.Clone(question)
		for i := range v {
			v[i] += float32(noise * r.NormFloat64())
		}
		return v
	}
	ms := map[string][]memory.Memory{} // by tenant: a batch holds one
	add := func(tenant, user string, n int, noise float64) []string {
		var ids []string
		for range n {
			m := newMemory(tenant, user, "near the question")
			if user == "" {
				m.Scope = memory.ScopeTenant
			}
			m.Embedding = near(noise)
			ms[tenant] = append(ms[tenant], m)
			ids = append(ids, m.ID)
		}
		return ids
	}
	own := add(tenant, "u1", 20, 0.5)
	shared := add(tenant, "", 5, 0.5)
	add(tenant, "u2", 300, 0.1)
	add(other, "u1", 300, 0.1)
	for _, tms := range ms {
		createInBatches(t, s, tms)
	}

	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	for _, tc := range []struct {
		name   string
		shared bool
		want   []string
	}{
		{"user", false, own},
		{"user and shared", true, append(slices.Clone(own), shared...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := memory.SearchQuery{UserID: "u1", Shared: tc.shared, Embedding: question, Limit: 100}
			// Index updates may trail the commit: ask until all are there.
			var got []string
			for deadline := time.Now().Add(20 * time.Second); ; {
				hits, err := s.SearchVectorApprox(testCtx(t), whole, q, 30)
				if err != nil {
					t.Fatalf("SearchVectorApprox: %v", err)
				}
				got = hitIDs(hits)
				if len(got) >= len(tc.want) || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("hits (-want +got):\n%s", d)
			}
		})
	}
}

// The full-text search reads the user's partition (and the shared one)
// alone: other users of the tenant whose memories match the question better
// and outnumber what one search fetches leave the user's own match in the
// answer, as do users whose ids extend the user's.
func TestSearchFullTextKeepsToThePartition(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	own := newMemory(tenant, "u1", "a long note that mentions the zebra crossing by the office once")
	shared := newMemory(tenant, "", "zebra crossings are painted each spring")
	shared.Scope = memory.ScopeTenant
	batch := []memory.Memory{own, shared}
	for i := range maxSearchLimit + 50 {
		batch = append(batch, newMemory(tenant, "u2", fmt.Sprintf("zebra zebra %d", i)))
	}
	for i := range 20 {
		batch = append(batch, newMemory(tenant, "u1-x", fmt.Sprintf("zebra zebra zebra %d", i)))
	}
	createInBatches(t, s, batch)
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	for _, tc := range []struct {
		name   string
		shared bool
		want   []string
	}{
		{"user", false, []string{own.ID}},
		{"user and shared", true, []string{own.ID, shared.ID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := memory.SearchQuery{UserID: "u1", Shared: tc.shared, Text: "zebra", Now: time.Now(), Limit: 10}
			hits, err := s.SearchFullText(testCtx(t), whole, q)
			if err != nil {
				t.Fatal(err)
			}
			got := hitIDs(hits)
			slices.Sort(got)
			if d := cmp.Diff(slices.Sorted(slices.Values(tc.want)), got); d != "" {
				t.Errorf("hits (-want +got):\n%s", d)
			}
		})
	}
}

// A memory the janitor expired at its valid_to is what held before then:
// as_of finds it, a recall of now does not.
func TestAsOfFindsWhatExpiredSince(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	rule := newMemory(tenant, "u1", "during the holiday week orders ship by courier only")
	ended := rule.ValidFrom.Add(7 * 24 * time.Hour)
	rule.Status, rule.ValidTo = memory.StatusExpired, &ended
	createInBatches(t, s, []memory.Memory{rule})
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	for _, tc := range []struct {
		name string
		asOf time.Time
		want int
	}{
		{"now", time.Time{}, 0},
		{"while it held", rule.ValidFrom.Add(24 * time.Hour), 1},
		{"after it ended", ended.Add(time.Hour), 0},
	} {
		q := memory.SearchQuery{UserID: "u1", Text: "courier holiday", Now: time.Now(), Limit: 10, AsOf: tc.asOf}
		hits, err := s.SearchFullText(testCtx(t), whole, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != tc.want {
			t.Errorf("%s: %d hits, want %d", tc.name, len(hits), tc.want)
		}
	}
}

// createInBatches stores ms (all of one tenant) a hundred at a time.
func createInBatches(t *testing.T, s *Store, ms []memory.Memory) {
	t.Helper()
	for batch := range slices.Chunk(ms, 100) {
		if _, err := s.CreateMemories(testCtx(t), batch); err != nil {
			t.Fatal(err)
		}
	}
}

// A partition is one token to the full-text analyser, the same for the same
// tenant and user, and another for any other pair, however their ids split.
func TestPartitionOf(t *testing.T) {
	token := regexp.MustCompile(`^p[0-9a-f]{32}$`)
	pairs := [][2]string{{"t", "u"}, {"t", ""}, {"t", "u-1"}, {"t-u", "1"}, {"t-u", ""}, {"T", "u"}, {"t", "用户"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		got := partitionOf(p[0], p[1])
		if !token.MatchString(got) {
			t.Errorf("partitionOf%q = %q, want one token like %s", p, got, token)
		}
		if again := partitionOf(p[0], p[1]); again != got {
			t.Errorf("partitionOf%q gave %q then %q", p, got, again)
		}
		if q, ok := seen[got]; ok {
			t.Errorf("partitionOf%q = partitionOf%q", p, q)
		}
		seen[got] = p
	}
}

// The exact search of a user's memories and the shared knowledge together
// returns the limit from each partition, nearest first: what searching them
// one after the other returns, in one statement.
func TestSearchVectorTakesTheLimitFromEachPartition(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	var batch []memory.Memory
	add := func(user string, angle float64) string {
		m := newMemory(tenant, user, "a memory")
		if user == "" {
			m.Scope = memory.ScopeTenant
		}
		m.Embedding = unitAt(angle)
		batch = append(batch, m)
		return m.ID
	}
	// The user's memories are all nearer than the shared ones, and u2's
	// nearer still.
	own := []string{add("u1", 0.1), add("u1", 0.2), add("u1", 0.3)}
	shared := []string{add("", 0.4), add("", 0.5), add("", 0.6)}
	add("u2", 0.0)
	if _, err := s.CreateMemories(testCtx(t), batch); err != nil {
		t.Fatal(err)
	}
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	for _, tc := range []struct {
		name string
		q    memory.SearchQuery
		want []string
	}{
		{"user and shared", memory.SearchQuery{UserID: "u1", Shared: true, Limit: 2}, []string{own[0], own[1], shared[0], shared[1]}},
		{"user alone", memory.SearchQuery{UserID: "u1", Limit: 2}, own[:2]},
		{"shared alone", memory.SearchQuery{Shared: true, Limit: 2}, shared[:2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Embedding, q.Now = unitAt(0), time.Now()
			hits, err := s.SearchVector(testCtx(t), whole, q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.Memory.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("hits %v, want %v", got, tc.want)
			}
		})
	}
}

// An expansion asked with a query vector brings each memory's similarity to
// it, computed in Neo4j, without the embedding: recall's neighbour gate
// needs the number, not the vector.
func TestExpandSimilarity(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	order := memory.Entity{ID: "order:so-1", Kind: "order", Name: "SO-1"}
	seed, near, bare := newMemory(tenant, "u1", "SO-1 shipped"), newMemory(tenant, "u1", "SO-1 was paid"), newMemory(tenant, "u1", "SO-1 note")
	seed.Embedding, near.Embedding = unitAt(0), unitAt(math.Pi/3)
	for _, m := range []*memory.Memory{&seed, &near, &bare} {
		m.Entities = []memory.Entity{order}
	}
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{seed, near, bare}); err != nil {
		t.Fatal(err)
	}
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	for _, tc := range similarityCases(near.ID, bare.ID) {
		t.Run(tc.name, func(t *testing.T) {
			q := memory.SearchQuery{UserID: "u1", Embedding: tc.vec, Now: time.Now()}
			xs, err := s.Expand(testCtx(t), whole, memory.ExpandQuery{UserID: "u1", Seeds: []string{seed.ID}, Filters: q, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(xs) != len(tc.want) {
				t.Fatalf("expanded to %d memories, want %d", len(xs), len(tc.want))
			}
			for _, x := range xs {
				checkSimilarity(t, x.Memory.Content, x.Similarity, tc.want[x.Memory.ID])
				if len(x.Memory.Embedding) != 0 {
					t.Errorf("%s: the embedding came back unasked", x.Memory.Content)
				}
			}
		})
	}
}

// A full-text search asked with a query vector brings each hit's
// similarity to it, so that the relevance gate judges every word match by
// its meaning too; without a vector, or for a memory without an embedding
// of its size, there is none.
func TestSearchFullTextSimilarity(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	near, bare := newMemory(tenant, "u1", "the parcel left Ningbo"), newMemory(tenant, "u1", "a parcel for Wuxi")
	near.Embedding = unitAt(math.Pi / 3)
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{near, bare}); err != nil {
		t.Fatal(err)
	}
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	for _, tc := range similarityCases(near.ID, bare.ID) {
		t.Run(tc.name, func(t *testing.T) {
			q := memory.SearchQuery{UserID: "u1", Text: "parcel", Embedding: tc.vec, Now: time.Now(), Limit: 10}
			hits, err := s.SearchFullText(testCtx(t), whole, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != len(tc.want) {
				t.Fatalf("found %d memories, want %d", len(hits), len(tc.want))
			}
			for _, h := range hits {
				checkSimilarity(t, h.Memory.Content, h.Similarity, tc.want[h.Memory.ID])
				if h.Score <= 0 {
					t.Errorf("%s: full-text score %v, want the Lucene score", h.Memory.Content, h.Score)
				}
			}
		})
	}
}

// similarityCase is a search asked with or without a query vector, and the
// similarity to it each memory should come back with.
type similarityCase struct {
	name string
	vec  []float32
	want map[string]*float64
}

// similarityCases: near's embedding lies at 60° from the query vector
// (cosine 0.5); bare has none.
func similarityCases(near, bare string) []similarityCase {
	return []similarityCase{
		{"with a query vector", unitAt(0), map[string]*float64{near: ptr(0.5), bare: nil}},
		{"without", nil, map[string]*float64{near: nil, bare: nil}},
	}
}

func checkSimilarity(t *testing.T, content string, got, want *float64) {
	t.Helper()
	if (got == nil) != (want == nil) || (got != nil && math.Abs(*got-*want) > 1e-5) {
		t.Errorf("%s: similarity %v, want %v", content, deref(got), deref(want))
	}
}

func ptr(v float64) *float64 { return &v }

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// A first hit lends its entities, but not the user's hubs: an entity more
// than a quarter of the user's memories mention (at least 3) leads nowhere.
func TestExpandSkipsTheUsersHubs(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	company := memory.Entity{ID: "company:lianhua", Kind: "company", Name: "Lianhua"}
	product := memory.Entity{ID: "product:chair", Kind: "product", Name: "chair"}
	seed := newMemory(tenant, "u1", "SO-1 chairs for Lianhua")
	seed.Entities = []memory.Entity{company, product}
	complaint := newMemory(tenant, "u1", "a chair arrived broken")
	complaint.Entities = []memory.Entity{product}
	ms := []memory.Memory{seed, complaint}
	for i := range 4 {
		m := newMemory(tenant, "u1", fmt.Sprintf("order %d for Lianhua", i))
		m.Entities = []memory.Entity{company}
		ms = append(ms, m)
	}
	if _, err := s.CreateMemories(testCtx(t), ms); err != nil {
		t.Fatal(err)
	}
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	for _, tc := range []struct {
		name      string
		partition int
		want      int
	}{
		{"six memories: the company, named by five, is a hub", len(ms), 1},
		{"forty memories: it is not", 40, len(ms) - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := memory.SearchQuery{UserID: "u1", Now: time.Now()}
			xs, err := s.Expand(testCtx(t), whole, memory.ExpandQuery{UserID: "u1", Seeds: []string{seed.ID}, Partition: tc.partition, Filters: q, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(xs) != tc.want {
				t.Fatalf("expanded to %d memories, want %d", len(xs), tc.want)
			}
			if tc.want == 1 && xs[0].Memory.ID != complaint.ID {
				t.Errorf("expanded to %q, want the complaint about the product", xs[0].Memory.Content)
			}
		})
	}
}

// The session part of an expansion returns the user's memories of the
// session, and only those: not another session's, nor another user's of a
// session with the same id.
func TestExpandSession(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	in := func(user, session, content string) memory.Memory {
		m := newMemory(tenant, user, content)
		m.SessionID = session
		return m
	}
	a, b := in("u1", "s-1", "first turn"), in("u1", "s-1", "second turn")
	ms := []memory.Memory{a, b, in("u1", "s-2", "another session"), in("u2", "s-1", "another user"), in("u1", "", "no session")}
	if _, err := s.CreateMemories(testCtx(t), ms); err != nil {
		t.Fatal(err)
	}
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	xs, err := s.Expand(testCtx(t), whole, memory.ExpandQuery{UserID: "u1", SessionID: "s-1", Filters: memory.SearchQuery{Now: time.Now()}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, x := range xs {
		if x.Via != "session" || x.Hop != 1 {
			t.Errorf("%s: via %s, hop %d; want session, 1", x.Memory.Content, x.Via, x.Hop)
		}
		got[x.Memory.ID] = x.Path
	}
	want := map[string][]string{a.ID: {"Session:s-1", "Memory:" + a.ID}, b.ID: {"Session:s-1", "Memory:" + b.ID}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session expansion (-want +got):\n%s", diff)
	}
}

// The turns said just before and just after a first hit in its session join
// the expansion with the path through the session and their similarity to
// the question: not a turn two away, nor one of another session, nor
// another user's in a session of the same id, though said in between.
func TestExpandAdjacentTurns(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	turn := func(user, session string, minute int, content string) memory.Memory {
		m := newMemory(tenant, user, content)
		m.SessionID, m.Embedding = session, unitAt(float64(minute)/10)
		m.CreatedAt, m.UpdatedAt, m.ValidFrom = start.Add(time.Duration(minute)*time.Minute), start, start
		return m
	}
	var ts []memory.Memory
	for i, c := range []string{"hi Mel", "how was the weekend?", "what did you paint?", "a sunrise over the lake", "lovely"} {
		ts = append(ts, turn("u1", "s-1", 2*i, c))
	}
	other := []memory.Memory{turn("u1", "s-2", 3, "another session"), turn("u2", "s-1", 5, "another user")}
	if _, err := s.CreateMemories(testCtx(t), append(append([]memory.Memory{}, ts...), other...)); err != nil {
		t.Fatal(err)
	}
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	q := memory.SearchQuery{UserID: "u1", Embedding: unitAt(0), Now: time.Now()}
	xs, err := s.Expand(testCtx(t), whole, memory.ExpandQuery{UserID: "u1", Seeds: []string{ts[2].ID}, Filters: q, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, x := range xs {
		if x.Via != "adjacent" || x.Hop != 1 || x.Similarity == nil {
			t.Errorf("%s: via %s, hop %d, similarity %v; want adjacent, 1 and one", x.Memory.Content, x.Via, x.Hop, deref(x.Similarity))
		}
		got[x.Memory.Content] = x.Path
	}
	path := func(m memory.Memory) []string { return []string{"Memory:" + ts[2].ID, "Session:s-1", "Memory:" + m.ID} }
	want := map[string][]string{ts[1].Content: path(ts[1]), ts[3].Content: path(ts[3])}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("adjacent turns (-want +got):\n%s", diff)
	}
}

// unitAt is the unit vector at angle in the plane of the first two
// dimensions: its cosine to unitAt(0) is cos(angle).
func unitAt(angle float64) []float32 {
	v := make([]float32, testenv.EmbeddingDimension)
	v[0], v[1] = float32(math.Cos(angle)), float32(math.Sin(angle))
	return v
}

// The named-entity expansion reads only what the scope may read: a name
// that only an unreadable memory gives matches nothing, and the second hop
// neither walks through nor names an unreadable memory.
func TestExpandNamedWithinScope(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	by := func(agent, content string, ents ...memory.Entity) memory.Memory {
		m := newMemory(tenant, "u1", content)
		m.AgentID, m.Entities = agent, ents
		return m
	}
	secret := by("finance", "order 1 has a special discount", memory.Entity{ID: "so-1", Kind: "order", Name: "Nightingale"})
	known := by("support", "u1 asked when order 1 ships", memory.Entity{ID: "so-1", Kind: "order"})
	heron := by("support", "u1 mentioned the rollout", memory.Entity{ID: "prj-9", Kind: "project", Name: "Heron"})
	between := by("finance", "the rollout is billed through order 2", memory.Entity{ID: "prj-9", Kind: "project"}, memory.Entity{ID: "so-2", Kind: "order"})
	beyond := by("support", "u1's pallets went out on order 2", memory.Entity{ID: "so-2", Kind: "order"})
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{secret, known, heron, between, beyond}); err != nil {
		t.Fatal(err)
	}
	support := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{AgentIDs: []string{"support"}}}}
	expand := func(scope memory.Scope, text string) map[string][]string {
		t.Helper()
		xs, err := s.Expand(testCtx(t), scope, memory.ExpandQuery{UserID: "u1", Text: text, Hops: 2, Filters: memory.SearchQuery{Now: time.Now()}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, x := range xs {
			out[x.Memory.ID] = x.Path
		}
		return out
	}
	if got := expand(support, "what about nightingale?"); len(got) != 0 {
		t.Errorf("a name only an unreadable memory gives expanded to %v", got)
	}
	got := expand(support, "how is heron going?")
	for id, path := range got {
		if slices.Contains(path, "Memory:"+between.ID) || id == between.ID {
			t.Errorf("the expansion walked through the unreadable %s: %s %v", between.ID, id, path)
		}
	}
	if _, ok := got[heron.ID]; !ok {
		t.Errorf("the readable memory naming heron was not found: %v", got)
	}
	// The whole tenant's reader walks the second hop through it.
	if path := expand(memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}, "how is heron going?")[beyond.ID]; !slices.Contains(path, "Memory:"+between.ID) {
		t.Errorf("a reader of everything reached %s by %v, want through %s", beyond.ID, path, between.ID)
	}
}
