package sight

import (
	"math"
	"strings"
)

// systemColours are CSS's system colours as a browser in its light scheme
// paints them (the page is read light: Canvas is its backdrop); those
// that differ from one browser or system to another are left out.
var systemColours = map[string]string{
	"canvas": "ffffff", "canvastext": "000000", "field": "ffffff", "fieldtext": "000000", "buttontext": "000000",
	"mark": "ffff00", "marktext": "000000", "linktext": "0000ee", "window": "ffffff", "windowtext": "000000",
}

// spaceColour reads the three channels of a colour function other than
// rgb() and hsl(): hwb(), lab(), lch(), oklab(), oklch() and color() in a
// space it converts (for color(), parts starts with the space). Channels
// of "none" are 0.
func spaceColour(name string, parts []string) (r, g, b float64, ok bool) {
	if name == "color" {
		if len(parts) != 4 {
			return 0, 0, 0, false
		}
		var x [3]float64
		for i, p := range parts[1:] {
			if x[i], ok = channel(p, 1); !ok {
				return 0, 0, 0, false
			}
		}
		return rgbOfSpace(parts[0], x)
	}
	if len(parts) != 3 {
		return 0, 0, 0, false
	}
	// scale is what 100% is of each channel; a hue is read as an angle.
	scale, hue := map[string][3]float64{
		"hwb": {0, 100, 100}, "lab": {100, 125, 125}, "lch": {100, 150, 0}, "oklab": {1, 0.4, 0.4}, "oklch": {1, 0.4, 0},
	}[name], map[string]int{"hwb": 0, "lch": 2, "oklch": 2}
	var x [3]float64
	for i, p := range parts {
		if h, isHue := hue[name]; isHue && h == i {
			if p == "none" {
				p = "0"
			}
			x[i], ok = degrees(p)
		} else {
			x[i], ok = channel(p, scale[i])
		}
		if !ok {
			return 0, 0, 0, false
		}
	}
	switch name {
	case "hwb":
		r, g, b = hwbToRGB(x[0], x[1]/100, x[2]/100)
		return r, g, b, true
	case "lch", "oklch":
		h := x[2] * math.Pi / 180
		x[1], x[2] = x[1]*math.Cos(h), x[1]*math.Sin(h)
		name = strings.TrimSuffix(name, "ch") + "ab"
	}
	return rgbOfSpace(name, x)
}

// channel reads one channel: a number, or a percentage of hundred.
func channel(p string, hundred float64) (float64, bool) {
	if p == "none" {
		return 0, true
	}
	return measure{pct: hundred}.px(p)
}

// rgbOfSpace converts a colour of a space (a color() space, lab or oklab)
// into sRGB channels clamped to 0–1.
func rgbOfSpace(space string, x [3]float64) (r, g, b float64, ok bool) {
	var lin [3]float64
	switch space {
	case "srgb":
		return clamp01(x[0]), clamp01(x[1]), clamp01(x[2]), true
	case "srgb-linear":
		lin = x
	case "display-p3":
		for i := range x {
			x[i] = toLinear(x[i])
		}
		lin = apply(xyzToLinear, apply(p3ToXYZ, x))
	case "xyz", "xyz-d65":
		lin = apply(xyzToLinear, x)
	case "xyz-d50":
		lin = apply(xyzToLinear, apply(d50ToD65, x))
	case "lab":
		lin = apply(xyzToLinear, apply(d50ToD65, labToXYZ(x)))
	case "oklab":
		lin = oklabToLinear(x)
	default:
		return 0, 0, 0, false
	}
	return clamp01(fromLinear(lin[0])), clamp01(fromLinear(lin[1])), clamp01(fromLinear(lin[2])), true
}

type matrix3 [3][3]float64

func apply(m matrix3, v [3]float64) [3]float64 {
	var out [3]float64
	for i := range 3 {
		out[i] = m[i][0]*v[0] + m[i][1]*v[1] + m[i][2]*v[2]
	}
	return out
}

// The matrices of CSS Color 4's sample code.
var (
	xyzToLinear = matrix3{
		{3.2409699419045226, -1.537383177570094, -0.4986107602930034},
		{-0.9692436362808796, 1.8759675015077202, 0.04155505740717559},
		{0.05563007969699366, -0.20397695888897652, 1.0569715142428786},
	}
	linearToXYZ = matrix3{
		{0.41239079926595934, 0.357584339383878, 0.1804807884018343},
		{0.21263900587151027, 0.715168678767756, 0.07219231536073371},
		{0.01933081871559182, 0.11919477979462598, 0.9505321522496607},
	}
	d50ToD65 = matrix3{
		{0.955473421488075, -0.02309845494876471, 0.06325924320057072},
		{-0.0283697093338637, 1.0099953980813041, 0.021041441191917323},
		{0.012314014864481998, -0.020507649298898964, 1.330365926242124},
	}
	d65ToD50 = matrix3{
		{1.0479297925449969, 0.022946870601609652, -0.05019226628920524},
		{0.02962780877005599, 0.9904344267538799, -0.017073799063418826},
		{-0.009243040646204504, 0.015055191490298152, 0.7518742814281371},
	}
	p3ToXYZ = matrix3{
		{0.4865709486482162, 0.26566769316909306, 0.1982172852343625},
		{0.2289745640697488, 0.6917385218365064, 0.079286914093745},
		{0, 0.04511338185890264, 1.043944368900976},
	}
	// d50White is the D50 white point lab is relative to.
	d50White = [3]float64{0.3457 / 0.3585, 1, (1 - 0.3457 - 0.3585) / 0.3585}
)

const labKappa, labEpsilon = 24389.0 / 27, 216.0 / 24389

func labToXYZ(lab [3]float64) [3]float64 {
	fy := (lab[0] + 16) / 116
	fx, fz := fy+lab[1]/500, fy-lab[2]/200
	f := func(v float64) float64 {
		if v*v*v > labEpsilon {
			return v * v * v
		}
		return (116*v - 16) / labKappa
	}
	y := lab[0] / labKappa
	if lab[0] > labKappa*labEpsilon {
		y = fy * fy * fy
	}
	return [3]float64{f(fx) * d50White[0], y, f(fz) * d50White[2]}
}

func xyzToLab(xyz [3]float64) [3]float64 {
	var f [3]float64
	for i := range 3 {
		v := xyz[i] / d50White[i]
		if v > labEpsilon {
			f[i] = math.Cbrt(v)
		} else {
			f[i] = (labKappa*v + 16) / 116
		}
	}
	return [3]float64{116*f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])}
}

func oklabToLinear(c [3]float64) [3]float64 {
	l := c[0] + 0.3963377774*c[1] + 0.2158037573*c[2]
	m := c[0] - 0.1055613458*c[1] - 0.0638541728*c[2]
	s := c[0] - 0.0894841775*c[1] - 1.2914855480*c[2]
	l, m, s = l*l*l, m*m*m, s*s*s
	return [3]float64{
		4.0767416621*l - 3.3077115913*m + 0.2309699292*s,
		-1.2684380046*l + 2.6097574011*m - 0.3413193965*s,
		-0.0041960863*l - 0.7034186147*m + 1.7076147010*s,
	}
}

func linearToOklab(c [3]float64) [3]float64 {
	l := math.Cbrt(0.4122214708*c[0] + 0.5363325363*c[1] + 0.0514459929*c[2])
	m := math.Cbrt(0.2119034982*c[0] + 0.6806995451*c[1] + 0.1073969566*c[2])
	s := math.Cbrt(0.0883024619*c[0] + 0.2817188376*c[1] + 0.6299787005*c[2])
	return [3]float64{
		0.2104542553*l + 0.7936177850*m - 0.0040720468*s,
		1.9779984951*l - 2.4285922050*m + 0.4505937099*s,
		0.0259040371*l + 0.7827717662*m - 0.8086757660*s,
	}
}

// toLinear and fromLinear undo and apply sRGB's transfer curve.
func toLinear(v float64) float64 {
	if math.Abs(v) <= 0.04045 {
		return v / 12.92
	}
	return math.Copysign(math.Pow((math.Abs(v)+0.055)/1.055, 2.4), v)
}

func fromLinear(v float64) float64 {
	if math.Abs(v) <= 0.0031308 {
		return 12.92 * v
	}
	return math.Copysign(1.055*math.Pow(math.Abs(v), 1/2.4)-0.055, v)
}

// hwbToRGB converts a hue in degrees and a whiteness and blackness from 0
// to 1.
func hwbToRGB(h, w, b float64) (float64, float64, float64) {
	w, b = clamp01(w), clamp01(b)
	if w+b >= 1 {
		g := w / (w + b)
		return g, g, g
	}
	r, g, bl := hslToRGB(h, 1, 0.5)
	f := func(v float64) float64 { return v*(1-w-b) + w }
	return f(r), f(g), f(bl)
}

// colourMix reads the arguments of color-mix(): "in" a space (with, for a
// polar one, "shorter hue" or none), then two colours, each with a share
// or none, mixed in that space as CSS Color 5 says.
func colourMix(args string, current colour) colour {
	list := splitTop(args, ',')
	method := strings.Fields(strings.TrimSpace(list[0]))
	if len(list) != 3 || len(method) != 2 && !(len(method) == 4 && method[2] == "shorter" && method[3] == "hue") || method[0] != "in" {
		return unknown
	}
	var cs [2]colour
	var ps [2]float64
	given := [2]bool{}
	for i, arg := range list[1:] {
		cs[i] = unknown
		for _, tok := range topFields(strings.TrimSpace(arg)) {
			if strings.HasSuffix(tok, "%") {
				p, ok := measure{pct: 100}.px(tok)
				if !ok || p < 0 || p > 100 {
					return unknown
				}
				ps[i], given[i] = p, true
			} else if c, ok := colourOf(tok, current); ok {
				cs[i] = c
			} else {
				return unknown
			}
		}
	}
	switch {
	case !given[0] && !given[1]:
		ps = [2]float64{50, 50}
	case !given[0]:
		ps[0] = 100 - ps[1]
	case !given[1]:
		ps[1] = 100 - ps[0]
	}
	sum := ps[0] + ps[1]
	into, out, hue := mixSpace(method[1])
	if sum <= 0 || !cs[0].known || !cs[1].known || into == nil {
		return unknown
	}
	w := ps[1] / sum
	a := cs[0].a*(1-w) + cs[1].a*w
	x, y := into(cs[0]), into(cs[1])
	var mixed [3]float64
	for i := range 3 {
		if i == hue {
			mixed[i] = mixHue(x[i], y[i], w)
		} else if a > 0 {
			mixed[i] = (x[i]*cs[0].a*(1-w) + y[i]*cs[1].a*w) / a
		}
	}
	c := out(mixed)
	c.a = a * min(sum, 100) / 100
	return c
}

// mixHue mixes two hues in degrees the shorter way round; a hue that is
// NaN (of a grey) takes the other's.
func mixHue(h1, h2, w float64) float64 {
	switch {
	case math.IsNaN(h1) && math.IsNaN(h2):
		return 0
	case math.IsNaN(h1):
		return h2
	case math.IsNaN(h2):
		return h1
	}
	if d := h2 - h1; d > 180 {
		h1 += 360
	} else if d < -180 {
		h2 += 360
	}
	return h1*(1-w) + h2*w
}

// mixSpace is how to carry a colour into the space color-mix() names and
// back, and which of its channels is a hue (-1 for none).
func mixSpace(space string) (into func(colour) [3]float64, out func([3]float64) colour, hue int) {
	linear := func(c colour) [3]float64 { return [3]float64{toLinear(c.r), toLinear(c.g), toLinear(c.b)} }
	rgb := func(r, g, b float64) colour { return colour{clamp01(r), clamp01(g), clamp01(b), 1, true} }
	fromLin := func(to func([3]float64) [3]float64) func([3]float64) colour {
		return func(x [3]float64) colour {
			lin := to(x)
			return rgb(fromLinear(lin[0]), fromLinear(lin[1]), fromLinear(lin[2]))
		}
	}
	toLab := func(c colour) [3]float64 { return xyzToLab(apply(d65ToD50, apply(linearToXYZ, linear(c)))) }
	fromLab := func(x [3]float64) [3]float64 { return apply(xyzToLinear, apply(d50ToD65, labToXYZ(x))) }
	toOklab := func(c colour) [3]float64 { return linearToOklab(linear(c)) }
	switch space {
	case "srgb":
		return func(c colour) [3]float64 { return [3]float64{c.r, c.g, c.b} }, func(x [3]float64) colour { return rgb(x[0], x[1], x[2]) }, -1
	case "srgb-linear", "xyz", "xyz-d65", "xyz-d50":
		// Each is a linear map of the others: a mix in one is a mix in all.
		return linear, fromLin(func(x [3]float64) [3]float64 { return x }), -1
	case "lab":
		return toLab, fromLin(fromLab), -1
	case "oklab":
		return toOklab, fromLin(oklabToLinear), -1
	case "lch":
		return func(c colour) [3]float64 { return toPolar(toLab(c), 0.02) }, fromLin(func(x [3]float64) [3]float64 { return fromLab(fromPolar(x)) }), 2
	case "oklch":
		return func(c colour) [3]float64 { return toPolar(toOklab(c), 0.0002) }, fromLin(func(x [3]float64) [3]float64 { return oklabToLinear(fromPolar(x)) }), 2
	case "hsl":
		return rgbToHSL, func(x [3]float64) colour { return rgb(hslToRGB(x[0], x[1], x[2])) }, 0
	case "hwb":
		return func(c colour) [3]float64 {
			hsl := rgbToHSL(c)
			return [3]float64{hsl[0], min(c.r, c.g, c.b), 1 - max(c.r, c.g, c.b)}
		}, func(x [3]float64) colour { return rgb(hwbToRGB(x[0], x[1], x[2])) }, 0
	}
	return nil, nil, -1
}

// toPolar turns a lab-like colour into lightness, chroma and hue; the hue
// of a colour of chroma under grey is NaN.
func toPolar(x [3]float64, grey float64) [3]float64 {
	c, h := math.Hypot(x[1], x[2]), math.Atan2(x[2], x[1])*180/math.Pi
	if c < grey {
		h = math.NaN()
	}
	return [3]float64{x[0], c, h}
}

func fromPolar(x [3]float64) [3]float64 {
	h := x[2] * math.Pi / 180
	return [3]float64{x[0], x[1] * math.Cos(h), x[1] * math.Sin(h)}
}

// rgbToHSL is a colour's hue in degrees (NaN for a grey), saturation and
// lightness.
func rgbToHSL(c colour) [3]float64 {
	hi, lo := max(c.r, c.g, c.b), min(c.r, c.g, c.b)
	l, d := (hi+lo)/2, hi-lo
	if d == 0 {
		return [3]float64{math.NaN(), 0, l}
	}
	s := d / (1 - math.Abs(2*l-1))
	var h float64
	switch hi {
	case c.r:
		h = math.Mod((c.g-c.b)/d+6, 6)
	case c.g:
		h = (c.b-c.r)/d + 2
	default:
		h = (c.r-c.g)/d + 4
	}
	return [3]float64{h * 60, s, l}
}
