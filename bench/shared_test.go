package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

func TestSharedKnowledgeIsDeterministicWithTheRightMix(t *testing.T) {
	const n = 2000
	ms := sharedKnowledge(7, n, 3)
	if diff := cmp.Diff(ms, sharedKnowledge(7, n, 3), cmp.AllowUnexported(sharedMemory{})); diff != "" {
		t.Fatalf("same seed, different shared knowledge (-first +second):\n%s", diff)
	}
	if cmp.Equal(ms, sharedKnowledge(8, n, 3), cmp.AllowUnexported(sharedMemory{})) {
		t.Errorf("seeds 7 and 8 gave the same shared knowledge")
	}

	places := map[string]int{}
	types := map[string]map[string]int{}
	writers := map[string]bool{}
	idem := map[string]bool{}
	for _, s := range ms {
		m := s.memory
		if m.Scope == nil {
			t.Fatalf("a memory without a scope: %+v", m)
		}
		place := m.Scope.Kind
		switch {
		case m.Scope.Kind == memory.ScopeTeam && m.Scope.ID == recallerTeam:
			place = placeOwnTeam
		case m.Scope.Kind == memory.ScopeTeam:
			place = placeOtherTeam
		}
		places[place]++
		if types[m.Scope.Kind] == nil {
			types[m.Scope.Kind] = map[string]int{}
		}
		types[m.Scope.Kind][m.Type]++

		// Who writes what, as the write policy allows it.
		switch m.Scope.Kind {
		case memory.ScopeAgent:
			if s.writer != m.Scope.ID || m.Type != memory.TypeProcedural {
				t.Errorf("agent knowledge of %s written by %q as %s, want its agent and procedural", m.Scope.ID, s.writer, m.Type)
			}
			writers[s.writer] = true
		default:
			if s.writer != "" || (m.Scope.Kind == memory.ScopeTenant) != (m.Scope.ID == "") {
				t.Errorf("%s knowledge %q written by %q, want the admin", m.Scope.Kind, m.Scope.ID, s.writer)
			}
		}
		if m.UserID != "" || m.SessionID != "" {
			t.Errorf("shared knowledge about user %q in session %q", m.UserID, m.SessionID)
		}
		if strings.ContainsAny(m.Content+m.Key, "{}") {
			t.Errorf("unfilled placeholder in %q (key %q)", m.Content, m.Key)
		}
		if memory.SensitivityRank(m.Sensitivity) < 0 || m.Importance == nil {
			t.Errorf("sensitivity %q, importance %v", m.Sensitivity, m.Importance)
		}
		if idem[m.IdempotencyKey] || m.IdempotencyKey == "" {
			t.Errorf("idempotency key %q is empty or repeated", m.IdempotencyKey)
		}
		idem[m.IdempotencyKey] = true
	}
	for _, p := range sharedMix {
		got := float64(places[p.place]) / n * 100
		if math.Abs(got-float64(p.weight)) > 3 {
			t.Errorf("%s holds %.1f%% of the shared knowledge, want about %d%% (%v)", p.place, got, p.weight, places)
		}
	}
	for _, scope := range []string{memory.ScopeTenant, memory.ScopeTeam} {
		if types[scope][memory.TypeSemantic] == 0 || types[scope][memory.TypeProcedural] == 0 {
			t.Errorf("%s knowledge is not both semantic and procedural: %v", scope, types[scope])
		}
	}
	if len(writers) != 3 {
		t.Errorf("agents with their own procedures: %v, want agent-0 … agent-2", writers)
	}
	if s := sharedSuperseded(ms); s == 0 || s > n/10 {
		t.Errorf("%d of %d superseded by key, want some and not most", s, n)
	}
}

func TestSharedStreamsKeepOrderPerScope(t *testing.T) {
	ms := sharedKnowledge(3, 500, 2)
	streams := sharedStreams("t1", ms)
	seen := map[string]bool{}
	total := 0
	for _, st := range streams {
		name := scopeName(*st.ms[0].Scope)
		if seen[name] {
			t.Errorf("scope %s in two streams", name)
		}
		seen[name] = true
		var want []memory.NewMemory
		for _, s := range ms {
			if scopeName(*s.memory.Scope) == name {
				want = append(want, s.memory)
			}
		}
		if diff := cmp.Diff(want, st.ms); diff != "" {
			t.Errorf("stream %s is not its scope's memories in order (-want +got):\n%s", name, diff)
		}
		total += len(st.ms)
		wantKind := memory.KindAdmin
		if st.ms[0].Scope.Kind == memory.ScopeAgent {
			wantKind = memory.KindAgent
		}
		if st.writer.Kind != wantKind || st.writer.Tenant != "t1" {
			t.Errorf("stream %s written by %+v, want a %s of t1", name, st.writer, wantKind)
		}
	}
	if total != len(ms) {
		t.Errorf("streams hold %d memories, want %d", total, len(ms))
	}
	if teamOf(recaller) != recallerTeam {
		t.Errorf("the recaller's team is %q, want %q", teamOf(recaller), recallerTeam)
	}
	for _, a := range []string{"agent-1", "agent-2", "agent-9"} {
		if teamOf(a) == recallerTeam {
			t.Errorf("%s shares the recaller's team", a)
		}
	}
}

func TestVersusPairsModesAndPrintsRatios(t *testing.T) {
	without := RunReport{Modes: []ModeReport{
		{Mode: modePolicy, Summary: Summary{P50: 10, P95: 20, P99: 40}, MeanHits: 5},
		{Mode: modeBareExact, Summary: Summary{P50: 2, P95: 4, P99: 8}, MeanHits: 30},
	}}
	with := RunReport{Modes: []ModeReport{
		{Mode: modeBareExact, Summary: Summary{P50: 3, P95: 4, P99: 6}, MeanHits: 30},
		{Mode: modePolicy, Summary: Summary{P50: 15, P95: 30, P99: 50}, MeanHits: 5, SharedRecalls: 42},
		{Mode: "only-with", Summary: Summary{P50: 1}},
	}}
	v := versus(2, without, with)
	want := Versus{Run: 2, Modes: []ModeVersus{
		{Mode: modeBareExact, Without: without.Modes[1].Summary, With: with.Modes[0].Summary,
			RatioP50: 1.5, RatioP95: 1, RatioP99: 0.75, MeanHitsWithout: 30, MeanHitsWith: 30,
			BareRatioP50: 1, BareRatioP95: 1, BareRatioP99: 1},
		{Mode: modePolicy, Without: without.Modes[0].Summary, With: with.Modes[1].Summary,
			RatioP50: 1.5, RatioP95: 1.5, RatioP99: 1.25, MeanHitsWithout: 5, MeanHitsWith: 5, SharedRecalls: 42,
			BareRatioP50: 1, BareRatioP95: 1.5, BareRatioP99: 1.25 / 0.75},
	}}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("versus (-want +got):\n%s", diff)
	}

	var out bytes.Buffer
	printVersus(&out, []Versus{v, versus(0, without, with)}, 300)
	text := out.String()
	for _, s := range []string{
		"run 2", "median of the runs", "of 300",
		"10.00 → 15.00 (1.50)", "20.00 → 30.00 (1.50)", "40.00 → 50.00 (1.25)", "0 → 42",
		"2.00 → 3.00 (1.50)", "8.00 → 6.00 (0.75)",
		"drift", "p50 1.00  p95 1.50  p99 1.67",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("printed comparison lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "only-with") {
		t.Errorf("a mode measured only with shared knowledge is compared:\n%s", text)
	}
}

func TestAnswersCountSharedMemories(t *testing.T) {
	res := memory.RecallResult{Memories: []memory.Recalled{
		{Memory: memory.Memory{UserID: "u1"}},
		{Memory: memory.Memory{Scope: memory.ScopeTenant}},
		{Memory: memory.Memory{Scope: memory.ScopeUser, UserID: "u1"}},
		{Memory: memory.Memory{Scope: memory.ScopeTeam, ScopeID: recallerTeam}},
	}}
	if got := answerOf(res); got != (answer{hits: 4, shared: 2}) {
		t.Errorf("answerOf = %+v, want 4 hits, 2 shared", got)
	}
	hits := []memory.Hit{{Memory: memory.Memory{Scope: memory.ScopeAgent, ScopeID: "agent-1"}}, {Memory: memory.Memory{UserID: "u1"}}}
	if got := hitsAnswer(hits); got != (answer{hits: 2, shared: 1}) {
		t.Errorf("hitsAnswer = %+v, want 2 hits, 1 shared", got)
	}
	s := sample{modes: []string{modePolicy}, latencies: [][]time.Duration{{1, 2, 3}},
		answers: [][]answer{{{hits: 5, shared: 1}, {hits: 5}, {hits: 4, shared: 3}}}}
	if r := s.report()[0]; r.SharedRecalls != 2 || r.MeanHits != 14.0/3 {
		t.Errorf("report counts %d recalls with shared knowledge and %.2f hits, want 2 and 4.67", r.SharedRecalls, r.MeanHits)
	}
}
