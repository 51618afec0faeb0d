package graphquery

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mneme/memory"
)

// Neighbourhood returns the nodes within q.Hops of q.From and the edges
// between them, expanding one hop at a time: each hop's memories are
// decided before they become the next hop's frontier, and what they point
// to is reached only through them.
func (s *Service) Neighbourhood(ctx context.Context, p memory.Principal, q NeighbourhoodQuery) (Graph, error) {
	var g Graph
	params := map[string]string{"hops": strconv.Itoa(q.Hops), "limit": strconv.Itoa(q.Limit)}
	filterParams(q.Filter, params)
	err := s.do(ctx, p, ShapeNeighbourhood, q.From.Key(), params, func(r *run) (int, error) {
		var err error
		if q.Hops, err = clamp("hops", q.Hops, DefaultHops, MaxHops); err != nil {
			return 0, err
		}
		if q.Limit, err = clamp("limit", q.Limit, DefaultNodes, MaxNodes); err != nil {
			return 0, err
		}
		if err := errorsOf(checkText("from", q.From.ID, true), checkFilter(q.Filter)); err != nil {
			return 0, err
		}
		if err := r.subjects(q.Filter); err != nil {
			return 0, err
		}
		g, err = r.neighbourhood(q)
		return len(g.Nodes), err
	})
	return g, err
}

func (r *run) neighbourhood(q NeighbourhoodQuery) (Graph, error) {
	g := Graph{Nodes: []Node{}, Edges: []Edge{}}
	start, err := r.start(q.From)
	if err != nil {
		return g, err
	}
	if start.Memory != nil {
		if ok, err := r.allowed(*start.Memory); err != nil || !ok {
			return g, errorsOf(err, memory.ErrNotFound)
		}
	}
	seen := map[string]int{start.Key: 0}
	g.Nodes = append(g.Nodes, start)
	edges := map[Edge]bool{}
	frontier := []NodeRef{start.Ref()}
	for hop := 1; hop <= q.Hops && len(frontier) > 0 && !g.Truncated; hop++ {
		nodes, es, err := r.s.store.Expand(r.ctx, r.scope, q.Filter, frontier, q.Limit+1)
		if err != nil {
			return g, err
		}
		// Memories first: they decide which other nodes may be reached.
		reached := map[string]Node{}
		var next []NodeRef
		for _, n := range nodes {
			if n.Memory == nil {
				reached[n.Key] = n
				continue
			}
			if _, ok := seen[n.Key]; ok {
				continue
			}
			ok, err := r.allowed(*n.Memory)
			if err != nil {
				return g, err
			}
			if !ok {
				continue
			}
			if len(g.Nodes) >= q.Limit {
				g.Truncated = true
				break
			}
			n.Hop, seen[n.Key] = hop, len(g.Nodes)
			g.Nodes = append(g.Nodes, n)
			next = append(next, n.Ref())
		}
		// An edge stays when both its ends are in the answer; a node other
		// than a memory joins through an edge from a memory in the answer.
		for _, e := range es {
			_, fromOK := seen[e.From]
			if !fromOK {
				continue
			}
			if _, ok := seen[e.To]; !ok {
				n, isNode := reached[e.To]
				if !isNode || g.Truncated {
					continue
				}
				if len(g.Nodes) >= q.Limit {
					g.Truncated = true
					continue
				}
				n.Hop, seen[e.To] = hop, len(g.Nodes)
				g.Nodes = append(g.Nodes, n)
				next = append(next, n.Ref())
			}
			if !edges[e] {
				edges[e] = true
				g.Edges = append(g.Edges, e)
			}
		}
		frontier = next
	}
	return g, nil
}

// Paths returns the shortest paths between two entities whose memories the
// caller may all read. A path through a memory policy refuses is dropped.
func (s *Service) Paths(ctx context.Context, p memory.Principal, q PathQuery) (Paths, error) {
	out := Paths{Paths: []Path{}}
	params := map[string]string{"to": q.To, "max_length": strconv.Itoa(q.MaxLength), "limit": strconv.Itoa(q.Limit), "via": strings.Join(q.Via, ",")}
	err := s.do(ctx, p, ShapePaths, "entity:"+q.From, params, func(r *run) (int, error) {
		var err error
		if q.MaxLength, err = clamp("max_length", q.MaxLength, DefaultPathLength, MaxPathLength); err != nil {
			return 0, err
		}
		if q.Limit, err = clamp("limit", q.Limit, DefaultPaths, MaxPaths); err != nil {
			return 0, err
		}
		if err := errorsOf(checkText("from", q.From, true), checkText("to", q.To, true)); err != nil {
			return 0, err
		}
		if q.From == q.To {
			return 0, memory.Invalid("to", "must differ from from")
		}
		if len(q.Via) == 0 {
			q.Via = []string{RelMentions, RelSupersedes}
		}
		for _, v := range q.Via {
			if !slices.Contains(Relations, v) {
				return 0, memory.Invalid("via", "must name relationships among "+strings.Join(Relations, ", "))
			}
		}
		for _, id := range []string{q.From, q.To} {
			if _, err := r.start(NodeRef{Label: LabelEntity, ID: id}); err != nil {
				return 0, err
			}
		}
		paths, err := r.s.store.Paths(r.ctx, r.scope, q)
		if err != nil {
			return 0, err
		}
	next:
		for _, path := range paths {
			for _, n := range path.Nodes {
				if n.Memory == nil {
					continue
				}
				ok, err := r.allowed(*n.Memory)
				if err != nil {
					return 0, err
				}
				if !ok {
					continue next
				}
			}
			out.Paths = append(out.Paths, path)
		}
		return len(out.Paths), nil
	})
	return out, err
}

// CoMentions returns the entities mentioned together in memories the
// caller may read, with how many memories mention both.
func (s *Service) CoMentions(ctx context.Context, p memory.Principal, q CoMentionQuery) (CoMentions, error) {
	out := CoMentions{Pairs: []CoMention{}}
	params := map[string]string{"limit": strconv.Itoa(q.Limit)}
	filterParams(q.Filter, params)
	target := ""
	if q.Entity != "" {
		target = "entity:" + q.Entity
	}
	err := s.do(ctx, p, ShapeCoMentions, target, params, func(r *run) (int, error) {
		var err error
		if q.Limit, err = clamp("limit", q.Limit, DefaultRows, MaxRows); err != nil {
			return 0, err
		}
		if err := errorsOf(checkText("entity", q.Entity, false), checkFilter(q.Filter)); err != nil {
			return 0, err
		}
		if err := r.subjects(q.Filter, NodeRef{Label: LabelEntity, ID: q.Entity}); err != nil {
			return 0, err
		}
		rows, err := r.counted(func(class []string) ([]ClassCount, error) {
			return r.s.store.CoMentions(r.ctx, r.scope, q, class, MaxGroups+1)
		})
		if err != nil {
			return 0, err
		}
		for _, g := range rows {
			out.Pairs = append(out.Pairs, CoMention{
				A: EntityRef{ID: g.key[0], Name: g.names[0], Kind: g.kinds[0]},
				B: EntityRef{ID: g.key[1], Name: g.names[1], Kind: g.kinds[1]}, Count: g.count,
			})
		}
		slices.SortFunc(out.Pairs, func(a, b CoMention) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.A.ID, b.A.ID), cmp.Compare(a.B.ID, b.B.ID))
		})
		if len(out.Pairs) > q.Limit {
			out.Pairs = out.Pairs[:q.Limit]
		}
		return len(out.Pairs), nil
	})
	return out, err
}

// Timeline returns the memories of a user, an entity or a kind, oldest
// first, every version included.
func (s *Service) Timeline(ctx context.Context, p memory.Principal, q TimelineQuery) (Timeline, error) {
	out := Timeline{Memories: []memory.Memory{}}
	params := map[string]string{"limit": strconv.Itoa(q.Limit)}
	filterParams(q.Filter, params)
	target := ""
	switch {
	case q.User != "":
		target = "user:" + q.User
	case q.Entity != "":
		target = "entity:" + q.Entity
	case q.Kind != "":
		target = "kind:" + q.Kind
	}
	err := s.do(ctx, p, ShapeTimeline, target, params, func(r *run) (int, error) {
		var err error
		if q.Limit, err = clamp("limit", q.Limit, DefaultRows, MaxRows); err != nil {
			return 0, err
		}
		subjects := 0
		for _, v := range []string{q.User, q.Entity, q.Kind} {
			if v != "" {
				subjects++
			}
		}
		if subjects != 1 {
			return 0, memory.Invalid("user", "name exactly one of user, entity and kind")
		}
		if err := errorsOf(checkText("user", q.User, false), checkText("entity", q.Entity, false), checkText("kind", q.Kind, false), checkFilter(q.Filter)); err != nil {
			return 0, err
		}
		if err := r.subjects(q.Filter, NodeRef{Label: LabelUser, ID: q.User}, NodeRef{Label: LabelEntity, ID: q.Entity}); err != nil {
			return 0, err
		}
		ms, err := r.s.store.Timeline(r.ctx, r.scope, TimelineQuery{User: q.User, Entity: q.Entity, Kind: q.Kind, Filter: q.Filter, Limit: q.Limit + 1})
		if err != nil {
			return 0, err
		}
		if len(ms) > q.Limit {
			ms, out.Truncated = ms[:q.Limit], true
		}
		ids := map[string]bool{}
		for _, m := range ms {
			ok, err := r.allowed(m)
			if err != nil {
				return 0, err
			}
			if ok {
				out.Memories = append(out.Memories, m)
				ids[m.ID] = true
			}
		}
		// A link to a version outside the answer would name a memory the
		// caller has not been shown to read.
		for i := range out.Memories {
			if !ids[out.Memories[i].Supersedes] {
				out.Memories[i].Supersedes = ""
			}
		}
		return len(out.Memories), nil
	})
	return out, err
}

// Aggregate counts the memories the caller may read by one dimension.
func (s *Service) Aggregate(ctx context.Context, p memory.Principal, q AggregateQuery) (Aggregate, error) {
	out := Aggregate{By: q.By, Buckets: []Bucket{}}
	params := map[string]string{"by": q.By}
	filterParams(q.Filter, params)
	err := s.do(ctx, p, ShapeAggregate, "", params, func(r *run) (int, error) {
		if !slices.Contains(Dimensions, q.By) {
			return 0, memory.Invalid("by", "must be one of "+strings.Join(Dimensions, ", "))
		}
		if err := checkFilter(q.Filter); err != nil {
			return 0, err
		}
		if err := r.subjects(q.Filter); err != nil {
			return 0, err
		}
		count := func(by string) ([]group, error) {
			return r.counted(func(class []string) ([]ClassCount, error) {
				return r.s.store.Aggregate(r.ctx, r.scope, AggregateQuery{By: by, Filter: q.Filter}, class, MaxGroups+1)
			})
		}
		groups, err := count(q.By)
		if err != nil {
			return 0, err
		}
		for _, g := range groups {
			out.Buckets = append(out.Buckets, Bucket{Key: g.key[0], Name: g.names[0], Count: g.count})
			out.Total += g.count
		}
		if q.By == ByEntity {
			// A memory counts once per entity it mentions; the total
			// counts it once.
			out.Total = 0
			all, err := count(ByType)
			if err != nil {
				return 0, err
			}
			for _, g := range all {
				out.Total += g.count
			}
		}
		timed := q.By == ByDay || q.By == ByWeek || q.By == ByMonth
		slices.SortFunc(out.Buckets, func(a, b Bucket) int {
			if timed {
				return cmp.Compare(a.Key, b.Key)
			}
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key))
		})
		return len(out.Buckets), nil
	})
	return out, err
}

// Entities finds entities by name or id among those that memories the
// caller may read mention.
func (s *Service) Entities(ctx context.Context, p memory.Principal, q EntityQuery) (Entities, error) {
	out := Entities{Entities: []EntityCount{}}
	params := map[string]string{"limit": strconv.Itoa(q.Limit)}
	err := s.do(ctx, p, ShapeEntities, "", params, func(r *run) (int, error) {
		var err error
		if q.Limit, err = clamp("limit", q.Limit, DefaultRows, MaxRows); err != nil {
			return 0, err
		}
		if err := checkText("q", q.Text, false); err != nil {
			return 0, err
		}
		q.Text = strings.ToLower(strings.TrimSpace(q.Text))
		rows, err := r.counted(func(class []string) ([]ClassCount, error) {
			return r.s.store.Entities(r.ctx, r.scope, q, class, MaxGroups+1)
		})
		if err != nil {
			return 0, err
		}
		for _, g := range rows {
			out.Entities = append(out.Entities, EntityCount{ID: g.key[0], Name: g.names[0], Kind: g.kinds[0], Count: g.count})
		}
		slices.SortFunc(out.Entities, func(a, b EntityCount) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.ID, b.ID))
		})
		if len(out.Entities) > q.Limit {
			out.Entities = out.Entities[:q.Limit]
		}
		return len(out.Entities), nil
	})
	return out, err
}

// Cypher refuses an analyst's own Cypher, and records that it was asked
// for (never the query text).
func (s *Service) Cypher(ctx context.Context, p memory.Principal, size int) error {
	return s.do(ctx, p, ShapeCypher, "", map[string]string{"bytes": strconv.Itoa(size)}, func(*run) (int, error) {
		return 0, ErrCypherRefused
	})
}

// subjects answers not found for a user or entity a query names (in its
// filter or as its subject) that does not exist in the caller's tenant or
// that no memory the caller may read is about or mentions.
func (r *run) subjects(f MemoryFilter, more ...NodeRef) error {
	refs := append(more, NodeRef{Label: LabelUser, ID: f.User}, NodeRef{Label: LabelEntity, ID: f.Entity})
	for _, ref := range refs {
		if ref.ID == "" {
			continue
		}
		if _, err := r.start(ref); err != nil {
			return err
		}
	}
	return nil
}

// start finds the node a query starts from. A node other than a memory
// exists for the caller only when a memory touching it passes the
// per-memory decision too, so that a fault in the compiled filter cannot
// reveal that it exists.
func (r *run) start(ref NodeRef) (Node, error) {
	n, err := r.s.store.Start(r.ctx, r.scope, ref)
	if err != nil || n.Memory != nil {
		return n, err
	}
	for _, w := range n.Witnesses {
		if ok, err := r.allowed(w); err != nil || ok {
			return n, err
		}
	}
	return Node{}, fmt.Errorf("%s: %w", ref.Label, memory.ErrNotFound)
}

// group is a counted group after decision: its key, display names and the
// sum over the classes policy allows.
type group struct {
	key, names, kinds []string
	count             int64
}

// counted runs a counting read with the caller's decision classes, refuses
// one that returns more rows than MaxGroups, decides each class once and
// sums, per group, the counts of the classes allowed. Groups left with
// nothing are dropped: a zero would say the group exists.
func (r *run) counted(read func(class []string) ([]ClassCount, error)) ([]group, error) {
	rows, err := read(classFields(r.scope))
	if err != nil {
		return nil, err
	}
	if len(rows) > MaxGroups {
		return nil, &LimitError{Field: "groups", Max: MaxGroups}
	}
	byKey := map[string]*group{}
	var order []string
	for _, c := range rows {
		ok, err := r.allowedClass(c)
		if err != nil {
			return nil, err
		}
		if !ok || c.Count == 0 {
			continue
		}
		k := strings.Join(c.Group, "\x00")
		g := byKey[k]
		if g == nil {
			g = &group{key: c.Group, names: pad(c.Names, len(c.Group)), kinds: pad(c.Kinds, len(c.Group))}
			byKey[k] = g
			order = append(order, k)
		}
		g.count += c.Count
	}
	out := make([]group, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out, nil
}

func pad(xs []string, n int) []string {
	for len(xs) < n {
		xs = append(xs, "")
	}
	return xs
}

// errorsOf returns the first error that is not nil.
func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
