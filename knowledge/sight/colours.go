package sight

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// colour is a CSS colour, each channel from 0 to 1; known is false for one
// this package cannot read (a variable, a colour space it does not
// convert).
type colour struct {
	r, g, b, a float64
	known      bool
}

var (
	black   = colour{0, 0, 0, 1, true}
	white   = colour{1, 1, 1, 1, true}
	unknown = colour{}
)

// alike is how far apart, in every channel, two colours may be and still
// look the same: 16 of 255.
const alike = 16.0 / 255

// over is colour c laid over background bg.
func (c colour) over(bg colour) colour {
	if !c.known || !bg.known {
		if c.known && c.a >= 1 {
			return c
		}
		return unknown
	}
	mix := func(x, y float64) float64 { return c.a*x + (1-c.a)*y }
	a := c.a + bg.a*(1-c.a)
	return colour{mix(c.r, bg.r), mix(c.g, bg.g), mix(c.b, bg.b), a, true}
}

// looksLike reports whether c, drawn on bg, cannot be told from it.
func (c colour) looksLike(bg colour) bool {
	if !c.known {
		return false
	}
	if c.a <= 0.05 {
		return true
	}
	if !bg.known {
		return false
	}
	d := c.over(bg)
	return math.Abs(d.r-bg.r) <= alike && math.Abs(d.g-bg.g) <= alike && math.Abs(d.b-bg.b) <= alike
}

// colourOf reads a CSS colour; current is what currentcolor is. isColour
// is false for a value that is no colour at all (a length, a keyword of
// another kind); a colour it cannot read is unknown.
func colourOf(v string, current colour) (c colour, isColour bool) {
	switch {
	case v == "transparent":
		return colour{known: true}, true
	case v == "currentcolor":
		return current, true
	case strings.HasPrefix(v, "#"):
		return hexColour(v[1:])
	case namedColours[v] != "":
		return hexColour(namedColours[v])
	case systemColours[v] != "":
		return hexColour(systemColours[v])
	}
	name, args, ok := strings.Cut(v, "(")
	if !ok || !strings.HasSuffix(args, ")") || !colourFunction.MatchString(name) {
		return unknown, false
	}
	args = strings.TrimSuffix(args, ")")
	if name == "color-mix" {
		return colourMix(args, current), true
	}
	channels, alpha, slash := strings.Cut(args, "/")
	parts := strings.Fields(strings.ReplaceAll(channels, ",", " "))
	if !slash && strings.Contains(channels, ",") && len(parts) == 4 {
		parts, alpha, slash = parts[:3], parts[3], true
	}
	c = colour{a: 1, known: true}
	if slash {
		a, ok := measure{pct: 1}.px(strings.TrimSpace(alpha))
		if !ok {
			return unknown, true
		}
		c.a = min(max(a, 0), 1)
	}
	if name != "rgb" && name != "rgba" && name != "hsl" && name != "hsla" || len(parts) != 3 {
		var ok bool
		switch c.r, c.g, c.b, ok = spaceColour(name, parts); {
		case ok:
			return c, true
		case c.a == 0: // no colour at all, whatever its channels
			return c, true
		}
		return unknown, true
	}
	var x [3]float64
	for i, p := range parts {
		var ok bool
		if p == "none" {
			p = "0"
		}
		switch {
		case name[0] == 'r':
			x[i], ok = measure{pct: 255}.px(p)
			x[i] /= 255
		case i == 0:
			x[i], ok = degrees(p)
		default:
			x[i], ok = measure{pct: 100}.px(p)
			x[i] /= 100
		}
		if !ok {
			return unknown, true
		}
	}
	if name[0] == 'h' {
		c.r, c.g, c.b = hslToRGB(x[0], x[1], x[2])
	} else {
		c.r, c.g, c.b = clamp01(x[0]), clamp01(x[1]), clamp01(x[2])
	}
	return c, true
}

// degrees reads an angle in degrees.
func degrees(v string) (float64, bool) {
	num := number.FindString(v)
	f, err := strconv.ParseFloat(num, 64)
	scale, ok := angleUnits[v[len(num):]]
	return f * scale, ok && num != "" && err == nil
}

var angleUnits = map[string]float64{"": 1, "deg": 1, "turn": 360, "rad": 180 / math.Pi, "grad": 0.9}

func clamp01(f float64) float64 { return min(max(f, 0), 1) }

var colourFunction = regexp.MustCompile(`^(rgba?|hsla?|hwb|lab|lch|oklab|oklch|color|color-mix|light-dark|device-cmyk)$`)

// hslToRGB converts a hue in degrees and a saturation and lightness from 0
// to 1.
func hslToRGB(h, s, l float64) (r, g, b float64) {
	s, l = clamp01(s), clamp01(l)
	h = math.Mod(math.Mod(h, 360)+360, 360)
	f := func(n float64) float64 {
		k := math.Mod(n+h/30, 12)
		return l - s*min(l, 1-l)*max(-1, min(k-3, 9-k, 1))
	}
	return f(0), f(8), f(4)
}

// hexColour reads the hex digits of a colour: rgb, rgba, rrggbb, rrggbbaa.
func hexColour(h string) (colour, bool) {
	if len(h) == 3 || len(h) == 4 {
		var b strings.Builder
		for _, r := range h {
			b.WriteString(string(r) + string(r))
		}
		h = b.String()
	}
	if len(h) == 6 {
		h += "ff"
	}
	v, err := strconv.ParseUint(h, 16, 32)
	if len(h) != 8 || err != nil {
		return unknown, true
	}
	ch := func(shift uint) float64 { return float64(v>>shift&0xff) / 255 }
	return colour{ch(24), ch(16), ch(8), ch(0), true}, true
}

// legacyColour reads a colour attribute of HTML (<font color>, bgcolor):
// a CSS colour, or six hex digits without their #.
func legacyColour(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	if len(v) == 6 && strings.Trim(v, "0123456789abcdef") == "" {
		return "#" + v
	}
	return v
}

// namedColours are CSS's colour keywords.
var namedColours = func() map[string]string {
	out := map[string]string{}
	f := strings.Fields(`aliceblue f0f8ff antiquewhite faebd7 aqua 00ffff aquamarine 7fffd4 azure f0ffff beige f5f5dc
		bisque ffe4c4 black 000000 blanchedalmond ffebcd blue 0000ff blueviolet 8a2be2 brown a52a2a burlywood deb887
		cadetblue 5f9ea0 chartreuse 7fff00 chocolate d2691e coral ff7f50 cornflowerblue 6495ed cornsilk fff8dc
		crimson dc143c cyan 00ffff darkblue 00008b darkcyan 008b8b darkgoldenrod b8860b darkgray a9a9a9
		darkgreen 006400 darkgrey a9a9a9 darkkhaki bdb76b darkmagenta 8b008b darkolivegreen 556b2f darkorange ff8c00
		darkorchid 9932cc darkred 8b0000 darksalmon e9967a darkseagreen 8fbc8f darkslateblue 483d8b
		darkslategray 2f4f4f darkslategrey 2f4f4f darkturquoise 00ced1 darkviolet 9400d3 deeppink ff1493
		deepskyblue 00bfff dimgray 696969 dimgrey 696969 dodgerblue 1e90ff firebrick b22222 floralwhite fffaf0
		forestgreen 228b22 fuchsia ff00ff gainsboro dcdcdc ghostwhite f8f8ff gold ffd700 goldenrod daa520
		gray 808080 green 008000 greenyellow adff2f grey 808080 honeydew f0fff0 hotpink ff69b4 indianred cd5c5c
		indigo 4b0082 ivory fffff0 khaki f0e68c lavender e6e6fa lavenderblush fff0f5 lawngreen 7cfc00
		lemonchiffon fffacd lightblue add8e6 lightcoral f08080 lightcyan e0ffff lightgoldenrodyellow fafad2
		lightgray d3d3d3 lightgreen 90ee90 lightgrey d3d3d3 lightpink ffb6c1 lightsalmon ffa07a lightseagreen 20b2aa
		lightskyblue 87cefa lightslategray 778899 lightslategrey 778899 lightsteelblue b0c4de lightyellow ffffe0
		lime 00ff00 limegreen 32cd32 linen faf0e6 magenta ff00ff maroon 800000 mediumaquamarine 66cdaa
		mediumblue 0000cd mediumorchid ba55d3 mediumpurple 9370db mediumseagreen 3cb371 mediumslateblue 7b68ee
		mediumspringgreen 00fa9a mediumturquoise 48d1cc mediumvioletred c71585 midnightblue 191970 mintcream f5fffa
		mistyrose ffe4e1 moccasin ffe4b5 navajowhite ffdead navy 000080 oldlace fdf5e6 olive 808000 olivedrab 6b8e23
		orange ffa500 orangered ff4500 orchid da70d6 palegoldenrod eee8aa palegreen 98fb98 paleturquoise afeeee
		palevioletred db7093 papayawhip ffefd5 peachpuff ffdab9 peru cd853f pink ffc0cb plum dda0dd powderblue b0e0e6
		purple 800080 rebeccapurple 663399 red ff0000 rosybrown bc8f8f royalblue 4169e1 saddlebrown 8b4513
		salmon fa8072 sandybrown f4a460 seagreen 2e8b57 seashell fff5ee sienna a0522d silver c0c0c0 skyblue 87ceeb
		slateblue 6a5acd slategray 708090 slategrey 708090 snow fffafa springgreen 00ff7f steelblue 4682b4 tan d2b48c
		teal 008080 thistle d8bfd8 tomato ff6347 turquoise 40e0d0 violet ee82ee wheat f5deb3 white ffffff
		whitesmoke f5f5f5 yellow ffff00 yellowgreen 9acd32`)
	for i := 0; i+1 < len(f); i += 2 {
		out[f[i]] = f[i+1]
	}
	return out
}()

// background is what a style's background declarations say: whether they
// set one, whether it holds an image (whose colours are not known), and
// its colour.
func background(decl map[string]string, current colour) (set, image bool, c colour) {
	c = colour{known: true} // transparent
	if v := decl["background"]; v != "" {
		set = true
		layers := splitTop(v, ',')
		for _, l := range layers {
			image = image || imageValue.MatchString(l)
		}
		for _, tok := range topFields(layers[len(layers)-1]) {
			if col, ok := colourOf(tok, current); ok {
				c = col
			} else if strings.Contains(tok, "(") && !imageValue.MatchString(tok) {
				c = unknown // var(), or a function this package does not read
			}
		}
	}
	if v := decl["background-image"]; v != "" && v != "none" && v != "initial" && v != "unset" {
		set, image = true, true
	}
	if v := decl["background-color"]; v != "" {
		set = true
		if col, ok := colourOf(v, current); ok {
			c = col
		} else {
			c = unknown
		}
	}
	return set, image, c
}

var imageValue = regexp.MustCompile(`(url|gradient|image|image-set|element|paint|cross-fade)\(`)

// gradientColours are the colours of a value made of gradients only; ok
// is false for any other image or a colour this package cannot read.
func gradientColours(v string, current colour) (out []colour, ok bool) {
	if !strings.Contains(v, "gradient(") {
		return nil, false
	}
	for _, layer := range splitTop(v, ',') {
		for _, tok := range topFields(strings.TrimSpace(layer)) {
			name, args, isFunc := strings.Cut(tok, "(")
			switch {
			case !isFunc:
				continue
			case !strings.HasSuffix(name, "gradient"):
				return nil, false
			}
			for _, stop := range splitTop(strings.TrimSuffix(args, ")"), ',') {
				for _, w := range topFields(strings.TrimSpace(stop)) {
					if c, isColour := colourOf(w, current); isColour {
						if !c.known {
							return nil, false
						}
						out = append(out, c)
					}
				}
			}
		}
	}
	return out, len(out) > 0
}

// topFields splits v at spaces outside brackets.
func topFields(v string) []string {
	var out []string
	for _, f := range splitTop(v, ' ') {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// shadow is one shadow of a text: its colour (nil: the text's colour),
// offsets and blur radius in pixels.
type shadow struct {
	c          *colour
	x, y, blur float64
}

// shadows reads a text-shadow, its lengths measured with m; a shadow it
// cannot read is left out.
func shadows(v string, m measure) []shadow {
	var out []shadow
	for _, layer := range splitTop(v, ',') {
		var s shadow
		var lengths []float64
		for _, tok := range topFields(strings.TrimSpace(layer)) {
			if px, ok := m.px(tok); ok {
				lengths = append(lengths, px)
			} else if c, ok := colourOf(tok, black); ok && tok != "currentcolor" {
				s.c = &c
			} else if tok != "currentcolor" {
				lengths = nil
				break
			}
		}
		if len(lengths) < 2 || len(lengths) > 3 {
			continue
		}
		s.x, s.y = lengths[0], lengths[1]
		if len(lengths) == 3 {
			s.blur = lengths[2]
		}
		out = append(out, s)
	}
	return out
}

// shows reports a shadow that draws text of style t where a reader sees
// it: in a colour unlike the backdrop, blurred by less than the font size
// (a blur radius is twice a filter's blur), and not cast far off the page.
func (s shadow) shows(t textStyle) bool {
	c := t.color
	if s.c != nil {
		c = *s.c
	}
	return !c.looksLike(t.backdrop) && s.blur < 2*blurredOut*t.size && s.x > -farOff && s.y > -farOff
}
