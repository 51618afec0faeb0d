package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"mneme/app"
	"mneme/internal/apptest"
	"mneme/internal/testenv"
	"mneme/memory"
)

// EnvBenchMemories sets how many memories BenchmarkPanelPages seeds
// (default 100,000), EnvBenchUsers among how many users (default 3:
// alice, bob and carol, and then user-3, user-4, …).
const (
	EnvBenchMemories = "MNEME_PANEL_BENCH_MEMORIES"
	EnvBenchUsers    = "MNEME_PANEL_BENCH_USERS"
)

// BenchmarkPanelPages renders each panel page for an admin of a tenant
// holding many memories, half of them alice's, the rest spread over the
// other users, and reports the mean, median
// and P95 milliseconds per page, and the median of each source the page
// names in its Server-Timing header. Alice's pages include a text search
// that one memory matches, and status, agent and kind filters that few or
// none match,
// which an index must answer without reading her other memories. The memories are stored without embeddings: the
// pages never search by vector, and the shared vector index stays small.
// The tenant's users are erased when it ends.
//
//	go test -run '^$' -bench PanelPages -benchtime 10x ./web/
func BenchmarkPanelPages(b *testing.B) {
	n := testenv.Count(b, EnvBenchMemories, 100_000)
	// Erasing tens of thousands of memories at the end takes longer than
	// one store call may by default.
	f := apptest.StartWith(b, func(c *app.Config) { c.Neo4j.Timeout = 10 * time.Minute })
	ctx := context.Background()
	users := []string{"alice", "bob", "carol"}
	for i := len(users); i < testenv.Count(b, EnvBenchUsers, len(users)); i++ {
		users = append(users, fmt.Sprintf("user-%d", i))
	}
	b.Cleanup(func() {
		admin := memory.Principal{Tenant: f.Tenant, Kind: memory.KindAdmin, ID: "admin"}
		for _, u := range users {
			if _, err := f.App.Service.EraseUser(ctx, admin, u); err != nil {
				b.Errorf("erase %s: %v", u, err)
			}
		}
	})
	start := time.Now()
	base := time.Now().UTC().Add(-time.Duration(n) * time.Second)
	const batch = 1000
	for i := 0; i < n; i += batch {
		ms := make([]memory.Memory, 0, batch)
		for j := i; j < min(i+batch, n); j++ {
			user, status := "alice", memory.StatusActive
			if j%2 == 1 {
				user = users[1+j/2%(len(users)-1)]
			}
			if j%rareEvery == 0 {
				status = memory.StatusSuperseded
			}
			agent, kind := "support-bot", "note"
			switch j % rareEvery {
			case 2:
				agent = "finance-bot"
			case 4:
				kind = "complaint"
			}
			at := base.Add(time.Duration(j) * time.Second)
			ms = append(ms, memory.Memory{
				ID: memory.NewID("mem"), Tenant: f.Tenant, UserID: user, AgentID: agent,
				Type: memory.Types[j%len(memory.Types)], Kind: kind, Content: fmt.Sprintf("Note %d about %s's order #%d.", j, user, j*7),
				Status: status, Sensitivity: memory.SensitivityInternal, Importance: 0.5, Confidence: 1,
				ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1, EvidenceCount: 1,
			})
		}
		if _, err := f.App.Store.CreateMemories(ctx, ms); err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	b.Logf("seeded %d memories in %s", n, time.Since(start).Round(time.Millisecond))
	// One recall and one delete, so that Recalls and Deletions show rows.
	if r := f.Do(b, "support-bot", http.MethodPost, "/v1/recall", memory.RecallRequest{UserID: "alice", Query: "order"}); r.Status != http.StatusOK {
		b.Fatalf("recall = %d: %s", r.Status, r.Body)
	}

	br := newBrowser(b, f.URL)
	if p := br.signIn(f.Keys["admin"]); p.status != http.StatusSeeOther {
		b.Fatalf("sign-in = %d", p.status)
	}
	cl := br.c
	// The overview is timed twice: as viewers see it, with a count kept for
	// a while, and counting anew on every view.
	pages := []string{
		"/panel/overview", overviewCounted, "/panel/users/alice", "/panel/users/alice?type=profile", "/panel/users/alice?type=episodic",
		"/panel/users/alice?q=order", "/panel/users/alice?q=" + url.QueryEscape(fmt.Sprintf("note %d about", rareEvery+42)),
		"/panel/users/alice?status=superseded", "/panel/users/alice?status=archived",
		"/panel/users/alice?agent=finance-bot", "/panel/users/alice?kind=complaint",
		"/panel/recalls?user=alice", "/panel/deletions", "/panel/policy",
	}
	for _, name := range pages {
		path := name
		if name == overviewCounted {
			path = "/panel/overview"
		}
		b.Run(name, func(b *testing.B) {
			var took []time.Duration
			sources := map[string][]float64{}
			for b.Loop() {
				if name == overviewCounted {
					f.App.Census.Forget(f.Tenant)
				}
				t0 := time.Now()
				resp, err := cl.Get(f.URL + path)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%s = %d", path, resp.StatusCode)
				}
				took = append(took, time.Since(t0))
				for name, ms := range serverTimings(resp.Header.Get("Server-Timing")) {
					sources[name] = append(sources[name], ms)
				}
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			var sum time.Duration
			for _, d := range took {
				sum += d
			}
			b.ReportMetric(float64(sum.Microseconds())/float64(len(took))/1000, "ms/page")
			b.ReportMetric(float64(took[(len(took)+1)/2-1].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[(len(took)*95+99)/100-1].Microseconds())/1000, "p95-ms")
			for name, ms := range sources {
				slices.Sort(ms)
				b.ReportMetric(ms[(len(ms)+1)/2-1], name+"-p50-ms")
			}
		})
	}
}

// overviewCounted names the overview timed with no count kept.
const overviewCounted = "/panel/overview(counted)"

// rareEvery: one memory in so many is superseded, one was written by
// finance-bot and one is a complaint, all of them alice's.
const rareEvery = 5000

// serverTimings reads a Server-Timing header: milliseconds by name.
func serverTimings(h string) map[string]float64 {
	out := map[string]float64{}
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		for _, p := range strings.Split(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "dur="); ok && name != "" {
				if ms, err := strconv.ParseFloat(v, 64); err == nil {
					out[name] = ms
				}
			}
		}
	}
	return out
}
