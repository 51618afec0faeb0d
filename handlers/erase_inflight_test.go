package handlers_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mneme/app"
	"mneme/client"
	"mneme/embedding"
	"mneme/internal/apptest"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/writefence"
)

// embedGate is an OpenAI-compatible embeddings endpoint that answers with
// the built-in embedder's vectors, and holds every request with an input
// that contains the token it was told to hold until the test releases it:
// a slow embedding model, slow exactly when the test wants.
type embedGate struct {
	vec  *embedding.Builtin
	held chan string // the first input of each request that starts waiting

	mu      sync.Mutex
	hold    string
	release chan struct{}
}

func newEmbedGate(t *testing.T) (*embedGate, *httptest.Server) {
	g := &embedGate{vec: embedding.NewBuiltin(testenv.EmbeddingDimension), held: make(chan string, 64)}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return g, srv
}

func (g *embedGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	hold, release := g.hold, g.release
	g.mu.Unlock()
	if hold != "" && slices.ContainsFunc(req.Input, func(s string) bool { return strings.Contains(s, hold) }) {
		select {
		case <-release: // let go already
		default:
			g.held <- req.Input[0]
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
	}
	vecs, err := g.vec.Embed(r.Context(), req.Input)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	type datum struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Data []datum `json:"data"`
	}{}
	for i, v := range vecs {
		out.Data = append(out.Data, datum{i, v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// holdFor holds, from now on, every request with an input that contains
// token; release lets them go, and holds no more.
func (g *embedGate) holdFor(t *testing.T, token string) (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hold, g.release = token, make(chan struct{})
	ch := g.release
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(ch)
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.release == ch {
				g.hold = ""
			}
		})
	}
	t.Cleanup(release) // a failed test must not leave requests hanging
	return release
}

// await waits until n requests are held.
func (g *embedGate) await(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-g.held:
		case <-time.After(2 * time.Minute):
			t.Fatalf("%d of %d writes reached the embedder", i, n)
		}
	}
}

// TestEraseUserWithWritesInFlight: writes about a user are under way, their
// embedding held by a slow model, when the user is erased ("forget me").
// None may be stored after the erase, as one did when its transaction found
// the User node gone and made a new one: each is refused 409 user_erased
// (never retried, unlike 503), whether the user had memories or had never
// been written about (no User node to mark), for single and batched writes,
// a synchronous ingestion and a session's close. The receipt counts only
// what was stored before; no listing, export, recall, Neo4j node or Redis
// key holds anything of the held writes; and every answer matches the
// OpenAPI document. A write begun after the erase is a new start.
func TestEraseUserWithWritesInFlight(t *testing.T) {
	gate, srv := newEmbedGate(t)
	f := apptest.StartWith(t, func(c *app.Config) {
		// The built-in embedder's model, served over HTTP: its calibration
		// applies, and the test decides when an embedding comes back.
		c.Embedding.Kind, c.Embedding.URL, c.Embedding.Model = app.EmbedderHTTP, srv.URL+"/v1", embedding.BuiltinModel
		c.Embedding.Dim, c.Embedding.Timeout, c.Embedding.Retries = testenv.EmbeddingDimension, 3*time.Minute, 0
	})
	v := newValidator(t, loadDocument(t))
	apptest.Observe = v.observe
	t.Cleanup(func() { apptest.Observe = nil })

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	tok := func() string {
		var b [6]byte
		_, _ = rand.Read(b[:])
		return "zq" + hex.EncodeToString(b[:])
	}
	const bot = "support-bot"
	c, admin := f.Client(t, bot), f.Client(t, apptest.Admin)
	var tokens []string // content that must be found nowhere in the end

	// erase erases user while the writes that inFlight starts are held,
	// then lets them go and returns the receipt and what each write got.
	erase := func(user, token string, n int, inFlight func(done func(error))) (client.Receipt, []error) {
		t.Helper()
		release := gate.holdFor(t, token)
		var mu sync.Mutex
		var errs []error
		var wg sync.WaitGroup
		wg.Add(n)
		inFlight(func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock(); wg.Done() })
		gate.await(t, n)
		receipt, err := admin.DeleteUser(ctx, user)
		if err != nil {
			t.Fatalf("erase %s: %v", user, err)
		}
		release()
		wg.Wait()
		return receipt, errs
	}
	refused := func(step string, errs []error) {
		t.Helper()
		for i, err := range errs {
			wantAPIError(t, fmt.Sprintf("%s, write %d", step, i), err, http.StatusConflict, writefence.CodeUserErased)
		}
	}
	forgotten := func(step, user, token string) {
		t.Helper()
		if n, err := f.App.Store.CountText(ctx, f.Tenant, token); err != nil || n != 0 {
			t.Errorf("%s: Neo4j holds the erased content %d times (%v)", step, n, err)
		}
		for _, who := range []string{bot, apptest.Admin} {
			for _, m := range list(t, f, who, "user_id="+user+"&limit=500") {
				if strings.Contains(m.Content, token) {
					t.Errorf("%s: %s lists the erased %q, created at %v", step, who, m.Content, m.CreatedAt)
				}
			}
		}
		r := f.Do(t, apptest.Admin, "GET", "/v1/users/"+user+"/export", nil)
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), token) {
			t.Errorf("%s: the user's export (%d) holds the erased content", step, r.Status)
		}
		if got := recall(t, f, bot, client.RecallRequest{UserID: user, Query: "budget " + token}); len(got.Memories) != 0 {
			t.Errorf("%s: recall found %d memories, the first %q", step, len(got.Memories), got.Memories[0].Memory.Content)
		}
	}

	// A fresh Neo4j plans recall's statements on first use, for seconds on
	// a loaded machine: before anything is held.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		if _, err := c.Recall(ctx, client.RecallRequest{UserID: "warm-" + tok(), Query: "budget"}); err == nil || time.Now().After(deadline) {
			break
		}
	}

	// A user's first writes: no User node exists for the erase to mark.
	first, token := "dana-"+tok()[2:], tok()
	tokens = append(tokens, token)
	receipt, errs := erase(first, token, 4, func(done func(error)) {
		for i := range 4 {
			go func() {
				batch := []client.NewMemory{{UserID: first, Type: client.TypeSemantic, Content: fmt.Sprintf("Dana's budget for %s is %d00 euros", token, i+1)}}
				if i%2 == 1 { // and batches
					batch = append(batch, client.NewMemory{UserID: first, Type: client.TypeEpisodic, Content: fmt.Sprintf("Dana asked about order %s-%d", token, i)})
				}
				_, err := c.Add(ctx, batch...)
				done(err)
			}()
		}
	})
	if receipt.Counts[memory.PlaceGraphMemories] != 0 || receipt.Counts[memory.PlaceGraphUsers] != 0 {
		t.Errorf("first writes: receipt %v, want nothing in the graph", receipt.Counts)
	}
	refused("first writes", errs)
	forgotten("first writes", first, token)

	// A user with memories: those are erased, the held writes refused.
	known, token := "erin-"+tok()[2:], tok()
	tokens = append(tokens, token)
	for i := range 2 {
		create(t, f, bot, client.NewMemory{UserID: known, Type: client.TypeEpisodic, Content: fmt.Sprintf("Erin ordered %d crates of %s", i+2, token)})
	}
	receipt, errs = erase(known, "held-"+token, 3, func(done func(error)) {
		for i := range 3 {
			go func() {
				_, err := c.Add(ctx, client.NewMemory{UserID: known, Type: client.TypeSemantic, Content: fmt.Sprintf("Erin's budget for held-%s is %d000 euros", token, i+1)})
				done(err)
			}()
		}
	})
	if receipt.Counts[memory.PlaceGraphMemories] != 2 || receipt.Counts[memory.PlaceGraphUsers] != 1 {
		t.Errorf("a known user: receipt %v, want the 2 memories stored before and the User node", receipt.Counts)
	}
	refused("a known user", errs)
	forgotten("a known user", known, token)

	// A synchronous ingestion: its extracted memories are embedded.
	ingested, token := "fay-"+tok()[2:], tok()
	tokens = append(tokens, token)
	_, errs = erase(ingested, token, 1, func(done func(error)) {
		go func() {
			_, err := c.Ingest(ctx, client.IngestRequest{UserID: ingested, Turns: []client.Turn{
				{Role: memory.RoleUser, Content: "Remember that my budget for " + token + " is 200k."},
			}})
			done(err)
		}()
	})
	refused("an ingestion", errs)
	forgotten("an ingestion", ingested, token)

	// A session's close: it reads the turns, extracts and embeds.
	closed, token, session := "gus-"+tok()[2:], tok(), "sess-"+tok()
	tokens = append(tokens, token)
	appendTurns(t, f, bot, session, client.AppendRequest{UserID: closed, Turns: userTurns(
		"My budget for "+token+" is 300k.", "Please deliver order "+token+" to Hangzhou on Friday.")})
	receipt, errs = erase(closed, token, 1, func(done func(error)) {
		go func() {
			_, err := c.CloseSession(ctx, session)
			done(err)
		}()
	})
	if receipt.Counts["sessions"] != 1 {
		t.Errorf("a session's close: receipt %v, want the session counted", receipt.Counts)
	}
	refused("a session's close", errs)
	forgotten("a session's close", closed, token)
	r := f.Do(t, bot, "GET", "/v1/sessions/"+session, nil)
	expectResponse(t, "the erased session", r, http.StatusNotFound, "not_found")

	// Writing about a user after the erase is a new start.
	again := create(t, f, bot, client.NewMemory{UserID: first, Type: client.TypeSemantic, Content: "Dana starts over with a budget of 50 euros"})
	if _, err := c.Get(ctx, again.ID); err != nil {
		t.Errorf("a write after the erase: %v", err)
	}

	checkGraphForgot(t, ctx, f, "", tokens)
	scanRedis(t, ctx, f.App.Redis, tokens)
}
