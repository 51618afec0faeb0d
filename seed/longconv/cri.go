package longconv

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Categories of the CRI benchmark's questions that name their evidence
// turns: a belief that changed (its topic, asked as the benchmark asks it,
// answered by the turns before and after the change) and a conflict (its
// topic, answered by the contradicting turns).
const (
	CategoryChange   = "belief-change"
	CategoryConflict = "conflict"
)

// criMessage is one line of a CRI dataset's conversations.jsonl.
type criMessage struct {
	ID        int    `json:"message_id"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	Timestamp string `json:"timestamp"`
	Session   string `json:"session_id"`
}

// criTruth is the part of a CRI dataset's ground_truth.json that names
// evidence messages. Its temporal facts, profile and query-relevance pairs
// name facts, not turns, and are left out.
type criTruth struct {
	Changes []struct {
		QueryTopic string `json:"query_topic"`
		Key        []int  `json:"key_messages"`
	} `json:"changes"`
	Conflicts []struct {
		ID       string `json:"conflict_id"`
		Topic    string `json:"topic"`
		Messages []int  `json:"introduced_at_messages"`
	} `json:"conflicts"`
}

// readCRIDatasets reads every CRI dataset under dir (a directory holding
// conversations.jsonl and ground_truth.json, or one whose subdirectories
// do, as scripts/longconv.sh leaves them). Each dataset is one
// conversation; its name is the conversation's id and its user's.
func readCRIDatasets(dir string) (Data, error) {
	d := Data{Format: FormatCRI}
	var dirs []string
	if isDataset(dir) {
		dirs = []string{dir}
	} else {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return d, err
		}
		for _, e := range entries {
			if sub := filepath.Join(dir, e.Name()); e.IsDir() && isDataset(sub) {
				dirs = append(dirs, sub)
			}
		}
	}
	if len(dirs) == 0 {
		return d, fmt.Errorf("longconv: no %s, nor conversations.jsonl with ground_truth.json, in %s or its subdirectories (scripts/locomo.sh and scripts/longconv.sh fetch them)", locomoFile, dir)
	}
	for _, sub := range dirs {
		c, q, err := readCRI(sub)
		if err != nil {
			return Data{}, fmt.Errorf("longconv: %s: %w", sub, err)
		}
		d.Conversations, d.Questions = append(d.Conversations, c), append(d.Questions, q...)
	}
	return d, nil
}

func isDataset(dir string) bool {
	for _, f := range []string{"conversations.jsonl", "ground_truth.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

func readCRI(dir string) (Conversation, []Question, error) {
	name := filepath.Base(dir)
	c := Conversation{ID: name, User: name}
	f, err := os.Open(filepath.Join(dir, "conversations.jsonl"))
	if err != nil {
		return c, nil, err
	}
	defer f.Close()
	turns := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var m criMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return c, nil, fmt.Errorf("conversations.jsonl line %d: %w", line, err)
		}
		at, err := time.Parse("2006-01-02T15:04:05", m.Timestamp)
		if err != nil {
			return c, nil, fmt.Errorf("conversations.jsonl line %d: timestamp: %w", line, err)
		}
		id := strconv.Itoa(m.ID)
		if m.Session == "" || m.Content == "" || turns[id] {
			return c, nil, fmt.Errorf("conversations.jsonl line %d: no session, no content or a repeated message id", line)
		}
		turns[id] = true
		if n := len(c.Sessions); n == 0 || c.Sessions[n-1].ID != m.Session {
			c.Sessions = append(c.Sessions, Session{ID: m.Session})
		}
		s := &c.Sessions[len(c.Sessions)-1]
		s.Turns = append(s.Turns, Turn{ID: id, Role: m.Role, Content: m.Content, At: at.UTC()})
	}
	if err := sc.Err(); err != nil {
		return c, nil, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "ground_truth.json"))
	if err != nil {
		return c, nil, err
	}
	var truth criTruth
	if err := json.Unmarshal(raw, &truth); err != nil {
		return c, nil, fmt.Errorf("ground_truth.json: %w", err)
	}
	var qs []Question
	add := func(id, query, category string, evidence []int) {
		q := Question{ID: id, Conversation: c.ID, Query: query, Category: category}
		for _, e := range evidence {
			if s := strconv.Itoa(e); !slices.Contains(q.Evidence, s) {
				q.Evidence = append(q.Evidence, s)
			}
		}
		qs = append(qs, q)
	}
	for i, ch := range truth.Changes {
		add(fmt.Sprintf("change-%02d", i+1), ch.QueryTopic, CategoryChange, ch.Key)
	}
	for _, cf := range truth.Conflicts {
		add(cf.ID, cf.Topic, CategoryConflict, cf.Messages)
	}
	var errs []error
	for _, q := range qs {
		if q.Query == "" || len(q.Evidence) == 0 {
			errs = append(errs, fmt.Errorf("question %s has no query or no evidence", q.ID))
		}
		for _, e := range q.Evidence {
			if !turns[e] {
				errs = append(errs, fmt.Errorf("question %s names message %s, which the conversation lacks", q.ID, e))
			}
		}
	}
	return c, qs, errors.Join(errs...)
}
