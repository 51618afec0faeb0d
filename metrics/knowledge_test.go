package metrics_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"mneme/client"
	"mneme/documents"
	"mneme/internal/apptest"
	"mneme/memory"
)

// rules is a Markdown document of n sections; those in edited read anew.
func rules(n int, edited func(int) bool) string {
	var b strings.Builder
	b.WriteString("# Depot rules\n\n")
	for i := range n {
		hour := 6 + i%12
		if edited(i) {
			hour += 1
		}
		fmt.Fprintf(&b, "## Bay %03d\n\nVans of bay %d leave the depot at %d o'clock and return by desk %d.\n\n", i, i, hour, 700+i)
	}
	return b.String()
}

// TestKnowledgeImportsCount: what an import writes counts as single writes
// do, written at once or queued: a section the guard refuses as a write the
// guard refused, each section created once, each superseding one as
// superseded; a queued import's job lists its superseding sections so.
func TestKnowledgeImportsCount(t *testing.T) {
	f := apptest.StartWith(t, nil)
	c := f.Client(t, apptest.Admin)
	ctx := t.Context()
	moved := func(before, after map[string]float64) map[string]float64 {
		d := map[string]float64{}
		for k, v := range after {
			if v != before[k] {
				d[k] = v - before[k]
			}
		}
		return d
	}
	writes := func() map[string]float64 {
		fams := scrape(t, f)
		out := map[string]float64{}
		for _, o := range []string{"created", "reinforced", "superseded", "rejected_guard", "other"} {
			out[o] = value(fams, "mneme_memory_writes_total", map[string]string{"outcome": o})
		}
		return out
	}
	check := func(what string, before map[string]float64, want map[string]float64) {
		t.Helper()
		got := moved(before, writes())
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: writes moved by %v, want %v", what, got, want)
		}
	}

	before := writes()
	if _, err := c.ImportKnowledge(ctx, client.KnowledgeImport{ID: "it", Content: "# Wifi\n\nThe office wifi password: Tr0ub4dor&3x\n"}); client.Code(err) != "guard_rejected" {
		t.Fatalf("import of a password: %v, want guard_rejected", err)
	}
	check("an import the guard refuses", before, map[string]float64{"rejected_guard": 1})

	before = writes()
	if _, err := c.ImportKnowledge(ctx, client.KnowledgeImport{ID: "small", Content: rules(3, func(int) bool { return false })}); err != nil {
		t.Fatal(err)
	}
	res, err := c.ImportKnowledge(ctx, client.KnowledgeImport{ID: "small", Content: rules(3, func(i int) bool { return i == 1 })})
	if err != nil || res.Counts == nil || res.Counts.Superseded != 1 {
		t.Fatalf("re-import: %+v, %v; want one superseded", res, err)
	}
	check("an import and a re-import editing one section", before, map[string]float64{"created": 4, "superseded": 1})

	const n = documents.QueueAbove + 5
	wait := func(res client.KnowledgeImportResult, err error) client.Job {
		t.Helper()
		if err != nil || res.Job == nil {
			t.Fatalf("large import: %+v, %v; want a job", res, err)
		}
		wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		st, err := c.WaitJob(wctx, res.Job.ID, 200*time.Millisecond)
		if err != nil || st.Status != memory.JobDone {
			t.Fatalf("job %s: %+v, %v", res.Job.ID, st, err)
		}
		return st
	}
	before = writes()
	wait(c.ImportKnowledge(ctx, client.KnowledgeImport{ID: "big", Content: rules(n, func(int) bool { return false })}))
	check("a queued import", before, map[string]float64{"created": n})

	before = writes()
	edited := func(i int) bool { return i%50 == 0 }
	job := wait(c.ImportKnowledge(ctx, client.KnowledgeImport{ID: "big", Content: rules(n, edited)}))
	check("a queued re-import editing 5 sections", before, map[string]float64{"created": 5, "superseded": 5})
	outcomes := map[string]int{}
	for _, m := range job.Memories {
		outcomes[m.Outcome]++
	}
	if outcomes[documents.OutcomeSuperseded] != 5 || len(outcomes) != 1 {
		t.Errorf("the re-import's job lists %v, want 5 superseded", outcomes)
	}
}
