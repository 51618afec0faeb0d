package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
)

// The warm-up runs every recall query and the write queries against the
// real Neo4j, Redis and policy engine without an error, and leaves nothing
// in the recall log or the graph.
func TestWarmUp(t *testing.T) {
	f := apptest.Start(t)
	ctx := context.Background()
	for range 2 {
		if err := f.App.Service.WarmUp(ctx); err != nil {
			t.Fatalf("warm-up: %v", err)
		}
		// Every graph statement it runs is one Neo4j accepts, as both
		// callers' filters make it.
		if err := f.App.Graph.WarmUp(ctx); err != nil {
			t.Fatalf("graph warm-up: %v", err)
		}
	}
	for _, tenant := range memory.WarmTenants {
		for _, user := range []string{"warm-u", "warmup-user-0"} {
			recalls, err := f.App.RecallLog.RecentRecalls(ctx, tenant, user, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(recalls) != 0 {
				t.Errorf("warm-up left %d recall log entries for %s/%s", len(recalls), tenant, user)
			}
		}
		// The warm writes were rolled back: no node carries the tenant.
		if n, err := f.App.Store.CountText(ctx, tenant, tenant); err != nil || n != 0 {
			t.Errorf("warm-up left %d values in tenant %s (err %v)", n, tenant, err)
		}
	}
}

// The whole warm-up, the grantees' recalls and the key lookups included,
// runs without an error against the real stores while tenants hold grants.
func TestWarmUpWithGrantees(t *testing.T) {
	f := apptest.Start(t)
	r := f.Do(t, apptest.Admin, "POST", "/v1/grants", map[string]any{
		"grantee": "order-bot", "source": "support-bot", "types": []string{"profile"}, "max_sensitivity": "internal",
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("grant: %d %s", r.Status, r.Body)
	}
	var out bytes.Buffer
	f.App.WarmUp(context.Background(), slog.New(slog.NewTextHandler(&out, nil)))
	if !strings.Contains(out.String(), "queries warmed up") {
		t.Fatalf("warm-up log: %s", out.String())
	}
}
