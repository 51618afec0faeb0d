package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"mneme/memory"
	"mneme/policyadmin"
)

func fEq(field, v string) memory.Filter {
	return memory.Filter{Op: memory.FilterEq, Field: field, Values: []string{v}}
}

func fIn(field string, vs ...string) memory.Filter {
	return memory.Filter{Op: memory.FilterIn, Field: field, Values: vs}
}

func fAnd(fs ...memory.Filter) memory.Filter { return memory.Filter{Op: memory.FilterAnd, Args: fs} }

func fOr(fs ...memory.Filter) memory.Filter { return memory.Filter{Op: memory.FilterOr, Args: fs} }

var (
	fTrue  = memory.Filter{Op: memory.FilterTrue}
	fFalse = memory.Filter{Op: memory.FilterFalse}
)

// filterText renders a filter for failure messages.
func filterText(f *memory.Filter) string {
	if f == nil {
		return "<nil>"
	}
	bs, _ := json.Marshal(f)
	return string(bs)
}

// residual builds what partial evaluation returns: queries, one per line,
// and support modules.
func residual(t *testing.T, queries []string, support ...string) *rego.PartialQueries {
	t.Helper()
	pq := &rego.PartialQueries{}
	for _, q := range queries {
		pq.Queries = append(pq.Queries, ast.MustParseBody(q))
	}
	for i, s := range support {
		m, err := ast.ParseModuleWithOpts("support"+string(rune('0'+i)), s, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		pq.Support = append(pq.Support, m)
	}
	return pq
}

// TestTranslate covers each shape of residual the translator accepts, with
// the filter it gives, and each it refuses.
func TestTranslate(t *testing.T) {
	const permits = "package partial.mneme.authz\n"
	tests := []struct {
		name    string
		queries []string
		support []string
		want    memory.Filter
		wantErr string // part of the error; "" when it must translate
	}{
		{name: "no query: nothing is allowed", want: fFalse},
		{name: "an empty query: everything is allowed", queries: []string{"true"}, want: fTrue},
		{name: "unification", queries: []string{`"acme" = input.resource.tenant`}, want: fEq("tenant", "acme")},
		{name: "equality either way round", queries: []string{`input.resource.type == "episodic"`}, want: fEq("type", "episodic")},
		{name: "inequality", queries: []string{`input.resource.agent_id != "a1"`}, want: memory.Filter{Op: memory.FilterNe, Field: "agent_id", Values: []string{"a1"}}},
		{name: "a string field never equals a number", queries: []string{`input.resource.type == 1`}, want: fFalse},
		{name: "a string field always differs from a number", queries: []string{`input.resource.type != 1`}, want: fTrue},
		{name: "ground comparison", queries: []string{`"a" == "a"`, `"a" == "b"`}, want: fTrue},
		{name: "membership in an array", queries: []string{`internal.member_2(input.resource.kind, ["b", "a", 3])`}, want: fIn("kind", "a", "b")},
		{name: "membership in a set", queries: []string{`internal.member_2(input.resource.type, {"semantic"})`}, want: fEq("type", "semantic")},
		{name: "membership in nothing", queries: []string{`internal.member_2(input.resource.type, [])`}, want: fFalse},
		{name: "object.get of a field with its result", queries: []string{`object.get(input.resource, "agent_id", "", "order-bot")`}, want: fEq("agent_id", "order-bot")},
		{name: "object.get compared", queries: []string{`object.get(input.resource, "kind", "") == "k"`}, want: fEq("kind", "k")},
		{name: "variable bound to a field", queries: []string{`x = input.resource.kind; x == "k"`}, want: fEq("kind", "k")},
		{name: "variable bound and never used", queries: []string{`__local1__ = object.get(input.resource, "agent_id", ""); input.resource.type = "profile"`}, want: fEq("type", "profile")},
		{name: "wildcard bound to a value", queries: []string{`_ = "admin may read"; input.resource.status = "active"`}, want: fEq("status", "active")},
		{name: "variable bound to the resource", queries: []string{`r = input.resource; input.resource.status = "active"`}, want: fEq("status", "active")},
		{name: "negation", queries: []string{`not input.resource.type == "x"`}, want: memory.Filter{Op: memory.FilterNe, Field: "type", Values: []string{"x"}}},
		{
			name:    "queries are OR-ed and expressions AND-ed; one level each is merged",
			queries: []string{`input.resource.sensitivity = "public"; input.resource.user_id = "u1"`, `input.resource.sensitivity = "internal"; input.resource.user_id = "u1"`},
			want:    fAnd(fEq("user_id", "u1"), fIn("sensitivity", "internal", "public")),
		},
		{
			name:    "a counted set of support rules is the OR of their bodies",
			queries: []string{`gt(count(data.partial.mneme.authz.permits), 0)`},
			support: []string{permits + `permits contains "own" if { "a1" = input.resource.agent_id }
permits contains "grant" if { object.get(input.resource, "agent_id", "", "a2"); internal.member_2(object.get(input.resource, "type", ""), ["episodic"]) }`},
			want: fOr(fEq("agent_id", "a1"), fAnd(fEq("agent_id", "a2"), fEq("type", "episodic"))),
		},
		{
			name:    "count at least one",
			queries: []string{`gte(count(data.partial.mneme.authz.permits), 1)`},
			support: []string{permits + `permits contains "own" if { "a1" = input.resource.agent_id }`},
			want:    fEq("agent_id", "a1"),
		},
		{
			name:    "a head computed from the resource does not constrain",
			queries: []string{`gt(count(data.partial.mneme.authz.permits), 0)`},
			support: []string{permits + `permits contains x if { internal.member_2(input.resource.type, ["semantic"]); sprintf("reads %s", [input.resource.type], x) }`},
			want:    fEq("type", "semantic"),
		},
		{name: "count of a ground empty set", queries: []string{`gt(count(set()), 0)`}, want: fFalse},
		{
			name:    "a boolean support rule",
			queries: []string{`data.partial.mneme.authz.mine`},
			support: []string{permits + "mine if input.resource.user_id == \"u1\"\nmine if input.resource.user_id == \"u2\"\ndefault mine := false\n"},
			want:    fIn("user_id", "u1", "u2"),
		},
		{
			name:    "negated support rule",
			queries: []string{`not data.partial.mneme.authz.hidden`},
			support: []string{permits + "hidden if input.resource.kind == \"secret\"\n"},
			want:    memory.Filter{Op: memory.FilterNe, Field: "kind", Values: []string{"secret"}},
		},

		{name: "unknown built-in", queries: []string{`startswith(input.resource.kind, "pre")`}, wantErr: "startswith"},
		{name: "property outside the whitelist", queries: []string{`input.resource.content == "x"`}, wantErr: "content"},
		{name: "property outside the whitelist through object.get", queries: []string{`object.get(input.resource, "embedding", "", "x")`}, wantErr: "embedding"},
		{name: "reference into a field", queries: []string{`input.resource.type.x == "a"`}, wantErr: "reference into the resource"},
		{name: "two fields compared", queries: []string{`input.resource.type == input.resource.kind`}, wantErr: "comparison"},
		{name: "ordering on a field", queries: []string{`input.resource.sensitivity > "a"`}, wantErr: "comparison"},
		{name: "one variable bound to two fields", queries: []string{`x = input.resource.type; x = input.resource.kind`}, wantErr: "two fields"},
		{name: "membership in a collection that is not ground", queries: []string{`x = input.resource.kind; internal.member_2(input.resource.type, [x])`}, wantErr: "membership"},
		{name: "membership with a template string", queries: []string{`internal.member_2(input.resource.kind, ["b", $"a"])`}, wantErr: "membership"},
		{name: "a value used outside a comparison", queries: []string{`x = input.resource.kind; count(x, 3)`}, wantErr: "count"},
		{name: "with modifier", queries: []string{`input.resource.type == "a" with input.x as 1`}, wantErr: "with"},
		{name: "a binding to a reference that may be undefined", queries: []string{`x = input.r`}, wantErr: "comparison"},
		{name: "a binding to a call that may fail", queries: []string{`x = data.mneme.f(1)`}, wantErr: "comparison"},
		{name: "membership in a collection holding a field", queries: []string{`internal.member_2(input.resource.type, [input.resource.kind])`}, wantErr: "membership"},
		{name: "a binding to sprintf of an undefined format", queries: []string{`x = sprintf(input.r, [])`}, wantErr: "comparison"},
		{name: "negation of what cannot be translated", queries: []string{`not startswith(input.resource.kind, "pre")`}, wantErr: "startswith"},
		{name: "reference to a document without support", queries: []string{`gt(count(data.partial.mneme.authz.permits), 0)`}, wantErr: "unknown document"},
		{name: "count compared with another number", queries: []string{`gt(count(data.partial.mneme.authz.permits), 1)`}, support: []string{permits + `permits contains "a" if { true }`}, wantErr: "count compared"},
		{
			name:    "support rule with else",
			queries: []string{`data.partial.mneme.authz.mine`},
			support: []string{permits + "mine := true if input.resource.user_id == \"u1\" else := false\n"},
			wantErr: "else",
		},
		{
			name:    "default support rule that is true",
			queries: []string{`data.partial.mneme.authz.mine`},
			support: []string{permits + "default mine := true\nmine if input.resource.user_id == \"u1\"\n"},
			wantErr: "default",
		},
		{
			name:    "an error deep inside a support rule fails the whole filter",
			queries: []string{`gt(count(data.partial.mneme.authz.permits), 0)`},
			support: []string{permits + `permits contains "own" if { "a1" = input.resource.agent_id }
permits contains "odd" if { regex.match("^a", input.resource.agent_id) }`},
			wantErr: "regex.match",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := translate(residual(t, tc.queries, tc.support...))
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, ErrUntranslatable) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("translate = %s, %v; want an error about %q", filterText(&got), err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("filter (-want +got):\n%s", d)
			}
		})
	}
}

// TestSimplify pins the rewrites that keep filters small, each of which
// must keep their meaning (the property tests check that over whole policies).
func TestSimplify(t *testing.T) {
	tests := []struct {
		name    string
		in, out memory.Filter
	}{
		{"ORed equalities become one IN", fOr(fEq("type", "a"), fEq("type", "b"), fIn("type", "c", "a")), fIn("type", "a", "b", "c")},
		{"ANDed INs intersect", fAnd(fIn("type", "a", "b"), fIn("type", "b", "c")), fEq("type", "b")},
		{"disjoint ANDed equalities match nothing", fAnd(fEq("user_id", "u1"), fEq("user_id", "u2")), fFalse},
		{"true in AND vanishes", fAnd(fTrue, fEq("kind", "k")), fEq("kind", "k")},
		{"false in OR vanishes", fOr(fFalse, fEq("kind", "k")), fEq("kind", "k")},
		{"true in OR wins", fOr(fEq("kind", "k"), fTrue), fTrue},
		{"false in AND wins", fAnd(fEq("kind", "k"), fFalse), fFalse},
		{"nested ANDs flatten", fAnd(fEq("kind", "k"), fAnd(fEq("type", "t"), fEq("id", "i"))), fAnd(fEq("kind", "k"), fEq("type", "t"), fEq("id", "i"))},
		{
			"common conjuncts are factored out",
			fOr(fAnd(fEq("tenant", "t"), fEq("sensitivity", "public")), fAnd(fEq("tenant", "t"), fEq("sensitivity", "internal"))),
			fAnd(fEq("tenant", "t"), fIn("sensitivity", "internal", "public")),
		},
		{
			"a conjunct in only some branches stays",
			fOr(fAnd(fEq("agent_id", "a"), fEq("type", "t")), fAnd(fEq("agent_id", "b"), fEq("kind", "k"))),
			fOr(fAnd(fEq("agent_id", "a"), fEq("type", "t")), fAnd(fEq("agent_id", "b"), fEq("kind", "k"))),
		},
		{
			"a branch that implies another is absorbed",
			fOr(fAnd(fEq("agent_id", "a"), fEq("type", "t")), fAnd(fEq("agent_id", "b"), fEq("type", "t")), fAnd(fEq("agent_id", "a"), fEq("kind", "k")), fEq("agent_id", "a")),
			fOr(fEq("agent_id", "a"), fAnd(fEq("agent_id", "b"), fEq("type", "t"))),
		},
		{
			"branches that differ in the values of one field merge",
			fOr(fAnd(fEq("agent_id", "a"), fEq("sensitivity", "public")), fAnd(fEq("agent_id", "a"), fEq("sensitivity", "internal")), fAnd(fEq("agent_id", "b"), fEq("sensitivity", "public"))),
			fOr(fAnd(fEq("agent_id", "a"), fIn("sensitivity", "internal", "public")), fAnd(fEq("agent_id", "b"), fEq("sensitivity", "public"))),
		},
		{"not of eq is ne", memory.Filter{Op: memory.FilterNot, Args: []memory.Filter{fEq("kind", "k")}}, memory.Filter{Op: memory.FilterNe, Field: "kind", Values: []string{"k"}}},
		{"not of true", memory.Filter{Op: memory.FilterNot, Args: []memory.Filter{fTrue}}, fFalse},
		{"empty OR", fOr(), fFalse},
		{"empty AND", fAnd(), fTrue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.out, simplify(tc.in)); d != "" {
				t.Errorf("simplify (-want +got):\n%s", d)
			}
		})
	}
}

func TestAssume(t *testing.T) {
	ne := memory.Filter{Op: memory.FilterNe, Field: "user_id", Values: []string{"u2"}}
	f := fAnd(fEq("tenant", "acme"), fOr(fEq("user_id", "u1"), fAnd(fEq("agent_id", "a"), ne)), fIn("user_id", "u1", "u3"))
	tests := []struct {
		field, v string
		want     memory.Filter
	}{
		{"tenant", "acme", fAnd(fTrue, f.Args[1], f.Args[2])},
		{"tenant", "globex", fAnd(fFalse, f.Args[1], f.Args[2])},
		{"user_id", "u1", fAnd(f.Args[0], fOr(fTrue, fAnd(fEq("agent_id", "a"), fTrue)), fTrue)},
		{"user_id", "u2", fAnd(f.Args[0], fOr(fFalse, fAnd(fEq("agent_id", "a"), fFalse)), fFalse)},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, assume(f, tc.field, tc.v)); d != "" {
			t.Errorf("assume %s = %s (-want +got):\n%s", tc.field, tc.v, d)
		}
	}
}

// A read policy the translator cannot express fails every read through the
// filter, visibly (unavailable, untranslatable, the expression named), says
// why in the log, keeps failing from the cache, and does not stop Decide.
func TestReadScopeFailsVisibly(t *testing.T) {
	tests := []struct {
		name, rule, why string
	}{
		{"unknown built-in", `startswith(input.resource.kind, "pre")`, "startswith"},
		{"property outside the whitelist", `input.resource.source == "import"`, "source"},
		{"two fields compared", `input.resource.agent_id == input.resource.user_id`, "comparison"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			src := "package mneme.authz\nreasons := set()\ndefault allow := false\nallow if {\n\tinput.principal.kind == \"agent\"\n\t" + tc.rule + "\n}\n"
			e := newEngine(t, Options{
				Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
				Modules: fstest.MapFS{"authz.rego": {Data: []byte(src)}},
			})
			for i := range 2 { // the second from the cache
				_, err := e.ReadScope(context.Background(), support, "u1", testNow)
				if !errors.Is(err, memory.ErrUnavailable) || !errors.Is(err, policyadmin.ErrPolicyUntranslatable) || !strings.Contains(err.Error(), tc.why) {
					t.Errorf("ReadScope %d: err %v, want unavailable and untranslatable, naming %q", i, err, tc.why)
				}
			}
			if !strings.Contains(logs.String(), "cannot translate") || !strings.Contains(logs.String(), tc.why) {
				t.Errorf("log does not say why:\n%s", logs.String())
			}
			if _, err := e.Decide(context.Background(), support, memory.ActionRead, orderM, testNow); err != nil {
				t.Errorf("Decide: %v", err)
			}
		})
	}
}

// Cached filters follow grants and the clock: a change of grants, or a grant
// expiring between two reads, is seen by the next read.
func TestPushdownCache(t *testing.T) {
	ctx := context.Background()
	at := testNow.Add(time.Hour)
	e := engineWithGrantExpiring(t, at)

	readable := func(now time.Time) bool {
		t.Helper()
		s, err := e.ReadScope(ctx, support, "u1", now)
		if err != nil {
			t.Fatal(err)
		}
		return Matches(s, orderM)
	}
	steps := []struct {
		name string
		do   func()
		now  time.Time
		want bool
	}{
		{"granted", nil, testNow, true},
		{"still granted, from the cache", nil, testNow.Add(time.Minute), true},
		{"at the expiry", nil, at, false},
		{"before the expiry again", nil, testNow, true},
		{"grant revoked", func() { setGrants(t, e) }, testNow, false},
		{"grant given back", func() { setGrants(t, e, grantG1) }, testNow, true},
	}
	for _, st := range steps {
		if st.do != nil {
			st.do()
		}
		if got := readable(st.now); got != st.want {
			t.Errorf("%s: readable %v, want %v", st.name, got, st.want)
		}
	}
}

// Partial evaluation runs once per principal and generation of grants:
// every user's filter is derived from that one, and each still matches only
// that user's memories.
func TestPushdownCompilesOncePerPrincipal(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{})
	setGrants(t, e, grantG1)
	user := memory.Principal{Tenant: "acme", Kind: memory.KindUser, ID: "u2"}
	memoryOf := func(userID string) memory.Resource { r := orderM; r.UserID = userID; return r }
	steps := []struct {
		name         string
		do           func()
		p            memory.Principal
		userID       string
		compiles     int64
		reads, skips []string // users whose memory the scope matches, and does not
	}{
		{name: "first user", p: support, userID: "u1", compiles: 1, reads: []string{"u1"}, skips: []string{"u2"}},
		{name: "second user of the same principal", p: support, userID: "u2", compiles: 1, reads: []string{"u2"}, skips: []string{"u1"}},
		{name: "every user", p: support, userID: "", compiles: 1, reads: []string{"u1", "u2"}},
		{name: "another principal", p: user, userID: "u2", compiles: 2, reads: []string{"u2"}, skips: []string{"u1"}},
		{name: "a user the principal may not read", p: user, userID: "u1", compiles: 2, skips: []string{"u1", "u2"}},
		{name: "new grants compile again", do: func() { setGrants(t, e, grantG1) }, p: support, userID: "u3", compiles: 3, reads: []string{"u3"}, skips: []string{"u1"}},
	}
	for _, st := range steps {
		if st.do != nil {
			st.do()
		}
		s, err := e.ReadScope(ctx, st.p, st.userID, testNow)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := e.base.pd.compiles.Load(); got != st.compiles {
			t.Errorf("%s: %d partial evaluations so far, want %d", st.name, got, st.compiles)
		}
		for _, u := range st.reads {
			if !Matches(s, memoryOf(u)) {
				t.Errorf("%s: scope %s does not match a memory of %s", st.name, filterText(s.Filter), u)
			}
		}
		for _, u := range st.skips {
			if Matches(s, memoryOf(u)) {
				t.Errorf("%s: scope %s matches a memory of %s", st.name, filterText(s.Filter), u)
			}
		}
	}
}

func TestWindow(t *testing.T) {
	t0 := testNow
	exp := []time.Time{t0.Add(-time.Hour), t0, t0.Add(time.Hour)}
	tests := []struct {
		now         time.Time
		from, until time.Time
	}{
		{t0.Add(-2 * time.Hour), time.Time{}, t0.Add(-time.Hour)},
		{t0.Add(-time.Minute), t0.Add(-time.Hour), t0},
		{t0, t0, t0.Add(time.Hour)},
		{t0.Add(2 * time.Hour), t0.Add(time.Hour), time.Time{}},
	}
	for _, tc := range tests {
		from, until := window(exp, tc.now)
		if !from.Equal(tc.from) || !until.Equal(tc.until) {
			t.Errorf("window at %v = [%v, %v), want [%v, %v)", tc.now, from, until, tc.from, tc.until)
		}
	}
}
