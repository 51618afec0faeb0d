package main

import (
	"fmt"
	"slices"
	"time"

	"mneme/memory"
	"mneme/seed"
	"mneme/seed/longconv"
)

// distractorTurns reads the user turns of the long conversations in dir
// (scripts/longconv.sh): everyday sentences nobody here wrote, about
// another person's life.
func distractorTurns(dir string) ([]string, error) {
	cs, _, err := longconv.Read(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range cs {
		for _, s := range c.Sessions {
			for _, t := range s.Turns {
				if t.Role == "user" && t.Content != "" {
					out = append(out, t.Content)
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no user turns in %s", dir)
	}
	return out, nil
}

// withDistractors returns a copy of ds in which every user also holds n
// episodic memories taken in turn from texts, dated with the user's newest
// memory, so that a question meets a user's memories among many that answer
// nothing, as it does for a user with a long history. start is where the
// texts are taken from, so that datasets draw different ones.
func withDistractors(ds *seed.Dataset, texts []string, n, start int) *seed.Dataset {
	c := *ds
	c.Memories = slices.Clone(ds.Memories)
	newest := map[string]seed.Memory{}
	var users []string
	for _, m := range ds.Memories {
		if m.UserID == "" {
			continue
		}
		if old, ok := newest[m.UserID]; !ok {
			users = append(users, m.UserID)
			newest[m.UserID] = m
		} else if m.CreatedAt.After(old.CreatedAt) {
			newest[m.UserID] = m
		}
	}
	next := start
	for _, u := range users {
		last := newest[u]
		for i := range n {
			c.Memories = append(c.Memories, seed.Memory{
				Ref: fmt.Sprintf("distractor-%s-%d", u, i), UserID: u, AgentID: last.AgentID,
				Type: memory.TypeEpisodic, Content: texts[next%len(texts)], Sensitivity: memory.SensitivityInternal,
				Importance: 0.5, Confidence: 1, Source: "conversation", CreatedAt: last.CreatedAt.Add(-time.Duration(i) * time.Minute),
			})
			next++
		}
	}
	return &c
}
