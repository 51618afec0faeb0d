package app_test

import (
	"context"
	"testing"

	"mneme/app"
	"mneme/internal/apptest"
)

// Recall's exact-scan limit follows the server's vector index unless it is
// set: 1,000 where the index holds partitions, 20,000 where it ranks the
// whole database (Neo4j 5.26).
func TestExactMaxFollowsTheVectorIndex(t *testing.T) {
	f := apptest.Start(t)
	partitioned, err := f.App.Store.VectorIndexPartitioned(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := 20_000
	if partitioned {
		want = 1_000
	}
	if got := f.App.MemoryOptions.Recall.ExactMax; got != want {
		t.Errorf("default ExactMax = %d with a partitioned index %v, want %d", got, partitioned, want)
	}
	set := apptest.StartWith(t, func(c *app.Config) { c.Recall.ExactMax = 500 })
	if got := set.App.MemoryOptions.Recall.ExactMax; got != 500 {
		t.Errorf("ExactMax set to 500 became %d", got)
	}
}
