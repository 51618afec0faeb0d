package policy

import (
	"slices"
	"strconv"
	"strings"

	"mneme/memory"
)

// FilterMatches reports whether the memory with metadata r matches f, by the
// meaning memory.Filter documents. It is the reference the graph store's
// predicate must reproduce. It ignores the tenant unless f names it.
func FilterMatches(f memory.Filter, r memory.Resource) bool {
	switch f.Op {
	case memory.FilterTrue:
		return true
	case memory.FilterAnd:
		for _, a := range f.Args {
			if !FilterMatches(a, r) {
				return false
			}
		}
		return true
	case memory.FilterOr:
		return slices.ContainsFunc(f.Args, func(a memory.Filter) bool { return FilterMatches(a, r) })
	case memory.FilterNot:
		return len(f.Args) == 1 && !FilterMatches(f.Args[0], r)
	case memory.FilterEq, memory.FilterNe:
		v, ok := resourceField(r, f.Field)
		if !ok || len(f.Values) != 1 {
			return false
		}
		return (v == f.Values[0]) == (f.Op == memory.FilterEq)
	case memory.FilterIn:
		v, ok := resourceField(r, f.Field)
		return ok && slices.Contains(f.Values, v)
	}
	return false
}

// resourceField returns the field of r named by its JSON name.
func resourceField(r memory.Resource, name string) (string, bool) {
	switch name {
	case "tenant":
		return r.Tenant, true
	case "id":
		return r.ID, true
	case "user_id":
		return r.UserID, true
	case "agent_id":
		return r.AgentID, true
	case "type":
		return r.Type, true
	case "kind":
		return r.Kind, true
	case "sensitivity":
		return r.Sensitivity, true
	case "status":
		return r.Status, true
	case "scope":
		return scopeOf(r), true
	case "scope_id":
		return r.ScopeID, true
	case "author":
		return authorOf(r), true
	}
	return "", false
}

// assume returns f for the memories whose field has the value v: each
// comparison on field becomes true or false.
func assume(f memory.Filter, field, v string) memory.Filter {
	switch f.Op {
	case memory.FilterEq, memory.FilterNe, memory.FilterIn:
		if f.Field != field || !slices.Contains(memory.FilterFields, field) {
			return f
		}
		return constant(FilterMatches(f, resourceWith(field, v)))
	case memory.FilterAnd, memory.FilterOr, memory.FilterNot:
		out := memory.Filter{Op: f.Op, Args: make([]memory.Filter, len(f.Args))}
		for i, a := range f.Args {
			out.Args[i] = assume(a, field, v)
		}
		return out
	}
	return f
}

// resourceWith returns a resource whose field has the value v.
func resourceWith(field, v string) memory.Resource {
	var r memory.Resource
	switch field {
	case "tenant":
		r.Tenant = v
	case "id":
		r.ID = v
	case "user_id":
		r.UserID = v
	case "agent_id":
		r.AgentID = v
	case "type":
		r.Type = v
	case "kind":
		r.Kind = v
	case "sensitivity":
		r.Sensitivity = v
	case "status":
		r.Status = v
	case "scope":
		r.Scope = v
	case "scope_id":
		r.ScopeID = v
	case "author":
		r.Author = v
	}
	return r
}

// simplify returns a filter that matches exactly what f matches, smaller:
// nested ANDs and ORs flattened, constants folded, duplicates dropped,
// equalities on one field merged into one IN (OR) or intersected (AND), and
// conjuncts common to every branch of an OR factored out. Partial evaluation
// spells a sensitivity ceiling as one query per level; this turns them back
// into one "sensitivity IN [...]".
func simplify(f memory.Filter) memory.Filter {
	switch f.Op {
	case memory.FilterNot:
		if len(f.Args) != 1 {
			return f
		}
		a := simplify(f.Args[0])
		switch a.Op {
		case memory.FilterTrue:
			return constant(false)
		case memory.FilterFalse:
			return constant(true)
		case memory.FilterNot:
			return a.Args[0]
		case memory.FilterEq:
			a.Op = memory.FilterNe
			return a
		case memory.FilterNe:
			a.Op = memory.FilterEq
			return a
		}
		return memory.Filter{Op: memory.FilterNot, Args: []memory.Filter{a}}
	case memory.FilterAnd:
		return simplifyAnd(f.Args)
	case memory.FilterOr:
		return simplifyOr(f.Args)
	case memory.FilterIn:
		vs := slices.Clone(f.Values)
		slices.Sort(vs)
		vs = slices.Compact(vs)
		switch len(vs) {
		case 0:
			return constant(false)
		case 1:
			return memory.Filter{Op: memory.FilterEq, Field: f.Field, Values: vs}
		}
		return memory.Filter{Op: memory.FilterIn, Field: f.Field, Values: vs}
	}
	return f
}

// flatten simplifies args and splices in the args of those with operator op.
func flatten(op string, args []memory.Filter) []memory.Filter {
	var out []memory.Filter
	for _, a := range args {
		a = simplify(a)
		if a.Op == op {
			out = append(out, a.Args...)
			continue
		}
		out = append(out, a)
	}
	return out
}

func simplifyAnd(args []memory.Filter) memory.Filter {
	var rest []memory.Filter
	// allowed holds, per field, the values the equalities and INs of the
	// conjunction leave possible.
	allowed := map[string][]string{}
	var fields []string
	for _, a := range flatten(memory.FilterAnd, args) {
		switch a.Op {
		case memory.FilterTrue:
		case memory.FilterFalse:
			return a
		case memory.FilterEq, memory.FilterIn:
			vs := slices.Clone(a.Values)
			if prev, ok := allowed[a.Field]; ok {
				vs = slices.DeleteFunc(vs, func(v string) bool { return !slices.Contains(prev, v) })
			} else {
				fields = append(fields, a.Field)
			}
			slices.Sort(vs)
			allowed[a.Field] = slices.Compact(vs)
		default:
			rest = append(rest, a)
		}
	}
	var out []memory.Filter
	for _, field := range fields {
		c := simplify(memory.Filter{Op: memory.FilterIn, Field: field, Values: allowed[field]})
		if c.Op == memory.FilterFalse {
			return c
		}
		out = append(out, c)
	}
	out = dedupe(append(out, rest...))
	switch len(out) {
	case 0:
		return constant(true)
	case 1:
		return out[0]
	}
	return memory.Filter{Op: memory.FilterAnd, Args: out}
}

func simplifyOr(args []memory.Filter) memory.Filter {
	var rest []memory.Filter
	values := map[string][]string{}
	var fields []string
	for _, a := range flatten(memory.FilterOr, args) {
		switch a.Op {
		case memory.FilterFalse:
		case memory.FilterTrue:
			return a
		case memory.FilterEq, memory.FilterIn:
			if _, ok := values[a.Field]; !ok {
				fields = append(fields, a.Field)
			}
			values[a.Field] = append(values[a.Field], a.Values...)
		default:
			rest = append(rest, a)
		}
	}
	var out []memory.Filter
	for _, field := range fields {
		out = append(out, simplify(memory.Filter{Op: memory.FilterIn, Field: field, Values: values[field]}))
	}
	out = mergeSiblings(absorb(dedupe(append(out, rest...))))
	switch len(out) {
	case 0:
		return constant(false)
	case 1:
		return out[0]
	}
	if f, ok := factor(out); ok {
		return f
	}
	return memory.Filter{Op: memory.FilterOr, Args: out}
}

// conjuncts returns the operands of an AND, or f alone.
func conjuncts(f memory.Filter) []memory.Filter {
	if f.Op == memory.FilterAnd {
		return f.Args
	}
	return []memory.Filter{f}
}

// absorb drops each branch of an OR that implies another branch, A and B
// beside A, because it holds only where A already does.
func absorb(branches []memory.Filter) []memory.Filter {
	keys := make([][]string, len(branches))
	for i, b := range branches {
		for _, c := range conjuncts(b) {
			keys[i] = append(keys[i], key(c))
		}
	}
	implies := func(i, j int) bool { // every conjunct of j is one of i
		for _, k := range keys[j] {
			if !slices.Contains(keys[i], k) {
				return false
			}
		}
		return true
	}
	var out []memory.Filter
	for i, b := range branches {
		absorbed := false
		for j := range branches {
			if j != i && implies(i, j) && len(keys[j]) < len(keys[i]) {
				absorbed = true
				break
			}
		}
		if !absorbed {
			out = append(out, b)
		}
	}
	return out
}

// mergeSiblings rewrites (A and f in X) or (A and f in Y) as A and f in X∪Y:
// partial evaluation gives one branch per sensitivity level a grant covers.
func mergeSiblings(branches []memory.Filter) []memory.Filter {
	isValues := func(f memory.Filter) bool { return f.Op == memory.FilterEq || f.Op == memory.FilterIn }
	for merged := true; merged; {
		merged = false
	pairs:
		for i := range branches {
			for j := i + 1; j < len(branches); j++ {
				a, b := conjuncts(branches[i]), conjuncts(branches[j])
				if len(a) != len(b) {
					continue
				}
				onlyA := slices.DeleteFunc(slices.Clone(a), func(c memory.Filter) bool {
					return slices.ContainsFunc(b, func(d memory.Filter) bool { return key(c) == key(d) })
				})
				onlyB := slices.DeleteFunc(slices.Clone(b), func(d memory.Filter) bool {
					return slices.ContainsFunc(a, func(c memory.Filter) bool { return key(c) == key(d) })
				})
				if len(onlyA) != 1 || len(onlyB) != 1 || !isValues(onlyA[0]) || !isValues(onlyB[0]) || onlyA[0].Field != onlyB[0].Field {
					continue
				}
				union := memory.Filter{Op: memory.FilterIn, Field: onlyA[0].Field, Values: append(slices.Clone(onlyA[0].Values), onlyB[0].Values...)}
				common := slices.DeleteFunc(slices.Clone(a), func(c memory.Filter) bool { return key(c) == key(onlyA[0]) })
				branches[i] = simplify(memory.Filter{Op: memory.FilterAnd, Args: append(common, union)})
				branches = slices.Delete(branches, j, j+1)
				merged = true
				break pairs
			}
		}
	}
	return branches
}

// factor rewrites (A and B) or (A and C) as A and (B or C) when every branch
// shares A; it reports false when no conjunct is common.
func factor(branches []memory.Filter) (memory.Filter, bool) {
	var common []memory.Filter
	for _, c := range conjuncts(branches[0]) {
		k := key(c)
		inAll := !slices.ContainsFunc(branches[1:], func(b memory.Filter) bool {
			return !slices.ContainsFunc(conjuncts(b), func(d memory.Filter) bool { return key(d) == k })
		})
		if inAll {
			common = append(common, c)
		}
	}
	if len(common) == 0 {
		return memory.Filter{}, false
	}
	isCommon := func(d memory.Filter) bool {
		return slices.ContainsFunc(common, func(c memory.Filter) bool { return key(c) == key(d) })
	}
	or := memory.Filter{Op: memory.FilterOr}
	for _, b := range branches {
		rest := slices.DeleteFunc(slices.Clone(conjuncts(b)), isCommon)
		or.Args = append(or.Args, memory.Filter{Op: memory.FilterAnd, Args: rest})
	}
	return simplify(memory.Filter{Op: memory.FilterAnd, Args: append(common, or)}), true
}

func dedupe(fs []memory.Filter) []memory.Filter {
	seen := map[string]bool{}
	out := fs[:0]
	for _, f := range fs {
		if k := key(f); !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

// key is a canonical text of f, for comparing filters structurally.
func key(f memory.Filter) string {
	var b strings.Builder
	writeKey(&b, f)
	return b.String()
}

func writeKey(b *strings.Builder, f memory.Filter) {
	b.WriteString(f.Op)
	b.WriteByte('(')
	if f.Field != "" {
		b.WriteString(f.Field)
		b.WriteByte(':')
	}
	for _, v := range f.Values {
		b.WriteString(strconv.Quote(v))
	}
	for _, a := range f.Args {
		writeKey(b, a)
	}
	b.WriteByte(')')
}
