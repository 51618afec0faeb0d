package apptest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"

	"mneme/app"
	"mneme/internal/testenv"
	"mneme/memory"
)

// StartWith is Start with a Mneme of the test's own, its configuration
// changed by change (rate limits, quotas, tokens): it runs every worker,
// and is stopped and closed when the test ends.
func StartWith(t testing.TB, change func(*app.Config)) *Fixture {
	t.Helper()
	a, url := startOwn(t, change)
	return provision(t, a, url)
}

// Replica starts one more Mneme with the configuration change gives, on the
// same Neo4j and Redis and with the same queue, and returns f's tenant and
// keys on it: two fixtures, two replicas.
func (f *Fixture) Replica(t testing.TB, change func(*app.Config)) *Fixture {
	t.Helper()
	a, url := startOwn(t, change)
	return &Fixture{URL: url, App: a, Tenant: f.Tenant, Keys: f.Keys}
}

// ownQueuePrefix is the queue of this test process's own Mnemes.
var ownQueuePrefix = "mneme-test-" + memory.NewID("q")

func startOwn(t testing.TB, change func(*app.Config)) (*app.App, string) {
	t.Helper()
	testenv.Neo4j(t)
	cfg := config(testenv.RedisURL(t))
	// Queued writes of this test's tenants are applied by this process's
	// replicas, which share one prefix.
	cfg.Queue.Prefix = ownQueuePrefix
	if change != nil {
		change(&cfg)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("MNEME_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return serve(t, cfg, log)
}

// serve builds a Mneme of cfg, runs its workers and serves it until the
// test ends, when its workers are stopped and it is closed.
func serve(t testing.TB, cfg app.Config, log *slog.Logger) (*app.App, string) {
	t.Helper()
	a, err := app.New(context.Background(), cfg, log)
	if err != nil {
		t.Fatalf("start mneme: %v", err)
	}
	stop := a.StartWorkers(context.Background())
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(func() {
		srv.Close()
		if err := stop(); err != nil {
			t.Errorf("workers: %v", err)
		}
		a.Close(context.Background())
	})
	return a, srv.URL
}
