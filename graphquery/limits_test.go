package graphquery_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"mneme/graph/analysis"
	"mneme/graphquery"
	"mneme/memory"
	"mneme/policy"
)

// TestLimits: a query past a limit of hops, rows or time is refused with an
// error saying which, before or instead of a slow answer; the refusal is in
// the audit trail.
func TestLimits(t *testing.T) {
	g := stores(t)
	engine, err := policy.New(context.Background(), policy.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	store := analysis.New(g.Runner(), analysis.Options{})
	trail := &audits{}
	svc := newService(t, g, engine, store, graphquery.Options{Audit: trail})
	ctx := context.Background()
	p := memory.Principal{Tenant: "t-limits", Kind: memory.KindAnalyst, ID: "analyst", Roles: []string{"analyst"}}
	from := graphquery.NodeRef{Label: graphquery.LabelEntity, ID: "x"}
	var lim *graphquery.LimitError
	tests := []struct {
		name  string
		err   error
		field string
	}{
		{"hops", func() error {
			_, err := svc.Neighbourhood(ctx, p, graphquery.NeighbourhoodQuery{From: from, Hops: graphquery.MaxHops + 1})
			return err
		}(), "hops"},
		{"nodes", func() error {
			_, err := svc.Neighbourhood(ctx, p, graphquery.NeighbourhoodQuery{From: from, Limit: graphquery.MaxNodes + 1})
			return err
		}(), "limit"},
		{"path length", func() error {
			_, err := svc.Paths(ctx, p, graphquery.PathQuery{From: "a", To: "b", MaxLength: graphquery.MaxPathLength + 1})
			return err
		}(), "max_length"},
		{"rows", func() error {
			_, err := svc.Timeline(ctx, p, graphquery.TimelineQuery{Kind: "budget", Limit: graphquery.MaxRows + 1})
			return err
		}(), "limit"},
	}
	for _, tc := range tests {
		if !errors.As(tc.err, &lim) || lim.Field != tc.field {
			t.Errorf("%s: %v, want a LimitError on %s", tc.name, tc.err, tc.field)
		}
	}
	if len(trail.events) != len(tests) || trail.events[0].Error != "limit_exceeded" || trail.events[0].Action != "graph.neighbourhood" {
		t.Errorf("audit trail: %+v", trail.events)
	}

	hasty, _ := graphquery.New(graphquery.Options{Store: store, Authz: engine, Audit: &audits{}, Timeout: time.Millisecond})
	if _, err := hasty.Aggregate(ctx, p, graphquery.AggregateQuery{By: graphquery.ByMonth}); !errors.Is(err, graphquery.ErrTimeout) {
		t.Errorf("a query past its time: %v, want ErrTimeout", err)
	}
}

// TestUnknownFilterValues: a value outside a closed set of a filter is
// refused, naming the field, rather than matching nothing.
func TestUnknownFilterValues(t *testing.T) {
	g := stores(t)
	engine, err := policy.New(context.Background(), policy.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(t, g, engine, analysis.New(g.Runner(), analysis.Options{}), graphquery.Options{Audit: &audits{}})
	p := memory.Principal{Tenant: "t-filters", Kind: memory.KindAnalyst, ID: "analyst", Roles: []string{"analyst"}}
	for _, tc := range []struct {
		field string
		f     graphquery.MemoryFilter
	}{
		{"type", graphquery.MemoryFilter{Types: []string{"semantic", "secret"}}},
		{"status", graphquery.MemoryFilter{Statuses: []string{"archive"}}},
		{"sensitivity", graphquery.MemoryFilter{Sensitivity: []string{"top"}}},
		{"", graphquery.MemoryFilter{Types: []string{"semantic"}, Statuses: []string{"archived"}, Sensitivity: []string{"internal"}, Kinds: []string{"any-kind"}}},
	} {
		_, err := svc.Aggregate(context.Background(), p, graphquery.AggregateQuery{By: graphquery.ByType, Filter: tc.f})
		var inv *memory.InvalidError
		if got := errors.As(err, &inv); got != (tc.field != "") || got && inv.Field != tc.field {
			t.Errorf("filter %+v: %v, want a refusal of %q", tc.f, err, tc.field)
		}
	}
}

// slowScope is a policy engine whose scope lookup outlives any deadline, as
// a busy store makes it under a tight limit.
type slowScope struct{ graphquery.Authorizer }

func (slowScope) ReadScope(ctx context.Context, _ memory.Principal, _ string, _ time.Time) (memory.Scope, error) {
	<-ctx.Done()
	return memory.Scope{}, fmt.Errorf("store unavailable: %w", ctx.Err())
}

// TestScopePastItsTime: the scope lookup counts against the query's limit,
// and running past it is a timeout, not an unavailable store.
func TestScopePastItsTime(t *testing.T) {
	svc, err := graphquery.New(graphquery.Options{Store: analysis.New(nil, analysis.Options{}), Authz: slowScope{}, Audit: &audits{}, Timeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p := memory.Principal{Tenant: "t-limits", Kind: memory.KindAnalyst, ID: "analyst", Roles: []string{"analyst"}}
	if _, err := svc.Aggregate(context.Background(), p, graphquery.AggregateQuery{By: graphquery.ByMonth}); !errors.Is(err, graphquery.ErrTimeout) {
		t.Errorf("scope lookup past the limit: %v, want ErrTimeout", err)
	}
}
