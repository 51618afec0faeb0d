package knowledge

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Text no reader of a page sees would otherwise become knowledge every
// agent reads: a way to slip instructions past whoever reviewed the page.

// sight says what of a parsed page its reader does not see: elements gone
// with all they hold, and text an inherited style hides (a size of zero,
// no visibility, a transparent colour), which an element inside may undo.
type sight struct {
	gone  map[*html.Node]bool
	muted map[*html.Node]bool
}

// look reads a page's inline styles and the simple rules of its <style>
// elements (rules of a tag or :root, classes and an id; others are ignored) as a
// browser applies them: the rules in order, then the inline style, the last
// declaration of a property winning unless an earlier one is !important.
func look(root *html.Node) sight {
	s := sight{gone: map[*html.Node]bool{}, muted: map[*html.Node]bool{}}
	rules := styleRules(root)
	var visit func(n *html.Node, inherited textStyle)
	visit = func(n *html.Node, inherited textStyle) {
		switch n.Type {
		case html.TextNode:
			if inherited.hidden() {
				s.muted[n] = true
			}
			return
		case html.ElementNode:
			if skippedElement(n) {
				s.gone[n] = true
				return
			}
			var style strings.Builder
			for _, r := range rules {
				if r.matches(n) {
					style.WriteString(r.decls + ";")
				}
			}
			style.WriteString(attr(n, "style"))
			decl := declarations(style.String())
			inherited = inherited.with(decl, n.DataAtom == atom.Html)
			if hidesAll(decl, inherited.measure()) {
				s.gone[n] = true
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inherited)
		}
	}
	visit(root, page())
	return s
}

// skippedElement reports an element whose content is no text of the page:
// what runs or styles it, what navigates, what the page keeps closed or
// marks hidden.
func skippedElement(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Nav, atom.Noscript, atom.Noembed, atom.Noframes, atom.Template, atom.Form, atom.Head,
		atom.Iframe, atom.Object, atom.Svg, atom.Math:
		return true
	case atom.Dialog:
		return !hasAttr(n, "open")
	}
	return hasAttr(n, "hidden") || hasAttr(n, "popover") || strings.EqualFold(strings.TrimSpace(attr(n, "aria-hidden")), "true")
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
// visibility, its font size and the root's in pixels, and whether its
// colour is clear.
type textStyle struct {
	invisible, clear bool
	size, root       float64
}

// page is the style a page starts from: a browser's default 16 px font.
func page() textStyle { return textStyle{size: 16, root: 16} }

// minFont is the smallest font size, in pixels, whose text a reader can
// make out.
const minFont = 2

func (t textStyle) hidden() bool { return t.invisible || t.size < minFont || t.clear }

// with is the style an element with declarations decl passes on: its own
// visibility, size and colour where it sets them. Its font size is
// measured against its parent's (em, %) or the root element's (rem); the
// root element's is the size rem measures.
func (t textStyle) with(decl map[string]string, root bool) textStyle {
	if v, ok := decl["visibility"]; ok {
		t.invisible = v == "hidden" || v == "collapse"
	}
	m := measure{rem: t.root, vw: screenWidth, vh: screenHeight}
	for _, size := range []string{fontSize(decl["font"]), decl["font-size"]} {
		if px, ok := fontPx(size, t.size, m); ok && size != "" {
			t.size = px
		}
	}
	if root {
		t.root = t.size
	}
	if v, ok := decl["color"]; ok {
		t.clear = v == "transparent" || transparent.MatchString(v)
	}
	return t
}

// hidesAll reports declarations that hide an element with all it holds:
// no display, next to no opacity, hidden content, text indented or placed
// far off the page, a box clipped away or shrunk to a pixel with its
// overflow hidden, a scale of zero. Its lengths are measured with m.
func hidesAll(decl map[string]string, m measure) bool {
	pixel := func(p string) bool { v, ok := m.px(firstValue(decl[p])); return ok && v <= 1 }
	far := func(p string) bool {
		if p == "top" || p == "bottom" {
			m.pct = m.vh
		}
		v, ok := m.px(firstValue(decl[p]))
		return ok && v <= -500
	}
	opacity, ok := measure{pct: 1}.px(decl["opacity"])
	switch {
	case decl["display"] == "none", decl["content-visibility"] == "hidden":
		return true
	case ok && opacity <= 0.05:
		return true
	case far("text-indent"), far("margin-left"), far("margin-top"):
		return true
	case (decl["position"] == "absolute" || decl["position"] == "fixed") && (far("left") || far("top") || far("right") || far("bottom")):
		return true
	case clippedAway.MatchString(decl["clip"]), clippedAway.MatchString(decl["clip-path"]), insetAway(decl["clip-path"]):
		return true
	case decl["overflow"] == "hidden" && (pixel("width") || pixel("height") || pixel("max-height") || pixel("max-width")):
		return true
	case zeroScale.MatchString(decl["transform"]), zeroOrLess(decl["scale"]), farTranslate.MatchString(decl["transform"]), far("translate"):
		return true
	case noOpacity.MatchString(decl["filter"]):
		return true
	}
	return false
}

// declarations reads a style into its properties' values, lower case, the
// winning declaration of each.
func declarations(style string) map[string]string {
	out, important := map[string]string{}, map[string]bool{}
	for _, d := range strings.Split(cssText(style), ";") {
		prop, val, ok := strings.Cut(d, ":")
		if !ok {
			continue
		}
		prop, val = strings.TrimSpace(prop), strings.TrimSpace(val)
		val, imp := strings.CutSuffix(val, "!important")
		if important[prop] && !imp {
			continue
		}
		out[prop], important[prop] = strings.Join(strings.Fields(val), " "), imp
	}
	return out
}

// styleRule is one rule of a <style> element with a simple selector.
type styleRule struct {
	tag, id string
	classes []string
	decls   string
}

func (r styleRule) matches(n *html.Node) bool {
	if r.tag != "" && r.tag != strings.ToLower(n.Data) || r.id != "" && r.id != strings.ToLower(attr(n, "id")) {
		return false
	}
	classes := strings.Fields(strings.ToLower(attr(n, "class")))
	for _, c := range r.classes {
		if !slices.Contains(classes, c) {
			return false
		}
	}
	return true
}

// styleRules reads the rules of a page's <style> elements whose selectors
// are a tag (or :root), classes and an id; a rule inside a media query counts as if
// it always applied.
func styleRules(root *html.Node) []styleRule {
	var out []styleRule
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Style {
			var b strings.Builder
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				b.WriteString(c.Data)
			}
			for _, m := range cssRule.FindAllStringSubmatch(cssText(b.String()), -1) {
				for _, sel := range strings.Split(m[1], ",") {
					sel = strings.TrimSpace(sel)
					if rest, ok := strings.CutPrefix(sel, ":root"); ok { // the root element
						sel = "html" + rest
					}
					if p := simpleSelector.FindStringSubmatch(sel); p != nil {
						r := styleRule{tag: p[1], decls: m[2]}
						for _, part := range classOrID.FindAllString(p[2], -1) {
							if part[0] == '#' {
								r.id = part[1:]
							} else {
								r.classes = append(r.classes, part[1:])
							}
						}
						out = append(out, r)
					}
				}
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(root)
	return out
}

var (
	cssComment     = regexp.MustCompile(`(?s)/\*.*?(\*/|$)`)
	cssEscape      = regexp.MustCompile(`\\([0-9a-fA-F]{1,6}[ \t\n\r\f]?|[^\n0-9a-fA-F])`)
	cssRule        = regexp.MustCompile(`([^{}]+)\{([^{}]*)\}`)
	simpleSelector = regexp.MustCompile(`^([a-z][a-z0-9]*)?((?:[.#][\w-]+)*)$`)
	classOrID      = regexp.MustCompile(`[.#][\w-]+`)
	number         = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?`)
	// transparent is a colour of no alpha: rgba(…, 0), rgb(… / 0), #rgb0.
	transparent  = regexp.MustCompile(`^(rgba?|hsla?)\(([^,/]*,){3}\s*0*\.?0*%?\s*\)$|^(rgba?|hsla?)\([^/]*/\s*0*\.?0*%?\s*\)$|^#[0-9a-f]{3}0$|^#[0-9a-f]{6}00$`)
	clippedAway  = regexp.MustCompile(`^(rect\(\s*0+(px)?[\s,]+0+(px)?[\s,]+0+(px)?[\s,]+0+(px)?\s*\)|circle\(\s*0)`)
	inset        = regexp.MustCompile(`^inset\(\s*([\d.]+)%`)
	zeroScale    = regexp.MustCompile(`scale[xy3d]*\(\s*0*\.?0*\s*[,)]`)
	farTranslate = regexp.MustCompile(`translate[xy3d]*\(\s*-(\d{3,}|[5-9]\d{2})(px|%|vw|vh)?|translate[xy3d]*\(\s*-\d+(\.\d+)?(vw|vh)`)
	noOpacity    = regexp.MustCompile(`opacity\(\s*0*\.?0*%?\s*\)`)
)

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

// cssText undoes the comments and escapes of a style and lowers its case.
func cssText(style string) string {
	style = cssComment.ReplaceAllString(style, "")
	style = cssEscape.ReplaceAllStringFunc(style, func(e string) string {
		if r, err := strconv.ParseUint(strings.TrimSpace(e[1:]), 16, 32); err == nil {
			return string(rune(r))
		}
		return e[1:]
	})
	return strings.ToLower(style)
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

// screenWidth and screenHeight are the viewport that vw and vh measure.
const screenWidth, screenHeight = 1024, 768

// measure is what the lengths of an element with this style are measured
// against.
func (t textStyle) measure() measure {
	return measure{em: t.size, rem: t.root, vw: screenWidth, vh: screenHeight, pct: screenWidth}
}
