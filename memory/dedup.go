package memory

// DefaultDuplicateThreshold is the cosine similarity at or above which two
// memories of one user and type, with the same numbers, state the same
// thing. Calibrated with the built-in embedder on the 50 labelled pairs of
// seed/eval/dedup_pairs.json (TestDedupCalibration): precision is 1 from
// 0.84 up and recall stays at its best from 0.84 to 0.86; the top of that
// plateau is kept, since a false reinforcement loses a fact while a missed
// one only adds a node.
const DefaultDuplicateThreshold = 0.86

// sameSlot reports whether two memories could be one fact: different keys
// or different kinds (when both are set) never are.
func sameSlot(a, b Memory) bool {
	if a.Key != "" && b.Key != "" && a.Key != b.Key {
		return false
	}
	return a.Kind == "" || b.Kind == "" || a.Kind == b.Kind
}
