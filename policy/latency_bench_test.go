package policy

import (
	"context"
	"slices"
	"testing"
	"time"

	"mneme/memory"
	"mneme/policyadmin"
)

// chanSink is a decision sink like the decision log's: a buffered channel
// that drops when full.
type chanSink chan policyadmin.DecisionRecord

func (c chanSink) Record(r policyadmin.DecisionRecord) {
	select {
	case c <- r:
	default:
	}
}

// BenchmarkDecideLatency reports the latency of one read decision as P50
// and P99 (ns) over b.N calls, for an agent reading through one of 50
// grants: under the bundled revision 0, under a tenant revision with one
// more guard, and with every decision recorded for the decision log.
func BenchmarkDecideLatency(b *testing.B) {
	ctx := context.Background()
	plain := newEngine(b, Options{})
	sink := make(chanSink, 1<<16)
	go func() {
		for range sink {
		}
	}()
	b.Cleanup(func() { close(sink) })
	logged := newEngine(b, Options{Decisions: sink})
	for _, e := range []*Engine{plain, logged} {
		setGrants(b, e, benchGrants()...)
		if err := e.UseGrants(ctx, "acme", 1, benchAcmeGrants()); err != nil {
			b.Fatal(err)
		}
	}
	tenantRev := newEngine(b, Options{})
	if err := tenantRev.UseGrants(ctx, "acme", 1, benchAcmeGrants()); err != nil {
		b.Fatal(err)
	}
	if err := tenantRev.UsePolicy(ctx, "acme", 1, 1, denySecretKind(b, tenantRev)); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		e    *Engine
	}{
		{"revision 0", plain},
		{"tenant revision", tenantRev},
		{"revision 0 logged", logged},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				d, err := bc.e.Decide(ctx, support, memory.ActionRead, orderM, testNow)
				lat = append(lat, time.Since(start))
				if err != nil || !d.Allow {
					b.Fatal(d, err)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

func benchAcmeGrants() []memory.Grant {
	var out []memory.Grant
	for _, g := range benchGrants() {
		if g.Tenant == "acme" {
			out = append(out, g)
		}
	}
	return out
}
