package knowledge

// Stored is what an earlier import of a document left in force: one active
// memory per section key.
type Stored struct {
	Key    string
	Digest string
	ID     string // the memory's id
}

// Replacement is an edited section and the memory it supersedes.
type Replacement struct {
	Old Stored
	New Section
}

// Plan is what re-importing a document changes. Applying it twice changes
// nothing the second time: every section is then unchanged.
type Plan struct {
	Create    []Section     // sections with no memory yet
	Supersede []Replacement // sections whose text changed
	Retire    []Stored      // memories whose section is gone
	Unchanged []Stored      // memories whose section is as it was
}

// Changed reports whether applying the plan writes anything.
func (p Plan) Changed() bool {
	return len(p.Create)+len(p.Supersede)+len(p.Retire) > 0
}

// PlanImport compares doc with what the previous import of the same
// document stored. A key stored twice (an interrupted import) keeps its
// first memory and retires the others.
func PlanImport(stored []Stored, doc Document) Plan {
	var p Plan
	byKey := make(map[string]Stored, len(stored))
	for _, s := range stored {
		if _, dup := byKey[s.Key]; dup {
			p.Retire = append(p.Retire, s)
			continue
		}
		byKey[s.Key] = s
	}
	present := make(map[string]bool, len(doc.Sections))
	for _, sec := range doc.Sections {
		present[sec.Key] = true
		old, ok := byKey[sec.Key]
		switch {
		case !ok:
			p.Create = append(p.Create, sec)
		case old.Digest == sec.Digest:
			p.Unchanged = append(p.Unchanged, old)
		default:
			p.Supersede = append(p.Supersede, Replacement{Old: old, New: sec})
		}
	}
	for _, s := range stored {
		if !present[s.Key] && byKey[s.Key].ID == s.ID {
			p.Retire = append(p.Retire, s)
		}
	}
	return p
}
