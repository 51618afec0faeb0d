package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/journal"
	"mneme/memory"
	"mneme/rerank"
)

func sourcesOf(r client.RecallResult, id string) []string {
	for _, m := range r.Memories {
		if m.Memory.ID == id {
			return m.Explain.Sources
		}
	}
	return nil
}

func recalledOf(r client.RecallResult, id string) (client.Recalled, bool) {
	for _, m := range r.Memories {
		if m.Memory.ID == id {
			return m, true
		}
	}
	return client.Recalled{}, false
}

func TestRecallGraphExpansion(t *testing.T) {
	f := apptest.Start(t)
	// The note never says the order number: only its entity links it.
	note := create(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeEpisodic, Kind: "note",
		Content:  "Deliver to the back entrance; the front door is locked on weekends.",
		Entities: []client.Entity{{ID: "order:SO-7731", Kind: "order", Name: "SO-7731", Aliases: []string{"七七三一号订单"}}},
	})
	// The shipment is found by words; the fragile note only through the
	// product both mention.
	shipped := create(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeEpisodic, Kind: "delivery",
		Content:  "Alice's label printer order shipped to the Hangzhou warehouse on Monday.",
		Entities: []client.Entity{{ID: "product:px-9000", Kind: "product", Name: "PX-9000"}},
	})
	fragile := create(t, f, "order-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeProcedural, Kind: "rule",
		Content:  "Handle with care: glass parts inside, keep upright.",
		Entities: []client.Entity{{ID: "product:px-9000", Kind: "product", Name: "PX-9000"}},
	})
	// Bob's memory names the same order: never Alice's answer.
	create(t, f, "order-bot", client.NewMemory{
		UserID: "bob", Type: client.TypeEpisodic, Content: "Bob's note about parking.",
		Entities: []client.Entity{{ID: "order:SO-7731", Kind: "order", Name: "SO-7731"}},
	})

	tests := []struct {
		name, query string
		want        string
		wantPath    []string
	}{
		{"entity named in the question", "Any delivery notes for SO-7731?", note.ID,
			[]string{"query", "Entity:order:SO-7731", "Memory:" + note.ID}},
		{"entity named by an alias", "七七三一号订单有什么要注意的", note.ID,
			[]string{"query", "Entity:order:SO-7731", "Memory:" + note.ID}},
		{"entity of a first hit", "Where did Alice's label printer order ship?", fragile.ID,
			[]string{"Memory:" + shipped.ID, "Entity:product:px-9000", "Memory:" + fragile.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := recall(t, f, "order-bot", client.RecallRequest{UserID: "alice", Query: tt.query, K: 10})
			m, ok := recalledOf(got, tt.want)
			if !ok {
				t.Fatalf("recall %q = %v, want %s", tt.query, recalledIDs(got), tt.want)
			}
			if !has(m.Explain.Sources, memory.SourceGraph) || !slices.Equal(m.Explain.GraphPath, tt.wantPath) {
				t.Errorf("explain = sources %v, path %v; want graph via %v", m.Explain.Sources, m.Explain.GraphPath, tt.wantPath)
			}
			for _, r := range got.Memories {
				if r.Memory.UserID != "alice" {
					t.Errorf("recalled %s of %s", r.Memory.ID, r.Memory.UserID)
				}
			}
		})
	}
	if got := recall(t, f, "order-bot", client.RecallRequest{UserID: "alice", Query: "tell me a joke about penguins"}); len(got.Memories) != 0 {
		t.Errorf("an unrelated question recalled %v", recalledIDs(got))
	}
}

func TestRecallResolvesSupersededToHead(t *testing.T) {
	f := apptest.Start(t)
	ent := []client.Entity{{ID: "company:lotus", Kind: "company", Name: "Lotus Trading"}}
	old := create(t, f, "finance-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeProfile, Key: "budget", Content: "The quarterly allowance is 100k yuan.", Entities: ent,
	})
	head := create(t, f, "finance-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeProfile, Key: "budget", Content: "The quarterly allowance is 150k yuan.",
	})
	got := recall(t, f, "finance-bot", client.RecallRequest{UserID: "alice", Query: "What did we agree with Lotus Trading?", K: 10})
	m, ok := recalledOf(got, head.ID)
	if !ok || has(recalledIDs(got), old.ID) {
		t.Fatalf("recall = %v, want the head %s and not %s", recalledIDs(got), head.ID, old.ID)
	}
	want := []string{"query", "Entity:company:lotus", "Memory:" + old.ID, "SUPERSEDED_BY", "Memory:" + head.ID}
	if !slices.Equal(m.Explain.GraphPath, want) {
		t.Errorf("path = %v, want %v", m.Explain.GraphPath, want)
	}
}

func TestRecallAsOf(t *testing.T) {
	f := apptest.Start(t)
	old := create(t, f, "finance-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeProfile, Key: "budget", Content: "Alice's procurement budget is 100k yuan.",
	})
	between := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	head := create(t, f, "finance-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeProfile, Key: "budget", Content: "Alice's procurement budget is 150k yuan.",
	})
	q := client.RecallRequest{UserID: "alice", Query: "What is Alice's procurement budget?"}
	if got := recalledIDs(recall(t, f, "finance-bot", q)); !slices.Equal(got, []string{head.ID}) {
		t.Errorf("now = %v, want only %s", got, head.ID)
	}
	q.AsOf = &between
	if got := recalledIDs(recall(t, f, "finance-bot", q)); !slices.Equal(got, []string{old.ID}) {
		t.Errorf("as of %s = %v, want only the old budget %s", between, got, old.ID)
	}
	before := old.CreatedAt.Add(-time.Second)
	q.AsOf = &before
	if got := recalledIDs(recall(t, f, "finance-bot", q)); len(got) != 0 {
		t.Errorf("as of before both = %v, want nothing", got)
	}
	future := time.Now().Add(time.Hour)
	q.AsOf = &future
	_, err := f.Client(t, "finance-bot").Recall(t.Context(), q)
	wantAPIError(t, "as_of in the future", err, http.StatusBadRequest, "invalid_argument")
	// A time that is none is the same kind of mistake, about the same field.
	r := f.Do(t, "finance-bot", http.MethodPost, "/v1/recall", map[string]any{"user_id": "alice", "query": q.Query, "as_of": "yesterday"})
	expectResponse(t, "as_of yesterday", r, http.StatusBadRequest, "invalid_argument")
	if !strings.Contains(string(r.Body), `as_of: \"yesterday\" is no RFC 3339 time`) {
		t.Errorf("as_of yesterday: %s, want it named", r.Body)
	}
}

// TestRecallAsOfNeverReturnsACandidate: an agent's guess that was never
// confirmed held at no time, so as_of does not find it once a newer version
// superseded it, neither for the agent nor for the user it is about.
func TestRecallAsOfNeverReturnsACandidate(t *testing.T) {
	f := apptest.Start(t)
	guess := create(t, f, "support-bot", client.NewMemory{
		UserID: "bob", Type: client.TypeProfile, Kind: "preference", Key: "snack",
		Content: "Bob loves durian pastries for office snacks.",
	})
	if guess.Status != client.StatusCandidate {
		t.Fatalf("support-bot's preference is %s, want a candidate", guess.Status)
	}
	edit := "Bob loves lychee pastries for office snacks."
	next, err := f.Client(t, "support-bot").Update(t.Context(), guess.ID, 0, client.UpdateRequest{Content: &edit})
	if err != nil || next.Status != client.StatusCandidate {
		t.Fatalf("PATCH the candidate: %+v, %v; want a new candidate", next, err)
	}
	if old, err := f.Client(t, apptest.Admin).Get(t.Context(), guess.ID); err != nil || old.Status != client.StatusSuperseded {
		t.Fatalf("first version after the PATCH: %+v, %v; want it superseded", old, err)
	}
	then := guess.CreatedAt
	for _, who := range []string{"support-bot", "bob"} {
		got := recalledIDs(recall(t, f, who, client.RecallRequest{UserID: "bob", Query: "What snacks does Bob like?", AsOf: &then}))
		if has(got, guess.ID) {
			t.Errorf("%s: as of %s = %v, holds the never-confirmed %s", who, then, got, guess.ID)
		}
	}
	// Confirmed, the second version holds from then on; the first still
	// held at no time.
	if m, err := f.Client(t, "bob").Confirm(t.Context(), next.ID); err != nil || m.Status != client.StatusActive {
		t.Fatalf("bob confirms %s: %+v, %v", next.ID, m, err)
	}
	now := time.Now().UTC()
	q := client.RecallRequest{UserID: "bob", Query: "What snacks does Bob like?", AsOf: &now}
	if got := recalledIDs(recall(t, f, "support-bot", q)); !has(got, next.ID) || has(got, guess.ID) {
		t.Errorf("as of now after the confirmation = %v, want %s and not %s", got, next.ID, guess.ID)
	}
	q.AsOf = &then
	if got := recalledIDs(recall(t, f, "support-bot", q)); has(got, guess.ID) {
		t.Errorf("as of %s after the confirmation = %v, holds the never-confirmed %s", then, got, guess.ID)
	}
}

func TestRecallDecayPrefersRecentEpisodes(t *testing.T) {
	f := apptest.Start(t)
	ctx := context.Background()
	imp := func(v float64) *float64 { return &v }
	// Without decay the old episode wins: it is more important.
	old, err := f.App.Service.Import(ctx, memory.NewMemory{
		Tenant: f.Tenant, UserID: "alice", AgentID: "support-bot", Type: client.TypeEpisodic, Importance: imp(0.9),
		Content: "Alice called about the late delivery of her office chairs.",
	}, time.Now().Add(-120*24*time.Hour), "")
	if err != nil {
		t.Fatal(err)
	}
	recent := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeEpisodic, Importance: imp(0.5),
		Content: "Alice called about the late delivery of her standing desks.",
	})
	got := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "Alice called about a late delivery", K: 10})
	ids := recalledIDs(got)
	if len(ids) != 2 || ids[0] != recent.ID || ids[1] != old.ID {
		t.Fatalf("order = %v, want recent %s before old %s", ids, recent.ID, old.ID)
	}
	o, r := got.Memories[1].Explain, got.Memories[0].Explain
	// 120 days are four episodic half-lives: 1/16 of what lies above the
	// floor of 0.5 is left.
	if o.AgeDays < 119 || math.Abs(o.DecayFactor-(0.5+0.5/16)) > 0.005 || r.DecayFactor < 0.99 {
		t.Errorf("decay: old %v days → %v, recent → %v", o.AgeDays, o.DecayFactor, r.DecayFactor)
	}
	if o.Fused*o.ImportanceFactor <= r.Fused*r.ImportanceFactor {
		t.Errorf("the old episode should win without decay: %+v vs %+v", o, r)
	}
}

func TestRecallSession(t *testing.T) {
	f := apptest.Start(t)
	inSession := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", SessionID: "s-42", Type: client.TypeEpisodic, Content: "Alice asked to change the delivery address of her chair order.",
	})
	elsewhere := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", SessionID: "s-41", Type: client.TypeEpisodic, Content: "Alice asked about the delivery address of her desk order.",
	})
	// Written in the session, but shares no words with the question.
	sideNote := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", SessionID: "s-42", Type: client.TypeEpisodic, Content: "She sounded in a hurry.",
	})

	only := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "delivery address", SessionID: "s-42", SessionOnly: true, K: 10})
	if ids := recalledIDs(only); !has(ids, inSession.ID) || has(ids, elsewhere.ID) {
		t.Errorf("session_only = %v, want %s and not %s", ids, inSession.ID, elsewhere.ID)
	}
	joined := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "delivery address", SessionID: "s-42", K: 10})
	if ids := recalledIDs(joined); !has(ids, elsewhere.ID) || !has(ids, sideNote.ID) {
		t.Errorf("with session = %v, want %s too and the session's %s", ids, elsewhere.ID, sideNote.ID)
	}
	// It comes as one of the session's, and as the turn written next to a
	// first hit there.
	if src := sourcesOf(joined, sideNote.ID); !slices.Contains(src, memory.SourceSession) || !slices.Contains(src, memory.SourceAdjacent) {
		t.Errorf("side note sources = %v, want session and adjacent among them", src)
	}
	if got := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "tell me a joke about penguins", SessionID: "s-42"}); len(got.Memories) != 0 {
		t.Errorf("an unrelated question recalled the session: %v", recalledIDs(got))
	}
	_, err := f.Client(t, "support-bot").Recall(t.Context(), client.RecallRequest{UserID: "alice", Query: "x", SessionOnly: true})
	wantAPIError(t, "session_only without session_id", err, http.StatusBadRequest, "invalid_argument")
}

func TestRecallFilters(t *testing.T) {
	f := apptest.Start(t)
	rule := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeProcedural, Kind: "rule", Content: "Refunds for Alice's orders above 500 yuan need a manager.",
	})
	event := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeEpisodic, Kind: "refund", Content: "Alice's refund of 300 yuan for her orders was paid.",
	})
	q := func(edit func(*client.RecallRequest)) []string {
		r := client.RecallRequest{UserID: "alice", Query: "refunds for Alice's orders", K: 10}
		edit(&r)
		return recalledIDs(recall(t, f, "support-bot", r))
	}
	later := event.CreatedAt.Add(time.Hour)
	tests := []struct {
		name string
		edit func(*client.RecallRequest)
		want []string
	}{
		{"no filter", func(*client.RecallRequest) {}, []string{rule.ID, event.ID}},
		{"types", func(r *client.RecallRequest) { r.Types = []string{client.TypeEpisodic} }, []string{event.ID}},
		{"kinds", func(r *client.RecallRequest) { r.Kinds = []string{"rule"} }, []string{rule.ID}},
		{"window after both", func(r *client.RecallRequest) { r.From = &later }, nil},
		{"window up to the rule", func(r *client.RecallRequest) { r.To = &event.CreatedAt }, []string{rule.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := q(tt.edit)
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("recalled %v, want %v", got, want)
			}
		})
	}
}

func TestRecallDiversifyOnNearDuplicates(t *testing.T) {
	f := apptest.Start(t)
	a := create(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeProfile, Importance: ptrTo(0.9),
		Content: "Alice drinks green tea every morning."})
	// Written through the seed path: a write through the API would
	// reinforce a instead of storing its near-duplicate.
	a2, err := f.App.Service.Import(context.Background(), memory.NewMemory{Tenant: f.Tenant, UserID: "alice", AgentID: "support-bot",
		Type: client.TypeProfile, Importance: ptrTo(0.8), Content: "Every morning Alice drinks green tea."}, time.Now(), "")
	if err != nil {
		t.Fatal(err)
	}
	b := create(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeProfile, Importance: ptrTo(0.5),
		Content: "Alice drinks black coffee every morning before work."})
	q := client.RecallRequest{UserID: "alice", Query: "What does Alice drink every morning?", K: 3}
	plain := recall(t, f, "support-bot", q)
	q.Diversify = true
	diverse := recall(t, f, "support-bot", q)
	if got := recalledIDs(plain); !slices.Equal(got, []string{a.ID, a2.ID, b.ID}) {
		t.Fatalf("plain order = %v, want %v", got, []string{a.ID, a2.ID, b.ID})
	}
	if got := recalledIDs(diverse); !slices.Equal(got, []string{a.ID, b.ID, a2.ID}) {
		for _, m := range diverse.Memories {
			t.Logf("%s %.4f %+v", m.Memory.Content, m.Score, m.Explain)
		}
		t.Errorf("diversified order = %v, want the near-duplicate last: %v", got, []string{a.ID, b.ID, a2.ID})
	}
	if !diverse.Search.Diversified || plain.Search.Diversified {
		t.Errorf("diversified flags: plain %v, diverse %v", plain.Search.Diversified, diverse.Search.Diversified)
	}
	if s := diverse.Memories[2].Explain.MMRMaxSimilarity; s == nil || *s < 0.5 {
		t.Errorf("the near-duplicate's similarity to the first is missing or low")
	}
}

func ptrTo[T any](v T) *T { return &v }

// serviceIDs lists the ids of a recall made in process, in order.
func serviceIDs(r memory.RecallResult) []string {
	out := make([]string, len(r.Memories))
	for i, m := range r.Memories {
		out[i] = m.Memory.ID
	}
	return out
}

// serviceWith builds a second Service over the fixture's real stores and
// policy engine with its own recall tuning.
func serviceWith(t *testing.T, f *apptest.Fixture, cfg memory.RecallConfig) *memory.Service {
	t.Helper()
	a := f.App
	svc, err := memory.NewService(memory.Options{
		Store: a.Store, Authz: a.Policy, Embed: a.Embed,
		Recall: cfg, Search: a.Store, Recorder: a.Recorder,
		Guard: a.Policy, Writes: a.Store, Warm: a.Store, Confirm: a.Store, Forget: a.Store, Fence: a.Queue,
		Erasers: a.Erasers, Janitor: a.Janitor, Sessions: a.Sessions, Queue: a.Queue,
		Audit: a.Audit,
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func agentOf(f *apptest.Fixture, id string) memory.Principal {
	return memory.Principal{Tenant: f.Tenant, Kind: memory.KindAgent, ID: id}
}

func TestRecallRerank(t *testing.T) {
	f := apptest.Start(t)
	for _, c := range []string{
		"Alice's invoices go to the finance team in Suzhou.",
		"Alice's invoices must show the order number.",
		"Alice wants invoices sent by email.",
	} {
		create(t, f, "finance-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: c})
	}
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "model not loaded", http.StatusInternalServerError)
	}))
	defer failing.Close()
	// The reordering server scores documents in reverse: the last first.
	reversing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Query == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var b strings.Builder
		b.WriteString(`{"results":[`)
		for i := range req.Documents {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"index":%d,"relevance_score":%d}`, i, i)
		}
		b.WriteString("]}")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(b.String()))
	}))
	defer reversing.Close()

	req := memory.RecallRequest{UserID: "alice", Query: "Where do Alice's invoices go?", K: 10}
	ctx := context.Background()
	fused, err := serviceWith(t, f, memory.RecallConfig{}).Recall(ctx, agentOf(f, "finance-bot"), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(fused.Memories) < 2 || fused.Search.Rerank != memory.RerankOff {
		t.Fatalf("fused = %v (rerank %s), want at least two memories and no rerank", serviceIDs(fused), fused.Search.Rerank)
	}
	want := serviceIDs(fused)
	reversed := slices.Clone(want)
	slices.Reverse(reversed)

	tests := []struct {
		name       string
		url        string
		wantOrder  []string
		wantRerank string
	}{
		{"failing endpoint keeps the fused order", failing.URL, want, memory.RerankFailed},
		{"reordering endpoint reorders", reversing.URL, reversed, memory.RerankApplied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr, err := rerank.New(rerank.Options{URL: tt.url, Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			got, err := serviceWith(t, f, memory.RecallConfig{Reranker: rr}).Recall(ctx, agentOf(f, "finance-bot"), req)
			if err != nil {
				t.Fatalf("recall with a reranker: %v", err)
			}
			if ids := serviceIDs(got); !slices.Equal(ids, tt.wantOrder) {
				t.Errorf("order = %v, want %v", ids, tt.wantOrder)
			}
			if got.Search.Rerank != tt.wantRerank {
				t.Errorf("rerank = %q (%s), want %q", got.Search.Rerank, got.Search.RerankError, tt.wantRerank)
			}
			if (got.Search.RerankError != "") != (tt.wantRerank == memory.RerankFailed) {
				t.Errorf("rerank error = %q", got.Search.RerankError)
			}
		})
	}
}

func TestRecallVectorPaths(t *testing.T) {
	f := apptest.Start(t)
	contents := []string{
		"Alice's favourite supplier for thermal paper is Jinda Trading in Shanghai.",
		"Alice keeps spare ink cartridges in the second drawer of the Hangzhou office.",
		"Alice's barcode scanners were replaced after the warranty claim in Suzhou.",
		"Alice asked for quotes on standing desks for the new Beijing team.",
	}
	for _, c := range contents {
		create(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: c})
	}
	ctx := context.Background()
	agent := agentOf(f, "support-bot")
	req := memory.RecallRequest{UserID: "alice", Query: contents[1], K: 4}
	exact, err := serviceWith(t, f, memory.RecallConfig{}).Recall(ctx, agent, req)
	if err != nil {
		t.Fatal(err)
	}
	if exact.Search.VectorPath != memory.VectorExact || exact.Search.PartitionSize != len(contents) || !exact.Search.VectorComplete {
		t.Fatalf("small partition: %+v, want the exact path over %d memories", exact.Search, len(contents))
	}
	if len(exact.Memories) == 0 || exact.Memories[0].Memory.Content != contents[1] {
		t.Fatalf("exact recall = %v, want the identical memory first", serviceIDs(exact))
	}

	tests := []struct {
		name       string
		cfg        memory.RecallConfig
		wantPaths  []string
		checkCount bool
	}{
		// The index ranks the whole shared database: it may not fill the
		// candidates, and then the partition is scanned exactly after it.
		{"index with exact fallback", memory.RecallConfig{ExactMax: 1}, []string{memory.VectorIndex, memory.VectorIndexExact}, false},
		{"index alone says when it fell short", memory.RecallConfig{ExactMax: 1, IndexNoFallback: true, IndexMaxFetch: 100}, []string{memory.VectorIndex}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := serviceWith(t, f, tt.cfg).Recall(ctx, agent, req)
			if err != nil {
				t.Fatal(err)
			}
			s := got.Search
			if !slices.Contains(tt.wantPaths, s.VectorPath) || s.PartitionSize != len(contents) {
				t.Fatalf("search = %+v, want a path of %v", s, tt.wantPaths)
			}
			if len(got.Memories) == 0 || got.Memories[0].Memory.ID != exact.Memories[0].Memory.ID {
				t.Errorf("index recall = %v, want %s first like the exact path", serviceIDs(got), exact.Memories[0].Memory.ID)
			}
			if tt.checkCount && s.VectorComplete != (s.Candidates.Vector >= len(contents)) {
				t.Errorf("vector_complete = %v with %d of %d candidates", s.VectorComplete, s.Candidates.Vector, len(contents))
			}
			if !tt.checkCount && !s.VectorComplete {
				t.Errorf("the exact fallback left the answer incomplete: %+v", s)
			}
		})
	}
}

func TestRecallLogAndAccessCounts(t *testing.T) {
	f := apptest.Start(t)
	m := create(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeProfile, Content: "Alice prefers short answers."})
	got := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "Does Alice prefer short answers?"})
	if !has(recalledIDs(got), m.ID) {
		t.Fatalf("recall = %v, want %s", recalledIDs(got), m.ID)
	}
	// Both are written after the answer: wait for them.
	var log struct {
		Recalls []memory.RecallRecord `json:"recalls"`
	}
	// The recall log is an admin's route the client has no method for: Do.
	admin := f.Client(t, apptest.Admin)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := admin.Do(t.Context(), http.MethodGet, "/v1/recall-log?user_id=alice", nil, &log); err != nil {
			t.Fatalf("recall log as admin: %v", err)
		}
		stored := getMemory(t, f, "support-bot", m.ID)
		if len(log.Recalls) == 1 && stored.AccessCount == 1 && stored.LastAccessedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: log %+v, access_count %d, last_accessed_at %v", log.Recalls, stored.AccessCount, stored.LastAccessedAt)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rec := log.Recalls[0]
	if rec.Caller.ID != "support-bot" || rec.UserID != "alice" || len(rec.Memories) == 0 || rec.Memories[0].ID != m.ID || rec.Memories[0].Score <= 0 {
		t.Errorf("log entry = %+v", rec)
	}

	for _, who := range []string{"support-bot", "alice", apptest.Analyst} {
		err := f.Client(t, who).Do(t.Context(), http.MethodGet, "/v1/recall-log?user_id=alice", nil, nil)
		wantAPIError(t, "recall log as "+who, err, http.StatusForbidden, "forbidden")
	}
	err := admin.Do(t.Context(), http.MethodGet, "/v1/recall-log", nil, nil)
	wantAPIError(t, "recall log without user_id", err, http.StatusBadRequest, "invalid_argument")
}

func TestRecallLogCapAndErase(t *testing.T) {
	f := apptest.Start(t)
	ctx := context.Background()
	log := journal.NewRecallLog(f.App.Redis, 3, time.Minute)
	for i := range 5 {
		err := log.Append(ctx, memory.RecallRecord{
			At: time.Now(), Tenant: f.Tenant, UserID: "alice", Query: fmt.Sprintf("q%d", i),
			Memories: []memory.RecalledMemory{{ID: "mem_x", Score: 0.1}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := log.RecentRecalls(ctx, f.Tenant, "alice", 10)
	if err != nil {
		t.Fatal(err)
	}
	var qs []string
	for _, r := range got {
		qs = append(qs, r.Query)
	}
	if !slices.Equal(qs, []string{"q4", "q3", "q2"}) {
		t.Errorf("kept %v, want the newest three", qs)
	}
	if log.Place() != "recall_log" {
		t.Errorf("place = %q", log.Place())
	}
	n, err := log.EraseUser(ctx, f.Tenant, "alice")
	if err != nil || n != 3 {
		t.Fatalf("erase = %d, %v; want 3", n, err)
	}
	if got, err := log.RecentRecalls(ctx, f.Tenant, "alice", 10); err != nil || len(got) != 0 {
		t.Errorf("after erase: %v, %v", got, err)
	}
}

// TestRecallLogErasedAfterQueuedRecalls: erasing a user writes the recalls
// still queued first, so none of them lands after the erase.
func TestRecallLogErasedAfterQueuedRecalls(t *testing.T) {
	f := apptest.Start(t)
	create(t, f, "support-bot", client.NewMemory{UserID: "carol", Type: client.TypeProfile, Content: "Carol prefers phone calls."})
	for range 3 {
		recall(t, f, "support-bot", client.RecallRequest{UserID: "carol", Query: "Does Carol prefer phone calls?"})
	}
	n, err := f.App.Recorder.EraseUser(context.Background(), f.Tenant, "carol")
	if err != nil || n != 3 {
		t.Fatalf("erase = %d, %v; want the 3 recalls, queued or written", n, err)
	}
	time.Sleep(100 * time.Millisecond)
	if got, err := f.App.RecallLog.RecentRecalls(context.Background(), f.Tenant, "carol", 10); err != nil || len(got) != 0 {
		t.Errorf("after erase: %d recalls, %v", len(got), err)
	}
}

// A user who recalls about another user gets none of their memories and
// learns nothing of them either: not how many there are, nor the path
// their number picks. The user's own recall says that a vector search ran,
// but neither the partition's size, which counts a note she may not read,
// nor the path that size picks; an admin's reports both.
func TestRecallAboutAnotherUserTellsNothing(t *testing.T) {
	f := apptest.Start(t)
	for _, c := range []string{"Alice's budget for Q4 is 150k CNY.", "Alice prefers short answers."} {
		create(t, f, "support-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: c})
	}
	create(t, f, "finance-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice's budget was cut after the Q3 audit.", Sensitivity: client.SensitivityConfidential})
	got, err := f.Client(t, "bob").Recall(t.Context(), client.RecallRequest{UserID: "alice", Query: "budget"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Memories) != 0 || got.Search.PartitionSize != 0 || got.Search.VectorPath != string(memory.VectorNone) {
		t.Errorf("bob about alice: %d memories, search %+v; want none, partition 0, path none", len(got.Memories), got.Search)
	}
	own, err := f.Client(t, "alice").Recall(t.Context(), client.RecallRequest{UserID: "alice", Query: "budget"})
	if err != nil {
		t.Fatal(err)
	}
	if len(own.Memories) == 0 || own.Search.PartitionSize != 0 || own.Search.VectorPath != "vector" {
		t.Errorf("alice about herself: %d memories, search %+v; want some, partition 0, path vector", len(own.Memories), own.Search)
	}
	for _, m := range own.Memories {
		if m.Memory.Sensitivity == client.SensitivityConfidential {
			t.Errorf("alice recalled the confidential note %q", m.Memory.Content)
		}
	}
	admin, err := f.Client(t, "admin").Recall(t.Context(), client.RecallRequest{UserID: "alice", Query: "budget"})
	if err != nil {
		t.Fatal(err)
	}
	if admin.Search.PartitionSize != 3 || admin.Search.VectorPath != string(memory.VectorExact) {
		t.Errorf("admin about alice: search %+v; want partition 3, path exact", admin.Search)
	}
}
