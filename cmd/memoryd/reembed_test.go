package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mneme/app"
	"mneme/embedding"
	"mneme/graph/upkeep"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/reembed"
)

// TestReembedSwitchesModels runs on a Neo4j of its own, because it rebuilds
// the vector index that every tenant shares. It seeds with the built-in
// embedder at 64 dimensions, shows that memoryd refuses another dimension,
// then moves every memory of every tenant to an HTTP model of 32 dimensions:
// a first run that the endpoint breaks off half-way, a second that finishes
// only what is left, a third that finds nothing to do. Recall then works on
// the new vectors.
func TestReembedSwitchesModels(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts its own Neo4j")
	}
	redisURL := testenv.RedisURL(t)
	uri, _ := testenv.OwnServer(t, "neo4j.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// Seed two tenants with the built-in embedder at 64 dimensions.
	cfg := app.Defaults()
	cfg.Neo4j.URI, cfg.Redis.URL, cfg.Embedding.Kind, cfg.Embedding.Dim = uri, redisURL, app.EmbedderBuiltin, 64
	cfg.Identity.KeySecret = testenv.KeySecret()
	// The built-in model is calibrated at 256 dimensions only: calibrate
	// it at 64, as an operator would.
	cals := t.TempDir()
	cfg.Embedding.Calibrations = cals
	env := map[string]string{"NEO4J_URI": uri, "REDIS_URL": redisURL, "MNEME_ADDR": freeAddr(t), "MNEME_KEY_SECRET": testenv.KeySecret(),
		"MNEME_CALIBRATIONS": cals}
	getenv := func(k string) string { return env[k] }
	if err := run(ctx, []string{"-embedder", "builtin", "-embed-dim", "64"}, getenv, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "memoryd calibrate") {
		t.Fatalf("memoryd on an uncalibrated model = %v, want a refusal naming memoryd calibrate", err)
	}
	if err := run(ctx, []string{"calibrate", "-embedder", "builtin", "-embed-dim", "64"}, getenv, io.Discard, io.Discard); err != nil {
		t.Fatalf("calibrate: %v", err)
	}
	// A fresh Neo4j on a loaded machine answers its first queries slowly.
	cfg.Server.StartTimeout, cfg.Policy.Timeout, cfg.Neo4j.Timeout = 3*time.Minute, 5*time.Second, 2*time.Minute
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := app.New(ctx, cfg, quiet)
	if err != nil {
		t.Fatalf("start with the built-in embedder: %v", err)
	}
	if _, err := a.LoadDemo(ctx); err != nil {
		t.Fatalf("seed: %v", err)
	}
	for i := range 7 {
		_, err := a.Service.Import(ctx, memory.NewMemory{Tenant: "other", UserID: "dora", AgentID: "support-bot",
			Type: memory.TypeSemantic, Content: fmt.Sprintf("Dora's note number %d about invoices.", i)}, time.Now(), "")
		if err != nil {
			t.Fatalf("import: %v", err)
		}
	}
	total := 0
	for _, tenant := range []string{"acme", "other"} {
		n, err := upkeep.New(a.Store.Runner()).CountMemories(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	a.Close(ctx)
	if total < 50 {
		t.Fatalf("seeded %d memories, want at least 50", total)
	}

	// memoryd refuses an embedder of another dimension, naming both and the cure.
	var logs bytes.Buffer
	err = run(ctx, []string{"-embedder", "builtin", "-embed-dim", "128", "-start-timeout", "3m", "-neo4j-timeout", "2m"}, getenv, io.Discard, &logs)
	for _, want := range []string{"dimension 64", embedding.BuiltinModel + " makes vectors of dimension 128", "memoryd reembed"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("memoryd with a 128-dimension embedder = %v, want an error mentioning %q", err, want)
		}
	}
	if strings.Contains(logs.String(), `"msg":"listening"`) {
		t.Errorf("memoryd listened despite the mismatch: %s", logs.String())
	}

	// The new model: the built-in scheme at 32 dimensions behind an
	// OpenAI-compatible endpoint that can be told to fail.
	model := &servedModel{e: embedding.NewBuiltin(32), failAfter: 3}
	srv := httptest.NewServer(model)
	defer srv.Close()
	httpArgs := []string{"reembed", "-embedder", "http", "-embed-url", srv.URL + "/v1", "-embed-model", "served-32",
		"-embed-dim", "32", "-embed-batch", "10", "-embed-retries", "0", "-start-timeout", "3m", "-neo4j-timeout", "2m"}

	// The new model has no calibration: reembed makes one before it changes
	// any vector. The endpoint then fails after the probe and two batches:
	// the run stops with an error, having renewed 20 memories.
	model.failAfter = 0
	if _, err := os.Stat(filepath.Join(cals, "served-32.json")); err == nil {
		t.Fatal("served-32 is calibrated before any run")
	}
	if err := ensureCalibration(ctx, mustLoad(t, httpArgs[1:], getenv), quiet); err != nil {
		t.Fatalf("calibrating the new model: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cals, "served-32.json")); err != nil {
		t.Fatalf("reembed's calibration was not stored: %v", err)
	}
	model.failAfterMore(4) // the calibration check's probe, the run's probe, two batches
	first, err := reembedRun(ctx, httpArgs, getenv)
	if err == nil || !strings.Contains(err.Error(), "run it again") {
		t.Fatalf("first run = %v, want an error telling to run it again", err)
	}
	if !first.IndexRebuilt || first.IndexFrom != 64 || first.Reembedded != 20 {
		t.Errorf("first run = %+v, want the index rebuilt from 64 and 20 re-embedded", first)
	}

	model.heal()
	second, err := reembedRun(ctx, httpArgs, getenv)
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	want := app.ReembedResult{IndexFrom: 32, Report: reembed.Report{
		Model: "served-32", Dimension: 32, Tenants: 2, Memories: total, Reembedded: total - 20, Skipped: 20}}
	if second != want {
		t.Errorf("second run = %+v, want %+v", second, want)
	}
	third, err := reembedRun(ctx, httpArgs, getenv)
	want.Reembedded, want.Skipped = 0, total
	if err != nil || third != want {
		t.Errorf("third run = %+v, %v; want %+v", third, err, want)
	}

	// memoryd now starts with the new model, every memory carries it, and
	// recall finds memories through the new vectors.
	cfg.Embedding.Kind, cfg.Embedding.URL, cfg.Embedding.Model, cfg.Embedding.Dim = app.EmbedderHTTP, srv.URL+"/v1", "served-32", 32
	a, err = app.New(ctx, cfg, quiet)
	if err != nil {
		t.Fatalf("start with the new model: %v", err)
	}
	defer a.Close(ctx)
	for _, tenant := range []string{"acme", "other"} {
		stale, err := upkeep.New(a.Store.Runner()).StaleEmbeddings(ctx, tenant, "", "served-32", 32, 1000)
		if err != nil || len(stale) != 0 {
			t.Errorf("tenant %s: %d memories not on the new model (%v)", tenant, len(stale), err)
		}
	}
	support := memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot"}
	res, err := a.Service.Recall(ctx, support, memory.RecallRequest{UserID: "alice", Query: "How long should answers to Alice be?"})
	if err != nil {
		t.Fatalf("recall: %v", err)
	}
	if len(res.Memories) == 0 || !strings.Contains(res.Memories[0].Memory.Content, "short answers") {
		t.Errorf("recall on the new vectors = %+v, want Alice's answer style first", res.Memories)
	}
	if m := res.Memories[0].Memory; m.EmbeddingModel != "served-32" || m.EmbeddingDim != 32 {
		t.Errorf("recalled memory says model %q dim %d, want served-32/32", m.EmbeddingModel, m.EmbeddingDim)
	}
}

// reembedRun runs `memoryd reembed` and decodes its report.
func reembedRun(ctx context.Context, args []string, getenv func(string) string) (app.ReembedResult, error) {
	var stdout bytes.Buffer
	err := run(ctx, args, getenv, &stdout, io.Discard)
	var res app.ReembedResult
	if decErr := json.Unmarshal(stdout.Bytes(), &res); decErr != nil && err == nil {
		err = fmt.Errorf("report %q: %w", stdout.String(), decErr)
	}
	return res, err
}

// servedModel serves an embedder as an OpenAI-compatible endpoint; with
// failAfter > 0 it answers 500 once it has answered that many requests.
type servedModel struct {
	e         *embedding.Builtin
	mu        sync.Mutex
	served    int
	failAfter int
}

// failAfterMore makes the model fail once it has answered n more requests.
func (s *servedModel) failAfterMore(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAfter = s.served + n
}

func mustLoad(t *testing.T, args []string, getenv func(string) string) app.Config {
	t.Helper()
	cfg, err := app.Load(args, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (s *servedModel) heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAfter = 0
}

func (s *servedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	fail := s.failAfter > 0 && s.served >= s.failAfter
	s.served++
	s.mu.Unlock()
	if fail {
		http.Error(w, "model crashed", http.StatusInternalServerError)
		return
	}
	vecs, _ := s.e.Embed(r.Context(), req.Input)
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Data []item `json:"data"`
	}{}
	for i, v := range vecs {
		out.Data = append(out.Data, item{Index: i, Embedding: v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
