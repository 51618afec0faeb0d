package knowledge_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"mneme/knowledge"
)

// stored is what applying plan p leaves active, given what was stored.
func stored(before []knowledge.Stored, p knowledge.Plan, next *int) []knowledge.Stored {
	gone := map[string]bool{}
	for _, r := range p.Retire {
		gone[r.ID] = true
	}
	for _, r := range p.Supersede {
		gone[r.Old.ID] = true
	}
	var out []knowledge.Stored
	for _, s := range before {
		if !gone[s.ID] {
			out = append(out, s)
		}
	}
	add := func(sec knowledge.Section) {
		*next++
		out = append(out, knowledge.Stored{Key: sec.Key, Digest: sec.Digest, ID: fmt.Sprintf("mem-%d", *next)})
	}
	for _, sec := range p.Create {
		add(sec)
	}
	for _, r := range p.Supersede {
		add(r.New)
	}
	return out
}

func handbook(sections int, edit func(i int) string) []byte {
	var b strings.Builder
	b.WriteString("# Handbook\n\n")
	for i := range sections {
		text := edit(i)
		if text == "" {
			continue
		}
		fmt.Fprintf(&b, "## Section %d\n\n%s\n\n", i, text)
	}
	return []byte(b.String())
}

// The acceptance case of a re-import: 50 sections, three edited and one
// removed: three superseded, one retired, the rest untouched; importing
// the same text again changes nothing.
func TestPlanImportOfAnEditedDocument(t *testing.T) {
	original := func(i int) string { return fmt.Sprintf("Rule %d: orders of type %d ship within %d days.", i, i, i%5+1) }
	first, err := knowledge.Split("handbook", knowledge.Markdown, handbook(50, original), knowledge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	p := knowledge.PlanImport(nil, first)
	if len(p.Create) != 50 || p.Supersede != nil || p.Retire != nil || p.Unchanged != nil {
		t.Fatalf("first import = %d create, %d supersede, %d retire, %d unchanged", len(p.Create), len(p.Supersede), len(p.Retire), len(p.Unchanged))
	}
	active := stored(nil, p, &next)

	edited, err := knowledge.Split("handbook", knowledge.Markdown, handbook(50, func(i int) string {
		switch i {
		case 7, 21, 40:
			return original(i) + " Except on public holidays."
		case 33:
			return ""
		}
		return original(i)
	}), knowledge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p = knowledge.PlanImport(active, edited)
	if len(p.Create) != 0 || len(p.Supersede) != 3 || len(p.Retire) != 1 || len(p.Unchanged) != 46 {
		t.Fatalf("re-import = %d create, %d supersede, %d retire, %d unchanged; want 0, 3, 1, 46",
			len(p.Create), len(p.Supersede), len(p.Retire), len(p.Unchanged))
	}
	var superseded []string
	for _, r := range p.Supersede {
		superseded = append(superseded, r.New.Headings[1])
		if r.Old.Key != r.New.Key {
			t.Errorf("%s supersedes %s across keys", r.New.Key, r.Old.Key)
		}
	}
	if want := []string{"Section 7", "Section 21", "Section 40"}; !slices.Equal(superseded, want) {
		t.Errorf("superseded %v, want %v", superseded, want)
	}
	active = stored(active, p, &next)
	if again := knowledge.PlanImport(active, edited); again.Changed() || len(again.Unchanged) != 49 {
		t.Errorf("importing the same text again = %+v, want nothing changed", again)
	}
}

func TestPlanImportRetiresDuplicates(t *testing.T) {
	doc, err := knowledge.Split("d", knowledge.Text, []byte("one rule"), knowledge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Sections[0]
	p := knowledge.PlanImport([]knowledge.Stored{
		{Key: s.Key, Digest: s.Digest, ID: "m1"}, {Key: s.Key, Digest: "old", ID: "m2"}, {Key: "kb:d:gone", Digest: "x", ID: "m3"},
	}, doc)
	var retired []string
	for _, r := range p.Retire {
		retired = append(retired, r.ID)
	}
	slices.Sort(retired)
	if !slices.Equal(retired, []string{"m2", "m3"}) || len(p.Unchanged) != 1 || p.Unchanged[0].ID != "m1" {
		t.Errorf("plan = %+v, want m1 kept, m2 and m3 retired", p)
	}
}
