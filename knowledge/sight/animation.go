package sight

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// keyframe is one block of an @keyframes rule: the points of the
// animation it is at, from 0 to 100, and its declarations.
type keyframe struct {
	at    []float64
	decls []declaration
}

// readKeyframes reads an @keyframes rule named name. Its declarations
// marked !important are dropped, as a browser drops them.
func (sh *sheet) readKeyframes(name, css string) {
	var frames []keyframe
	cssBlocks(css, func(prelude, block string, isBlock bool) {
		if !isBlock {
			return
		}
		var f keyframe
		for _, s := range strings.Split(prelude, ",") {
			switch s = strings.TrimSpace(s); s {
			case "from":
				f.at = append(f.at, 0)
			case "to":
				f.at = append(f.at, 100)
			default:
				if p, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64); err == nil && strings.HasSuffix(s, "%") {
					f.at = append(f.at, p)
				}
			}
		}
		for _, d := range parseDeclarations(block) {
			if !d.important {
				f.decls = append(f.decls, d)
			}
		}
		frames = append(frames, f)
	})
	if sh.keyframes == nil {
		sh.keyframes = map[string][]keyframe{}
	}
	sh.keyframes[strings.Trim(name, `"'`)] = frames
}

// animation is what of one of an element's animations tells where it
// rests: its keyframes' name, fill mode, direction, iteration count,
// whether it is paused and whether it waits before it starts.
type animation struct {
	name, fill, direction string
	count                 float64
	paused, delayed       bool
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// animated is decl with the keyframe its animations rest on laid over
// it: the last one reached when an animation that fills forwards ends,
// or the first one of a paused animation, which stays on it. An animation
// that never ends, or ends between keyframes, is not judged.
func (sh *sheet) animated(decl map[string]string) map[string]string {
	if len(sh.keyframes) == 0 || decl["animation"] == "" && decl["animation-name"] == "" {
		return decl
	}
	var out map[string]string
	for _, a := range animations(decl) {
		frames, ok := sh.keyframes[a.name]
		if !ok || a.count != math.Floor(a.count) || math.IsInf(a.count, 1) {
			continue
		}
		// The first iteration runs from 0% to 100% unless reversed, the
		// last alternately.
		first := a.direction == "normal" || a.direction == "alternate"
		last := first != (strings.HasPrefix(a.direction, "alternate") && math.Mod(max(a.count-1, 0), 2) == 1)
		var at float64
		switch fills := a.fill == "forwards" || a.fill == "both"; {
		case a.paused:
			if a.delayed && a.fill != "backwards" && a.fill != "both" {
				continue
			}
			at = 100 * b2f(!first)
		case !fills:
			continue
		case a.count == 0:
			at = 100 * b2f(!first)
		default:
			at = 100 * b2f(last)
		}
		for _, f := range frames {
			for _, p := range f.at {
				if p != at {
					continue
				}
				if out == nil {
					out = make(map[string]string, len(decl))
					for k, v := range decl {
						out[k] = v
					}
				}
				for _, d := range f.decls {
					out[d.prop] = d.val
				}
			}
		}
	}
	if out == nil {
		return decl
	}
	return out
}

// animations reads an element's animations from the animation shorthand
// and its longhands, which are taken to come after it.
func animations(decl map[string]string) []animation {
	var out []animation
	for _, layer := range splitTop(decl["animation"], ',') {
		a := animation{fill: "none", direction: "normal", count: 1}
		times := 0
		for _, w := range topFields(strings.TrimSpace(layer)) {
			switch {
			case w == "forwards" || w == "backwards" || w == "both" || w == "none" && a.name != "":
				a.fill = w
			case w == "reverse" || w == "alternate" || w == "alternate-reverse" || w == "normal":
				a.direction = w
			case w == "paused" || w == "running":
				a.paused = w == "paused"
			case w == "infinite":
				a.count = math.Inf(1)
			case duration.MatchString(w):
				// The second time is the delay.
				a.delayed = a.delayed || times > 0 && waits(w)
				times++
			case timingWords[w] || strings.Contains(w, "(") || w == "initial":
			case number.MatchString(w):
				if f, err := strconv.ParseFloat(w, 64); err == nil {
					a.count = f
				}
			case a.name == "":
				a.name = w
			}
		}
		if a.name != "" {
			out = append(out, a)
		}
	}
	longhand := func(p string, set func(a *animation, v string)) {
		if decl[p] == "" {
			return
		}
		vals := splitTop(decl[p], ',')
		for i := range out {
			set(&out[i], strings.TrimSpace(vals[i%len(vals)]))
		}
	}
	if names := decl["animation-name"]; names != "" {
		prev := out
		out = nil
		for i, n := range splitTop(names, ',') {
			a := animation{fill: "none", direction: "normal", count: 1}
			if i < len(prev) {
				a = prev[i]
			}
			a.name = strings.Trim(strings.TrimSpace(n), `"'`)
			out = append(out, a)
		}
	}
	longhand("animation-fill-mode", func(a *animation, v string) { a.fill = v })
	longhand("animation-direction", func(a *animation, v string) { a.direction = v })
	longhand("animation-play-state", func(a *animation, v string) { a.paused = v == "paused" })
	longhand("animation-delay", func(a *animation, v string) { a.delayed = waits(v) })
	longhand("animation-iteration-count", func(a *animation, v string) {
		if v == "infinite" {
			a.count = math.Inf(1)
		} else if f, err := strconv.ParseFloat(v, 64); err == nil {
			a.count = f
		}
	})
	return out
}

var (
	duration = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?m?s$`)
	zeroTime = regexp.MustCompile(`^[+-]?0*\.?0*m?s$`)
)

// waits reports a delay of some time: more than none, not less (a
// negative delay starts an animation part way).
func waits(delay string) bool {
	return duration.MatchString(delay) && !zeroTime.MatchString(delay) && delay[0] != '-'
}

// timingWords are the keywords of animation-timing-function.
var timingWords = map[string]bool{
	"linear": true, "ease": true, "ease-in": true, "ease-out": true, "ease-in-out": true, "step-start": true, "step-end": true,
}
