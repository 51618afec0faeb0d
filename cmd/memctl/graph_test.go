package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"mneme/handlers"
	"mneme/internal/apptest"
	"mneme/memory"
)

// TestGraphCommands runs each graph command as the fixture's analyst, as a
// table and as JSON, over a readable memory and a confidential one.
func TestGraphCommands(t *testing.T) {
	f := apptest.Start(t)
	lianhua := memory.Entity{ID: "lianhua-trading", Kind: "company", Name: "Hangzhou Lianhua Trading"}
	order := memory.Entity{ID: "SO-1001", Kind: "order", Name: "SO-1001"}
	for _, w := range []struct {
		who string
		m   memory.NewMemory
	}{
		{"order-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Kind: "budget", Sensitivity: memory.SensitivityInternal,
			Content: "Alice's Q4 budget at Lianhua Trading is 150k CNY.", Entities: []memory.Entity{lianhua, order}}},
		{"finance-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Kind: "internal_cost", Sensitivity: memory.SensitivityConfidential,
			Content: "Landed cost on the Lianhua Trading contract is 82% of list.", Entities: []memory.Entity{lianhua, order}}},
	} {
		if r := f.Do(t, w.who, http.MethodPost, "/v1/memories", w.m); r.Status != http.StatusCreated {
			t.Fatalf("write: %d %s", r.Status, r.Body)
		}
	}
	memctl := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		getenv := func(name string) string {
			switch name {
			case "MNEME_URL":
				return f.URL
			case "MNEME_API_KEY":
				return f.Keys[apptest.Analyst]
			}
			return ""
		}
		err := run(context.Background(), args, getenv, &out, &errOut)
		return out.String(), err
	}
	tables := []struct {
		args []string
		want []string
	}{
		{[]string{"graph", "entities", "lian"}, []string{"ID", "lianhua-trading", "Hangzhou Lianhua Trading", "1"}},
		{[]string{"graph", "entities", "limit=5"}, []string{"ID", "lianhua-trading", "SO-1001"}},
		{[]string{"graph", "neighbourhood", "entity:lianhua-trading", "hops=2"}, []string{"HOP", "150k CNY", "user:alice", "agent:order-bot"}},
		{[]string{"graph", "paths", "lianhua-trading", "SO-1001", "max_length=2"}, []string{"entity:lianhua-trading — memory:", " — entity:SO-1001"}},
		{[]string{"graph", "co-mentions", "lianhua-trading"}, []string{"SO-1001", "1"}},
		{[]string{"graph", "timeline", "entity:lianhua-trading", "type=semantic"}, []string{"CREATED", "budget", "150k CNY"}},
		{[]string{"graph", "aggregate", "kind", "entity=lianhua-trading"}, []string{"KIND", "budget", "total"}},
		{[]string{"graph", "co-mentions", "limit=3", "type=semantic"}, []string{"lianhua-trading", "SO-1001", "1"}},
	}
	for _, tc := range tables {
		out, err := memctl(tc.args...)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
		for _, not := range []string{"82%", "internal_cost", "agent:finance-bot"} {
			if strings.Contains(out, not) {
				t.Errorf("%v: output shows %q:\n%s", tc.args, not, out)
			}
		}
	}

	out, err := memctl("graph", "aggregate", "kind", "-json")
	var agg struct {
		By      string
		Total   int
		Buckets []struct {
			Key   string
			Count int
		}
	}
	if err != nil || json.Unmarshal([]byte(out), &agg) != nil || agg.By != "kind" || agg.Total != 1 || len(agg.Buckets) != 1 || agg.Buckets[0].Key != "budget" {
		t.Errorf("aggregate -json = %q, %v", out, err)
	}
	if _, err := memctl("graph", "neighbourhood", "entity:lianhua-trading", "hops=5"); err == nil || !strings.Contains(err.Error(), "limit_exceeded") {
		t.Errorf("hops=5: %v, want limit_exceeded", err)
	}
	if _, err := memctl("graph", "timeline", "user:nobody"); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Errorf("an unknown user's timeline: %v, want not_found", err)
	}
}

// TestGraphOptionsAreWhatTheRoutesRead: each graph command's options,
// with the parameters its arguments give, are the query parameters its
// route declares in openapi.json, no more and no fewer.
func TestGraphOptionsAreWhatTheRoutesRead(t *testing.T) {
	var doc struct {
		Paths map[string]struct {
			Get struct {
				Parameters []struct{ Name, In string }
			}
		}
	}
	if err := json.Unmarshal(handlers.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	fromArgs := map[string][]string{
		"entities": {"q"}, "neighbourhood": {"from"}, "paths": {"from", "to"},
		"co-mentions": {"entity"}, "timeline": {"entity", "kind", "user"}, "aggregate": {"by"},
	}
	route := map[string]string{"aggregate": "aggregates"}
	for sub, takes := range graphTakes {
		path := "/v1/graph/" + cmp.Or(route[sub], sub)
		var declared []string
		for _, p := range doc.Paths[path].Get.Parameters {
			if p.In == "query" {
				declared = append(declared, p.Name)
			}
		}
		got := append(slices.Clone(takes), fromArgs[sub]...)
		slices.Sort(got)
		slices.Sort(declared)
		if diff := gocmp.Diff(declared, got); diff != "" {
			t.Errorf("graph %s: options and arguments (-%s declares +memctl sends):\n%s", sub, path, diff)
		}
	}
}

// TestGraphRefusesWhatItWouldDrop: an option a graph command's route does
// not read, or one given with no value, is refused before anything is
// sent, never dropped.
func TestGraphRefusesWhatItWouldDrop(t *testing.T) {
	getenv := func(name string) string {
		switch name {
		case "MNEME_URL":
			return "http://127.0.0.1:1" // nothing listens: an answer would be a connection error
		case "MNEME_API_KEY":
			return "mn_acme_analyst"
		}
		return ""
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"graph", "entities", "lianhua", "type=semantic"}, "graph entities takes no type= option; it takes limit="},
		{[]string{"graph", "entities", "lianhua", "hops=2"}, "graph entities takes no hops= option"},
		{[]string{"graph", "aggregate", "type", "limit=5"}, "graph aggregate takes no limit= option; it takes type= kind="},
		{[]string{"graph", "co-mentions", "user=alice"}, "graph co-mentions takes no user= option"},
		{[]string{"graph", "co-mentions", "lianhua-trading", "entity=SO-1001"}, "graph co-mentions takes no entity= option"},
		{[]string{"graph", "paths", "a", "b", "type=semantic"}, "graph paths takes no type= option; it takes max_length= via= limit="},
		{[]string{"graph", "timeline", "user:alice", "kind=budget"}, "graph timeline takes no kind= option"},
		{[]string{"graph", "timeline", "user:alice", "hops=2"}, "graph timeline takes no hops= option"},
		{[]string{"graph", "neighbourhood", "user:alice", "via=MENTIONS"}, "graph neighbourhood takes no via= option"},
		{[]string{"graph", "neighbourhood", "user:alice", "user="}, "user= has no value"},
		{[]string{"graph", "aggregate", "type", "since="}, "since= has no value"},
		{[]string{"graph", "frobnicate", "limit=5"}, "unknown command or wrong arguments"},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tc.args, getenv, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("memctl %v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}
