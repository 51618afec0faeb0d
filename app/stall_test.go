package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"mneme/app"
	"mneme/internal/apptest"
	"mneme/internal/testenv"
)

// answer is what one request got, and how long after a moment it came.
type answer struct {
	status int
	body   []byte
	after  time.Duration
	err    error
}

// send sends a request as key at once and delivers its answer on the
// channel, timed from since.
func send(url, key, method, path string, body []byte, since time.Time) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		req, err := http.NewRequest(method, url+path, bytes.NewReader(body))
		if err != nil {
			ch <- answer{err: err}
			return
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			ch <- answer{err: err, after: time.Since(since)}
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		ch <- answer{status: resp.StatusCode, body: raw, after: time.Since(since), err: err}
	}()
	return ch
}

// TestAStalledStoreGives503AtOnce freezes Redis, then Neo4j, with SIGSTOP:
// their ports take connections and nothing answers. Requests under way are
// answered 503 unavailable as soon as the stall is noticed (-stall-timeout,
// 2 s), new ones at once, MCP in JSON-RPC; health and metrics answer,
// readiness does not; after SIGCONT the service answers again by itself.
func TestAStalledStoreGives503AtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts its own Neo4j and Redis")
	}
	testenv.RedisURL(t) // fails clearly when the harness is missing
	// Servers of the test's own: freezing the shared ones would stall
	// every other test.
	neo4jURI, pauseNeo4j := testenv.OwnPausableServer(t, "neo4j.sh")
	redisURL, pauseRedis := testenv.OwnPausableServer(t, "redis.sh")
	f := apptest.StartWith(t, func(c *app.Config) {
		c.Neo4j.URI, c.Neo4j.User, c.Neo4j.Password, c.Neo4j.Database = neo4jURI, "", "", ""
		c.Redis.URL, c.Redis.Cluster = redisURL, ""
		c.Server.StallTimeout = 2 * time.Second // the default, which the fixture raises
	})
	const (
		underWayWithin = 4 * time.Second // the stall timeout, a ping interval and room
		newWithin      = time.Second
		recoverWithin  = 10 * time.Second
	)
	bot := f.Keys["support-bot"]
	list := "/v1/memories?user_id=alice"
	mcpList := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list","arguments":{"user_id":"alice"}}}`)
	if r := f.Do(t, "support-bot", "POST", "/v1/memories", map[string]any{"user_id": "alice", "type": "episodic", "content": "Alice asked about the stall drill."}); r.Status != http.StatusCreated {
		t.Fatalf("write = %d %s", r.Status, r.Body)
	}

	for _, store := range []struct {
		name  string
		pause func() func()
	}{{"redis", pauseRedis}, {"neo4j", pauseNeo4j}} {
		t.Run(store.name, func(t *testing.T) {
			for _, path := range []string{list, "/readyz"} {
				if r := <-send(f.URL, bot, "GET", path, nil, time.Now()); r.status != http.StatusOK {
					t.Fatalf("GET %s before the pause = %d %s %v", path, r.status, r.body, r.err)
				}
			}
			if r := <-send(f.URL, f.Keys[apptest.Admin], "GET", "/v1/whoami", nil, time.Now()); r.status != http.StatusOK {
				t.Fatalf("whoami as the admin before the pause = %d %s %v", r.status, r.body, r.err)
			}
			resume := store.pause()
			paused := time.Now()
			// Under way: sent as the store stops, they wait for it.
			rest := send(f.URL, bot, "GET", list, nil, paused)
			rpc := send(f.URL, bot, "POST", "/mcp", mcpList, paused)
			var export <-chan answer
			if store.name == "neo4j" { // the trail is in Redis
				// The admin's key is known before the pause, for the
				// export to reach the service that audits it.
				export = send(f.URL, f.Keys[apptest.Admin], "GET", "/v1/users/alice/export", nil, paused)
			}
			for _, u := range []struct {
				name string
				ch   <-chan answer
				mcp  bool
			}{{"REST", rest, false}, {"MCP", rpc, true}} {
				r := <-u.ch
				t.Logf("%s request under way: %d after %s", u.name, r.status, r.after.Round(time.Millisecond))
				checkUnavailable(t, u.name+" under way", r, u.mcp)
				if r.after > underWayWithin {
					t.Errorf("%s request under way answered %s after the pause, want within %s", u.name, r.after, underWayWithin)
				}
			}
			exportID := ""
			if export != nil {
				r := <-export
				checkUnavailable(t, "export under way", r, false)
				var got struct {
					RequestID string `json:"request_id"`
				}
				_ = json.Unmarshal(r.body, &got)
				exportID = got.RequestID
			}
			// New requests while it stalls: refused at once.
			start := time.Now()
			r := <-send(f.URL, bot, "GET", list, nil, start)
			t.Logf("new request: %d after %s", r.status, r.after.Round(time.Millisecond))
			checkUnavailable(t, "new REST", r, false)
			checkUnavailable(t, "new MCP", <-send(f.URL, bot, "POST", "/mcp", mcpList, start), true)
			if r.after > newWithin {
				t.Errorf("a new request answered after %s, want within %s", r.after, newWithin)
			}
			for _, c := range []struct {
				path   string
				status int
			}{{"/healthz", http.StatusOK}, {"/metrics", http.StatusOK}, {"/readyz", http.StatusServiceUnavailable}} {
				start := time.Now()
				r := <-send(f.URL, "", "GET", c.path, nil, start)
				if r.status != c.status || r.after > newWithin {
					t.Errorf("GET %s while %s stalls = %d after %s, want %d within %s", c.path, store.name, r.status, r.after, c.status, newWithin)
				}
			}

			resume()
			resumed := time.Now()
			for {
				r := <-send(f.URL, bot, "GET", list, nil, resumed)
				if r.status == http.StatusOK {
					t.Logf("answered 200 again %s after SIGCONT", r.after.Round(time.Millisecond))
					break
				}
				if r.after > recoverWithin {
					t.Fatalf("still %d %s %s after SIGCONT", r.status, r.body, r.after)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if r := <-send(f.URL, "", "GET", "/readyz", nil, time.Now()); r.status != http.StatusOK {
				t.Errorf("readyz after recovery = %d %s", r.status, r.body)
			}
			if exportID != "" {
				checkAuditedAs(t, f, exportID, "unavailable", recoverWithin)
			}
		})
	}
}

// checkUnavailable fails unless r is the API's 503: {code: unavailable}, or
// for MCP a JSON-RPC error whose data holds that code.
func checkUnavailable(t *testing.T, what string, r answer, mcp bool) {
	t.Helper()
	if r.err != nil || r.status != http.StatusServiceUnavailable {
		t.Errorf("%s = %d %s %v, want 503", what, r.status, r.body, r.err)
		return
	}
	var got struct {
		Code      string `json:"code"`
		RequestID string `json:"request_id"`
		JSONRPC   string `json:"jsonrpc"`
		Error     struct {
			Data struct {
				Code string `json:"code"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Errorf("%s: body %s: %v", what, r.body, err)
		return
	}
	switch {
	case mcp && (got.JSONRPC != "2.0" || got.Error.Data.Code != "unavailable"):
		t.Errorf("%s = %s, want a JSON-RPC error with code unavailable", what, r.body)
	case !mcp && (got.Code != "unavailable" || got.RequestID == ""):
		t.Errorf("%s = %s, want code unavailable with a request id", what, r.body)
	}
}

// checkAuditedAs fails unless the admin trail records the export of request
// id as failed with code, the one its client got, within the time given
// (the request's work ends once the store lets it).
func checkAuditedAs(t *testing.T, f *apptest.Fixture, id, code string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var trail struct {
			Events []struct {
				RequestID string `json:"request_id"`
				Outcome   string `json:"outcome"`
				Error     string `json:"error"`
			} `json:"events"`
		}
		r := f.Do(t, apptest.Admin, "GET", "/v1/audit?action=user.export&limit=50", nil)
		if r.Status == http.StatusOK {
			r.Decode(t, &trail)
		}
		for _, e := range trail.Events {
			if e.RequestID == id {
				if e.Outcome != "failed" || e.Error != code {
					t.Errorf("the trail records request %s as %s %q; its client got %q", id, e.Outcome, e.Error, code)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %s is not in the trail after %s: %d %s", id, within, r.Status, r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
