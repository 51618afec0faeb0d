package sight

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// measure is what a relative CSS length is measured against: the font
// size of the element (of its parent, for its own font size) and of the
// root element, the viewport, and what 100% is.
type measure struct {
	em, rem, vw, vh, pct float64
}

// px reads a CSS length or number in CSS pixels: a number with any unit,
// or a calc(), min(), max() or clamp() of such. A number without a unit
// stays that number.
func (m measure) px(v string) (float64, bool) {
	if v == "" {
		return 0, false
	}
	if num := number.FindString(v); num != "" && !strings.ContainsAny(v, "( ") {
		f, err := strconv.ParseFloat(num, 64)
		scale, ok := m.unit(v[len(num):])
		return f * scale, ok && err == nil
	}
	p := valueReader{toks: valueToken.FindAllString(v, -1), m: m}
	f, ok := p.sum()
	return f, ok && p.i == len(p.toks)
}

var valueToken = regexp.MustCompile(`[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?(%|[a-z]+)?|-?[a-z][a-z-]*\(|[-+*/(),]|\S`)

// valueReader reads the tokens of a CSS value as arithmetic.
type valueReader struct {
	toks []string
	i    int
	m    measure
}

func (p *valueReader) next() string {
	if p.i >= len(p.toks) {
		return ""
	}
	p.i++
	return p.toks[p.i-1]
}

func (p *valueReader) peek() string {
	if p.i >= len(p.toks) {
		return ""
	}
	return p.toks[p.i]
}

func (p *valueReader) sum() (float64, bool) {
	a, ok := p.product()
	for ok && (p.peek() == "+" || p.peek() == "-") {
		op := p.next()
		var b float64
		if b, ok = p.product(); op == "+" {
			a += b
		} else {
			a -= b
		}
	}
	return a, ok
}

func (p *valueReader) product() (float64, bool) {
	a, ok := p.operand()
	for ok && (p.peek() == "*" || p.peek() == "/") {
		op := p.next()
		var b float64
		if b, ok = p.operand(); op == "*" {
			a *= b
		} else if ok = ok && b != 0; ok {
			a /= b
		}
	}
	return a, ok
}

// operand reads a number with its unit, a bracket, or a function of
// arguments: calc, min, max, clamp.
func (p *valueReader) operand() (float64, bool) {
	t := p.next()
	switch t {
	case "(", "calc(", "-webkit-calc(":
		v, ok := p.sum()
		return v, ok && p.next() == ")"
	case "min(", "max(", "clamp(":
		var args []float64
		for {
			v, ok := p.sum()
			if !ok {
				return 0, false
			}
			args = append(args, v)
			if sep := p.next(); sep == ")" {
				break
			} else if sep != "," {
				return 0, false
			}
		}
		switch {
		case t == "clamp(" && len(args) == 3:
			return max(args[0], min(args[1], args[2])), true
		case t == "min(":
			return slices.Min(args), true
		case t == "max(":
			return slices.Max(args), true
		}
		return 0, false
	}
	num := number.FindString(t)
	if num == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	scale, ok := p.m.unit(t[len(num):])
	return f * scale, ok
}

// unit is how many pixels one of a unit is.
func (m measure) unit(u string) (float64, bool) {
	switch u {
	case "", "px":
		return 1, true
	case "%":
		return m.pct / 100, true
	case "em", "ic":
		return m.em, true
	case "ex", "ch", "cap":
		return m.em / 2, true
	case "lh":
		return m.em * 1.2, true
	case "rem":
		return m.rem, true
	case "rlh":
		return m.rem * 1.2, true
	case "vw", "svw", "lvw", "dvw", "cqw", "vi", "cqi":
		return m.vw / 100, true
	case "vh", "svh", "lvh", "dvh", "cqh", "vb", "cqb":
		return m.vh / 100, true
	case "vmin", "cqmin":
		return min(m.vw, m.vh) / 100, true
	case "vmax", "cqmax":
		return max(m.vw, m.vh) / 100, true
	case "pt":
		return 96.0 / 72, true
	case "pc":
		return 16, true
	case "in":
		return 96, true
	case "cm":
		return 96 / 2.54, true
	case "mm":
		return 9.6 / 2.54, true
	case "q":
		return 2.4 / 2.54, true
	}
	return 0, false
}

// fontSizeKeywords are the sizes of font-size's keywords at the default
// 16 px.
var fontSizeKeywords = map[string]float64{
	"xx-small": 9, "x-small": 10, "small": 13, "medium": 16, "large": 18, "x-large": 24, "xx-large": 32, "xxx-large": 48,
}

// fontPx is the font size, in pixels, that value v gives an element whose
// parent's font size is parent.
func fontPx(v string, parent float64, m measure) (float64, bool) {
	m.em, m.pct = parent, parent
	switch v {
	case "inherit", "unset", "math", "revert", "revert-layer":
		return parent, true
	case "initial":
		return 16, true
	case "smaller":
		return parent / 1.2, true
	case "larger":
		return parent * 1.2, true
	}
	if f, ok := fontSizeKeywords[v]; ok {
		return f, true
	}
	return m.px(v)
}

// firstValue is the first space-separated value of v, a function with its
// arguments whole.
func firstValue(v string) string {
	depth := 0
	for i, r := range v {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ' ' && depth == 0:
			return v[:i]
		}
	}
	return v
}
