package tally

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"golang.org/x/sync/errgroup"

	"mneme/graph"
	"mneme/internal/testenv"
	"mneme/memory"
)

// TestSchemaMarksMemoriesOlderThanTallies: on a database whose memories
// predate tallies (a Neo4j of the test's own, since it drops the tallies'
// schema), replicas running EnsureSchema at once leave one mark per tenant
// that holds memories; the census counts those tenants' memories until a
// reconciliation builds their tallies and clears the mark, and a later
// EnsureSchema marks nothing again.
func TestSchemaMarksMemoriesOlderThanTallies(t *testing.T) {
	uri, _ := testenv.OwnServer(t, "neo4j.sh")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	driver, err := neo4j.NewDriverWithContext(uri, neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(ctx)
	run := func(stmt string) []*neo4j.Record {
		t.Helper()
		res, err := neo4j.ExecuteQuery(ctx, driver, stmt, nil, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		return res.Records
	}
	// A server just started compiles each statement on its first use,
	// which on a loaded machine took longer than the default 15 s.
	g := graph.New(driver, graph.Options{Timeout: time.Minute})
	if err := g.EnsureSchema(ctx, testenv.EmbeddingDimension); err != nil {
		t.Fatal(err)
	}
	f := &fixture{g: g, s: New(g.Runner()), at: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	for _, tenant := range []string{"t-a", "t-b"} {
		f.tenant = tenant
		ms := []memory.Memory{
			f.mem("u1", memory.TypeProfile, memory.StatusActive, ""),
			f.mem("u1", memory.TypeEpisodic, memory.StatusActive, ""),
			f.mem("u2", memory.TypeProfile, memory.StatusCandidate, ""),
		}
		if _, err := g.CreateMemories(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	// As before tallies: none kept, and no schema for them.
	for _, c := range []string{"memory_tally_key", "tally_anchor_key", "tally_pending_tenant"} {
		run("DROP CONSTRAINT " + c)
	}
	run("MATCH (n) WHERE n:MemoryTally OR n:TallyAnchor DELETE n")

	var replicas errgroup.Group
	for range 3 {
		replicas.Go(func() error { return g.EnsureSchema(ctx, testenv.EmbeddingDimension) })
	}
	if err := replicas.Wait(); err != nil {
		t.Fatalf("EnsureSchema from three replicas at once: %v", err)
	}
	marks := func() []string {
		var out []string
		for _, r := range run("MATCH (p:TallyPending) RETURN p.tenant AS tenant") {
			v, _ := r.Get("tenant")
			out = append(out, v.(string))
		}
		slices.Sort(out)
		return out
	}
	if got := marks(); !slices.Equal(got, []string{"t-a", "t-b"}) {
		t.Fatalf("marks = %v, want one for each tenant", got)
	}
	want := map[key]int64{
		{"u1", memory.TypeProfile, memory.StatusActive}:    1,
		{"u1", memory.TypeEpisodic, memory.StatusActive}:   1,
		{"u2", memory.TypeProfile, memory.StatusCandidate}: 1,
	}
	f.tenant = "t-a"
	if got := f.counts(t, ctx); !maps.Equal(got, want) {
		t.Errorf("marked, counts %v, want the memories' %v", got, want)
	}
	r, err := f.s.ReconcilePending(ctx)
	if err != nil || r.Tenants != 2 || r.Mended != 6 {
		t.Errorf("ReconcilePending = %+v, %v; want 2 tenants, 6 buckets built", r, err)
	}
	if got := marks(); len(got) != 0 {
		t.Errorf("marks after reconciling = %v, want none", got)
	}
	if got := f.counts(t, ctx); !maps.Equal(got, want) {
		t.Errorf("reconciled, counts %v, want %v", got, want)
	}
	if err := g.EnsureSchema(ctx, testenv.EmbeddingDimension); err != nil {
		t.Fatal(err)
	}
	if got := marks(); len(got) != 0 {
		t.Errorf("marks after another EnsureSchema = %v, want none", got)
	}
}
