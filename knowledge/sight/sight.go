package sight

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Seen says what of a parsed page its reader does not see: elements gone
// with all they hold, and text an inherited style hides (too small, of no
// visibility, in the colour of its backdrop), which an element inside may
// undo.
type Seen struct {
	gone  map[*html.Node]bool
	muted map[*html.Node]bool
}

// Gone reports an element its reader sees nothing of, nor of all it holds.
func (s Seen) Gone(n *html.Node) bool { return s.gone[n] }

// Muted reports a text node a style hides.
func (s Seen) Muted(n *html.Node) bool { return s.muted[n] }

// look reads a page's inline styles and the simple rules of its <style>
// elements (rules of a tag or :root, classes and an id; others are
// ignored) as a browser applies them: the hints of attributes, then the
// rules by specificity, then in order, then the inline style, the last
// declaration of a property winning unless an earlier one is !important.
// It looks at the page on each screen its media conditions tell apart
// (views): what is hidden on one of them is hidden.
func Look(root *html.Node) Seen {
	l := looker{
		sheet: readSheet(root), matched: map[*html.Node]*match{}, styles: map[string]map[string]string{},
		slotted: map[*html.Node]bool{},
		seen:    Seen{gone: map[*html.Node]bool{}, muted: map[*html.Node]bool{}},
	}
	for _, v := range l.sheet.views() {
		l.view = v
		l.visit(root, page(v))
	}
	return l.seen
}

// looker looks at a page in one view after another.
type looker struct {
	sheet   *sheet
	view    view
	seen    Seen
	matched map[*html.Node]*match
	// slotted holds the children of shadow hosts that a slot showed in
	// this view.
	slotted map[*html.Node]bool
	// styles are the styles met so far, by the rules and inline style
	// they come from.
	styles map[string]map[string]string
}

// match is what of a page's styles an element takes: the rules that match
// it, the hints of its attributes and its inline style.
type match struct {
	rules  []int
	hints  []declaration
	inline string
	// fixed is the element's style when no rule of it holds under a
	// media condition: the same in every view.
	fixed map[string]string
}

func (l *looker) visit(n *html.Node, inherited textStyle) {
	switch n.Type {
	case html.TextNode:
		if inherited.hidden() {
			l.seen.muted[n] = true
		}
		return
	case html.ElementNode:
		if skippedElement(n) || unrenderedMath(n) {
			l.seen.gone[n] = true
			return
		}
		decl := l.sheet.animated(l.style(n))
		decl, inherited.vars = substitute(decl, inherited.vars)
		inherited = inherited.with(decl, n.DataAtom == atom.Html)
		if hidesAll(decl, inherited) {
			l.seen.gone[n] = true
			return
		}
		if shadow := shadowRoot(n); shadow != nil {
			l.visitShadow(n, shadow, inherited)
			return
		}
		if host := hostOf(n); host != nil {
			if shown := assigned(host, attr(n, "name")); len(shown) > 0 {
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					l.hide(c) // what a slot shows when nothing fills it
				}
				for _, c := range shown {
					l.slotted[c] = true
					l.visit(c, inherited)
				}
				return
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		l.visit(c, inherited)
	}
}

// visitShadow looks at a shadow host: a browser draws its shadow tree, and
// of its own children only those the tree's slots show, where they show
// them.
func (l *looker) visitShadow(host, shadow *html.Node, inherited textStyle) {
	for c := host.FirstChild; c != nil; c = c.NextSibling {
		delete(l.slotted, c)
	}
	for c := shadow.FirstChild; c != nil; c = c.NextSibling {
		l.visit(c, inherited)
	}
	for c := host.FirstChild; c != nil; c = c.NextSibling {
		if c != shadow && !l.slotted[c] {
			l.hide(c)
		}
	}
}

func (l *looker) hide(n *html.Node) {
	if n.Type == html.TextNode {
		l.seen.muted[n] = true
	} else {
		l.seen.gone[n] = true
	}
}

// style is the declarations of element n in the current view: the
// presentational hints of its attributes, then its rules, then its inline
// style.
func (l *looker) style(n *html.Node) map[string]string {
	m := l.matched[n]
	if m == nil {
		m = &match{rules: l.sheet.matching(n), hints: hints(n), inline: cssText(attr(n, "style"))}
		l.matched[n] = m
	}
	if m.fixed != nil {
		return m.fixed
	}
	var key strings.Builder
	for _, h := range m.hints {
		key.WriteString(h.prop + ":" + h.val + ";")
	}
	key.WriteString("\x00")
	conditional := false
	for _, i := range m.rules {
		r := l.sheet.rules[i]
		conditional = conditional || r.when >= 0
		if r.when < 0 || l.view.holds[r.when] {
			key.WriteString(strconv.Itoa(i) + ",")
		}
	}
	key.WriteString("\x00" + m.inline)
	decl, ok := l.styles[key.String()]
	if !ok {
		var decls []declaration
		for _, i := range m.rules {
			if r := l.sheet.rules[i]; r.when < 0 || l.view.holds[r.when] {
				decls = append(decls, r.decls...)
			}
		}
		decl = cascade(append(append(slices.Clip(m.hints), decls...), parseDeclarations(m.inline)...))
		l.styles[key.String()] = decl
	}
	if !conditional {
		m.fixed = decl
	}
	return decl
}

// skippedElement reports an element whose content is no text of the page:
// what runs or styles it, what navigates, what the page keeps closed or
// marks hidden, and the fallback of what a browser draws in its place
// (canvas, media, meters; an object's too, shown only where what it
// embeds fails to load).
func skippedElement(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Nav, atom.Noscript, atom.Noembed, atom.Noframes, atom.Template, atom.Form, atom.Head,
		atom.Iframe, atom.Object, atom.Svg, atom.Canvas, atom.Video, atom.Audio, atom.Meter, atom.Progress:
		return true
	case atom.Dialog:
		return !hasAttr(n, "open")
	}
	return hasAttr(n, "hidden") || hasAttr(n, "popover") || strings.EqualFold(strings.TrimSpace(attr(n, "aria-hidden")), "true")
}

// shadowRoot is the declarative shadow root of n, if it is a host: its
// first <template shadowrootmode> child.
func shadowRoot(n *html.Node) *html.Node {
	if n == nil || n.Type != html.ElementNode || n.Namespace != "" || !strings.Contains(n.Data, "-") && !shadowHosts[n.DataAtom] {
		return nil
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if mode := strings.ToLower(attr(c, "shadowrootmode")); c.DataAtom == atom.Template && (mode == "open" || mode == "closed") {
			return c
		}
	}
	return nil
}

// shadowHosts are the elements that may hold a shadow root, besides
// custom elements.
var shadowHosts = map[atom.Atom]bool{
	atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Body: true, atom.Div: true, atom.Footer: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true, atom.Header: true,
	atom.Main: true, atom.Nav: true, atom.P: true, atom.Section: true, atom.Span: true,
}

// scopeOf is the shadow root whose tree n is in, nil for the document.
func scopeOf(n *html.Node) *html.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.DataAtom == atom.Template && p == shadowRoot(p.Parent) {
			return p
		}
	}
	return nil
}

// hostOf is the shadow host whose tree slot n is in; nil if n is no slot
// of a shadow tree.
func hostOf(n *html.Node) *html.Node {
	if n.DataAtom != atom.Slot || n.Namespace != "" {
		return nil
	}
	if scope := scopeOf(n); scope != nil {
		return scope.Parent
	}
	return nil
}

// assigned are the children of a shadow host that its slot named name
// shows: elements of that slot attribute; for the slot of no name, text
// and elements of none.
func assigned(host *html.Node, name string) []*html.Node {
	var out []*html.Node
	shadow := shadowRoot(host)
	for c := host.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			if name == "" {
				out = append(out, c)
			}
		case html.ElementNode:
			if c != shadow && attr(c, "slot") == name {
				out = append(out, c)
			}
		}
	}
	return out
}

// unrenderedMath reports a MathML element a browser does not draw: an
// annotation, a phantom, any but the first child of <semantics>, any but
// the selected child of <maction>.
func unrenderedMath(n *html.Node) bool {
	if n.Namespace != "math" {
		return false
	}
	switch n.Data {
	case "annotation", "annotation-xml", "mphantom":
		return true
	}
	p := n.Parent
	if p == nil || p.Namespace != "math" || p.Data != "semantics" && p.Data != "maction" {
		return false
	}
	shown := 1
	if p.Data == "maction" {
		if i, err := strconv.Atoi(strings.TrimSpace(attr(p, "selection"))); err == nil {
			shown = i
		}
	}
	for c := p.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			if shown--; shown == 0 {
				return c != n
			}
		}
	}
	return true
}

// hints are the declarations an element's attributes stand for, which
// any rule or inline style overrides: HTML's <font color>, <body text> and
// bgcolor, and MathML's colour, background, size and script level.
func hints(n *html.Node) []declaration {
	var out []declaration
	mathML := n.Namespace == "math"
	for _, a := range n.Attr {
		var prop string
		switch {
		case mathML && a.Key == "mathcolor", n.DataAtom == atom.Font && a.Key == "color", n.DataAtom == atom.Body && a.Key == "text":
			prop = "color"
		case mathML && a.Key == "mathbackground", n.Namespace == "" && a.Key == "bgcolor":
			prop = "background-color"
		case mathML && a.Key == "mathsize":
			prop = "font-size"
		case mathML && a.Key == "scriptlevel":
			prop = "math-depth"
		default:
			continue
		}
		val := cssText(a.Val)
		if !mathML {
			val = legacyColour(val)
		}
		out = append(out, declaration{prop: prop, val: strings.Join(strings.Fields(val), " ")})
	}
	return out
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if strings.EqualFold(a.Key, key) {
			return true
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

// textStyle is what an element passes on to the text inside it: its
// visibility, its font size and the root's in pixels, the colours its
// text is drawn in and what lies behind it.
type textStyle struct {
	invisible  bool
	size, root float64
	// zoom is how much zoom and scaling shrink or grow the text.
	zoom  float64
	color colour
	// fill is the colour -webkit-text-fill-color draws text in, if set;
	// stroke the colour of -webkit-text-stroke (nil: color), strokeWidth
	// its width.
	fill, stroke *colour
	strokeWidth  float64
	// blur is how far, in pixels on the screen, filters blur the text.
	blur float64
	// shadows are the text's shadows, which draw it too.
	shadows []shadow
	// vars are the custom properties (--name) in force, their var()s
	// resolved.
	vars map[string]string
	// backdrop is what lies behind the text: unknown under an image.
	backdrop colour
	// painted is set under a background clipped to the text
	// (background-clip:text) that shows: it draws the text.
	painted bool
	view    view
}

// page is the style a page starts from in view v: a browser's default
// 16 px black font on white.
func page(v view) textStyle {
	return textStyle{size: 16, root: 16, zoom: 1, color: black, backdrop: white, view: v}
}

// minFont is the smallest font size, in pixels, whose text a reader can
// make out.
const minFont = 2

// blurredOut is the blur of a filter, against the font size, that leaves
// no glyph to make out: blur(8px) smears 16 px text (whose strokes are a
// pixel or two wide and whose small letters half its size) into a haze.
const blurredOut = 0.5

// hidden reports text that with this style a reader does not see: of no
// visibility, too small once zoomed and scaled, blurred out, or drawn (by
// its fill, its stroke or its shadows) in no colour that stands out from
// what lies behind it.
func (t textStyle) hidden() bool {
	fill, stroke := t.color, t.color
	if t.fill != nil {
		fill = *t.fill
	}
	if t.stroke != nil {
		stroke = *t.stroke
	}
	inked := t.painted || !fill.looksLike(t.backdrop) || t.strokeWidth > 0 && !stroke.looksLike(t.backdrop) ||
		slices.ContainsFunc(t.shadows, func(s shadow) bool { return s.shows(t) })
	return t.invisible || t.size*t.zoom < minFont || !inked || t.blur >= blurredOut*t.size*t.zoom
}

// with is the style an element with declarations decl passes on: its own
// visibility, size and colours where it sets them, and its background.
// Its font size is measured against its parent's (em, %) or the root
// element's (rem); the root element's is the size rem measures.
func (t textStyle) with(decl map[string]string, root bool) textStyle {
	if v, ok := decl["visibility"]; ok {
		t.invisible = v == "hidden" || v == "collapse"
	}
	m := measure{rem: t.root, vw: t.view.least.w, vh: t.view.least.h}
	for _, size := range []string{fontSize(decl["font"]), decl["font-size"]} {
		if px, ok := fontPx(size, t.size, m); ok && size != "" {
			t.size = px
		}
	}
	if d, ok := mathDepth(decl["math-depth"]); ok {
		t.size *= math.Pow(0.71, d)
	}
	if root {
		t.root = t.size
	}
	t.zoom *= zoomOf(decl)
	for _, b := range blurFilter.FindAllStringSubmatch(decl["filter"], -1) {
		// A filter blurs the box before its transform scales it;
		// blurs one inside another add up as a Gaussian's do.
		if r, ok := t.measure().px(b[1]); ok && r > 0 {
			t.blur = math.Hypot(t.blur, r*t.zoom)
		}
	}
	paint := func(v string) (*colour, bool) {
		switch v {
		case "", "inherit", "unset":
			return nil, false
		case "currentcolor", "initial":
			return nil, true
		}
		c, _ := colourOf(v, t.color)
		return &c, true
	}
	if c, ok := paint(decl["color"]); ok {
		t.color = black
		if c != nil {
			t.color = *c
		}
	}
	if c, ok := paint(decl["-webkit-text-fill-color"]); ok {
		t.fill = c
	}
	for _, v := range topFields(decl["-webkit-text-stroke"]) {
		if w, ok := t.measure().px(v); ok {
			t.strokeWidth = w
		} else if c, ok := paint(v); ok {
			t.stroke = c
		}
	}
	if v, ok := decl["text-shadow"]; ok && v != "inherit" && v != "unset" {
		t.shadows = shadows(v, t.measure())
	}
	if w, ok := t.measure().px(decl["-webkit-text-stroke-width"]); ok {
		t.strokeWidth = w
	}
	if c, ok := paint(decl["-webkit-text-stroke-color"]); ok {
		t.stroke = c
	}
	set, image, c := background(decl, t.color)
	switch clip := decl["background-clip"] + decl["-webkit-background-clip"]; {
	case strings.Contains(clip, "text"):
		// The background draws the text: it shows if it has an image
		// of colours (other than a gradient's all like the backdrop) or
		// a colour unlike the backdrop.
		stops, gradient := gradientColours(decl["background"]+" "+decl["background-image"], t.color)
		t.painted = image && (!gradient || slices.ContainsFunc(stops, func(s colour) bool { return !s.looksLike(t.backdrop) })) ||
			!c.looksLike(t.backdrop)
	case image:
		t.backdrop = unknown
	case set:
		t.backdrop = c.over(t.backdrop)
	}
	return t
}

// hidesAll reports declarations that hide an element with all it holds:
// no display, next to no opacity, hidden content, text indented or placed
// far off the page or out of its box (placedAway), a box clipped away (to a shape of no
// area), masked away or shrunk to a pixel with its overflow hidden, a
// scale of zero, its back turned with its back face hidden. Its lengths are measured as t measures them.
func hidesAll(decl map[string]string, t textStyle) bool {
	m := t.measure()
	pixel := func(p string) bool { v, ok := m.px(firstValue(decl[p])); return ok && v <= 1 }
	far := func(p string) bool {
		along := m
		if p == "top" || p == "bottom" {
			along.pct = m.vh
		}
		v, ok := along.px(firstValue(decl[p]))
		return ok && v <= -farOff
	}
	opacity, ok := measure{pct: 1}.px(decl["opacity"])
	switch {
	case decl["display"] == "none", decl["content-visibility"] == "hidden":
		return true
	case ok && opacity <= 0.05:
		return true
	case far("text-indent"), far("margin-left"), far("margin-top"):
		return true
	case placedAway(decl, t):
		return true
	case clippedAway.MatchString(decl["clip"]), clippedAway.MatchString(decl["clip-path"]), insetAway(decl["clip-path"]),
		flatShape(decl["clip-path"]):
		return true
	case indentedOut(decl, m):
		return true
	case masksAll(decl):
		return true
	case decl["overflow"] == "hidden" && (pixel("width") || pixel("height") || pixel("max-height") || pixel("max-width")):
		return true
	case zeroScale.MatchString(decl["transform"]), zeroOrLess(decl["scale"]), farTranslate.MatchString(decl["transform"]), far("translate"):
		return true
	case decl["backface-visibility"] == "hidden" && transformOf(decl).backFacing():
		return true
	case noOpacity.MatchString(decl["filter"]):
		return true
	}
	return false
}

var (
	number       = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?`)
	clippedAway  = regexp.MustCompile(`^(rect\(\s*0+(px)?[\s,]+0+(px)?[\s,]+0+(px)?[\s,]+0+(px)?\s*\)|circle\(\s*0)`)
	inset        = regexp.MustCompile(`^inset\(\s*([\d.]+)%`)
	zeroScale    = regexp.MustCompile(`scale[xy3d]*\(\s*0*\.?0*\s*[,)]`)
	farTranslate = regexp.MustCompile(`translate[xy3d]*\(\s*-(\d{3,}|[5-9]\d{2})(px|%|vw|vh)?|translate[xy3d]*\(\s*-\d+(\.\d+)?(vw|vh)`)
	noOpacity    = regexp.MustCompile(`opacity\(\s*0*\.?0*%?\s*\)`)
	blurFilter   = regexp.MustCompile(`blur\(([^()]*)\)`)
)

// flatShape reports a clip-path ellipse or polygon of no area: a radius
// of zero, fewer than three points, or points all on one line.
func flatShape(v string) bool {
	name, args, ok := strings.Cut(v, "(")
	args = strings.TrimSuffix(args, ")")
	zero := func(v string) bool {
		f, err := strconv.ParseFloat(number.FindString(v), 64)
		return err == nil && f == 0
	}
	switch {
	case !ok:
		return false
	case name == "ellipse":
		f := topFields(args)
		return len(f) >= 2 && (zero(f[0]) || zero(f[1]))
	case name != "polygon":
		return false
	}
	points := splitTop(args, ',')
	if f := strings.TrimSpace(points[0]); f == "nonzero" || f == "evenodd" {
		points = points[1:]
	}
	var xs, ys []float64
	unit := ""
	for _, p := range points {
		f := topFields(p)
		if len(f) != 2 {
			return false
		}
		for i, c := range f {
			num := number.FindString(c)
			v, err := strconv.ParseFloat(num, 64)
			if num == "" || err != nil {
				return false
			}
			if u := c[len(num):]; v != 0 && u != unit {
				if unit != "" {
					return false // units this package cannot compare
				}
				unit = u
			}
			if i == 0 {
				xs = append(xs, v)
			} else {
				ys = append(ys, v)
			}
		}
	}
	area := 0.0
	for i := range xs {
		j := (i + 1) % len(xs)
		area += xs[i]*ys[j] - xs[j]*ys[i]
	}
	return area == 0
}

// indentedOut reports text indented out of a box that does not wrap it
// and hides its overflow (text-indent:100%; white-space:nowrap;
// overflow:hidden): by at least the box's width, or the narrowest
// window's if it sets none.
func indentedOut(decl map[string]string, m measure) bool {
	clips := func(p string) bool { v := firstValue(decl[p]); return v == "hidden" || v == "clip" }
	nowrap := decl["white-space"] == "nowrap" || decl["white-space"] == "pre" || decl["text-wrap"] == "nowrap" || decl["text-wrap-mode"] == "nowrap"
	if !nowrap || !clips("overflow") && !clips("overflow-x") {
		return false
	}
	width, ok := m.px(decl["width"])
	if !ok {
		width = screenMin.w
	}
	m.pct = width
	indent, ok := m.px(firstValue(decl["text-indent"]))
	return ok && indent >= width
}

// masksAll reports a mask of gradients whose every colour is transparent:
// it lets nothing show.
func masksAll(decl map[string]string) bool {
	for _, p := range []string{"mask", "mask-image", "-webkit-mask", "-webkit-mask-image"} {
		stops, ok := gradientColours(decl[p], black)
		if ok && !slices.ContainsFunc(stops, func(c colour) bool { return c.a > 0.05 }) {
			return true
		}
	}
	return false
}

// zoomOf is how much an element's zoom and transforms shrink or grow what
// it holds: the zoom (0 counts as 1) times what the transforms leave of
// the narrowest way across (transformOf).
func zoomOf(decl map[string]string) float64 {
	z := 1.0
	if f, ok := (measure{pct: 1}).px(decl["zoom"]); ok && f > 0 {
		z = f
	}
	return z * transformOf(decl).narrowest()
}

// insetAway reports a clip-path inset of half the box or more from every
// side, which leaves nothing.
func insetAway(v string) bool {
	m := inset.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	return err == nil && f >= 50
}

// mathDepth reads how many script levels deeper math-depth (or MathML's
// scriptlevel) puts an element: each shrinks its font by 0.71. A level
// given outright is taken as one more than the parent's.
func mathDepth(v string) (float64, bool) {
	v = strings.TrimSuffix(strings.TrimPrefix(v, "add("), ")")
	d, err := strconv.ParseFloat(strings.TrimPrefix(v, "+"), 64)
	return d, err == nil
}

// zeroOrLess reports a value that is a number of zero or less.
func zeroOrLess(v string) bool {
	f, ok := measure{}.px(firstValue(v))
	return ok && f <= 0
}

// fontSize is the size in a font shorthand ("0/0 a", "italic 0px serif",
// "small serif"): its first word that starts with a number or is a size.
func fontSize(font string) string {
	for _, w := range strings.Fields(font) {
		if size, _, _ := strings.Cut(w, "/"); number.MatchString(size) || fontSizeKeywords[size] > 0 {
			return size
		}
	}
	return ""
}

// measure is what the lengths of an element with this style are measured
// against: the widest window, which puts what is placed off it farthest.
func (t textStyle) measure() measure {
	return measure{em: t.size, rem: t.root, vw: t.view.most.w, vh: t.view.most.h, pct: t.view.most.w}
}
