package policy

import (
	"context"
	"fmt"
	"testing"

	"mneme/memory"
)

// benchGrants is a tenant with 50 grants, 5 of them for support-bot.
func benchGrants() []memory.Grant {
	var grants []memory.Grant
	for i := range 50 {
		g := grantG1
		g.ID = fmt.Sprintf("g%d", i)
		if i%10 != 0 {
			g.Grantee = fmt.Sprintf("agent-%d", i)
		}
		grants = append(grants, g)
	}
	return grants
}

func BenchmarkDecide(b *testing.B) {
	ctx := context.Background()
	e := newEngine(b, Options{})
	setGrants(b, e, benchGrants()...)
	for _, bc := range []struct {
		name string
		p    memory.Principal
	}{
		{"admin", admin},
		{"agent via grant", support},
		{"analyst", memory.Principal{Tenant: "acme", Kind: memory.KindAnalyst, ID: "ana", Roles: []string{"analyst_full"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d, err := e.Decide(ctx, bc.p, memory.ActionRead, orderM, testNow)
				if err != nil || !d.Allow {
					b.Fatal(d, err)
				}
			}
		})
	}
}

// BenchmarkReadScope compares the ways to compute a read scope: the filter
// from partial evaluation, cached (what ReadScope does per request once a
// principal has read for a user), compiled afresh (its first read, or after
// a grant change) and derived for another user from the compiled one, and
// the clauses of scope.rego.
func BenchmarkReadScope(b *testing.B) {
	ctx := context.Background()
	e := newEngine(b, Options{})
	setGrants(b, e, benchGrants()...)
	for _, bc := range []struct {
		name string
		p    memory.Principal
	}{
		{"admin", admin},
		{"agent with grants", support},
	} {
		b.Run(bc.name+"/pushdown cached", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := e.ReadScope(ctx, bc.p, "u1", testNow)
				if err != nil || s.Empty() {
					b.Fatal(s, err)
				}
			}
		})
		b.Run(bc.name+"/pushdown compiled", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := e.base.pd.compile(ctx, bc.p, testNow)
				if err != nil || f.IsFalse() {
					b.Fatal(f, err)
				}
			}
		})
		b.Run(bc.name+"/pushdown derived for a user", func(b *testing.B) {
			all, err := e.base.pd.compile(ctx, bc.p, testNow)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if f := forUser(all, "u1"); f.IsFalse() {
					b.Fatal(f)
				}
			}
		})
		b.Run(bc.name+"/clauses", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := e.ClauseScope(ctx, bc.p, "u1", testNow)
				if err != nil || s.Empty() {
					b.Fatal(s, err)
				}
			}
		})
	}
}
