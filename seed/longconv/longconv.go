// Package longconv measures recall over long multi-session conversations
// that nobody here wrote: each conversation is written turn by turn through
// the memory service's write pipeline, one memory per turn, dated when the
// turn was said and filed under its session; each question is then asked
// through real recall as the conversation's user, and scored by the share
// of its evidence turns among the first K memories (evidence recall@K).
//
// The data comes from a registry package (scripts/longconv.sh); Read knows
// its format. Questions fall into a tuning part and a held-out part by a
// fixed hash of their id, and the report gives each apart, by category and
// by how many sessions a question's evidence spans.
package longconv

import (
	"fmt"
	"hash/fnv"
	"time"
)

// K is how many memories each question asks for.
const K = 5

// Splits of the questions.
const (
	SplitTune    = "tune"
	SplitHeldOut = "heldout"
)

// Conversation is one long conversation between a user and whoever they
// talk to, in sessions.
type Conversation struct {
	ID string
	// User is whose memories the turns become and who asks the questions.
	User     string
	Sessions []Session
}

// Session is one sitting of a conversation.
type Session struct {
	ID    string
	Turns []Turn
}

// Turn is one message. Speaker, when set, is the name the content is
// written under ("Mia: …"): in a conversation between two people the role
// alone does not say who spoke.
type Turn struct {
	ID      string
	Role    string
	Speaker string
	Content string
	At      time.Time
}

// Question asks about a conversation; its answer lies in the Evidence
// turns.
type Question struct {
	ID           string
	Conversation string
	Query        string
	// Category is the dataset's own label of what the question tests.
	Category string
	Evidence []string
}

// Split is the part of the questions q belongs to: a fixed hash of its
// conversation and id, so that no tuning ever looks at the held-out part
// and adding questions never moves one from a part to the other.
func Split(q Question) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s", q.Conversation, q.ID)
	if h.Sum32()%2 == 0 {
		return SplitHeldOut
	}
	return SplitTune
}

// Turns returns the number of turns of c.
func (c Conversation) Turns() int {
	n := 0
	for _, s := range c.Sessions {
		n += len(s.Turns)
	}
	return n
}

// Truncate keeps the first n turns of every conversation (all of them when
// n is 0) and the questions whose evidence all lies among the turns kept.
func Truncate(cs []Conversation, qs []Question, n int) ([]Conversation, []Question) {
	if n <= 0 {
		return cs, qs
	}
	kept := map[string]bool{}
	out := make([]Conversation, 0, len(cs))
	for _, c := range cs {
		short := Conversation{ID: c.ID, User: c.User}
		left := n
		for _, s := range c.Sessions {
			if left == 0 {
				break
			}
			ts := s.Turns[:min(left, len(s.Turns))]
			left -= len(ts)
			short.Sessions = append(short.Sessions, Session{ID: s.ID, Turns: ts})
			for _, t := range ts {
				kept[c.ID+"/"+t.ID] = true
			}
		}
		out = append(out, short)
	}
	var keep []Question
	for _, q := range qs {
		all := len(q.Evidence) > 0
		for _, e := range q.Evidence {
			all = all && kept[q.Conversation+"/"+e]
		}
		if all {
			keep = append(keep, q)
		}
	}
	return out, keep
}
