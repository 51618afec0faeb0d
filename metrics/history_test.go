package metrics

import (
	"testing"
	"time"

	"mneme/memory"
)

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{nil, .5, 0},
		{[]float64{7}, .95, 7},
		{[]float64{5, 1, 4, 2, 3}, .5, 3},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, .95, 10},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, .5, 5},
	} {
		if got := percentile(tc.xs, tc.q); got != tc.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tc.xs, tc.q, got, tc.want)
		}
	}
}

// TestHistoryBucketsAndFigures drives the history on a fake clock: events
// land in their five-minute bucket, old laps of the ring are forgotten, and
// the figures cover their window only.
func TestHistoryBucketsAndFigures(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	m := New(Options{Now: func() time.Time { return now }})
	recall := func(ms float64, context string) {
		m.Recalled("t1", memory.RecallResult{Context: context, Search: memory.SearchInfo{Stages: memory.Stages{Total: ms}}})
	}
	recall(10, "abcd")
	recall(30, "abcdefgh")
	m.Wrote("t1", []memory.WriteResult{{Outcome: memory.OutcomeCreated, Memory: &memory.Memory{Content: "12345", Version: 1}}}, nil)
	m.Conversation("t1")
	now = now.Add(BucketWidth)
	recall(50, "")
	m.Deleted(memory.Receipt{Tenant: "t1"})

	pts := m.History("t1").Points(2 * BucketWidth)
	if len(pts) != 2 {
		t.Fatalf("%d points, want 2", len(pts))
	}
	if p := pts[0]; p.Recalls != 2 || p.Writes != 1 || p.Conversations != 1 || p.RecallP50 != 10 || p.RecallP95 != 30 || p.ContextMean != 6 {
		t.Errorf("first bucket %+v", p)
	}
	if p := pts[1]; p.Recalls != 1 || p.Deletes != 1 || p.RecallP95 != 50 {
		t.Errorf("second bucket %+v", p)
	}
	f := m.History("t1").Figures(time.Hour)
	if f.Recalls != 3 || f.Writes != 1 || f.RecallP95 != 50 || f.BytesPerMemory != 5 || f.BytesPer1000Conversations != 5000 {
		t.Errorf("figures %+v", f)
	}
	// Another tenant's history holds none of it.
	if f := m.History("t2").Figures(time.Hour); f.Recalls != 0 || f.Writes != 0 || f.BytesPerMemory != 0 {
		t.Errorf("another tenant's figures %+v", f)
	}
	// A day later the ring has come round: the old buckets are gone.
	now = now.Add(24 * time.Hour)
	recall(20, "ab")
	if f := m.History("t1").Figures(time.Hour); f.Recalls != 1 || f.RecallP50 != 20 {
		t.Errorf("figures a day later %+v", f)
	}
	if pts := m.History("t1").Points(24 * time.Hour); len(pts) != historyBuckets {
		t.Errorf("%d points over a day, want %d", len(pts), historyBuckets)
	}
}

// TestHistoriesPerTenant keeps each tenant's events apart and, past the cap
// on tenants, forgets the tenant written to longest ago.
func TestHistoriesPerTenant(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	hs := newHistories(func() time.Time { return now }, 2)
	hs.of("a").write(10)
	now = now.Add(time.Second)
	hs.of("b").write(10)
	hs.of("b").write(10)
	now = now.Add(time.Second)
	hs.of("a").delete(1) // a is now the more recent
	now = now.Add(time.Second)
	hs.of("c").write(10) // b gives way
	for _, tc := range []struct {
		tenant string
		writes int
	}{{"a", 1}, {"b", 0}, {"c", 1}, {"nobody", 0}} {
		if f := hs.read(tc.tenant).Figures(time.Hour); f.Writes != tc.writes {
			t.Errorf("tenant %s: %d writes, want %d", tc.tenant, f.Writes, tc.writes)
		}
	}
	if len(hs.byTenant) != 2 {
		t.Errorf("%d histories kept, want 2", len(hs.byTenant))
	}
	// Reading a tenant keeps nothing for it.
	if _, ok := hs.byTenant["nobody"]; ok {
		t.Error("reading made a history")
	}
}
