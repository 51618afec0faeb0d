package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	mneme "mneme/client"
)

// graph runs `memctl graph …`: analysts' queries, printed as a table, or as
// JSON with -json anywhere in the arguments.
func (c client) graph(ctx context.Context, args []string) error {
	asJSON := slices.Contains(args, "-json")
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-json" })
	if len(args) == 0 {
		return errUsage
	}
	sub, rest := args[0], args[1:]
	if _, ok := graphTakes[sub]; !ok {
		return errUsage
	}
	pos, f, opts, err := graphArgs(sub, rest)
	if err != nil {
		return err
	}
	show := func(v any, table func(w io.Writer)) error {
		if asJSON {
			return c.print(v, nil)
		}
		w := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
		table(w)
		return w.Flush()
	}
	switch {
	case sub == "entities" && len(pos) <= 1:
		es, err := c.api.GraphEntities(ctx, strings.Join(pos, ""), f.Limit)
		if err != nil {
			return err
		}
		return show(map[string]any{"entities": es}, func(w io.Writer) {
			fmt.Fprintln(w, "ID\tNAME\tKIND\tMEMORIES")
			for _, e := range es {
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\n", e.ID, e.Name, e.Kind, e.Count)
			}
		})
	case sub == "neighbourhood" && len(pos) == 1:
		g, err := c.api.GraphNeighbourhood(ctx, pos[0], opts.hops, f)
		if err != nil {
			return err
		}
		return show(g, func(w io.Writer) {
			fmt.Fprintln(w, "HOP\tNODE\tKIND\tTYPE\tCONTENT OR NAME")
			for _, n := range g.Nodes {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", n.Hop, n.Key, n.Kind, memoryType(n), oneLine(caption(n)))
			}
			fmt.Fprintf(w, "\n%d nodes, %d edges", len(g.Nodes), len(g.Edges))
			if g.Truncated {
				fmt.Fprint(w, " (node limit reached)")
			}
			fmt.Fprintln(w)
		})
	case sub == "paths" && len(pos) == 2:
		ps, err := c.api.GraphPaths(ctx, pos[0], pos[1], opts.maxLength, opts.via, f.Limit)
		if err != nil {
			return err
		}
		return show(map[string]any{"paths": ps}, func(w io.Writer) {
			for i, p := range ps {
				keys := make([]string, len(p.Nodes))
				for j, n := range p.Nodes {
					keys[j] = n.Key
				}
				fmt.Fprintf(w, "%d\t%s\n", i+1, strings.Join(keys, " — "))
			}
			if len(ps) == 0 {
				fmt.Fprintln(w, "no path through memories you may read")
			}
		})
	case sub == "co-mentions" && len(pos) <= 1:
		ps, err := c.api.GraphCoMentions(ctx, strings.Join(pos, ""), f)
		if err != nil {
			return err
		}
		return show(map[string]any{"pairs": ps}, func(w io.Writer) {
			fmt.Fprintln(w, "A\tB\tMEMORIES")
			for _, p := range ps {
				fmt.Fprintf(w, "%s\t%s\t%d\n", p.A.ID, p.B.ID, p.Count)
			}
		})
	case sub == "timeline" && len(pos) == 1:
		subject, id, ok := strings.Cut(pos[0], ":")
		if !ok {
			return fmt.Errorf("timeline takes user:ID, entity:ID or kind:KIND, not %q", pos[0])
		}
		tl, err := c.api.GraphTimeline(ctx, subject, id, f)
		if err != nil {
			return err
		}
		return show(tl, func(w io.Writer) {
			fmt.Fprintln(w, "CREATED\tID\tVERSION\tSTATUS\tTYPE\tKIND\tCONTENT")
			for _, m := range tl.Memories {
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", m.CreatedAt.Format(time.DateTime), m.ID, m.Version, m.Status, m.Type, m.Kind, oneLine(m.Content))
			}
		})
	case sub == "aggregate" && len(pos) == 1:
		a, err := c.api.GraphAggregate(ctx, pos[0], f)
		if err != nil {
			return err
		}
		return show(a, func(w io.Writer) {
			fmt.Fprintf(w, "%s\tMEMORIES\n", strings.ToUpper(a.By))
			for _, b := range a.Buckets {
				key := b.Key
				if b.Name != "" {
					key += " (" + b.Name + ")"
				}
				fmt.Fprintf(w, "%s\t%d\n", key, b.Count)
			}
			fmt.Fprintf(w, "total\t%d\n", a.Total)
		})
	}
	return errUsage
}

// graphTakes are the name=value options of each graph command: the query
// parameters its route reads (handlers/openapi.json), but for those its
// arguments give (an entity search's text, a path's ends, co-mentions'
// entity, a timeline's subject, an aggregate's dimension). An option the
// route does not read is refused, never dropped.
var graphTakes = map[string][]string{
	"entities":      {"limit"},
	"neighbourhood": {"hops", "limit", "type", "kind", "status", "agent", "sensitivity", "user", "entity", "since", "until"},
	"paths":         {"max_length", "via", "limit"},
	"co-mentions":   {"limit", "type", "kind", "status", "agent", "sensitivity", "since", "until"},
	"timeline":      {"limit", "type", "status", "agent", "sensitivity", "since", "until"},
	"aggregate":     {"type", "kind", "status", "agent", "sensitivity", "user", "entity", "since", "until"},
}

// graphOpts are the options of one query shape that are not filters.
type graphOpts struct {
	hops, maxLength int
	via             []string
}

// graphArgs splits the arguments of graph command sub into positional
// ones, name=value filters and the shapes' own options, refusing an option
// sub does not take and one given with no value.
func graphArgs(sub string, args []string) (pos []string, f mneme.GraphFilter, opts graphOpts, err error) {
	list := func(v string) []string { return strings.Split(v, ",") }
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			pos = append(pos, a)
			continue
		}
		takes := graphTakes[sub]
		switch {
		case !slices.Contains(takes, k):
			return nil, f, opts, fmt.Errorf("graph %s takes no %s= option; it takes %s=", sub, k, strings.Join(takes, "= "))
		case v == "":
			return nil, f, opts, fmt.Errorf("%s= has no value: give it one, or leave it out", k)
		}
		switch k {
		case "type":
			f.Types = list(v)
		case "kind":
			f.Kinds = list(v)
		case "via":
			opts.via = list(v)
		case "status":
			f.Statuses = list(v)
		case "agent":
			f.Agents = list(v)
		case "sensitivity":
			f.Sensitivities = list(v)
		case "user":
			f.User = v
		case "entity":
			f.Entity = v
		case "since", "until":
			t, perr := time.Parse("2006-01-02", v)
			if perr != nil {
				if t, perr = time.Parse(time.RFC3339, v); perr != nil {
					return nil, f, opts, fmt.Errorf("%s must be YYYY-MM-DD or RFC 3339", k)
				}
			}
			if k == "since" {
				f.Since = t
			} else {
				f.Until = t
			}
		case "limit", "hops", "max_length":
			n, perr := strconv.Atoi(v)
			if perr != nil {
				return nil, f, opts, fmt.Errorf("%s must be a whole number", k)
			}
			switch k {
			case "limit":
				f.Limit = n
			case "hops":
				opts.hops = n
			default:
				opts.maxLength = n
			}
		}
	}
	return pos, f, opts, nil
}

func caption(n mneme.GraphNode) string {
	if n.Memory != nil {
		return n.Memory.Content
	}
	return n.Name
}

func memoryType(n mneme.GraphNode) string {
	if n.Memory != nil {
		return n.Memory.Type
	}
	return ""
}

// oneLine keeps a table row on one line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return s
}
