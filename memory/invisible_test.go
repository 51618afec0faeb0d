package memory

import (
	"context"
	"testing"

	"mneme/facts"
)

// invisibleCases holds a character of each class facts.Invisible refuses: each
// shows as nothing, or as a plain space or line, beside the text around it.
var invisibleCases = []struct {
	name string
	r    rune
}{
	{"tab (control)", '\t'},
	{"next line (C1 control)", '\u0085'},
	{"zero-width space (format)", '\u200b'},
	{"soft hyphen (format)", '\u00ad'},
	{"right-to-left override (format)", '\u202e'},
	{"tag letter a (format)", '\U000E0061'},
	{"combining grapheme joiner", '\u034f'},
	{"variation selector 1", '\ufe00'},
	{"variation selector 16", '\ufe0f'},
	{"variation selector 17", '\U000E0100'},
	{"variation selector 256", '\U000E01EF'},
	{"Mongolian free variation selector", '\u180b'},
	{"Khmer inherent vowel aq", '\u17b4'},
	{"Khmer inherent vowel aa", '\u17b5'},
	{"Hangul choseong filler", '\u115f'},
	{"Hangul jungseong filler", '\u1160'},
	{"Hangul filler", '\u3164'},
	{"halfwidth Hangul filler", '\uffa0'},
	{"reserved default-ignorable", '\U000E0FFF'},
	{"line separator", '\u2028'},
	{"paragraph separator", '\u2029'},
	{"no-break space", '\u00a0'},
	{"ideographic space", '\u3000'},
	{"em space", '\u2003'},
	{"narrow no-break space", '\u202f'},
	{"Ogham space mark", '\u1680'},
	{"braille blank", '\u2800'},
}

// visibleCases are characters a kind or key may hold.
var visibleCases = []struct {
	name string
	r    rune
}{
	{"letter", 'e'},
	{"space", ' '},
	{"accented letter", 'é'},
	{"combining acute accent", '\u0301'},
	{"Han character", '偏'},
	{"Hangul syllable", '한'},
	{"Khmer letter", '\u1780'},
	{"emoji", '☕'},
	{"braille letter", '\u2801'},
}

func TestInvisibleInKindsAndKeys(t *testing.T) {
	for _, tt := range invisibleCases {
		t.Run(tt.name, func(t *testing.T) {
			if !facts.Invisible(tt.r) {
				t.Fatalf("Invisible(%U) = false", tt.r)
			}
			word := "pre" + string(tt.r) + "ference"
			for field, edit := range map[string]func(*NewMemory){
				"kind":     func(n *NewMemory) { n.Kind = word },
				"key":      func(n *NewMemory) { n.Key = word },
				"entities": func(n *NewMemory) { n.Entities = []Entity{{ID: word}} },
			} {
				f := newFixture(t, RecallConfig{})
				n := validNew()
				edit(&n)
				_, err := create(context.Background(), f.svc, agentSupport, []NewMemory{n})
				if got := fieldOf(t, err); got != field {
					t.Errorf("%s %q: field = %q, want %q (err %v)", field, word, got, field, err)
				}
			}
			f, prev := newFixture(t, RecallConfig{}), stored("mem_1", "Alice prefers tea.")
			f.store.memories[prev.ID] = prev
			_, err := f.svc.Update(context.Background(), agentBilling, prev.ID, 1, UpdateRequest{Kind: &word})
			if got := fieldOf(t, err); got != "kind" {
				t.Errorf("update kind %q: field = %q, want kind (err %v)", word, got, err)
			}
		})
	}
	for _, tt := range visibleCases {
		t.Run(tt.name, func(t *testing.T) {
			if facts.Invisible(tt.r) {
				t.Fatalf("Invisible(%U) = true", tt.r)
			}
			f := newFixture(t, RecallConfig{})
			n := validNew()
			n.Kind, n.Key = "pre"+string(tt.r)+"ference", "answer"+string(tt.r)+"style"
			if _, err := create(context.Background(), f.svc, agentSupport, []NewMemory{n}); err != nil {
				t.Errorf("kind %q, key %q: %v", n.Kind, n.Key, err)
			}
		})
	}
}
