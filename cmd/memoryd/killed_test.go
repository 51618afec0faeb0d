package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/redis/go-redis/v9"

	"mneme/graph"
	"mneme/graph/keystore"
	"mneme/identity"
	"mneme/internal/testenv"
	"mneme/memory"
)

// TestKilledWorkerLosesNothing runs the real memoryd binary, submits 10,000
// asynchronous writes, kills the process with SIGKILL while they are being
// accepted and applied, starts it again and waits for the queue to drain:
// every write that was accepted (202) is in the graph exactly once. Clients
// whose request died with the process retry it with the same
// Idempotency-Key, as a client should.
func TestKilledWorkerLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs memoryd against Neo4j and Redis")
	}
	driver := testenv.Neo4j(t)
	redisURL := testenv.RedisURL(t)
	bin := buildMemoryd(t)
	ctx := context.Background()
	tenant := testenv.Tenant(t)
	store := graph.New(driver, graph.Options{Database: testenv.Neo4jDatabase()})
	key := identity.NewAPIKey(tenant)
	if err := putKey(ctx, store, redisURL, key, memory.Principal{Tenant: tenant, Kind: memory.KindAgent, ID: "order-bot"}); err != nil {
		t.Fatal(err)
	}
	prefix := "mneme-test-" + memory.NewID("q")
	addr := freeAddr(t)
	base := "http://" + addr

	var mu sync.Mutex
	var logs bytes.Buffer
	start := func() *exec.Cmd {
		t.Helper()
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "NEO4J_URI="+os.Getenv(testenv.EnvNeo4jURI), "REDIS_URL="+redisURL,
			"MNEME_ADDR="+addr, "MNEME_QUEUE_PREFIX="+prefix, "MNEME_QUEUE_LEASE=2s",
			"MNEME_EMBEDDER=builtin", "MNEME_EMBED_DIM="+fmt.Sprint(testenv.EmbeddingDimension), "MNEME_KEY_SECRET="+testenv.KeySecret())
		cmd.Stdout, cmd.Stderr = &lockedWriter{mu: &mu, w: &logs}, &lockedWriter{mu: &mu, w: &logs}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start memoryd: %v", err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
		deadline := time.Now().Add(90 * time.Second)
		for status(base+"/readyz", "", "GET", nil) != http.StatusOK {
			if time.Now().After(deadline) {
				mu.Lock()
				t.Fatalf("memoryd not ready after 90s:\n%s", logs.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		return cmd
	}

	const writes, clients, killAfter = 10000, 16, 3000
	srv := start()
	var accepted atomic.Int64
	jobs := make([]string, writes)
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < writes; i += clients {
				body, _ := json.Marshal(memory.NewMemory{UserID: fmt.Sprintf("user-%d", i%50), Type: memory.TypeEpisodic,
					Content: fmt.Sprintf("write %d", i)})
				for {
					var st memory.JobStatus
					code := postAsync(base, key, body, fmt.Sprintf("w-%d", i), &st)
					if code == http.StatusAccepted {
						jobs[i] = st.ID
						accepted.Add(1)
						break
					}
					time.Sleep(50 * time.Millisecond) // the server is down: retry the same write
				}
			}
		}()
	}
	go func() {
		for accepted.Load() < killAfter {
			time.Sleep(10 * time.Millisecond)
		}
		_ = srv.Process.Signal(os.Kill)
		_, _ = srv.Process.Wait()
		close(killed)
	}()
	<-killed
	t.Logf("killed memoryd after %d accepted writes", accepted.Load())
	start()
	wg.Wait()

	// Drain: every stream empty, nothing pending.
	opts, _ := redis.ParseURL(redisURL)
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		left := int64(0)
		for s := range 8 {
			n, err := rdb.XLen(ctx, fmt.Sprintf("%s:q{%d}:stream", prefix, s)).Result()
			if err != nil {
				t.Fatal(err)
			}
			left += n
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue not drained after 5 minutes: %d entries left", left)
		}
		time.Sleep(200 * time.Millisecond)
	}

	res, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (m:Memory {tenant: $tenant})
RETURN m.content AS content, count(*) AS n`, map[string]any{"tenant": tenant},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(testenv.Neo4jDatabase()))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int64{}
	for _, r := range res.Records {
		c, _ := r.Get("content")
		n, _ := r.Get("n")
		seen[c.(string)] = n.(int64)
	}
	missing, twice := 0, 0
	for i := range writes {
		switch seen[fmt.Sprintf("write %d", i)] {
		case 0:
			missing++
		case 1:
		default:
			twice++
		}
	}
	if missing > 0 || twice > 0 || len(seen) != writes {
		t.Errorf("%d accepted writes: %d missing from the graph, %d stored more than once, %d distinct memories", accepted.Load(), missing, twice, len(seen))
	}
	// Every job says done with the memory it wrote.
	for _, i := range []int{0, killAfter, writes - 1} {
		var st memory.JobStatus
		if code := status(base+"/v1/jobs/"+jobs[i], key, "GET", nil, &st); code != http.StatusOK || st.Status != memory.JobDone || len(st.Memories) != 1 {
			t.Errorf("job of write %d: %d %+v", i, code, st)
		}
	}
	t.Logf("%d writes accepted, %d memories in the graph", accepted.Load(), len(seen))
}

// postAsync submits one asynchronous write and returns the status code (0
// when the server could not be reached).
func postAsync(base, key string, body []byte, idem string, out *memory.JobStatus) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/memories?async=true", bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idem)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}

// lockedWriter lets two pipes of a process write one buffer.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// putKey stores key for p the way memoryd will look it up: under the keyed
// hash of the test secret it is started with.
func putKey(ctx context.Context, store *graph.Store, redisURL, key string, p memory.Principal) error {
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	h, err := identity.NewHasher(testenv.KeySecret())
	if err != nil {
		return err
	}
	ids, err := identity.New(identity.Options{Store: keystore.New(store.Runner()), Epochs: identity.NewRedisEpochs(rdb), Hasher: h})
	if err != nil {
		return err
	}
	return ids.PutKey(ctx, key, p, "")
}
