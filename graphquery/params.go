package graphquery

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"mneme/memory"
)

// The query-string form of each shape, shared by the REST API and the
// panel: lists are comma-separated or repeated, times are RFC 3339 or
// YYYY-MM-DD, numbers are whole.

// ParseNeighbourhood reads from, hops, limit and the memory filter.
func ParseNeighbourhood(v url.Values) (NeighbourhoodQuery, error) {
	var q NeighbourhoodQuery
	var err error
	if q.From, err = ParseRef(v.Get("from")); err != nil {
		return q, err
	}
	if q.Hops, err = number(v, "hops"); err != nil {
		return q, err
	}
	if q.Limit, err = number(v, "limit"); err != nil {
		return q, err
	}
	q.Filter, err = parseFilter(v, true)
	return q, err
}

// ParsePaths reads from, to (each entity:ID, or an entity id without a
// colon), max_length, via and limit.
func ParsePaths(v url.Values) (PathQuery, error) {
	q := PathQuery{Via: list(v, "via")}
	var err error
	if q.From, err = parseEntity("from", v.Get("from")); err != nil {
		return q, err
	}
	if q.To, err = parseEntity("to", v.Get("to")); err != nil {
		return q, err
	}
	if q.MaxLength, err = number(v, "max_length"); err != nil {
		return q, err
	}
	q.Limit, err = number(v, "limit")
	return q, err
}

// ParseCoMentions reads entity, limit and the memory filter.
func ParseCoMentions(v url.Values) (CoMentionQuery, error) {
	q := CoMentionQuery{Entity: v.Get("entity")}
	var err error
	if q.Limit, err = number(v, "limit"); err != nil {
		return q, err
	}
	q.Filter, err = parseFilter(v, false)
	return q, err
}

// ParseTimeline reads the subject (user, entity or kind), limit and the
// filter's types, statuses, agents, sensitivities and times.
func ParseTimeline(v url.Values) (TimelineQuery, error) {
	q := TimelineQuery{User: v.Get("user"), Entity: v.Get("entity"), Kind: v.Get("kind")}
	var err error
	if q.Limit, err = number(v, "limit"); err != nil {
		return q, err
	}
	q.Filter, err = parseFilter(v, false)
	q.Filter.Kinds, q.Filter.User, q.Filter.Entity = nil, "", ""
	return q, err
}

// ParseAggregate reads by and the memory filter.
func ParseAggregate(v url.Values) (AggregateQuery, error) {
	f, err := parseFilter(v, true)
	return AggregateQuery{By: v.Get("by"), Filter: f}, err
}

// ParseEntities reads q and limit.
func ParseEntities(v url.Values) (EntityQuery, error) {
	q := EntityQuery{Text: v.Get("q")}
	var err error
	q.Limit, err = number(v, "limit")
	return q, err
}

func parseFilter(v url.Values, subjects bool) (MemoryFilter, error) {
	f := MemoryFilter{
		Types: list(v, "type"), Kinds: list(v, "kind"), Statuses: list(v, "status"),
		Agents: list(v, "agent"), Sensitivity: list(v, "sensitivity"),
	}
	if subjects {
		f.User, f.Entity = v.Get("user"), v.Get("entity")
	}
	var err error
	if f.Since, err = when(v, "since"); err != nil {
		return f, err
	}
	f.Until, err = when(v, "until")
	return f, err
}

func list(v url.Values, name string) []string {
	var out []string
	for _, s := range v[name] {
		for _, x := range strings.Split(s, ",") {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
	}
	return out
}

func number(v url.Values, name string) (int, error) {
	s := v.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		// Given as 0, it would read as not given: the default.
		return 0, memory.Invalid(name, "must be a positive whole number")
	}
	return n, nil
}

func when(v url.Values, name string) (time.Time, error) {
	s := v.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t, err = time.Parse("2006-01-02", s)
	}
	if err != nil || t.Year() < 1970 { // the zero time would read as no bound
		return time.Time{}, memory.Invalid(name, "must be a date after 1970 such as 2026-03-01 or an RFC 3339 time")
	}
	return t, nil
}
