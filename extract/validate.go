package extract

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"mneme/memory"
)

// MaxContentChars caps an extracted memory: extraction keeps facts, not
// transcripts.
const MaxContentChars = 1000

// validate is the one gate every extracted memory passes, whichever
// extractor found it: a known type, non-empty bounded content, a kind and
// key of safe characters, importance within [0, 1], entities of known kinds
// with names, ids derived from kind and name, no duplicates. It normalises
// what it can and reports whether the memory may be kept.
func validate(m memory.NewMemory) (memory.NewMemory, bool) {
	m.Content = strings.Join(strings.Fields(m.Content), " ")
	m.Kind = strings.ToLower(strings.TrimSpace(m.Kind))
	m.Key = strings.ToLower(strings.TrimSpace(m.Key))
	switch {
	case !slices.Contains(memory.Types, m.Type):
		return m, false
	case m.Content == "" || !utf8.ValidString(m.Content) || utf8.RuneCountInString(m.Content) > MaxContentChars:
		return m, false
	case isChitChat(m.Content):
		return m, false
	case m.Kind == "" || len(m.Kind) > 64 || !safe(m.Kind, "_"):
		return m, false
	case len(m.Key) > 128 || !safe(m.Key, "_:.-"):
		return m, false
	case m.Importance != nil && (*m.Importance < 0 || *m.Importance > 1):
		return m, false
	case m.Confidence != nil && (*m.Confidence < 0 || *m.Confidence > 1):
		return m, false
	}
	var ents []memory.Entity
	for _, e := range m.Entities {
		e.Kind = strings.ToLower(strings.TrimSpace(e.Kind))
		e.Name = strings.TrimSpace(e.Name)
		if !slices.Contains(EntityKinds, e.Kind) || e.Name == "" || len(e.Name) > 256 {
			continue
		}
		e.ID = EntityID(e.Kind, e.Name)
		if e.ID == "" || len(e.ID) > 128 || slices.ContainsFunc(ents, func(o memory.Entity) bool { return o.ID == e.ID }) {
			continue
		}
		ents = append(ents, e)
	}
	m.Entities = ents[:min(len(ents), memory.MaxEntities)]
	if m.Source == "" {
		m.Source = sourceConversation
	}
	return m, true
}

// safe reports whether s holds only letters, digits and the given marks.
func safe(s, marks string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(marks, r) {
			return false
		}
	}
	return true
}
