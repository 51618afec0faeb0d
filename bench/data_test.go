package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mneme/memory"
)

func TestGeneratorIsDeterministicAndComplete(t *testing.T) {
	now := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	gen := func() ([]memory.Memory, []string) {
		g := newGenerator(42, "bench-test", 3, now)
		users := g.users(4)
		var ms []memory.Memory
		for _, u := range users {
			ms = append(ms, g.memories(u, 200)...)
		}
		var qs []string
		for i := range 50 {
			qs = append(qs, g.question(users[i%len(users)]))
		}
		return ms, qs
	}
	ms, qs := gen()
	again, qsAgain := gen()
	// Ids are random on purpose; everything else follows the seed.
	ignoreID := cmpopts.IgnoreFields(memory.Memory{}, "ID")
	if diff := cmp.Diff(ms, again, ignoreID); diff != "" {
		t.Errorf("same seed, different memories (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(qs, qsAgain); diff != "" {
		t.Errorf("same seed, different questions (-first +second):\n%s", diff)
	}

	types, agents := map[string]int{}, map[string]int{}
	keyed := 0
	for _, m := range ms {
		types[m.Type]++
		agents[m.AgentID]++
		if m.Key != "" {
			keyed++
		}
		if strings.ContainsAny(m.Content, "{}") {
			t.Errorf("unfilled placeholder in %q", m.Content)
		}
		if memory.SensitivityRank(m.Sensitivity) < 0 {
			t.Errorf("unknown sensitivity %q", m.Sensitivity)
		}
	}
	for _, typ := range memory.Types {
		if types[typ] == 0 {
			t.Errorf("no memory of type %s in %v", typ, types)
		}
	}
	if len(agents) != 3 {
		t.Errorf("agents = %v, want agent-0 … agent-2", agents)
	}
	if keyed == 0 || superseded([][]memory.Memory{ms}) == 0 {
		t.Errorf("no supersession: %d keyed memories", keyed)
	}
	for _, q := range qs {
		if strings.ContainsAny(q, "{}") {
			t.Errorf("unfilled placeholder in question %q", q)
		}
	}
	byUser := map[string][]time.Time{}
	for _, m := range ms {
		byUser[m.UserID] = append(byUser[m.UserID], m.CreatedAt)
	}
	for u, ts := range byUser {
		if !slices.IsSortedFunc(ts, func(a, b time.Time) int { return a.Compare(b) }) {
			t.Errorf("memories of %s are not oldest first", u)
		}
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaults", nil, ""},
		{"the documented run", []string{"-memories", "10000", "-users", "100", "-agents", "3", "-runs", "3"}, ""},
		{"no memories", []string{"-memories", "0"}, "-memories"},
		{"more users than memories", []string{"-memories", "10", "-users", "20"}, "-users"},
		{"k above recall's maximum", []string{"-k", "51"}, "-k"},
		{"negative warm-up", []string{"-warmup", "-1"}, "-warmup"},
		{"stray argument", []string{"extra"}, "unexpected"},
		{"shared knowledge", []string{"-memories", "2000", "-shared", "200"}, ""},
		{"some modes", []string{"-modes", "policy, bare-exact"}, ""},
		{"an unknown mode", []string{"-modes", "policy,bare"}, "-modes"},
		{"no mode", []string{"-modes", ""}, "-modes"},
		{"negative shared knowledge", []string{"-shared", "-1"}, "-shared"},
		{"shared knowledge in a reused tenant", []string{"-shared", "10", "-tenant", "bench-0"}, "-shared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFlags(tc.args, io.Discard)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
}
