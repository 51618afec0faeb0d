package relevance

import (
	"math"
	"testing"
)

func TestContains(t *testing.T) {
	tests := []struct {
		text, kw string
		want     bool
	}{
		{"membership expires in march", "expire", true},
		{"pays on 30-day terms", "day", true},
		{"sent today", "day", false},
		{"today and the next day", "day", true},
		{"订单 so-1004 已发货", "订单", true},
		{"生成销售订单", "订单", true},
		{"", "x", false},
		{"x", "", false},
	}
	for _, tt := range tests {
		if got := Contains(tt.text, tt.kw); got != tt.want {
			t.Errorf("Contains(%q, %q) = %v, want %v", tt.text, tt.kw, got, tt.want)
		}
	}
}

func TestAnalyseWeighsRareWordsHigher(t *testing.T) {
	docs := []string{"invoice on 30-day terms", "delivery day moved", "day off"}
	q := Analyse([]string{"invoice", "Day", "xyz"}, docs, 10)
	w := map[string]Term{}
	for _, t := range q.Terms {
		w[t.Text] = t
	}
	if !(w["invoice"].Weight > w["day"].Weight) {
		t.Errorf("rare invoice %v should outweigh common day %v", w["invoice"].Weight, w["day"].Weight)
	}
	if w["xyz"].Seen || !w["day"].Seen || w["xyz"].Weight != w["invoice"].Weight {
		t.Errorf("unseen word: %+v, want the weight of a word one memory holds (%v)", w["xyz"], w["invoice"].Weight)
	}
	if got := q.Coverage("invoice on 30-day terms"); math.Abs(got-(w["invoice"].Weight+w["day"].Weight)/(2*w["invoice"].Weight+w["day"].Weight)) > 1e-12 {
		t.Errorf("coverage = %v", got)
	}
	if u := q.Unseen(); u <= 0 || u >= 0.5 {
		t.Errorf("unseen = %v, want the share of xyz", u)
	}
}

func TestHoldsIdentifier(t *testing.T) {
	q := Question{Identifiers: []string{"so-3401"}}
	tests := []struct {
		content string
		want    bool
	}{
		{"Order SO-3401 (26 cartons) shipped from the Kunshan warehouse.", true},
		{"订单 so-3401 已发货", true},
		{"order so-34012 shipped", false}, // another order
		{"order xso-3401 shipped", false},
		{"order so-3402 shipped from the warehouse", false},
	}
	for _, tt := range tests {
		if got := q.HoldsIdentifier(tt.content); got != tt.want {
			t.Errorf("HoldsIdentifier(%q) = %v, want %v", tt.content, got, tt.want)
		}
	}
}

func TestIsSocial(t *testing.T) {
	tests := []struct {
		kws  []string
		want bool
	}{
		{[]string{"thank", "nice", "day"}, true},
		{[]string{"thanks"}, true},
		{[]string{"好"}, true},
		{[]string{"谢谢"}, true},
		{[]string{"好的"}, true},
		{[]string{"day", "delivery"}, false},
		{[]string{"xyz", "123", "订单"}, false},
		{[]string{"好", "规矩"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := IsSocial(tt.kws); got != tt.want {
			t.Errorf("IsSocial(%q) = %v, want %v", tt.kws, got, tt.want)
		}
	}
}

func TestGates(t *testing.T) {
	rules := Rules{VectorFloor: 0.25, StrongFloor: 0.35, UnseenMax: 0.5, Coverage: 0.5, AgreedCoverage: 0.25, AgreeFloor: 0.15, SubjectFloor: 0.1, LeadFloor: 0.12, LeadMargin: 0.08, NeighbourFloor: 0.02}
	term := func(text string, weight float64, seen bool) Term { return Term{Text: text, Weight: weight, Seen: seen} }
	known := Question{Requests: true, Terms: []Term{term("budget", 2, true), term("q4", 1, true)}}
	foreign := Question{Terms: []Term{term("xyz", 3, false), term("123", 3, false), term("订单", 1, true)}}
	social := Question{Social: true, Terms: []Term{term("day", 1, true)}}
	aboutUser := Question{AboutUser: true, Terms: []Term{term("firm", 3, false)}}
	topical := Question{Topical: true, Requests: true, Terms: []Term{term("big", 1, false), term("orders", 1, true)}}
	asking := Question{Asks: true, Refers: true, Terms: []Term{term("damaged", 1, false), term("seats", 1, false)}}
	dealing := Question{AboutDealing: true, Terms: []Term{term("desk", 1, false), term("order", 5, true)}}
	statement := Question{Refers: true, Terms: []Term{term("office", 2, true)}} // "I'm at the office now"
	tests := []struct {
		name string
		q    Question
		e    Evidence
		want string
	}{
		{"strong similarity", foreign, Evidence{Vector: true, Similarity: 0.5}, GateVector},
		{"weak similarity, known words", known, Evidence{Vector: true, Similarity: 0.27}, GateVector},
		{"weak similarity to a question about unknown things", foreign, Evidence{Vector: true, Similarity: 0.27, Coverage: 1.0 / 7, Text: true}, ""},
		// Unseen counts the user's memories, which know nothing of the
		// tenant's rules.
		{"weak similarity of shared knowledge to a question about words the user's memories lack", foreign, Evidence{Vector: true, Similarity: 0.27, Shared: true}, GateVector},
		{"shared knowledge below the floor", foreign, Evidence{Vector: true, Similarity: 0.2, Shared: true}, ""},
		{"below the floor", known, Evidence{Vector: true, Similarity: 0.2}, ""},
		{"full text covering most words", known, Evidence{Text: true, Coverage: 2.0 / 3}, GateText},
		{"full text on one common word", foreign, Evidence{Text: true, Coverage: 1.0 / 7}, ""},
		{"full text on half the words, the meaning unrelated", known, Evidence{Text: true, Coverage: 0.5, Vector: true, Similarity: -0.002}, ""},
		{"full text on half the words, the meaning not unrelated", known, Evidence{Text: true, Coverage: 0.5, Vector: true, Similarity: 0.05}, GateText},
		{"full text on every word, the meaning unrelated", known, Evidence{Text: true, Coverage: 1, Vector: true, Similarity: -0.002}, GateText},
		{"full text with the vector side agreeing", known, Evidence{Text: true, Coverage: 1.0 / 3, Vector: true, Similarity: 0.2}, GateText},
		{"full text with the vector side agreeing, on a question about unknown things", foreign, Evidence{Text: true, Coverage: 0.3, Vector: true, Similarity: 0.27}, ""},
		{"full text on every word of a statement, the meaning far", statement, Evidence{Text: true, Coverage: 1, Vector: true, Similarity: 0.1}, ""},
		{"full text on every word of a statement, the meaning near", statement, Evidence{Text: true, Coverage: 1, Vector: true, Similarity: 0.2}, GateText},
		{"full text with the vector side not agreeing", known, Evidence{Text: true, Coverage: 1.0 / 3, Vector: true, Similarity: 0.1}, ""},
		{"full text on every word of a question about the world, the meaning far", Question{Asks: true, Terms: known.Terms}, Evidence{Text: true, Coverage: 1, Vector: true, Similarity: 0.1}, ""},
		{"full text on every word of a question about the world, the meaning near", Question{Asks: true, Terms: known.Terms}, Evidence{Text: true, Coverage: 1, Vector: true, Similarity: 0.2}, GateText},
		{"full text on every word of a question about things in general, referring", Question{Asks: true, Refers: true, World: true, Terms: known.Terms}, Evidence{Text: true, Coverage: 1, Vector: true, Similarity: 0.1}, ""},
		// "what's the weather in Hangzhou this week?" shares the city with a
		// delivery note, and the city pulls the two near: no answer still.
		{"full text on every word of a question about things in general, the meaning near", Question{Asks: true, World: true, Terms: known.Terms}, Evidence{Text: true, Coverage: 1, Vector: true, Similarity: 0.2}, ""},
		{"full text on every word of a question about the user, the meaning far", Question{Asks: true, AboutUser: true, Terms: known.Terms}, Evidence{Text: true, Coverage: 1, Vector: true, Similarity: 0.1}, GateText},
		{"full text on every word of a question referring to a thing as known", Question{Asks: true, Refers: true, Terms: known.Terms}, Evidence{Text: true, Coverage: 1, Vector: true, Similarity: 0.1}, GateText},
		{"entity named", foreign, Evidence{Named: true}, GateEntity},
		{"entity named in a question that refers to nobody, far from it", asking, Evidence{Named: true, Vector: true, Similarity: 0.09}, ""},
		{"entity named in a question that refers to nobody, a neighbour far from it", asking, Evidence{Named: true, Neighbour: true, NeighbourSimilarity: 0.09}, ""},
		{"entity named in a question that refers to nobody, at the lead floor", asking, Evidence{Named: true, Vector: true, Similarity: 0.13}, GateEntity},
		{"entity named in a question about the user, far from it", Question{Asks: true, AboutUser: true}, Evidence{Named: true, Vector: true, Similarity: 0.01}, GateEntity},
		{"entity named in a question that refers to nobody, similarity unknown", asking, Evidence{Named: true}, GateEntity},
		{"entity named in a statement, far from it", Question{}, Evidence{Named: true, Vector: true, Similarity: 0.01}, GateEntity},
		{"asked for by intent", known, Evidence{Intent: true}, GateIntent},
		{"named by intent in a statement that asks for nothing", Question{Terms: known.Terms}, Evidence{Intent: true, Similarity: 0.5}, ""},
		{"asked for by intent about a subject, near the question", topical, Evidence{Intent: true, Similarity: 0.12}, GateIntent},
		{"asked for by intent about a subject, far from the question", topical, Evidence{Intent: true, Similarity: 0.05}, ""},
		{"asked for by intent in a question that refers to nobody, far from it", asking, Evidence{Intent: true, Similarity: 0.09}, ""},
		{"asked for by intent in a question that refers to nobody, at the lead floor", asking, Evidence{Intent: true, Similarity: 0.13}, GateIntent},
		{"asked for by intent in a question that refers to nobody, shared knowledge", asking, Evidence{Intent: true, Similarity: 0.01, Shared: true}, GateIntent},
		{"asked for by intent in a question about the user, far from it", Question{Asks: true, AboutUser: true}, Evidence{Intent: true, Similarity: 0.01}, GateIntent},
		{"asked for by intent in a question about a dealing, far from it", Question{Asks: true, AboutDealing: true}, Evidence{Intent: true, Similarity: 0.01}, GateIntent},
		{"asked for by intent in a question of what is required or preferred, far from it", Question{Asks: true, Prefers: true}, Evidence{Intent: true, Similarity: 0.01}, GateIntent},
		{"asked for by intent in a question about things in general, near it", Question{Asks: true, World: true, Prefers: true}, Evidence{Intent: true, Similarity: 0.3}, ""},
		{"asked for by intent in a question about things in general, shared knowledge", Question{Asks: true, World: true}, Evidence{Intent: true, Similarity: 0.01, Shared: true}, GateIntent},
		{"entity named in a question about things in general", Question{Asks: true, World: true}, Evidence{Named: true, Vector: true, Similarity: 0.2}, ""},
		{"leading in a question about things in general", Question{Asks: true, Refers: true, World: true}, Evidence{Vector: true, Similarity: 0.2, Lead: 0.1}, ""},
		{"pleasantries pass nothing", social, Evidence{Vector: true, Similarity: 0.9, Text: true, Coverage: 1, Named: true}, ""},
		{"a neighbour does not pass alone", known, Evidence{Neighbour: true, NeighbourSimilarity: 0.5}, ""},
		{"holds an identifier the question names", foreign, Evidence{Text: true, Coverage: 0.2, Identifier: true}, GateText},
		{"nearest to a question about the user", aboutUser, Evidence{Vector: true, Similarity: 0.12, Nearest: true}, GateSubject},
		{"nearest, but below the subject floor", aboutUser, Evidence{Vector: true, Similarity: 0.08, Nearest: true}, ""},
		{"nearest to a how-to question with my in it", Question{AboutUser: true, HowTo: true}, Evidence{Vector: true, Similarity: 0.12, Nearest: true}, ""},
		{"a dealing of the user's, nearest at the lead floor", dealing, Evidence{Vector: true, Similarity: 0.13, Nearest: true}, GateSubject},
		{"a dealing of the user's, nearest above the subject floor but below the lead floor", dealing, Evidence{Vector: true, Similarity: 0.11, Nearest: true}, ""},
		{"not among the nearest", aboutUser, Evidence{Vector: true, Similarity: 0.2}, ""},
		{"nearest to a question about something else", foreign, Evidence{Vector: true, Similarity: 0.2, Nearest: true}, ""},
		{"the user's nearest, well ahead of the next", asking, Evidence{Vector: true, Similarity: 0.15, Lead: 0.1}, GateLead},
		{"the user's nearest, well ahead, in a question about the world", Question{Asks: true}, Evidence{Vector: true, Similarity: 0.15, Lead: 0.1}, ""},
		{"the user's nearest, not far enough ahead", asking, Evidence{Vector: true, Similarity: 0.15, Lead: 0.05}, ""},
		{"well ahead, below the lead floor", asking, Evidence{Vector: true, Similarity: 0.1, Lead: 0.1}, ""},
		{"not the user's nearest", asking, Evidence{Vector: true, Similarity: 0.15}, ""},
		{"well ahead, in what is not a question", foreign, Evidence{Vector: true, Similarity: 0.15, Lead: 0.1}, ""},
		{"pleasantries about the user pass nothing", Question{Social: true, AboutUser: true}, Evidence{Vector: true, Similarity: 0.2, Nearest: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rules.First(tt.q, tt.e); got != tt.want {
				t.Errorf("First = %q, want %q", got, tt.want)
			}
		})
	}
	off := rules
	off.SubjectFloor, off.LeadFloor = 0, 0
	if got := off.First(asking, Evidence{Vector: true, Similarity: 0.2, Lead: 0.2}); got != "" {
		t.Errorf("with no lead floor, First = %q, want nothing", got)
	}
	if got := off.First(aboutUser, Evidence{Vector: true, Similarity: 0.2, Nearest: true}); got != "" {
		t.Errorf("with no subject floor, First = %q, want nothing", got)
	}
	if got := off.First(topical, Evidence{Intent: true, Similarity: 0.2}); got != "" {
		t.Errorf("with no subject floor, a topical intent below the vector floor: First = %q, want nothing", got)
	}
	if got := off.First(topical, Evidence{Intent: true, Similarity: 0.3}); got != GateIntent {
		t.Errorf("with no subject floor, a topical intent at the vector floor: First = %q, want %q", got, GateIntent)
	}
	rides := []struct {
		name string
		e    Evidence
		want string
	}{
		{"a neighbour near the question", Evidence{Neighbour: true, NeighbourSimilarity: 0.1}, GateNeighbour},
		{"a neighbour unrelated to the question", Evidence{Neighbour: true, NeighbourSimilarity: -0.2}, ""},
		{"a memory of the session", Evidence{Session: true}, GateSession},
		{"nothing", Evidence{}, ""},
	}
	for _, tt := range rides {
		t.Run(tt.name, func(t *testing.T) {
			if got := rules.Ride(tt.e); got != tt.want {
				t.Errorf("Ride = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJoinAbove(t *testing.T) {
	partial := func(sim float64) Passed {
		return Passed{Gate: GateText, Evidence: Evidence{Text: true, Coverage: 0.5, Similarity: sim}}
	}
	tests := []struct {
		name   string
		passed []Passed
		above  float64
		join   bool
	}{
		{"partial word matches: above the nearest of them", []Passed{partial(0.01), partial(0.12)}, 0.12, true},
		{"one covers every word", []Passed{partial(0.01), {Gate: GateText, Evidence: Evidence{Text: true, Coverage: 1}}}, 0, false},
		{"one holds a named identifier", []Passed{partial(0.01), {Gate: GateText, Evidence: Evidence{Coverage: 0.2, Identifier: true}}}, 0, false},
		{"one passed on its similarity", []Passed{partial(0.01), {Gate: GateVector, Evidence: Evidence{Vector: true, Similarity: 0.5}}}, 0, false},
		{"one is what the question asks for", []Passed{{Gate: GateIntent, Evidence: Evidence{Intent: true}}}, 0, false},
		{"nothing passed", nil, 0, false},
	}
	for _, tt := range tests {
		above, join := JoinAbove(tt.passed)
		if join != tt.join || (join && above != tt.above) {
			t.Errorf("%s: JoinAbove = %v, %v; want %v, %v", tt.name, above, join, tt.above, tt.join)
		}
	}
}

func TestOwn(t *testing.T) {
	for gate, want := range map[string]bool{
		GateVector: true, GateText: true, GateEntity: true,
		GateIntent: false, GateSubject: false, GateLead: false, GateNeighbour: false, GateSession: false,
	} {
		if got := Own(gate); got != want {
			t.Errorf("Own(%s) = %v, want %v", gate, got, want)
		}
	}
}
