package graphquery_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"mneme/graph/analysis"
	"mneme/graphquery"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/policy"
)

// EnvBenchMemories sets how many memories BenchmarkShapes seeds (default
// 100,000).
const EnvBenchMemories = "MNEME_GRAPH_BENCH_MEMORIES"

// BenchmarkShapes times each query shape over one tenant of many memories
// (1,000 users, 10 agents, 500 entities), as an analyst under the policy
// filter and per-memory check, and with neither (the store's predicate
// "true", no check) in the same run, and reports P50 and P95 milliseconds.
// The tenant's users are erased when it ends.
//
//	go test -run '^$' -bench Shapes -benchtime 20x -timeout 60m ./graphquery/
func BenchmarkShapes(b *testing.B) {
	n := testenv.Count(b, EnvBenchMemories, 100_000)
	const users, agents, entities = 1000, 10, 500
	g := stores(b)
	ctx := context.Background()
	engine, err := policy.New(ctx, policy.Options{Timeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	tenant := testenv.Tenant(b)
	b.Cleanup(func() {
		start := time.Now()
		for u := range users {
			if _, err := g.EraseUser(ctx, tenant, fmt.Sprintf("user-%d", u), memory.Tombstone{At: time.Now(), By: "bench", Reason: "bench"}); err != nil {
				b.Errorf("erase: %v", err)
				return
			}
		}
		b.Logf("erased in %s", time.Since(start).Round(time.Second))
	})
	start := time.Now()
	base := time.Now().UTC().Add(-365 * 24 * time.Hour)
	const batch = 1000
	for i := 0; i < n; i += batch {
		ms := make([]memory.Memory, 0, batch)
		for j := i; j < min(i+batch, n); j++ {
			at := base.Add(time.Duration(j) * 365 * 24 * time.Hour / time.Duration(n))
			m := memory.Memory{
				ID: memory.NewID("mem"), Tenant: tenant, UserID: fmt.Sprintf("user-%d", j%users), AgentID: fmt.Sprintf("agent-%d", j%agents),
				Type: memory.Types[j%len(memory.Types)], Kind: testKinds[j%len(testKinds)], Content: fmt.Sprintf("Note %d.", j),
				Status: memory.StatusActive, Sensitivity: memory.Sensitivities[(j/7)%len(memory.Sensitivities)],
				Importance: 0.5, Confidence: 1, ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1, EvidenceCount: 1,
				SessionID: fmt.Sprintf("s-%d", j/20),
			}
			for k := range j % 3 {
				e := (j*7 + k*131) % entities
				m.Entities = append(m.Entities, memory.Entity{ID: fmt.Sprintf("ent-%d", e), Kind: "company", Name: fmt.Sprintf("Company %d", e)})
			}
			ms = append(ms, m)
		}
		if _, err := g.CreateMemories(ctx, ms); err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	b.Logf("seeded %d memories in %s", n, time.Since(start).Round(time.Second))

	analyst := memory.Principal{Tenant: tenant, Kind: memory.KindAnalyst, ID: "analyst", Roles: []string{"analyst"}}
	filtered := newService(b, g, engine, analysis.New(g.Runner(), analysis.Options{}), graphquery.Options{})
	open := newService(b, g, engine, analysis.New(g.Runner(), analysis.Options{Predicate: func(memory.Scope) (string, map[string]any) {
		return "true", map[string]any{}
	}}), graphquery.Options{Unchecked: true})
	shapes := []struct {
		name string
		run  func(s *graphquery.Service, i int) error
	}{
		{"neighbourhood-2hops", func(s *graphquery.Service, i int) error {
			_, err := s.Neighbourhood(ctx, analyst, graphquery.NeighbourhoodQuery{From: graphquery.NodeRef{Label: "entity", ID: fmt.Sprintf("ent-%d", i%entities)}, Hops: 2})
			return err
		}},
		{"paths", func(s *graphquery.Service, i int) error {
			_, err := s.Paths(ctx, analyst, graphquery.PathQuery{From: fmt.Sprintf("ent-%d", i%entities), To: fmt.Sprintf("ent-%d", (i*37+11)%entities)})
			return err
		}},
		{"co-mentions", func(s *graphquery.Service, i int) error {
			_, err := s.CoMentions(ctx, analyst, graphquery.CoMentionQuery{Entity: fmt.Sprintf("ent-%d", i%entities)})
			return err
		}},
		{"timeline-user", func(s *graphquery.Service, i int) error {
			_, err := s.Timeline(ctx, analyst, graphquery.TimelineQuery{User: fmt.Sprintf("user-%d", i%users)})
			return err
		}},
		{"aggregate-type", func(s *graphquery.Service, i int) error {
			_, err := s.Aggregate(ctx, analyst, graphquery.AggregateQuery{By: graphquery.ByType})
			return err
		}},
		{"aggregate-month", func(s *graphquery.Service, i int) error {
			_, err := s.Aggregate(ctx, analyst, graphquery.AggregateQuery{By: graphquery.ByMonth})
			return err
		}},
		{"entities", func(s *graphquery.Service, i int) error {
			_, err := s.Entities(ctx, analyst, graphquery.EntityQuery{Text: strconv.Itoa(i % 10)})
			return err
		}},
	}
	for _, sh := range shapes {
		for _, mode := range []struct {
			name string
			svc  *graphquery.Service
		}{{"filtered", filtered}, {"unfiltered", open}} {
			b.Run(sh.name+"/"+mode.name, func(b *testing.B) {
				var took []time.Duration
				i := 0
				for b.Loop() {
					t0 := time.Now()
					if err := sh.run(mode.svc, i); err != nil && !isNotFound(err) {
						b.Fatal(err)
					}
					took = append(took, time.Since(t0))
					i++
				}
				slices.Sort(took)
				b.ReportMetric(ms(took[(len(took)-1)/2]), "p50-ms")
				b.ReportMetric(ms(took[(len(took)*95+99)/100-1]), "p95-ms")
			})
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// isNotFound: a randomly chosen entity or user may have nothing readable.
func isNotFound(err error) bool { return errors.Is(err, memory.ErrNotFound) }
