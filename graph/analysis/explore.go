package analysis

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/graphquery"
	"mneme/memory"
)

// Start returns the node ref names if it exists in the scope's tenant and a
// memory in scope is it or points to it; otherwise memory.ErrNotFound.
func (s *Store) Start(ctx context.Context, scope memory.Scope, ref graphquery.NodeRef) (graphquery.Node, error) {
	where, params := s.where(scope, graphquery.MemoryFilter{})
	params["id"], params["witnesses"] = ref.ID, graphquery.StartWitnesses
	var out graphquery.Node
	found := false
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		if ref.Label == graphquery.LabelMemory {
			m, ok, err := neo.ReadOne(ctx, tx, startMemoryQuery(where), params, func(r *neo4j.Record) (memory.Memory, error) {
				v, _ := r.Get("memory")
				return decodeMemory(v), nil
			})
			out, found = memoryNode(m), ok
			return err
		}
		a, ok := around[ref.Label]
		if !ok {
			return memory.Invalid("from", "unknown label "+ref.Label)
		}
		rec, ok, err := neo.ReadOne(ctx, tx, startQuery(a.label, a.rel, where), params, func(r *neo4j.Record) (map[string]any, error) {
			return r.AsMap(), nil
		})
		if ok {
			out = graphquery.Node{Key: ref.Key(), Label: ref.Label, ID: str(rec["id"]), Name: str(rec["name"]), Kind: str(rec["kind"])}
			ws, _ := rec["witnesses"].([]any)
			for _, w := range ws {
				out.Witnesses = append(out.Witnesses, decodeMemory(w))
			}
		}
		found = ok
		return err
	})
	if err != nil {
		return graphquery.Node{}, err
	}
	if !found {
		return graphquery.Node{}, fmt.Errorf("%s: %w", ref.Label, memory.ErrNotFound)
	}
	return out, nil
}

// Expand returns the nodes one step from frontier and the edges to them.
func (s *Store) Expand(ctx context.Context, scope memory.Scope, f graphquery.MemoryFilter, frontier []graphquery.NodeRef, limit int) ([]graphquery.Node, []graphquery.Edge, error) {
	byLabel := map[string][]string{}
	for _, r := range frontier {
		byLabel[r.Label] = append(byLabel[r.Label], r.ID)
	}
	where, params := s.where(scope, f)
	params["limit"] = limit
	var nodes []graphquery.Node
	var edges []graphquery.Edge
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		nodes, edges = nil, nil
		for _, label := range slices.Sorted(maps.Keys(around)) {
			ids := byLabel[label]
			if len(ids) == 0 {
				continue
			}
			a := around[label]
			p := maps.Clone(params)
			p["ids"] = ids
			recs, err := neo.Collect(ctx, tx, intoQuery(a.label, a.rel, where), p)
			if err != nil {
				return err
			}
			for _, r := range recs {
				x, _ := r.Get("x_id")
				v, _ := r.Get("memory")
				n := memoryNode(decodeMemory(v))
				nodes = append(nodes, n)
				edges = append(edges, graphquery.Edge{From: n.Key, To: label + ":" + str(x), Type: a.rel})
			}
		}
		ids := byLabel[graphquery.LabelMemory]
		if len(ids) == 0 {
			return nil
		}
		p := maps.Clone(params)
		p["ids"] = ids
		recs, err := neo.Collect(ctx, tx, outQuery(where), p)
		if err != nil {
			return err
		}
		for _, r := range recs {
			row := r.AsMap()
			n, ok := otherNode(neo.Strs(row["labels"]), str(row["id"]), str(row["name"]), str(row["kind"]))
			if !ok {
				continue
			}
			nodes = append(nodes, n)
			edges = append(edges, graphquery.Edge{From: graphquery.LabelMemory + ":" + str(row["m_id"]), To: n.Key, Type: str(row["rel"])})
		}
		recs, err = neo.Collect(ctx, tx, versionsQuery(where), p)
		if err != nil {
			return err
		}
		for _, r := range recs {
			row := r.AsMap()
			n := memoryNode(decodeMemory(row["memory"]))
			nodes = append(nodes, n)
			e := graphquery.Edge{From: graphquery.LabelMemory + ":" + str(row["s_id"]), To: n.Key, Type: graphquery.RelSupersedes}
			if newer, _ := row["newer"].(bool); !newer {
				e.From, e.To = e.To, e.From
			}
			edges = append(edges, e)
		}
		return nil
	})
	return nodes, edges, err
}

// Paths returns the shortest paths between two entities through memories
// in scope.
func (s *Store) Paths(ctx context.Context, scope memory.Scope, q graphquery.PathQuery) ([]graphquery.Path, error) {
	pred, params := s.pred(scope)
	params = maps.Clone(params)
	if params == nil {
		params = map[string]any{}
	}
	params["tenant"], params["from"], params["to"], params["limit"] = scope.Tenant, q.From, q.To, q.Limit
	for _, v := range q.Via {
		if !slices.Contains(graphquery.Relations, v) {
			return nil, memory.Invalid("via", "unknown relationship "+v)
		}
	}
	var out []graphquery.Path
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		recs, err := neo.Collect(ctx, tx, pathsQuery(q.Via, q.MaxLength, pred), params)
		if err != nil {
			return err
		}
		out = make([]graphquery.Path, 0, len(recs))
		for _, r := range recs {
			out = append(out, pathOf(r))
		}
		return nil
	})
	return out, err
}

func pathOf(r *neo4j.Record) graphquery.Path {
	var p graphquery.Path
	ns, _ := r.Get("nodes")
	for _, v := range asList(ns) {
		row, _ := v.(map[string]any)
		if row["memory"] != nil {
			p.Nodes = append(p.Nodes, memoryNode(decodeMemory(row["memory"])))
			continue
		}
		if n, ok := otherNode(neo.Strs(row["labels"]), str(row["id"]), str(row["name"]), str(row["kind"])); ok {
			p.Nodes = append(p.Nodes, n)
		}
	}
	for i := range p.Nodes {
		p.Nodes[i].Hop = i
	}
	rs, _ := r.Get("rels")
	for _, v := range asList(rs) {
		row, _ := v.(map[string]any)
		p.Edges = append(p.Edges, graphquery.Edge{
			From: labelOf(neo.Strs(row["from"])) + ":" + str(row["from_id"]),
			To:   labelOf(neo.Strs(row["to"])) + ":" + str(row["to_id"]), Type: str(row["type"]),
		})
	}
	return p
}

func asList(v any) []any {
	xs, _ := v.([]any)
	return xs
}
