// Package facts holds the text rules of what a memory states: whether a text
// states anything worth remembering (Worthless), whether two texts state the
// same fact (Same, with the numbers each holds), and the digests a store
// narrows a dedup search with (Signature). It is pure: no store, no model.
package facts
