package graph

import (
	"slices"
	"strconv"
	"strings"

	"mneme/memory"
)

// filterProperty maps each field a policy filter may compare
// (memory.FilterFields) to the Cypher expression of the memory bound to m.
// Fields the store always sets are read as they are, so that indexes on them
// stay usable; the others may be absent from a node and read as "", the value
// the policy input gives a missing field, so that equality and negation mean
// the same in Cypher as in Rego.
var filterProperty = map[string]string{
	"tenant":      "m.tenant",
	"id":          "m.id",
	"user_id":     "m.user_id",
	"agent_id":    "coalesce(m.agent_id, '')",
	"type":        "coalesce(m.type, '')",
	"kind":        "coalesce(m.kind, '')",
	"sensitivity": "coalesce(m.sensitivity, '')",
	"status":      "coalesce(m.status, '')",
	"scope":       "coalesce(m.scope, 'user')",
	"scope_id":    "coalesce(m.scope_id, '')",
	"author":      cypherAuthor,
}

// cypherAuthor is memory.Resource.Author of the memory bound to m, which
// follows from its ids and is not stored.
const cypherAuthor = "CASE WHEN m.user_id <> '' AND m.agent_id = 'user:' + m.user_id THEN 'user' ELSE 'agent' END"

// filterPredicate turns a policy filter into a Cypher predicate over the
// memory bound to m, with every value a parameter named pN. The text holds
// only operators, property names from filterProperty and parameter names;
// values never become Cypher. A filter the store does not understand (an
// unknown operator or field, a comparison without its value) yields "false"
// for the whole predicate: the policy engine never sends one, and if it did,
// nothing would match.
func filterPredicate(f memory.Filter) (string, map[string]any) {
	b := filterBuilder{params: map[string]any{}}
	text, ok := b.build(f)
	if !ok {
		return "false", map[string]any{}
	}
	return text, b.params
}

type filterBuilder struct {
	params map[string]any
}

// param adds a parameter and returns its placeholder.
func (b *filterBuilder) param(v any) string {
	name := "p" + strconv.Itoa(len(b.params))
	b.params[name] = v
	return "$" + name
}

func (b *filterBuilder) build(f memory.Filter) (string, bool) {
	switch f.Op {
	case memory.FilterTrue:
		return "true", len(f.Args) == 0
	case memory.FilterFalse:
		return "false", len(f.Args) == 0
	case memory.FilterAnd, memory.FilterOr:
		if len(f.Args) == 0 {
			return strconv.FormatBool(f.Op == memory.FilterAnd), true
		}
		parts := make([]string, len(f.Args))
		for i, a := range f.Args {
			p, ok := b.build(a)
			if !ok {
				return "", false
			}
			parts[i] = p
		}
		return "(" + strings.Join(parts, " "+strings.ToUpper(f.Op)+" ") + ")", true
	case memory.FilterNot:
		if len(f.Args) != 1 {
			return "", false
		}
		p, ok := b.build(f.Args[0])
		return "(NOT " + p + ")", ok
	case memory.FilterEq, memory.FilterNe:
		prop, ok := filterProperty[f.Field]
		if !ok || len(f.Values) != 1 {
			return "", false
		}
		op := " = "
		if f.Op == memory.FilterNe {
			op = " <> "
		}
		return prop + op + b.param(f.Values[0]), true
	case memory.FilterIn:
		prop, ok := filterProperty[f.Field]
		if !ok {
			return "", false
		}
		if len(f.Values) == 0 {
			return "false", true
		}
		return prop + " IN " + b.param(slices.Clone(f.Values)), true
	}
	return "", false
}
