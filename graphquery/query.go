package graphquery

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mneme/memory"
)

// Node labels, as the API names them.
const (
	LabelEntity  = "entity"
	LabelUser    = "user"
	LabelAgent   = "agent"
	LabelMemory  = "memory"
	LabelSession = "session"
)

// Labels are the node labels a query may start from or reach.
var Labels = []string{LabelEntity, LabelUser, LabelAgent, LabelMemory, LabelSession}

// Relationship types a query may follow.
const (
	RelAbout      = "ABOUT"
	RelWrittenBy  = "WRITTEN_BY"
	RelMentions   = "MENTIONS"
	RelInSession  = "IN_SESSION"
	RelSupersedes = "SUPERSEDES"
)

// Relations are every relationship type of the memory graph.
var Relations = []string{RelAbout, RelWrittenBy, RelMentions, RelInSession, RelSupersedes}

// NodeRef names one node: its label and its id in the caller's tenant.
type NodeRef struct {
	Label string `json:"label"`
	ID    string `json:"id"`
}

// Key is "label:id", the node's name in answers.
func (r NodeRef) Key() string { return r.Label + ":" + r.ID }

// Node is one node of an answer. A memory node carries the memory, which
// the caller may read; other nodes carry their name and kind.
type Node struct {
	Key    string         `json:"key"`
	Label  string         `json:"label"`
	ID     string         `json:"id"`
	Name   string         `json:"name,omitempty"`
	Kind   string         `json:"kind,omitempty"`
	Hop    int            `json:"hop"`
	Memory *memory.Memory `json:"memory,omitempty"`
	// Witnesses are memories in scope that touch a start node other than
	// a memory (Store.Start), for the per-memory check; never answered.
	Witnesses []memory.Memory `json:"-"`
}

// StartWitnesses is how many memories touching a start node Store.Start
// returns with it.
const StartWitnesses = 20

// Ref returns the node's reference.
func (n Node) Ref() NodeRef { return NodeRef{Label: n.Label, ID: n.ID} }

// Edge is one relationship, from and to node keys. Edges run from a memory
// to what it is about, was written by, mentions or belongs to, and from a
// newer version to the one it supersedes.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Type string `json:"type"`
}

// MemoryFilter narrows the memories a query considers; zero values match
// everything.
type MemoryFilter struct {
	Types        []string  `json:"types,omitempty"`
	Kinds        []string  `json:"kinds,omitempty"`
	Statuses     []string  `json:"statuses,omitempty"`
	Agents       []string  `json:"agents,omitempty"`
	Sensitivity  []string  `json:"sensitivities,omitempty"`
	User         string    `json:"user,omitempty"`
	Entity       string    `json:"entity,omitempty"`
	Since, Until time.Time `json:"-"`
}

// NeighbourhoodQuery asks for the nodes within Hops of From.
type NeighbourhoodQuery struct {
	From   NodeRef
	Hops   int // 1 to MaxHops; DefaultHops when 0
	Limit  int // most nodes; DefaultNodes when 0
	Filter MemoryFilter
}

// Graph is a neighbourhood: nodes and the edges between them. Truncated
// says the node limit stopped the expansion.
type Graph struct {
	Nodes     []Node `json:"nodes"`
	Edges     []Edge `json:"edges"`
	Truncated bool   `json:"truncated"`
}

// PathQuery asks for the shortest paths between two entities through
// memories the caller may read.
type PathQuery struct {
	From, To  string   // entity ids
	MaxLength int      // most relationships in a path; DefaultPathLength when 0
	Via       []string // relationship types to follow; MENTIONS and SUPERSEDES when empty
	Limit     int      // most paths; DefaultPaths when 0
}

// Path is one path: its nodes in order and the edges between them.
type Path struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Paths are the shortest paths found, all of the same length.
type Paths struct {
	Paths []Path `json:"paths"`
}

// CoMentionQuery asks which entities appear in the same memories: with
// Entity, the entities mentioned with it; without, the pairs most often
// mentioned together.
type CoMentionQuery struct {
	Entity string
	Limit  int // most rows; DefaultRows when 0
	Filter MemoryFilter
}

// EntityCount is an entity with how many readable memories count for it.
type EntityCount struct {
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	Kind  string `json:"kind,omitempty"`
	Count int64  `json:"count"`
}

// EntityRef names an entity.
type EntityRef struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Kind string `json:"kind,omitempty"`
}

// CoMention is a pair of entities and how many readable memories mention
// both.
type CoMention struct {
	A     EntityRef `json:"a"`
	B     EntityRef `json:"b"`
	Count int64     `json:"count"`
}

// CoMentions is the answer to a CoMentionQuery.
type CoMentions struct {
	Pairs []CoMention `json:"pairs"`
}

// TimelineQuery asks for the memories of one subject over time — a user's,
// those mentioning an entity, or those of a kind — every version included.
type TimelineQuery struct {
	User, Entity, Kind string // exactly one
	Limit              int    // most memories; DefaultRows when 0
	Filter             MemoryFilter
}

// Timeline is the memories of a subject, oldest first. A memory's
// Supersedes names the version it replaced when that version is in the
// timeline too.
type Timeline struct {
	Memories  []memory.Memory `json:"memories"`
	Truncated bool            `json:"truncated"`
}

// Aggregate dimensions.
const (
	ByType        = "type"
	ByKind        = "kind"
	ByAgent       = "agent"
	ByUser        = "user"
	ByEntity      = "entity"
	ByStatus      = "status"
	BySensitivity = "sensitivity"
	ByDay         = "day"
	ByWeek        = "week"
	ByMonth       = "month"
)

// Dimensions are what an aggregate may count by.
var Dimensions = []string{ByType, ByKind, ByAgent, ByUser, ByEntity, ByStatus, BySensitivity, ByDay, ByWeek, ByMonth}

// AggregateQuery asks how many readable memories fall in each group.
type AggregateQuery struct {
	By     string
	Filter MemoryFilter
}

// Bucket is one group of an aggregate. For entities Name holds the entity's
// name.
type Bucket struct {
	Key   string `json:"key"`
	Name  string `json:"name,omitempty"`
	Count int64  `json:"count"`
}

// Aggregate is the answer to an AggregateQuery, largest groups first (time
// buckets in time order). Total is how many readable memories matched;
// by entity a memory counts once per entity it mentions, and once in Total.
type Aggregate struct {
	By      string   `json:"by"`
	Buckets []Bucket `json:"buckets"`
	Total   int64    `json:"total"`
}

// EntityQuery searches entities by name or id.
type EntityQuery struct {
	Text  string
	Limit int // most entities; DefaultRows when 0
}

// Entities are the entities found, each with how many readable memories
// mention it. An entity only unreadable memories mention is not found.
type Entities struct {
	Entities []EntityCount `json:"entities"`
}

// ClassCount is a row of a counting query: how many memories of one group
// share one decision class, with one of them to decide for all. Group is
// the group's key columns; Names carries display names for them.
type ClassCount struct {
	Group []string
	Names []string
	Kinds []string
	Class []string
	Count int64
	Rep   memory.Resource
}

// ParseRef reads "label:id", the form every graph route names a node in:
// the label is one of Labels and the id is all after the first colon, so
// an entity whose id holds a colon is entity:trigger:破损.
func ParseRef(s string) (NodeRef, error) { return parseRef("from", s) }

func parseRef(field, s string) (NodeRef, error) {
	label, id, ok := strings.Cut(s, ":")
	if !ok || label == "" || id == "" {
		return NodeRef{}, memory.Invalid(field, "must be label:id, e.g. entity:lianhua-trading")
	}
	if !slices.Contains(Labels, label) {
		return NodeRef{}, memory.Invalid(field, fmt.Sprintf("label %q must be one of %s (an entity id holding a colon is written entity:ID)", label, strings.Join(Labels, ", ")))
	}
	return NodeRef{Label: label, ID: id}, nil
}

// parseEntity reads one end of a path: entity:ID as a neighbourhood names
// it, or the entity's id alone when it holds no colon.
func parseEntity(field, s string) (string, error) {
	if s == "" || !strings.Contains(s, ":") {
		return s, nil // checkText refuses a missing one
	}
	ref, err := parseRef(field, s)
	if err != nil {
		return "", err
	}
	if ref.Label != LabelEntity {
		return "", memory.Invalid(field, "paths run between entities: must be entity:ID, e.g. entity:lianhua-trading, not a "+ref.Label)
	}
	return ref.ID, nil
}
