package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"mneme/client"
	"mneme/internal/apptest"
)

// TestClientGoneIsNotAnError cancels recalls on the client side at growing
// delays until one is cancelled while the server works on it. A request
// whose client went away is logged and counted as 499, client closed
// request: never as a 500, never at error level.
func TestClientGoneIsNotAnError(t *testing.T) {
	logs := &lockedBuffer{}
	f := apptest.StartLogged(t, logs)
	var batch []client.NewMemory
	for i := range 30 {
		batch = append(batch, client.NewMemory{UserID: "alice", Type: client.TypeEpisodic,
			Content: fmt.Sprintf("Alice's order SO-%d of %d office chairs shipped to the Lyon warehouse", 4000+i, 10+i)})
	}
	writeBatch(t, f, "support-bot", batch...)

	bot := f.Client(t, "support-bot")
	recalls := func() int { return strings.Count(logs.String(), "msg=http method=POST path=/v1/recall ") }
	closed := false
	for d := time.Millisecond; d < 5*time.Second && !closed; d += d/2 + time.Millisecond {
		sent := recalls() + 1
		ctx, cancel := context.WithTimeout(t.Context(), d)
		_, err := bot.Recall(ctx, client.RecallRequest{UserID: "alice", Query: "Which office chairs shipped to Lyon?", K: 50, Diversify: true})
		cancel()
		if err == nil {
			continue // answered in time: wait longer next time
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("recall cancelled after %v: %v", d, err)
		}
		// The server logs the request once it has given up on it. A
		// client that gave up within a millisecond or so may not have
		// sent it at all: then nothing is logged, and a longer deadline
		// is tried; the loop ends only on a logged 499.
		for deadline := time.Now().Add(10 * time.Second); recalls() < sent && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		closed = strings.Contains(logs.String(), "path=/v1/recall status=499")
	}
	if !closed {
		t.Fatalf("no recall was cancelled while the server worked on it; log:\n%s", logs.String())
	}
	t.Logf("%s", grepLines(logs.String(), "client closed request"))
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "status=500") || strings.Contains(line, "level=ERROR") {
			t.Errorf("a client going away logged as a failure: %s", line)
		}
	}

	resp, err := http.Get(f.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	metrics := string(raw)
	if !strings.Contains(metrics, `mneme_http_requests_total{method="POST",route="/v1/recall",status="499"}`) {
		t.Errorf("the metrics count no recall as 499:\n%s", grepLines(metrics, "mneme_http_requests_total"))
	}
	if strings.Contains(metrics, `status="500"`) {
		t.Errorf("the metrics count a 500:\n%s", grepLines(metrics, "mneme_http_requests_total"))
	}
}

func grepLines(s, word string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
