package sight

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A page is read as a desktop browser shows it, in a window of any size
// from screenMin to screenMax, in each of the modes such a browser may be
// in (light or dark, reduced motion, more contrast…). Text a style hides
// in any of these is hidden: a page's reviewer may have read it in any of
// them. A media condition that holds only on a phone (max-width:600px)
// does not hold, so what a page hides on phones stays, and what it shows
// only on phones goes.
var (
	screenMin = screenSize{w: 1024, h: 500}
	screenMax = screenSize{w: 3840, h: 2160}
)

type screenSize struct{ w, h float64 }

// screen is one browser window a page may be read in.
type screen struct {
	screenSize
	dppx float64
	// prefs holds the discrete media features: for each, the values that
	// match it, space-separated.
	prefs map[string]string
}

// desktopFeatures are the discrete media features a desktop browser has,
// each with the values it may take, the usual one first. A value of
// several words matches each (a wide-gamut display is both srgb and p3).
var desktopFeatures = map[string][]string{
	"prefers-color-scheme":         {"light", "dark"},
	"prefers-reduced-motion":       {"no-preference", "reduce"},
	"prefers-contrast":             {"no-preference", "more", "less", "custom"},
	"prefers-reduced-transparency": {"no-preference", "reduce"},
	"prefers-reduced-data":         {"no-preference"},
	"forced-colors":                {"none", "active"},
	"inverted-colors":              {"none", "inverted"},
	"hover":                        {"hover"},
	"any-hover":                    {"hover"},
	"pointer":                      {"fine"},
	"any-pointer":                  {"fine", "fine coarse"},
	"scripting":                    {"enabled"},
	"update":                       {"fast"},
	"display-mode":                 {"browser", "fullscreen"},
	"overflow-block":               {"scroll"},
	"overflow-inline":              {"scroll"},
	"color-gamut":                  {"srgb", "srgb p3"},
	"dynamic-range":                {"standard", "standard high"},
	"video-dynamic-range":          {"standard", "standard high"},
}

// condition reports whether a media condition holds on a screen.
type condition func(screen) bool

func never(screen) bool  { return false }
func always(screen) bool { return true }

// A view is how a page's rules fall on some of the screens it may be
// read on: which media conditions hold there (by index in the sheet), and
// the smallest and largest of those screens.
type view struct {
	holds       []bool
	least, most screenSize
}

// maxViews bounds the views a page is looked at in; maxSizes bounds the
// window widths, and heights, tried.
const maxViews, maxSizes = 64, 48

// views are the distinct ways the page's media conditions fall on the
// screens it may be read on: every window size at which one may change,
// in every mode that some condition tests, one mode changed at a time.
func (sh *sheet) views() []view {
	whole := view{least: screenMin, most: screenMax}
	if len(sh.media) == 0 {
		return []view{whole}
	}
	base := screen{dppx: 1, prefs: map[string]string{}}
	for f, values := range desktopFeatures {
		base.prefs[f] = values[0]
	}
	modes := []screen{base}
	if sh.features["resolution"] {
		modes = append(modes, screen{dppx: 2, prefs: base.prefs})
	}
	features := make([]string, 0, len(sh.features))
	for f := range sh.features {
		features = append(features, f)
	}
	sort.Strings(features)
	for _, f := range features {
		for _, v := range desktopFeatures[f][min(1, len(desktopFeatures[f])):] {
			mode := screen{dppx: 1, prefs: map[string]string{}}
			for k, x := range base.prefs {
				mode.prefs[k] = x
			}
			mode.prefs[f] = v
			modes = append(modes, mode)
		}
	}
	var out []view
	seen := map[string]int{}
	for _, mode := range modes {
		for _, w := range sizes(sh.widths, screenMin.w, screenMax.w) {
			for _, h := range sizes(sh.heights, screenMin.h, screenMax.h) {
				s := mode
				s.screenSize = screenSize{w, h}
				holds := make([]bool, len(sh.media))
				key := make([]byte, len(sh.media))
				for i, c := range sh.media {
					if holds[i] = c(s); holds[i] {
						key[i] = 1
					}
				}
				if i, ok := seen[string(key)]; ok {
					v := &out[i]
					v.least = screenSize{min(v.least.w, w), min(v.least.h, h)}
					v.most = screenSize{max(v.most.w, w), max(v.most.h, h)}
				} else if len(out) < maxViews {
					seen[string(key)] = len(out)
					out = append(out, view{holds: holds, least: s.screenSize, most: s.screenSize})
				}
			}
		}
	}
	return out
}

// sizes are the sizes from lo to hi to try, given the sizes at which a
// condition may change: lo, hi, and each such size within, with a size
// just below and just above it.
func sizes(points []float64, lo, hi float64) []float64 {
	out := []float64{lo, hi}
	for _, p := range points {
		for _, x := range []float64{p - 0.01, p, p + 0.01} {
			if x > lo && x < hi {
				out = append(out, x)
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) <= maxSizes {
		return out
	}
	thin := make([]float64, 0, maxSizes)
	for i := range maxSizes {
		thin = append(thin, out[i*(len(out)-1)/(maxSizes-1)])
	}
	return thin
}

var mediaToken = regexp.MustCompile(`[<>]=?|=|[(),:/]|[a-z0-9._+-]+%?|\S`)

// compileMedia reads a media query list (what follows @media) into the
// condition it states, noting the sizes and features it tests. A query a
// browser could not read holds nowhere; so does a media type other than
// screen and all (print, speech).
func (sh *sheet) compileMedia(text string) condition {
	if strings.TrimSpace(text) == "" {
		return always
	}
	var queries []condition
	for _, q := range splitTop(text, ',') {
		r := &mediaReader{toks: mediaToken.FindAllString(q, -1), sh: sh}
		c := r.query()
		if r.bad || r.i != len(r.toks) {
			c = never
		}
		queries = append(queries, c)
	}
	return func(s screen) bool {
		for _, q := range queries {
			if q(s) {
				return true
			}
		}
		return false
	}
}

// splitTop splits s at each sep outside brackets.
func splitTop(s string, sep rune) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// mediaReader reads the tokens of one media query.
type mediaReader struct {
	toks []string
	i    int
	sh   *sheet
	bad  bool
}

func (r *mediaReader) peek(k int) string {
	if r.i+k >= len(r.toks) {
		return ""
	}
	return r.toks[r.i+k]
}

func (r *mediaReader) next() string {
	t := r.peek(0)
	r.i++
	return t
}

var mediaTypes = []string{"all", "screen", "print", "speech", "tty", "tv", "projection", "handheld", "braille", "embossed", "aural"}

// query reads [not|only] type [and condition], or a condition.
func (r *mediaReader) query() condition {
	if r.peek(0) == "(" || r.peek(0) == "not" && r.peek(1) == "(" {
		return r.condition(true)
	}
	negate := r.peek(0) == "not"
	if negate || r.peek(0) == "only" {
		r.i++
	}
	typ := r.next()
	if !slices.Contains(mediaTypes, typ) {
		r.bad = true
		return never
	}
	onScreen := typ == "all" || typ == "screen"
	c := condition(func(screen) bool { return onScreen })
	if r.peek(0) == "and" {
		r.i++
		c = both(c, r.condition(false))
	}
	if negate {
		return func(s screen) bool { return !c(s) }
	}
	return c
}

func both(a, b condition) condition { return func(s screen) bool { return a(s) && b(s) } }

// condition reads not (…), or (…) joined by and, or (if orOK) by or.
func (r *mediaReader) condition(orOK bool) condition {
	if r.peek(0) == "not" {
		r.i++
		c := r.inParens()
		return func(s screen) bool { return !c(s) }
	}
	c := r.inParens()
	op := r.peek(0)
	if op != "and" && (op != "or" || !orOK) {
		return c
	}
	for r.peek(0) == op {
		r.i++
		a, b := c, r.inParens()
		if op == "and" {
			c = both(a, b)
		} else {
			c = func(s screen) bool { return a(s) || b(s) }
		}
	}
	return c
}

// inParens reads a bracketed condition or media feature.
func (r *mediaReader) inParens() condition {
	if r.next() != "(" {
		r.bad = true
		return never
	}
	var c condition
	if r.peek(0) == "(" || r.peek(0) == "not" {
		c = r.condition(true)
	} else {
		var toks []string
		for r.peek(0) != ")" && r.peek(0) != "" && r.peek(0) != "(" {
			toks = append(toks, r.next())
		}
		c = r.feature(toks)
	}
	if r.next() != ")" {
		r.bad = true
	}
	return c
}

var comparisons = []string{"<", "<=", ">", ">=", "="}

// feature reads a media feature: name, name: value, or a range (width >=
// 600px, 400px < width <= 700px).
func (r *mediaReader) feature(toks []string) condition {
	var ops []int
	for i, t := range toks {
		if slices.Contains(comparisons, t) {
			ops = append(ops, i)
		}
	}
	flip := map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}
	switch {
	case len(toks) == 1:
		return r.compare(toks[0], "", "")
	case len(toks) > 2 && toks[1] == ":":
		name, op := toks[0], "="
		if rest, ok := strings.CutPrefix(name, "min-"); ok {
			name, op = rest, ">="
		} else if rest, ok := strings.CutPrefix(name, "max-"); ok {
			name, op = rest, "<="
		} else if rest, ok := strings.CutPrefix(name, "-webkit-min-"); ok {
			name, op = "-webkit-"+rest, ">="
		} else if rest, ok := strings.CutPrefix(name, "-webkit-max-"); ok {
			name, op = "-webkit-"+rest, "<="
		}
		return r.compare(name, op, strings.Join(toks[2:], " "))
	case len(ops) == 1 && ops[0] == 1:
		return r.compare(toks[0], toks[1], strings.Join(toks[2:], " "))
	case len(ops) == 1 && ops[0] == len(toks)-2:
		return r.compare(toks[len(toks)-1], flip[toks[ops[0]]], strings.Join(toks[:ops[0]], " "))
	case len(ops) == 2 && ops[1] == ops[0]+2:
		name := toks[ops[0]+1]
		return both(r.compare(name, flip[toks[ops[0]]], strings.Join(toks[:ops[0]], " ")),
			r.compare(name, toks[ops[1]], strings.Join(toks[ops[1]+1:], " ")))
	}
	r.bad = true
	return never
}

// compare is the condition that feature name stands in relation op to
// value; with no op, that the feature is not zero or none.
func (r *mediaReader) compare(name, op, value string) condition {
	numeric := func(of func(screen) float64, v float64, ok bool) condition {
		if !ok {
			r.bad = true
			return never
		}
		return func(s screen) bool {
			x := of(s)
			switch op {
			case "":
				return x != 0
			case "<":
				return x < v
			case "<=":
				return x <= v
			case ">":
				return x > v
			case ">=":
				return x >= v
			}
			return x == v
		}
	}
	fixed := func(x float64) func(screen) float64 { return func(screen) float64 { return x } }
	length := func() (float64, bool) {
		if op == "" {
			return 0, true
		}
		return measure{em: 16, rem: 16}.px(value)
	}
	switch name {
	case "width", "device-width":
		v, ok := length()
		r.sh.widths = append(r.sh.widths, v)
		return numeric(func(s screen) float64 { return s.w }, v, ok)
	case "height", "device-height":
		v, ok := length()
		r.sh.heights = append(r.sh.heights, v)
		return numeric(func(s screen) float64 { return s.h }, v, ok)
	case "aspect-ratio", "device-aspect-ratio":
		v, ok := ratio(value)
		return numeric(func(s screen) float64 { return s.w / s.h }, v, ok || op == "")
	case "resolution", "-webkit-device-pixel-ratio":
		r.sh.features["resolution"] = true
		v, ok := dppx(value, name != "resolution")
		return numeric(func(s screen) float64 { return s.dppx }, v, ok || op == "")
	case "color", "color-index", "monochrome", "grid":
		v, err := strconv.ParseFloat(value, 64)
		bits := 0.0
		if name == "color" {
			bits = 8
		}
		return numeric(fixed(bits), v, err == nil || op == "")
	case "orientation":
		switch {
		case op == "":
			return always
		case op == "=" && (value == "portrait" || value == "landscape"):
			return func(s screen) bool { return (s.h >= s.w) == (value == "portrait") }
		}
	default:
		if _, ok := desktopFeatures[name]; !ok || op != "" && op != "=" {
			break
		}
		r.sh.features[name] = true
		if op == "" {
			return func(s screen) bool {
				v := strings.Fields(s.prefs[name])[0]
				return v != "none" && v != "no-preference"
			}
		}
		return func(s screen) bool { return slices.Contains(strings.Fields(s.prefs[name]), value) }
	}
	r.bad = true
	return never
}

// ratio reads an aspect ratio: 16/9, or a number.
func ratio(v string) (float64, bool) {
	a, b, split := strings.Cut(v, "/")
	x, err := strconv.ParseFloat(strings.TrimSpace(a), 64)
	if err != nil {
		return 0, false
	}
	if !split {
		return x, true
	}
	y, err := strconv.ParseFloat(strings.TrimSpace(b), 64)
	return x / y, err == nil && y != 0
}

// dppx reads a resolution in dots per CSS pixel; a bare number is one
// only for -webkit-device-pixel-ratio.
func dppx(v string, bare bool) (float64, bool) {
	num := number.FindString(v)
	f, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil {
		return 0, false
	}
	switch v[len(num):] {
	case "dppx", "x":
		return f, true
	case "dpi":
		return f / 96, true
	case "dpcm":
		return f * 2.54 / 96, true
	case "":
		return f, bare
	}
	return 0, false
}
