package sight

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// declaration is one property of a style with its value, lower case.
type declaration struct {
	prop, val string
	important bool
}

// parseDeclarations reads the declarations of a style, in order, but for
// those whose value a browser would refuse for their property, which it
// drops as if they were not written; css is already cssText.
func parseDeclarations(css string) []declaration {
	var out []declaration
	for _, d := range strings.Split(css, ";") {
		prop, val, ok := strings.Cut(d, ":")
		if !ok {
			continue
		}
		prop, val = strings.TrimSpace(prop), strings.TrimSpace(val)
		imp := false
		if m := importance.FindStringIndex(val); m != nil {
			val, imp = val[:m[0]], true
		}
		val = strings.Join(strings.Fields(val), " ")
		if valid(prop, val) {
			out = append(out, declaration{prop, val, imp})
		}
	}
	return out
}

var importance = regexp.MustCompile(`!\s*important$`)

// cascade is the value of each property of decls, in the order a browser
// applies them: the last declaration of a property wins unless an earlier
// one is !important.
func cascade(decls []declaration) map[string]string {
	out, important := map[string]string{}, map[string]bool{}
	for _, d := range decls {
		if important[d.prop] && !d.important {
			continue
		}
		out[d.prop], important[d.prop] = d.val, d.important
	}
	return out
}

// declarations reads a style into its properties' values, lower case, the
// winning declaration of each.
func declarations(style string) map[string]string {
	return cascade(parseDeclarations(cssText(style)))
}

// styleRule is one rule of a <style> element with a simple selector: a
// tag (or :root), classes and an id.
type styleRule struct {
	tag, id string
	classes []string
	decls   []declaration
	// when is the media condition the rule holds under, an index into
	// its sheet's media; -1 for none.
	when int
	// scope is the shadow root whose <style> the rule is of, nil for the
	// document's: a rule styles only its own tree.
	scope *html.Node
	// specificity weighs the selector: ids, then classes, then tags.
	specificity int
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

// sheet is what a page's <style> elements say: their simple rules, in
// order, and the media conditions some of them hold under.
type sheet struct {
	rules []styleRule
	// byKey finds the rules that may match an element: by the rule's id,
	// else its first class, else its tag ("#id", ".class", "tag").
	byKey map[string][]int
	media []condition
	// mediaIndex finds a condition by its text.
	mediaIndex map[string]int
	// widths and heights are the screen sizes at which a condition may
	// change; features are the discrete media features conditions test.
	widths, heights []float64
	features        map[string]bool
	// scope is the shadow root of the <style> being read.
	scope *html.Node
	// keyframes are the @keyframes rules by name.
	keyframes map[string][]keyframe
}

// readSheet reads the rules of a page's <style> elements. A rule inside
// @media, @container or a <style media> holds on the screens its condition
// holds on; one inside @supports only if a browser supports what it asks
// for; the rules inside @layer and @scope hold everywhere. A <style> whose
// type is not CSS, one in a <template> (but for a shadow root's), and other
// at-rules are not read.
func readSheet(root *html.Node) *sheet {
	sh := &sheet{byKey: map[string][]int{}, mediaIndex: map[string]int{}, features: map[string]bool{}}
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Template {
			if n != shadowRoot(n.Parent) {
				return
			}
			outer := sh.scope
			sh.scope = n
			defer func() { sh.scope = outer }()
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Style {
			if t := strings.ToLower(strings.TrimSpace(attr(n, "type"))); t != "" && t != "text/css" {
				return
			}
			var b strings.Builder
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				b.WriteString(c.Data)
			}
			var when []string
			if m := strings.TrimSpace(cssText(attr(n, "media"))); m != "" {
				when = []string{m}
			}
			sh.read(withoutCDO(cssText(b.String())), when, "")
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(root)
	return sh
}

// withoutCDO blanks the <!-- and --> at the top level of a style sheet,
// which CSS ignores there: they once hid a <style>'s text from browsers
// that did not know the element. Anywhere else they stay, and spoil the
// rule they are in as they do in a browser.
func withoutCDO(css string) string {
	b := []byte(css)
	depth := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"' || c == '\'':
			for i++; i < len(b) && b[i] != c; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '{':
			depth++
		case c == '}':
			depth = max(depth-1, 0)
		case depth > 0:
		case strings.HasPrefix(css[i:], "<!--"):
			copy(b[i:], "    ")
		case strings.HasPrefix(css[i:], "-->") && (i == 0 || !nameChar(b[i-1])):
			copy(b[i:], "   ")
		}
	}
	return string(b)
}

// nameChar reports a byte that may go on a CSS name: "a-->" is the name
// "a--" and a ">".
func nameChar(c byte) bool {
	return c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

var atRule = regexp.MustCompile(`^@([-a-z]+)\s*(.*)$`)

// read reads the rules of css under the media conditions when; inside a
// rule of selectors sel, css is that rule's block: its declarations, and
// at-rules nested in it that hold more declarations of the rule. A style
// rule nested in another is not read.
func (sh *sheet) read(css string, when []string, sel string) {
	var decls []string
	var nested [][2]string
	cssBlocks(css, func(prelude, block string, isBlock bool) {
		prelude = strings.TrimSpace(prelude)
		switch {
		case !isBlock:
			decls = append(decls, prelude)
		case strings.HasPrefix(prelude, "@"):
			nested = append(nested, [2]string{prelude, block})
		case sel == "":
			sh.read(block, when, prelude)
		}
	})
	if sel != "" {
		sh.add(sel, parseDeclarations(strings.Join(decls, ";")), when)
	}
	for _, at := range nested {
		m := atRule.FindStringSubmatch(at[0])
		if m == nil {
			continue
		}
		switch name, cond := m[1], strings.TrimSpace(m[2]); name {
		case "media":
			sh.read(at[1], append(when[:len(when):len(when)], cond), sel)
		case "container":
			// A container is measured as if it were the window.
			if name, rest, ok := strings.Cut(cond, " "); ok && !strings.Contains(name, "(") && name != "not" {
				cond = rest
			}
			sh.read(at[1], append(when[:len(when):len(when)], cond), sel)
		case "supports":
			if supports(cond) {
				sh.read(at[1], when, sel)
			}
		case "layer", "scope":
			sh.read(at[1], when, sel)
		case "keyframes", "-webkit-keyframes":
			// One under a media condition is left out: it may not hold.
			if len(when) == 0 && sel == "" {
				sh.readKeyframes(cond, at[1])
			}
		}
	}
}

// add adds the rules of selectors sel (those that are simple) with
// declarations decls, under the media conditions when.
func (sh *sheet) add(sel string, decls []declaration, when []string) {
	idx := -1
	if len(when) > 0 {
		key := strings.Join(when, "\x00")
		i, ok := sh.mediaIndex[key]
		if !ok {
			var all []condition
			for _, w := range when {
				all = append(all, sh.compileMedia(w))
			}
			i = len(sh.media)
			sh.media = append(sh.media, func(s screen) bool {
				for _, c := range all {
					if !c(s) {
						return false
					}
				}
				return true
			})
			sh.mediaIndex[key] = i
		}
		idx = i
	}
	for _, one := range strings.Split(sel, ",") {
		one = strings.TrimSpace(one)
		root := 0
		if rest, ok := strings.CutPrefix(one, ":root"); ok { // the root element, of a class's weight
			one, root = "html"+rest, 1
		}
		p := simpleSelector.FindStringSubmatch(one)
		if p == nil || one == "" {
			continue
		}
		r := styleRule{tag: p[1], decls: decls, when: idx, scope: sh.scope, specificity: root * 100}
		if root == 0 && r.tag != "" {
			r.specificity = 1
		}
		for _, part := range classOrID.FindAllString(p[2], -1) {
			if part[0] == '#' {
				r.id = part[1:]
				r.specificity += 10000
			} else {
				r.classes = append(r.classes, part[1:])
				r.specificity += 100
			}
		}
		key := r.tag
		if r.id != "" {
			key = "#" + r.id
		} else if len(r.classes) > 0 {
			key = "." + r.classes[0]
		}
		sh.byKey[key] = append(sh.byKey[key], len(sh.rules))
		sh.rules = append(sh.rules, r)
	}
}

// matching is the rules of its tree that match element n, in the order
// they apply: by specificity, then in order.
func (sh *sheet) matching(n *html.Node) []int {
	scope := scopeOf(n)
	var out []int
	keys := []string{strings.ToLower(n.Data)}
	if id := attr(n, "id"); id != "" {
		keys = append(keys, "#"+strings.ToLower(id))
	}
	for _, c := range strings.Fields(strings.ToLower(attr(n, "class"))) {
		keys = append(keys, "."+c)
	}
	for _, k := range slices.Compact(keys) {
		for _, i := range sh.byKey[k] {
			if sh.rules[i].scope == scope && sh.rules[i].matches(n) {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	slices.SortStableFunc(out, func(a, b int) int { return sh.rules[a].specificity - sh.rules[b].specificity })
	return out
}

// cssBlocks calls f with each statement of css in order: a declaration or
// an at-rule without a block (isBlock false), or a prelude and its block.
// Braces, brackets and semicolons inside strings do not count, nor
// semicolons inside brackets; a block the text does not close ends with
// it, as in a browser.
func cssBlocks(css string, f func(prelude, block string, isBlock bool)) {
	skipString := func(i int) int {
		q := css[i]
		for i++; i < len(css) && css[i] != q; i++ {
			if css[i] == '\\' {
				i++
			}
		}
		return i
	}
	start, parens := 0, 0
	for i := 0; i < len(css); i++ {
		switch css[i] {
		case '"', '\'':
			i = skipString(i)
		case '(':
			parens++
		case ')':
			parens = max(parens-1, 0)
		case ';', '}':
			if css[i] == ';' && parens > 0 {
				continue
			}
			f(css[start:i], "", false)
			start, parens = i+1, 0
		case '{':
			depth, j := 1, i+1
			for ; j < len(css) && depth > 0; j++ {
				switch css[j] {
				case '"', '\'':
					j = skipString(j)
				case '{':
					depth++
				case '}':
					depth--
				}
			}
			j = min(j, len(css)) // past a string the text does not close
			end := j
			if depth == 0 {
				end = j - 1
			}
			f(css[start:i], css[i+1:min(end, len(css))], true)
			i, start, parens = j-1, j, 0
		}
	}
	if strings.TrimSpace(css[start:]) != "" {
		f(css[start:], "", false)
	}
}

var (
	cssComment     = regexp.MustCompile(`(?s)/\*.*?(\*/|$)`)
	cssEscape      = regexp.MustCompile(`\\([0-9a-fA-F]{1,6}[ \t\n\r\f]?|[^\n0-9a-fA-F])`)
	simpleSelector = regexp.MustCompile(`^([a-z][a-z0-9]*)?((?:[.#][\w-]+)*)$`)
	classOrID      = regexp.MustCompile(`[.#][\w-]+`)
)

// cssText undoes the comments and escapes of a style and lowers its case.
// An escaped space or control character is part of the name or value it
// is in ("none\9" is no keyword): it becomes U+FFFD, which no separator
// or keyword matches.
func cssText(style string) string {
	style = cssComment.ReplaceAllString(style, "")
	style = cssEscape.ReplaceAllStringFunc(style, func(e string) string {
		r := []rune(e[1:])[0]
		if n, err := strconv.ParseUint(strings.TrimSpace(e[1:]), 16, 32); err == nil {
			r = rune(n)
		}
		if r <= ' ' || r == 0x7f || !utf8.ValidRune(r) {
			return "\uFFFD"
		}
		return string(r)
	})
	return strings.ToLower(style)
}
