package policy

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"mneme/memory"
	"mneme/policyadmin"
)

// checkFilterShape fails unless f is a filter the graph store understands:
// known operators, known fields, one value for a comparison.
func checkFilterShape(t *testing.T, f memory.Filter) {
	t.Helper()
	switch f.Op {
	case memory.FilterTrue, memory.FilterFalse:
	case memory.FilterAnd, memory.FilterOr:
		for _, a := range f.Args {
			checkFilterShape(t, a)
		}
		return
	case memory.FilterNot:
		if len(f.Args) != 1 {
			t.Fatalf("not with %d arguments", len(f.Args))
		}
		checkFilterShape(t, f.Args[0])
		return
	case memory.FilterEq, memory.FilterNe, memory.FilterIn:
		if !slices.Contains(memory.FilterFields, f.Field) {
			t.Fatalf("filter on unknown field %q", f.Field)
		}
		if f.Op != memory.FilterIn && len(f.Values) != 1 {
			t.Fatalf("%s with %d values", f.Op, len(f.Values))
		}
	default:
		t.Fatalf("unknown operator %q", f.Op)
	}
	if len(f.Args) > 0 {
		t.Fatalf("%s with arguments", f.Op)
	}
}

// filterValues collects every value a filter compares with.
func filterValues(f memory.Filter, out map[string]bool) {
	for _, v := range f.Values {
		out[v] = true
	}
	for _, a := range f.Args {
		filterValues(a, out)
	}
}

// FuzzTranslate translates any residual query (one body per line) with any
// support module. What it accepts must be a well-formed filter that agrees
// with evaluating the residual itself on resources made of the values the
// residual and the filter name; what it refuses, it refuses as
// untranslatable.
func FuzzTranslate(f *testing.F) {
	const permits = "package partial.mneme.authz\n"
	f.Add(`"acme" = input.resource.tenant`, "")
	f.Add(`input.resource.agent_id != "a1"`, "")
	f.Add(`internal.member_2(input.resource.kind, ["b", "a", 3])`, "")
	f.Add(`object.get(input.resource, "agent_id", "", "order-bot")`, "")
	f.Add(`x = input.resource.kind; x == "k"`, "")
	f.Add(`not input.resource.type == "x"`, "")
	f.Add("input.resource.sensitivity = \"public\"; input.resource.user_id = \"u1\"\ninput.resource.sensitivity = \"internal\"; input.resource.user_id = \"u1\"", "")
	f.Add(`gt(count(data.partial.mneme.authz.permits), 0)`, permits+`permits contains "own" if { "a1" = input.resource.agent_id }
permits contains "grant" if { object.get(input.resource, "agent_id", "", "a2"); internal.member_2(object.get(input.resource, "type", ""), ["episodic"]) }`)
	f.Add(`data.partial.mneme.authz.mine`, permits+"mine if input.resource.user_id == \"u1\"\nmine if input.resource.user_id == \"u2\"\ndefault mine := false\n")
	f.Add(`not data.partial.mneme.authz.hidden`, permits+"hidden if input.resource.kind == \"secret\"\n")
	f.Add(`input.resource.type == "a\" OR 1=1 //"`, "")
	f.Add(`startswith(input.resource.kind, "pre")`, "")
	f.Fuzz(func(t *testing.T, queries, support string) {
		pq := &rego.PartialQueries{}
		for _, line := range strings.Split(queries, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			body, err := ast.ParseBody(line)
			if err != nil {
				return
			}
			pq.Queries = append(pq.Queries, body)
		}
		if support != "" {
			m, err := ast.ParseModuleWithOpts("support.rego", support, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil || m == nil {
				return
			}
			pq.Support = append(pq.Support, m)
		}
		filter, err := translate(pq)
		if err != nil {
			if !errors.Is(err, ErrUntranslatable) {
				t.Fatalf("translate refused with %v, not as untranslatable", err)
			}
			return
		}
		checkFilterShape(t, filter)

		// The values to try: those of the filter and the residual's strings.
		values := map[string]bool{"": true, "zz": true}
		filterValues(filter, values)
		for _, q := range pq.Queries {
			ast.WalkTerms(q, func(x *ast.Term) bool {
				if s, ok := x.Value.(ast.String); ok && len(values) < 12 {
					values[string(s)] = true
				}
				return false
			})
		}
		vs := make([]string, 0, len(values))
		for v := range values {
			vs = append(vs, v)
		}
		slices.Sort(vs)
		for i := 0; i < 8; i++ {
			pick := func(k int) string { return vs[(i*7+k*(i+3))%len(vs)] }
			r := memory.Resource{Tenant: pick(0), ID: pick(1), UserID: pick(2), AgentID: pick(3), Type: pick(4), Kind: pick(5), Sensitivity: pick(6), Status: pick(7)}
			allowed, ok := evalResidual(pq, r)
			if !ok {
				return
			}
			if got := FilterMatches(filter, r); got != allowed {
				t.Fatalf("resource %+v: residual says %v, filter %s says %v", r, allowed, filterText(&filter), got)
			}
		}
	})
}

// evalResidual evaluates the residual queries, OR-ed, for one resource; ok
// is false when evaluation fails (the translation is then not compared).
func evalResidual(pq *rego.PartialQueries, r memory.Resource) (allowed, ok bool) {
	input := inputValue(memory.Principal{}, "read", r, testNow)
	for _, q := range pq.Queries {
		opts := []func(*rego.Rego){rego.ParsedQuery(q), rego.ParsedInput(input), rego.StrictBuiltinErrors(true)}
		for _, m := range pq.Support {
			opts = append(opts, rego.ParsedModule(m))
		}
		rs, err := rego.New(opts...).Eval(context.Background())
		if err != nil {
			return false, false
		}
		// A lone comparison that fails comes back as a result whose
		// expression is false, not as no result.
		for _, res := range rs {
			if !slices.ContainsFunc(res.Expressions, func(x *rego.ExpressionValue) bool { return x.Value == false }) {
				return true, true
			}
		}
	}
	return false, true
}

// FuzzCheckPolicy parses and compiles any Rego source as an uploaded
// module is parsed and compiled. A refusal by the parser's checks is a
// policy rejection; a module that passes them and compiles in the sandbox
// never refers to a built-in of the network, the runtime, the clock or
// randomness.
func FuzzCheckPolicy(f *testing.F) {
	e := newEngine(f, Options{})
	for _, m := range e.BundledPolicy() {
		f.Add(m.Source)
	}
	f.Add("package mneme.authz\n\nx := http.send({\"method\": \"get\", \"url\": \"http://x\"})\n")
	f.Add("package mneme.authz\n\nf := time.now_ns\n")
	f.Add("package mneme.authz\n\ny if { x := 1 with time.now_ns as 2 }\n")
	f.Add("package mneme.authz\n\nz := rand.intn(\"a\", 10)\n")
	f.Add("package mneme.authz\n\nimport data.x\n\nw := opa.runtime()\n")
	f.Add("")
	forbidden := map[string]bool{}
	for _, b := range ast.CapabilitiesForThisVersion().Builtins {
		if banned(b) {
			forbidden[b.Name] = true
		}
	}
	f.Fuzz(func(t *testing.T, source string) {
		policy, tests, err := parse([]policyadmin.PolicyModule{{Name: "fuzz.rego", Source: source}})
		if err != nil {
			var rej *policyadmin.PolicyRejectedError
			if !errors.As(err, &rej) || len(rej.Problems) == 0 {
				t.Fatalf("parse refused with %T %v, not a rejection with problems", err, err)
			}
			return
		}
		if len(tests) != 0 {
			t.Fatalf("fuzz.rego read as a test module")
		}
		compiler := strictCompiler()
		if compiler.Compile(policy); compiler.Failed() {
			return
		}
		for name, m := range compiler.Modules {
			ast.WalkRefs(m, func(ref ast.Ref) bool {
				if forbidden[ref.String()] {
					t.Fatalf("module %s compiles in the sandbox and refers to %s", name, ref)
				}
				return false
			})
		}
	})
}
