package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/seed"
)

// TestRestartKeepsEverythingAndOutagesGive503 runs the real memoryd binary on
// a Neo4j of its own: it seeds, writes, survives Neo4j going away (503, then
// recovery on its own), and after both are restarted every memory is there.
func TestRestartKeepsEverythingAndOutagesGive503(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts its own Neo4j")
	}
	testenv.RedisURL(t) // fails clearly when the harness is missing
	bin := buildMemoryd(t)
	// A Neo4j of this test's own, so that stopping it disturbs nobody.
	uri, neo4jCtl := testenv.OwnServer(t, "neo4j.sh")
	// And a Redis of its own: Redis holds the policy and grant counters of
	// the tenants in its Neo4j, so the two belong together.
	redisURL, _ := testenv.OwnServer(t, "redis.sh")
	port := uri[strings.LastIndex(uri, ":")+1:]

	addr := freeAddr(t)
	base := "http://" + addr
	queuePrefix := "mneme-test-" + memory.NewID("q")
	startMemoryd := func(args ...string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "NEO4J_URI="+uri, "NEO4J_USER=", "NEO4J_PASSWORD=", "REDIS_URL="+redisURL, "MNEME_ADDR="+addr,
			"MNEME_QUEUE_PREFIX="+queuePrefix, "MNEME_KEY_SECRET="+testenv.KeySecret())
		var logs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatalf("start memoryd: %v", err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
		// Seeding a fresh Neo4j plans every query shape once; on a busy
		// 2-core machine that alone can take minutes.
		waitFor(t, 4*time.Minute, "memoryd ready", func() bool {
			return status(base+"/readyz", "", "GET", nil) == http.StatusOK
		}, &logs)
		return cmd
	}
	stopMemoryd := func(cmd *exec.Cmd) {
		t.Helper()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("memoryd did not exit cleanly on SIGTERM: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("memoryd did not stop within 20s of SIGTERM")
		}
	}

	ds, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	keys := ds.KeyOf()

	srv := startMemoryd("-seed")
	before := listAll(t, base, keys["admin"])
	if len(before) < seed.MinMemories {
		t.Fatalf("after seeding the admin lists %d memories, want at least %d", len(before), seed.MinMemories)
	}
	var written memory.Memory
	body, _ := json.Marshal(memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "Alice called about the restart drill."})
	if code := status(base+"/v1/memories", keys["support-bot"], "POST", body, &written); code != http.StatusCreated {
		t.Fatalf("create = %d", code)
	}
	before = listAll(t, base, keys["admin"])

	// Neo4j goes away: requests get 503 and readiness says so.
	neo4jCtl("stop")
	var e struct{ Code string }
	waitFor(t, 60*time.Second, "503 while Neo4j is down", func() bool {
		return status(base+"/v1/memories/"+written.ID, keys["support-bot"], "GET", nil, &e) == http.StatusServiceUnavailable && e.Code == "unavailable"
	}, nil)
	if code := status(base+"/readyz", "", "GET", nil); code != http.StatusServiceUnavailable {
		t.Errorf("readyz while Neo4j is down = %d, want 503", code)
	}
	// Neo4j comes back on the same port: memoryd recovers by itself.
	neo4jCtl("start", "NEO4J_PORT="+port)
	waitFor(t, 60*time.Second, "recovery after Neo4j returned", func() bool {
		return status(base+"/v1/memories/"+written.ID, keys["support-bot"], "GET", nil) == http.StatusOK
	}, nil)

	// Stop both, start both: everything is still there.
	stopMemoryd(srv)
	neo4jCtl("stop")
	neo4jCtl("start", "NEO4J_PORT="+port)
	startMemoryd()
	after := listAll(t, base, keys["admin"])
	if len(after) != len(before) {
		t.Fatalf("after restart %d memories, before %d", len(after), len(before))
	}
	for id, m := range before {
		got, ok := after[id]
		if !ok || got.Content != m.Content || got.Status != m.Status || got.Version != m.Version {
			t.Errorf("memory %s changed across the restart: %+v → %+v", id, m, got)
		}
	}
	var again memory.Memory
	if code := status(base+"/v1/memories/"+written.ID, keys["support-bot"], "GET", nil, &again); code != http.StatusOK || again.Content != written.Content {
		t.Errorf("the memory written before the restart = %d %+v", code, again)
	}
}

// status sends a request and returns its status, decoding the body into
// out[0] when given. A transport error counts as status 0.
func status(url, key, method string, body []byte, out ...any) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if len(out) > 0 {
		_ = json.NewDecoder(resp.Body).Decode(out[0])
	}
	return resp.StatusCode
}

// listAll pages through every memory of every status the key may read.
func listAll(t *testing.T, base, key string) map[string]memory.Memory {
	t.Helper()
	all := map[string]memory.Memory{}
	for _, st := range memory.Statuses {
		cursor := ""
		for {
			var page memory.Page
			url := fmt.Sprintf("%s/v1/memories?status=%s&limit=100", base, st)
			if cursor != "" { // an empty parameter is refused, not read as not given
				url += "&cursor=" + cursor
			}
			if code := status(url, key, "GET", nil, &page); code != http.StatusOK {
				t.Fatalf("list %s = %d", st, code)
			}
			for _, m := range page.Memories {
				all[m.ID] = m
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
	}
	return all
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool, logs *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			if logs != nil {
				t.Logf("memoryd output:\n%s", logs.String())
			}
			t.Fatalf("gave up waiting for %s after %s", what, limit)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
