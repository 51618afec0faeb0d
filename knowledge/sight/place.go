package sight

// farOff is how far, in pixels, above or left of where it would be an
// offset, margin or indent must move a box to put it off the page: no box
// of text is taken to be that tall or wide.
const farOff = 500

// placedAway reports an element its position puts out of sight: placed
// (absolute, fixed) far above or left of the page, moved there (relative),
// or fixed wholly outside the smallest window of t's view, which it never
// scrolls into. Of top and bottom, and of left and right, the first set is
// the one a relative or fixed box follows, as in a browser.
func placedAway(decl map[string]string, t textStyle) bool {
	m := t.measure()
	offset := func(p string, m measure) (float64, bool) {
		if p == "top" || p == "bottom" {
			m.pct = m.vh
		}
		return m.px(firstValue(decl[p]))
	}
	// first is the offset a box follows of start and end, and whether
	// it is start's.
	first := func(start, end string, m measure) (v float64, isStart, ok bool) {
		if v, ok := offset(start, m); ok {
			return v, true, true
		}
		v, ok = offset(end, m)
		return v, false, ok
	}
	switch decl["position"] {
	case "absolute", "fixed":
		for _, p := range []string{"top", "left", "bottom", "right"} {
			if v, ok := offset(p, m); ok && v <= -farOff {
				return true
			}
		}
	case "relative":
		for _, axis := range [][2]string{{"top", "bottom"}, {"left", "right"}} {
			v, isStart, ok := first(axis[0], axis[1], m)
			if ok && (isStart && v <= -farOff || !isStart && v >= farOff) {
				return true
			}
		}
	}
	if decl["position"] != "fixed" {
		return false
	}
	w := t.view.least
	window := measure{em: m.em, rem: m.rem, vw: w.w, vh: w.h, pct: w.w}
	v, _, ok := first("top", "bottom", window)
	if ok && v >= w.h {
		return true
	}
	v, _, ok = first("left", "right", window)
	return ok && v >= w.w
}
