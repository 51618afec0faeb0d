package main

import (
	"sync"
	"time"

	"mneme/memory"
)

// stageLog collects the stage timings policy recalls report in their
// answers (search.stages_ms), so the report can say where the time goes
// inside the same calls it measured.
type stageLog struct {
	mu     sync.Mutex
	stages []memory.Stages
	paths  map[string]int
}

func (l *stageLog) add(s memory.SearchInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stages = append(l.stages, s.Stages)
	if l.paths == nil {
		l.paths = map[string]int{}
	}
	l.paths[s.VectorPath]++
}

func (l *stageLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stages, l.paths = nil, nil
}

// report summarises each stage over the collected recalls.
func (l *stageLog) report() []ModeReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	fields := []struct {
		name string
		get  func(memory.Stages) float64
	}{
		{"scope", func(s memory.Stages) float64 { return s.Scope }},
		{"embed", func(s memory.Stages) float64 { return s.Embed }},
		{"candidates (parallel)", func(s memory.Stages) float64 { return s.Candidates }},
		{"  vector", func(s memory.Stages) float64 { return s.Vector }},
		{"  fulltext", func(s memory.Stages) float64 { return s.FullText }},
		{"  graph", func(s memory.Stages) float64 { return s.Graph }},
		{"seeds expansion", func(s memory.Stages) float64 { return s.Seeds }},
		{"rank", func(s memory.Stages) float64 { return s.Rank }},
		{"rerank", func(s memory.Stages) float64 { return s.Rerank }},
		{"policy check + pack", func(s memory.Stages) float64 { return s.Policy }},
		{"total (in service)", func(s memory.Stages) float64 { return s.Total }},
	}
	out := make([]ModeReport, 0, len(fields))
	for _, f := range fields {
		ds := make([]time.Duration, len(l.stages))
		for i, s := range l.stages {
			ds[i] = time.Duration(f.get(s) * float64(time.Millisecond))
		}
		out = append(out, ModeReport{Mode: f.name, Summary: summarize(ds)})
	}
	return out
}
