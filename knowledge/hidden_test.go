package knowledge

import (
	"slices"
	"strings"
	"testing"
)

// hiddenByStyle reports an inline style that hides what it styles and all
// it holds, or its text, as look reads it.
func hiddenByStyle(style string) bool {
	decl := declarations(style)
	t := page().with(decl, false)
	return hidesAll(decl, t.measure()) || t.hidden()
}

// Inline styles as pages hide text with them, spelled every way a browser
// accepts, and styles that leave the text in sight.
func TestHiddenByStyle(t *testing.T) {
	tests := []struct {
		style string
		want  bool
	}{
		{"display:none", true},
		{"DISPLAY: None !important", true},
		{"display:/**/none", true},
		{`d\isplay:none`, true},
		{`display:\6e one`, true},
		{"visibility:/* x */hidden", true},
		{"visibility:collapse", true},
		{"opacity:0", true}, {"opacity:0.0", true}, {"opacity:.0", true}, {"opacity:0%", true}, {"opacity:-1", true},
		{"opacity:0e0", true}, {"opacity:0!important", true},
		{"font-size:0", true}, {"font-size:0em", true}, {"font-size:0rem", true}, {"font-size:0pt", true}, {"font-size:0.0px", true},
		{"font-size:0%", true}, {"font:0/0 a", true}, {"font: italic 0px serif", true},
		{"color:transparent", true}, {"color:rgba(0,0,0,0)", true}, {"color: rgb(0 0 0 / 0%)", true},
		{"text-indent:-9999px", true},
		{"position:absolute;left:-10000px", true}, {"position:fixed; top:-999em", true},
		{"position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)", true},
		{"clip-path:inset(50%)", true},
		{"height:0;overflow:hidden", true},
		{"transform:scale(0)", true},
		{"display:none !important; display:block", true},
		{"content-visibility:hidden", true}, {"clip-path:inset(100%)", true}, {"filter:opacity(0)", true}, {"scale:0", true},
		{"transform:translateX(-9999px)", true}, {"transform: translate(-100vw, 0)", true}, {"margin-left:-10000px", true},
		{"opacity:0.01", true}, {"font-size:0.5px", true}, {"font-size:0.05em", true},
		{"font-size:calc(0px)", true}, {"font-size:1.5px", true}, {"font-size:min(0px, 1em)", true}, {"font-size:0.1rem", true},
		{"opacity:calc(0)", true}, {"opacity:calc(1 - 1)", true}, {"opacity:2%", true}, {"text-indent:-100em", true},
		// In sight.
		{"display:none;display:block", false},
		{"opacity:0.5", false}, {"font-size:12px", false}, {"font:12px/1.4 serif", false},
		{"color:#333", false}, {"color:rgba(0,0,0,0.8)", false}, {"color:rgb(0,0,0)", false}, {"color:rgb(0 0 0)", false}, {"color:#0000", true},
		{"text-indent:2em", false}, {"position:absolute;left:10px", false}, {"position:relative;left:-10000px", false},
		{"width:1px", false}, {"overflow:hidden;width:300px", false}, {"transform:scale(1.2)", false},
		{"opacity:0.9", false}, {"font-size:0.9em", false}, {"position:absolute;left:0", false}, {"transform:translateX(-10px)", false},
		{"clip-path:inset(10%)", false}, {"filter:blur(1px)", false},
		{"font-size:1rem", false}, {"font-size:.875rem", false}, {"font-size:.8rem", false}, {"font-size:2px", false},
		{"font-size:80%", false}, {"font-size:x-small", false}, {"font-size:calc(1rem + 1px)", false}, {"opacity:calc(0.5)", false},
		{"", false}, {"garbage;;:;", false},
	}
	for _, tt := range tests {
		if got := hiddenByStyle(tt.style); got != tt.want {
			t.Errorf("hiddenByStyle(%q) = %v, want %v", tt.style, got, tt.want)
		}
	}
}

// pageCase is a page, the words a reader of it sees, and the words its
// styles hide.
type pageCase struct {
	name, page  string
	shown, gone []string
}

// checkPages imports each page and checks which of its words came in.
func checkPages(t *testing.T, tests []pageCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks, err := htmlBlocks(tt.page)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, bl := range blocks {
				b.WriteString(bl.text + "\n")
			}
			words := strings.Fields(b.String())
			for _, w := range tt.shown {
				if !slices.Contains(words, w) {
					t.Errorf("%s is shown but was not imported from %q", w, b.String())
				}
			}
			for _, w := range tt.gone {
				if slices.Contains(words, w) {
					t.Errorf("%s is hidden but was imported from %q", w, b.String())
				}
			}
		})
	}
}

// Font sizes are measured as a browser measures them: rem against the
// root element's size (16 px unless the page sets it), em and % against
// the parent's.
func TestFontSizes(t *testing.T) {
	checkPages(t, []pageCase{
		{name: "rem is the root's size", page: `<p style="font-size:.8rem">Small</p><p style="font-size:0.875rem">Smaller</p>
<p style="font-size:1rem">Body</p><p style="font-size:2rem">Big</p><p style="font-size:.1rem">Gone</p>`,
			shown: []string{"Small", "Smaller", "Body", "Big"}, gone: []string{"Gone"}},
		{name: "a body of 1rem", page: `<style>body{font-size:1rem}</style><h2>Window</h2><p>Returns</p>`,
			shown: []string{"Window", "Returns"}},
		{name: "rules of rem", page: `<style>.rem8{font-size:.8rem} p.tiny{font-size:0.05rem}</style><p class="rem8">Note</p><p class="tiny">Gone</p>`,
			shown: []string{"Note"}, gone: []string{"Gone"}},
		{name: "the root element's size", page: `<style>html{font-size:62.5%} body{font-size:1.6rem} .s{font-size:.125rem}</style><p>Body</p><p class="s">Gone</p>`,
			shown: []string{"Body"}, gone: []string{"Gone"}},
		{name: ":root is the root element", page: `<style>:root{font-size:1px} p{font-size:1rem}</style><p>Gone</p><div style="font-size:14px">Seen</div>`,
			shown: []string{"Seen"}, gone: []string{"Gone"}},
		{name: "em and % of the parent", page: `<div style="font-size:10px"><p style="font-size:.1em">Gone</p><p style="font-size:50%">Half</p></div>
<div style="font-size:10%"><p style="font-size:50%">Shrunk</p><p style="font-size:1rem">Reset</p></div><p style="font-size:80%">Eighty</p>`,
			shown: []string{"Half", "Reset", "Eighty"}, gone: []string{"Gone", "Shrunk"}},
		{name: "keywords and calc", page: `<p style="font-size:small">Small</p><p style="font-size:calc(1rem - 2px)">Calc</p>
<p style="font-size:clamp(1rem, 2vw, 3rem)">Clamp</p><p style="font-size:calc(0px)">Zero</p><p style="font-size:calc(1em - 1em)">Nothing</p>
<p style="font: bold .9rem/1.4 sans-serif">Shorthand</p>`,
			shown: []string{"Small", "Calc", "Clamp", "Shorthand"}, gone: []string{"Zero", "Nothing"}},
	})
}
