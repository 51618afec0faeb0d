// Package knowledge splits the documents of a knowledge base (Markdown,
// HTML, plain text) into sections, and plans a re-import against what an
// earlier import of the same document stored: unchanged sections stay,
// edited ones supersede their predecessor, removed ones are retired.
//
// A section's key names its place in the document (the document, the
// trail of headings above it and which of equally headed sections it is),
// never its text: editing a section's text keeps its key, so the new text
// supersedes the old one in the same slot, and inserting a section
// elsewhere moves no other section's key.
package knowledge

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mneme/facts"
)

// Format is how a document is written.
type Format string

const (
	Markdown Format = "markdown"
	HTML     Format = "html"
	Text     Format = "text"
)

// Limits of one document.
const (
	// MaxDocumentBytes bounds one document's size.
	MaxDocumentBytes = 4 << 20
	// MaxSections bounds the sections one document may split into.
	MaxSections = 5000
	// DefaultPartChars is the longest a section's part may be, in
	// characters, before it is split at paragraphs: a recalled part should
	// fit in a context block beside others.
	DefaultPartChars = 1200
	// MaxIDLen bounds a document id, so that section keys stay short and
	// "kb:" and the id, its sections' source, is at most 64 bytes.
	MaxIDLen = 61
)

// Errors Split returns.
var (
	ErrEmpty    = errors.New("knowledge: the document holds no text")
	ErrTooLarge = fmt.Errorf("knowledge: a document is at most %d bytes", MaxDocumentBytes)
	ErrFormat   = errors.New("knowledge: unknown format: use markdown, html or text")
	ErrID       = fmt.Errorf("knowledge: a document id is 1–%d letters, digits or -_.:/@, with no empty, . or .. part between slashes", MaxIDLen)
	ErrSections = fmt.Errorf("knowledge: a document splits into at most %d sections", MaxSections)
)

// formatError is content its format cannot read; it is an ErrFormat with
// its own message.
type formatError string

func (e formatError) Error() string      { return string(e) }
func (formatError) Is(target error) bool { return target == ErrFormat }

// Document is one document split into its sections, in document order.
type Document struct {
	ID       string
	Title    string // the first top heading, if any
	Sections []Section
}

// Section is one piece of a document that becomes one memory.
type Section struct {
	// Key is the section's slot: stable while its place in the document
	// is (see the package comment). At most 128 bytes.
	Key string
	// Headings is the trail of headings above the text, outermost first.
	Headings []string
	// Position is the section's place in the document, from 0.
	Position int
	// Part numbers the pieces of a section too long for one, from 0.
	Part int
	// Text is the section's own text, without its headings.
	Text string
	// Digest identifies the text and headings: a re-import compares it.
	Digest string
	// Procedure reports numbered steps or a how-to heading: the section
	// says how a task is done rather than what holds.
	Procedure bool
}

// Content is the text a section's memory holds: its heading trail, so that
// a part read alone still says what it is about, then its text.
func (s Section) Content() string {
	if len(s.Headings) == 0 {
		return s.Text
	}
	return strings.Join(s.Headings, " › ") + "\n" + s.Text
}

// Options tune Split.
type Options struct {
	// PartChars is the longest part in characters; 0 means
	// DefaultPartChars.
	PartChars int
}

// FormatOf returns the format a file name's extension implies.
func FormatOf(name string) (Format, bool) {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".mdown":
		return Markdown, true
	case ".html", ".htm", ".xhtml":
		return HTML, true
	case ".txt", ".text", "":
		return Text, true
	}
	return "", false
}

var validID = regexp.MustCompile(`^[A-Za-z0-9_.:/@-]{1,` + strconv.Itoa(MaxIDLen) + `}$`)

// ValidID reports whether id can name a document. Its parts between
// slashes are no path steps ("..", "a//b"): ids end up as file names in
// exports and memctl.
func ValidID(id string) bool {
	return validID.MatchString(id) && !slices.ContainsFunc(strings.Split(id, "/"), func(part string) bool {
		return part == "" || part == "." || part == ".."
	})
}

// Split parses body as format f and returns document id's sections.
func Split(id string, f Format, body []byte, opts Options) (Document, error) {
	switch {
	case !ValidID(id):
		return Document{}, ErrID
	case len(body) > MaxDocumentBytes:
		return Document{}, ErrTooLarge
	case !utf8.Valid(body):
		return Document{}, errors.New("knowledge: a document must be UTF-8 text")
	}
	// Control characters other than tabs and line breaks show nothing: a
	// run of them is no text to remember.
	src := strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r < 0xa0 {
			return -1
		}
		return r
	}, string(body))
	var blocks []block
	switch f {
	case Markdown:
		blocks = markdownBlocks(src)
	case HTML:
		var err error
		if blocks, err = htmlBlocks(src); err != nil {
			return Document{}, err
		}
	case Text:
		blocks = textBlocks(src)
	default:
		return Document{}, ErrFormat
	}
	partChars := opts.PartChars
	if partChars <= 0 {
		partChars = DefaultPartChars
	}
	doc := Document{ID: id}
	for _, b := range blocks {
		if b.level == 1 && doc.Title == "" {
			doc.Title = b.text
		}
	}
	doc.Sections = sections(id, blocks, partChars)
	switch {
	case len(doc.Sections) == 0:
		return Document{}, ErrEmpty
	case len(doc.Sections) > MaxSections:
		return Document{}, ErrSections
	}
	return doc, nil
}

// block is a heading (level 1–6) or a paragraph (level 0) of a document.
type block struct {
	level int
	text  string
}

// sections groups paragraphs under the headings above them and cuts long
// groups into parts at paragraph boundaries.
func sections(id string, blocks []block, partChars int) []Section {
	var out []Section
	var trail []string // headings by level-1 index
	var paras []string
	seen := map[string]int{} // heading trails met so far: the ordinal of the next
	// bare is the level of the last heading while no text has followed it.
	bare := 0
	flush := func() {
		if len(paras) == 0 {
			return
		}
		headings := compact(trail)
		place := strings.Join(headings, "\x1f")
		ordinal := seen[place]
		seen[place]++
		// A part of spaces and control characters alone (a run of \x01 cut
		// out of a long paragraph) says nothing, and no memory may hold it.
		parts := slices.DeleteFunc(pack(paras, partChars), facts.Blank)
		for part, text := range parts {
			s := Section{
				Headings: headings, Position: len(out), Part: part, Text: text,
				Procedure: isProcedure(headings, text),
			}
			s.Key = sectionKey(id, place, ordinal, part)
			s.Digest = digest(s.Content())
			out = append(out, s)
		}
		paras = nil
	}
	// A heading with neither text nor a subheading below it says
	// something a reader sees ("# Refund window is 14 days"): it is a
	// section of its own, its words the text under the headings above it.
	// It takes the slot text under it would, so that text added below it
	// later supersedes it.
	flushBare := func() {
		if bare == 0 {
			return
		}
		headings := compact(trail)
		place := strings.Join(headings, "\x1f")
		ordinal := seen[place]
		seen[place]++
		text := headings[len(headings)-1]
		s := Section{
			Headings: headings[:len(headings)-1], Position: len(out), Text: text,
			Procedure: isProcedure(headings, text),
		}
		s.Key = sectionKey(id, place, ordinal, 0)
		s.Digest = digest(s.Content())
		out = append(out, s)
		bare = 0
	}
	for _, b := range blocks {
		if b.level == 0 {
			paras = append(paras, b.text)
			bare = 0
			continue
		}
		flush()
		if bare >= b.level { // no subheading: the bare heading was a leaf
			flushBare()
		}
		bare = b.level
		if len(trail) < b.level {
			trail = append(trail, make([]string, b.level-len(trail))...)
		}
		trail = append(trail[:b.level-1], b.text)
	}
	flush()
	flushBare()
	return out
}

// compact drops the empty places of a heading trail (an h3 under an h1).
func compact(trail []string) []string {
	var out []string
	for _, h := range trail {
		if h != "" {
			out = append(out, h)
		}
	}
	return out
}

// pack joins paragraphs into parts of at most limit characters; a longer
// paragraph is cut at sentence ends, or at the limit when it has none.
func pack(paras []string, limit int) []string {
	var parts []string
	var cur strings.Builder
	curLen := 0
	add := func(p string) {
		n := utf8.RuneCountInString(p)
		if curLen > 0 && curLen+2+n > limit {
			parts = append(parts, cur.String())
			cur.Reset()
			curLen = 0
		}
		if curLen > 0 {
			cur.WriteString("\n\n")
			curLen += 2
		}
		cur.WriteString(p)
		curLen += n
	}
	for _, p := range paras {
		for _, piece := range cut(p, limit) {
			add(piece)
		}
	}
	if curLen > 0 {
		parts = append(parts, cur.String())
	}
	return parts
}

// sentenceEnd matches where a sentence ends, in English or Chinese.
var sentenceEnd = regexp.MustCompile(`[.!?](\s+)|[。！？；]`)

// cut splits one paragraph into pieces of at most limit characters.
func cut(p string, limit int) []string {
	if utf8.RuneCountInString(p) <= limit {
		return []string{p}
	}
	var sentences []string
	last := 0
	for _, m := range sentenceEnd.FindAllStringIndex(p, -1) {
		sentences = append(sentences, strings.TrimSpace(p[last:m[1]]))
		last = m[1]
	}
	if rest := strings.TrimSpace(p[last:]); rest != "" {
		sentences = append(sentences, rest)
	}
	var out []string
	var cur []rune
	for _, s := range sentences {
		r := []rune(s)
		for len(r) > limit { // no sentence end for a whole part
			if len(cur) > 0 {
				out = append(out, string(cur))
				cur = nil
			}
			out = append(out, string(r[:limit]))
			r = r[limit:]
		}
		if len(cur) > 0 && len(cur)+1+len(r) > limit {
			out = append(out, string(cur))
			cur = nil
		}
		if len(cur) > 0 {
			cur = append(cur, ' ')
		}
		cur = append(cur, r...)
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	return out
}

// sectionKey is "kb:<document>:<place>[.<part>]": the place is a digest of
// the heading trail and the ordinal among equally headed sections.
func sectionKey(id, place string, ordinal, part int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x1e%d", place, ordinal)))
	key := "kb:" + id + ":" + hex.EncodeToString(sum[:6])
	if part > 0 {
		key += fmt.Sprintf(".%d", part)
	}
	return key
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var (
	numberedStep = regexp.MustCompile(`(?m)^\s*(\d{1,2}[.)、]|第[一二三四五六七八九十\d]+步|步骤\s*\d)`)
	howTo        = regexp.MustCompile(`(?i)\b(how to|how do|procedure|steps|checklist|playbook|runbook|sop)\b|^to [a-z]+|流程|步骤|操作|处理|怎么|如何`)
)

// isProcedure reports whether a section reads as a procedure: at least two
// numbered steps, or a heading that names a way of doing something.
func isProcedure(headings []string, text string) bool {
	if len(numberedStep.FindAllStringIndex(text, 3)) >= 2 {
		return true
	}
	return len(headings) > 0 && howTo.MatchString(headings[len(headings)-1])
}
