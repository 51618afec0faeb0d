package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Analysts' graph queries (/v1/graph): analysts and admins only, every
// answer narrowed by the caller's read policy.

// GraphNode is a node of a graph answer; Memory is set for memories.
type GraphNode struct {
	Key    string  `json:"key"`
	Label  string  `json:"label"`
	ID     string  `json:"id"`
	Name   string  `json:"name,omitempty"`
	Kind   string  `json:"kind,omitempty"`
	Hop    int     `json:"hop"`
	Memory *Memory `json:"memory,omitempty"`
}

// GraphEdge is a relationship between two node keys.
type GraphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Type string `json:"type"`
}

// Graph is a neighbourhood.
type Graph struct {
	Nodes     []GraphNode `json:"nodes"`
	Edges     []GraphEdge `json:"edges"`
	Truncated bool        `json:"truncated"`
}

// GraphPath is one path between two entities.
type GraphPath struct {
	Nodes []GraphNode `json:"nodes"`
	Edges []GraphEdge `json:"edges"`
}

// EntityRef names an entity.
type EntityRef struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Kind string `json:"kind,omitempty"`
}

// EntityCount is an entity with how many readable memories count for it.
type EntityCount struct {
	EntityRef
	Count int64 `json:"count"`
}

// CoMention is two entities and how many readable memories mention both.
type CoMention struct {
	A     EntityRef `json:"a"`
	B     EntityRef `json:"b"`
	Count int64     `json:"count"`
}

// Timeline is memories over time, oldest first.
type Timeline struct {
	Memories  []Memory `json:"memories"`
	Truncated bool     `json:"truncated"`
}

// Bucket is one group of an aggregate.
type Bucket struct {
	Key   string `json:"key"`
	Name  string `json:"name,omitempty"`
	Count int64  `json:"count"`
}

// Aggregate is counts of readable memories by one dimension.
type Aggregate struct {
	By      string   `json:"by"`
	Buckets []Bucket `json:"buckets"`
	Total   int64    `json:"total"`
}

// GraphFilter narrows the memories a graph query considers; zero values
// match everything.
type GraphFilter struct {
	Types, Kinds, Statuses, Agents, Sensitivities []string
	User, Entity                                  string
	Since, Until                                  time.Time
	Limit                                         int
}

func (f GraphFilter) values() url.Values {
	q := url.Values{}
	set := func(k string, vs []string) {
		if len(vs) > 0 {
			q.Set(k, strings.Join(vs, ","))
		}
	}
	set("type", f.Types)
	set("kind", f.Kinds)
	set("status", f.Statuses)
	set("agent", f.Agents)
	set("sensitivity", f.Sensitivities)
	if f.User != "" {
		q.Set("user", f.User)
	}
	if f.Entity != "" {
		q.Set("entity", f.Entity)
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.UTC().Format(time.RFC3339))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return q
}

func (c *Client) graph(ctx context.Context, shape string, q url.Values, out any) error {
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/v1/graph/" + shape, query: q}, out)
	return err
}

// GraphEntities finds entities whose name or id contains text.
func (c *Client) GraphEntities(ctx context.Context, text string, limit int) ([]EntityCount, error) {
	q := GraphFilter{Limit: limit}.values()
	q.Set("q", text)
	var out struct {
		Entities []EntityCount `json:"entities"`
	}
	err := c.graph(ctx, "entities", q, &out)
	return out.Entities, err
}

// GraphNeighbourhood returns the nodes within hops (1–3; 0 for the
// server's default) of from, written label:id (entity:acme, user:alice).
func (c *Client) GraphNeighbourhood(ctx context.Context, from string, hops int, f GraphFilter) (Graph, error) {
	q := f.values()
	q.Set("from", from)
	if hops > 0 {
		q.Set("hops", strconv.Itoa(hops))
	}
	var out Graph
	err := c.graph(ctx, "neighbourhood", q, &out)
	return out, err
}

// GraphPaths returns the shortest paths between two entities, each named
// entity:ID or by its id alone when that holds no colon, through readable
// memories, of at most maxLength relationships (0: the default) of the
// types via (none: MENTIONS and SUPERSEDES).
func (c *Client) GraphPaths(ctx context.Context, from, to string, maxLength int, via []string, limit int) ([]GraphPath, error) {
	q := GraphFilter{Limit: limit}.values()
	q.Set("from", from)
	q.Set("to", to)
	if maxLength > 0 {
		q.Set("max_length", strconv.Itoa(maxLength))
	}
	if len(via) > 0 {
		q.Set("via", strings.Join(via, ","))
	}
	var out struct {
		Paths []GraphPath `json:"paths"`
	}
	err := c.graph(ctx, "paths", q, &out)
	return out.Paths, err
}

// GraphCoMentions returns the entities mentioned with entity, or without
// it the pairs most often mentioned together.
func (c *Client) GraphCoMentions(ctx context.Context, entity string, f GraphFilter) ([]CoMention, error) {
	q := f.values()
	if entity != "" {
		q.Set("entity", entity)
	}
	var out struct {
		Pairs []CoMention `json:"pairs"`
	}
	err := c.graph(ctx, "co-mentions", q, &out)
	return out.Pairs, err
}

// GraphTimeline returns the memories of a user, an entity or a kind over
// time: subject is "user", "entity" or "kind".
func (c *Client) GraphTimeline(ctx context.Context, subject, id string, f GraphFilter) (Timeline, error) {
	q := f.values()
	q.Set(subject, id)
	var out Timeline
	err := c.graph(ctx, "timeline", q, &out)
	return out, err
}

// GraphAggregate counts readable memories by one dimension (type, kind,
// agent, user, entity, status, sensitivity, day, week or month).
func (c *Client) GraphAggregate(ctx context.Context, by string, f GraphFilter) (Aggregate, error) {
	q := f.values()
	q.Set("by", by)
	var out Aggregate
	err := c.graph(ctx, "aggregates", q, &out)
	return out, err
}
