package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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
		{[]string{"graph", "neighbourhood", "entity:lianhua-trading", "hops=2"}, []string{"HOP", "150k CNY", "user:alice", "agent:order-bot"}},
		{[]string{"graph", "paths", "lianhua-trading", "SO-1001", "max_length=2"}, []string{"entity:lianhua-trading — memory:", " — entity:SO-1001"}},
		{[]string{"graph", "co-mentions", "lianhua-trading"}, []string{"SO-1001", "1"}},
		{[]string{"graph", "timeline", "entity:lianhua-trading", "type=semantic"}, []string{"CREATED", "budget", "150k CNY"}},
		{[]string{"graph", "aggregate", "kind", "entity=lianhua-trading"}, []string{"KIND", "budget", "total"}},
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
