package documents_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"mneme/documents"
	"mneme/internal/apptest"
	"mneme/memory"
)

// BenchmarkImport1000Sections measures import throughput: a fresh
// 1,000-section Markdown document per iteration, applied as the queue
// worker applies a large import (split, plan, write through the memory
// write path with the guard and embedding, link to the document), on the
// real Neo4j and Redis. It reports sections/s.
func BenchmarkImport1000Sections(b *testing.B) {
	f := apptest.Start(b)
	const n = 1000
	var body strings.Builder
	for i := range n {
		fmt.Fprintf(&body, "## Rule %04d\n\nOrders from district %d above %d CNY need the approval of desk %d before they ship.\n\n", i, i, 1000+37*i, 900+i)
	}
	admin := memory.Principal{Tenant: f.Tenant, Kind: memory.KindAdmin, ID: apptest.Admin}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		r := documents.ImportRequest{ID: fmt.Sprintf("bench-%d", i), Content: body.String()}
		payload, _ := json.Marshal(r)
		res, err := f.App.Documents.ApplyJobs(b.Context(), []memory.Job{{
			Kind: documents.JobImport, Tenant: f.Tenant, UserID: documents.JobSubject(r.ID), Principal: admin, Payload: payload,
		}})
		if err != nil || res[0].Err != nil || len(res[0].Memories) != n {
			b.Fatalf("import: %v %+v", err, res)
		}
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "sections/s")
}
