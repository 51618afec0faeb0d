package graphquery_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"mneme/graphquery"
	"mneme/memory"
)

// TestPathsNameEntitiesAsNeighbourhoodsDo: a path's ends are written
// entity:ID as a neighbourhood's start is, or as the entity's id alone;
// another label, an unknown one or a reference without an id is refused
// as the argument it is, never looked up as an entity that is not there.
func TestPathsNameEntitiesAsNeighbourhoodsDo(t *testing.T) {
	for _, c := range []struct {
		query, from, to string
		field, reason   string // the refusal, when there is one
	}{
		{query: "from=entity:lianhua-trading&to=entity:east-china", from: "lianhua-trading", to: "east-china"},
		{query: "from=lianhua-trading&to=east-china", from: "lianhua-trading", to: "east-china"},
		{query: "from=entity:lianhua-trading&to=SO-1001", from: "lianhua-trading", to: "SO-1001"},
		{query: "from=entity:trigger:破损&to=east-china", from: "trigger:破损", to: "east-china"},
		{query: "from=user:alice&to=east-china", field: "from", reason: "paths run between entities"},
		{query: "from=lianhua-trading&to=memory:m1", field: "to", reason: "paths run between entities"},
		{query: "from=entiti:lianhua-trading&to=east-china", field: "from", reason: `label "entiti" must be one of`},
		{query: "from=trigger:破损&to=east-china", field: "from", reason: "entity:ID"},
		{query: "from=entity:&to=east-china", field: "from", reason: "must be label:id"},
		{query: "from=lianhua-trading&to=:east-china", field: "to", reason: "must be label:id"},
	} {
		t.Run(c.query, func(t *testing.T) {
			v, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			q, err := graphquery.ParsePaths(v)
			var inv *memory.InvalidError
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.field == "" && (q.From != c.from || q.To != c.to):
				t.Errorf("from %q to %q, want %q to %q", q.From, q.To, c.from, c.to)
			case c.field != "" && !errors.As(err, &inv):
				t.Fatalf("err = %v, want an invalid %s", err, c.field)
			case c.field != "" && (inv.Field != c.field || !strings.Contains(inv.Reason, c.reason)):
				t.Errorf("refused %s: %s; want %s: …%s…", inv.Field, inv.Reason, c.field, c.reason)
			}
		})
	}
	// A neighbourhood reads the same form the same way.
	q, err := graphquery.ParseNeighbourhood(url.Values{"from": {"entity:trigger:破损"}})
	if err != nil || q.From != (graphquery.NodeRef{Label: graphquery.LabelEntity, ID: "trigger:破损"}) {
		t.Errorf("neighbourhood from = %+v, %v", q.From, err)
	}
}
