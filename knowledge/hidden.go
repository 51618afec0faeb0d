package knowledge

import (
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Text no reader of a page sees would otherwise become knowledge every
// agent reads: a way to slip instructions past whoever reviewed the page.

// skipped reports an element whose content is no text of the page: what
// runs or styles it, what navigates, what is hidden.
func skipped(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Nav, atom.Noscript, atom.Noembed, atom.Noframes, atom.Template, atom.Form, atom.Head,
		atom.Iframe, atom.Object, atom.Svg:
		return true
	case atom.Dialog:
		return !hasAttr(n, "open")
	}
	return hiddenElement(n)
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if strings.EqualFold(a.Key, key) {
			return true
		}
	}
	return false
}

// hiddenElement reports an element the page does not show its reader: the
// hidden or aria-hidden attribute, or an inline style that hides it
// (hiddenByStyle).
func hiddenElement(n *html.Node) bool {
	for _, a := range n.Attr {
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		case "style":
			if hiddenByStyle(a.Val) {
				return true
			}
		}
	}
	return false
}

// hiddenByStyle reports an inline style that hides what it styles, read
// as a browser reads it: comments and escapes undone, the last declaration
// of a property winning unless an earlier one is !important. Hidden is
// display none, visibility hidden, no opacity, no font size, a transparent
// colour, text indented or placed far off the page, a box clipped away or
// shrunk to a pixel with its overflow hidden, a scale of zero.
func hiddenByStyle(style string) bool {
	decl := declarations(style)
	pixel := func(p string) bool { v, ok := length(decl[p]); return ok && v <= 1 }
	far := func(p string) bool { v, ok := length(decl[p]); return ok && v <= -500 }
	switch {
	case decl["display"] == "none", decl["visibility"] == "hidden", decl["visibility"] == "collapse":
		return true
	case zeroOrLess(decl["opacity"]), zeroOrLess(decl["font-size"]), zeroOrLess(fontSize(decl["font"])):
		return true
	case decl["color"] == "transparent", transparent.MatchString(decl["color"]):
		return true
	case far("text-indent"):
		return true
	case (decl["position"] == "absolute" || decl["position"] == "fixed") && (far("left") || far("top") || far("right") || far("bottom")):
		return true
	case clippedAway.MatchString(decl["clip"]), clippedAway.MatchString(decl["clip-path"]):
		return true
	case decl["overflow"] == "hidden" && (pixel("width") || pixel("height") || pixel("max-height") || pixel("max-width")):
		return true
	case zeroScale.MatchString(decl["transform"]):
		return true
	}
	return false
}

// declarations reads an inline style into its properties' values, lower
// case, the winning declaration of each.
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

var (
	cssComment = regexp.MustCompile(`(?s)/\*.*?(\*/|$)`)
	cssEscape  = regexp.MustCompile(`\\([0-9a-fA-F]{1,6}[ \t\n\r\f]?|[^\n0-9a-fA-F])`)
	number     = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?`)
	// transparent is a colour of no alpha: rgba(…, 0), hsla(…, 0), #rgb0.
	transparent = regexp.MustCompile(`^(rgba?|hsla?)\(([^,/]*,){3}\s*0*\.?0*%?\s*\)$|^(rgba?|hsla?)\([^/]*/\s*0*\.?0*%?\s*\)$|^#[0-9a-f]{3}0$|^#[0-9a-f]{6}00$`)
	clippedAway = regexp.MustCompile(`^(rect\(\s*0+(px)?[\s,]+0+(px)?[\s,]+0+(px)?[\s,]+0+(px)?\s*\)|inset\(\s*50%|circle\(\s*0)`)
	zeroScale   = regexp.MustCompile(`scale[xy]?\(\s*0*\.?0*\s*[,)]`)
)

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

// length reads a CSS number with any unit ("0", ".0em", "-9999px", "0%").
func length(v string) (float64, bool) {
	m := number.FindString(v)
	if m == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(m, 64)
	return f, err == nil
}

// zeroOrLess reports a value that is a number of zero or less.
func zeroOrLess(v string) bool {
	f, ok := length(v)
	return ok && f <= 0
}

// fontSize is the size in a font shorthand ("0/0 a", "italic 0px serif"):
// its first word that starts with a number.
func fontSize(font string) string {
	for _, w := range strings.Fields(font) {
		if size, _, _ := strings.Cut(w, "/"); number.MatchString(size) {
			return size
		}
	}
	return ""
}
