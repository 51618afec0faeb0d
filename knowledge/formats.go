package knowledge

import (
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"mneme/knowledge/sight"
)

var (
	atxHeading    = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextLine    = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	fence         = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	frontMatterHr = "---"
)

// markdownBlocks reads ATX and setext headings and paragraphs; fenced code
// stays one paragraph, its lines kept, and a '#' inside it is no heading.
// List items and block quotes are kept as lines of their paragraph.
func markdownBlocks(src string) []block {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	// YAML front matter is metadata, not text.
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == frontMatterHr {
		for i := 1; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == frontMatterHr {
				lines = lines[i+1:]
				break
			}
		}
	}
	var out []block
	var para []string
	flush := func() {
		if text := strings.TrimSpace(strings.Join(para, "\n")); text != "" {
			out = append(out, block{text: text})
		}
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := fence.FindStringSubmatch(line); m != nil {
			flush()
			code := []string{line}
			for i++; i < len(lines); i++ {
				code = append(code, lines[i])
				if strings.HasPrefix(strings.TrimSpace(lines[i]), m[1][:3]) {
					break
				}
			}
			para = code
			flush()
			continue
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			flush()
			if text := inline(m[2]); text != "" {
				out = append(out, block{level: len(m[1]), text: text})
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		// A one-line paragraph underlined by = or - is a heading.
		if len(para) == 0 && i+1 < len(lines) {
			if m := setextLine.FindStringSubmatch(lines[i+1]); m != nil {
				level := 1
				if m[1][0] == '-' {
					level = 2
				}
				out = append(out, block{level: level, text: inline(line)})
				i++
				continue
			}
		}
		para = append(para, strings.TrimRight(line, " \t"))
	}
	flush()
	return out
}

var (
	mdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	mdEmphasis = regexp.MustCompile(`(\*\*|__|\*|_|` + "`" + `)([^*_` + "`" + `]+)(\*\*|__|\*|_|` + "`" + `)`)
)

// inline reduces a heading's Markdown to its words: links to their text,
// emphasis and code marks dropped.
func inline(s string) string {
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdEmphasis.ReplaceAllString(s, "$2")
	return strings.TrimSpace(s)
}

// textBlocks reads paragraphs separated by blank lines; plain text has no
// headings.
func textBlocks(src string) []block {
	var out []block
	for _, p := range regexp.MustCompile(`\n[ \t]*\n`).Split(strings.ReplaceAll(src, "\r\n", "\n"), -1) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, block{text: p})
		}
	}
	return out
}

// htmlBlocks reads h1–h6 as headings and the text of block elements as
// paragraphs; scripts, styles, navigation, forms and what the page hides
// from its reader (package sight) are not text. List items keep their
// number or bullet.
func htmlBlocks(src string) ([]block, error) {
	root, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return nil, formatError("knowledge: the HTML does not parse: " + err.Error())
	}
	seen := sight.Look(root)
	var out []block
	var para strings.Builder
	// Source line breaks are spaces; only <li> and <br> break lines.
	flush := func() {
		var lines []string
		for _, l := range strings.Split(para.String(), "\n") {
			if l = strings.Join(strings.Fields(l), " "); l != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 {
			out = append(out, block{text: strings.Join(lines, "\n")})
		}
		para.Reset()
	}
	var walk func(n *html.Node, list *listState)
	walk = func(n *html.Node, list *listState) {
		switch n.Type {
		case html.TextNode:
			if !seen.Muted(n) {
				para.WriteString(whitespace.ReplaceAllString(n.Data, " "))
			}
			return
		case html.ElementNode:
			if seen.Gone(n) {
				return
			}
			switch n.DataAtom {
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				// A heading left open (<h1>Vans<p>…) holds the blocks that
				// follow it, which a browser shows as text below the
				// heading: the heading is its words before the first block.
				flush()
				var h strings.Builder
				c := n.FirstChild
				for ; c != nil && !breaksHeading(c); c = c.NextSibling {
					collectText(c, &h, seen)
				}
				if text := strings.Join(strings.Fields(h.String()), " "); text != "" {
					out = append(out, block{level: int(n.Data[1] - '0'), text: text})
				}
				for ; c != nil; c = c.NextSibling {
					walk(c, list)
				}
				flush()
				return
			case atom.Ol, atom.Ul:
				flush()
				inner := &listState{ordered: n.DataAtom == atom.Ol}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, inner)
				}
				flush()
				return
			case atom.Li:
				if para.Len() > 0 {
					para.WriteString("\n")
				}
				if list != nil && list.ordered {
					list.n++
					para.WriteString(strconv.Itoa(list.n) + ". ")
				} else {
					para.WriteString("- ")
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, list)
				}
				return
			case atom.Br:
				para.WriteString("\n")
				return
			case atom.Rt:
				// A ruby's reading, shown above its base: kept beside it in
				// brackets, as <rp> spells it for browsers without ruby.
				var rt strings.Builder
				collectText(n, &rt, seen)
				if text := strings.Join(strings.Fields(rt.String()), " "); text != "" {
					para.WriteString(" (" + text + ")")
				}
				return
			case atom.Rp:
				return
			}
			if blockElement(n.DataAtom) {
				flush()
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, list)
				}
				flush()
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, list)
		}
	}
	walk(root, nil)
	flush()
	return out, nil
}

var whitespace = regexp.MustCompile(`\s+`)

type listState struct {
	ordered bool
	n       int
}

func collectText(n *html.Node, b *strings.Builder, seen sight.Seen) {
	if seen.Gone(n) {
		return
	}
	if n.Type == html.TextNode && !seen.Muted(n) {
		b.WriteString(n.Data)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		collectText(c, b, seen)
	}
}

// breaksHeading reports whether n, inside a heading, starts text of its
// own: a block, a list or another heading.
func breaksHeading(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	switch n.DataAtom {
	case atom.Ol, atom.Ul, atom.Li, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return blockElement(n.DataAtom)
}

func blockElement(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Blockquote, atom.Pre,
		atom.Table, atom.Tr, atom.Dl, atom.Dt, atom.Dd, atom.Header, atom.Footer, atom.Aside, atom.Figure, atom.Body:
		return true
	}
	return false
}
