package sight

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// hiddenByStyle reports an inline style that hides what it styles and all
// it holds, or its text, as look reads it.
func hiddenByStyle(style string) bool {
	decl, _ := substitute(declarations(style), nil)
	t := page(view{least: screenMin, most: screenMax}).with(decl, false)
	return hidesAll(decl, t) || t.hidden()
}

// Inline styles as pages hide text with them, spelled every way a browser
// accepts, and styles that leave the text in sight.
func TestHiddenByStyle(t *testing.T) {
	checkStyles(t, []styleCase{
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
		{"text-indent:2em", false}, {"position:absolute;left:10px", false},
		{"width:1px", false}, {"overflow:hidden;width:300px", false}, {"transform:scale(1.2)", false},
		{"opacity:0.9", false}, {"font-size:0.9em", false}, {"position:absolute;left:0", false}, {"transform:translateX(-10px)", false},
		{"clip-path:inset(10%)", false}, {"filter:blur(1px)", false},
		{"font-size:1rem", false}, {"font-size:.875rem", false}, {"font-size:.8rem", false}, {"font-size:2px", false},
		{"font-size:80%", false}, {"font-size:x-small", false}, {"font-size:calc(1rem + 1px)", false}, {"opacity:calc(0.5)", false},
		{"", false}, {"garbage;;:;", false},
	})
}

// pageCase is a page, the words a reader of it sees, and the words its
// styles hide (no word a part of another).
// styleCase is an inline style and whether it hides its element's text.
type styleCase struct {
	style string
	want  bool
}

func checkStyles(t *testing.T, tests []styleCase) {
	t.Helper()
	for _, tt := range tests {
		if got := hiddenByStyle(tt.style); got != tt.want {
			t.Errorf("hiddenByStyle(%q) = %v, want %v", tt.style, got, tt.want)
		}
	}
}

// hides is the case of a page whose style sheet css hides, or not, the
// paragraph of class h beside a plain one.
func hides(name, css string, hidden bool) pageCase {
	c := pageCase{name: name, page: "<style>" + css + "</style><p class=h>Marked</p><p>Plain</p>", shown: []string{"Plain"}}
	if hidden {
		c.gone = []string{"Marked"}
	} else {
		c.shown = append(c.shown, "Marked")
	}
	return c
}

type pageCase struct {
	name, page  string
	shown, gone []string
}

// checkPages looks at each page and checks which of its words a reader
// sees: the text of what is not gone nor muted.
func checkPages(t *testing.T, tests []pageCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := html.Parse(strings.NewReader(tt.page))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			visible(root, Look(root), &b)
			for _, w := range tt.shown {
				if !strings.Contains(b.String(), w) {
					t.Errorf("%s is shown but was not imported from %q", w, b.String())
				}
			}
			for _, w := range tt.gone {
				if strings.Contains(b.String(), w) {
					t.Errorf("%s is hidden but was imported from %q", w, b.String())
				}
			}
		})
	}
}

// visible writes the text of n a reader sees.
func visible(n *html.Node, seen Seen, b *strings.Builder) {
	if seen.Gone(n) || n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style") {
		return
	}
	if n.Type == html.TextNode && !seen.Muted(n) {
		b.WriteString(n.Data)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		visible(c, seen, b)
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

// A rule holds where its media condition holds on a desktop browser's
// window of some size, in some mode; text it hides on one is hidden.
func TestMediaConditions(t *testing.T) {
	checkPages(t, []pageCase{
		hides("print", "@media print{.h{display:none}}", false),
		hides("print hides the body", "@media print{body{display:none}}", false),
		{name: "a print style element", page: `<style media="print">p{display:none}</style><p>Seen</p>`, shown: []string{"Seen"}},
		{name: "a screen style element", page: `<style media="screen and (min-width: 10px)">p{display:none}</style><p>Gone</p>`, gone: []string{"Gone"}},
		{name: "a style element not of CSS", page: `<style type="text/x-template">p{display:none}</style><p>Seen</p>`, shown: []string{"Seen"}},
		hides("no window is a pixel wide", "@media (max-width:1px){.h{display:none}}", false),
		hides("no window is that wide", "@media screen and (min-width:100000px){.h{display:none}}", false),
		hides("phones only", "@media only screen and (max-width: 767.98px){.h{display:none}}", false),
		hides("speech", "@media speech{.h{display:none}}", false),
		hides("an old media type", "@media tv, handheld{.h{display:none}}", false),
		hides("no query of a list holds", "@media screen and (max-width:1px), print{.h{display:none}}", false),
		hides("a range no window is in", "@media (400px <= width <= 700px){.h{display:none}}", false),
		hides("touch screens only", "@media (hover:none) and (pointer:coarse){.h{display:none}}", false),
		hides("an unreadable query", "@media (max-width:){.h{display:none}}", false),
		hides("an unknown media type", "@media paper{.h{display:none}}", false),
		hides("nested conditions", "@media screen{@media (max-width:1px){.h{display:none}}}", false),
		hides("a container no window fits", "@container card (min-width:100000px){.h{display:none}}", false),
		hides("screen", "@media screen{.h{display:none}}", true),
		hides("every width", "@media all and (min-width:0){.h{display:none}}", true),
		hides("not print", "@media not print{.h{display:none}}", true),
		hides("desktops", "@media only screen and (min-width: 768px){.h{display:none}}", true),
		hides("wide windows only", "@media (min-width:1400px){.h{display:none}}", true),
		hides("a range some windows are in", "@media (1200px < width < 1300px){.h{display:none}}", true),
		hides("short windows", "@media (max-height:600px){.h{display:none}}", true),
		hides("portrait windows", "@media (orientation:portrait){.h{display:none}}", true),
		hides("dark mode", "@media (prefers-color-scheme:dark){.h{display:none}}", true),
		hides("a touch screen beside a mouse", "@media (any-pointer:coarse){.h{display:none}}", true),
		hides("high resolution", "@media (-webkit-min-device-pixel-ratio:2), (min-resolution:192dpi){.h{display:none}}", true),
		hides("a layer", "@layer base{.h{display:none}}", true),
		hides("a string with a brace", `.q::before{content:"}"} .h{display:none}`, true),
		hides("shown on wide windows only", ".h{display:none} @media (min-width:2000px){.h{display:block}}", true),
		hides("shown on desktops", ".h{display:none} @media (min-width:992px){.h{display:block}}", false),
		hides("nested in a rule, on print", ".h{color:red; @media print{display:none}}", false),
		hides("nested in a rule, on screen", ".h{color:red; @media screen{display:none}}", true),
	})
}

// Rules under @supports hold when a browser supports what it asks for.
func TestSupports(t *testing.T) {
	tests := []struct {
		cond string
		want bool
	}{
		{"(display:grid)", true}, {"(display: flex)", true}, {"(--brand: red)", true}, {"selector(:has(a))", true},
		{"not (display:nonexistent)", true}, {"(display:grid) or (frobnicate:1)", true},
		{"((display:grid) and (gap:1rem))", true}, {"(position:sticky) and (not (display:foo))", true},
		{"(display:nonexistent)", false}, {"(frobnicate:1)", false}, {"not (display:grid)", false},
		{"(display:grid) and (frobnicate:1)", false}, {"(display:grid) and (gap:1px) or (color:red)", false},
		{"(display)", false}, {"", false}, {"font-tech(color-colrv1)", false},
	}
	for _, tt := range tests {
		if got := supports(tt.cond); got != tt.want {
			t.Errorf("supports(%q) = %v, want %v", tt.cond, got, tt.want)
		}
	}
	checkPages(t, []pageCase{
		{name: "an unknown value", page: `<style>@supports (display:nonexistent){p{display:none}}</style><p>Seen</p>`, shown: []string{"Seen"}},
		{name: "a known one", page: `<style>@supports (display:grid){p{display:none}}</style><p>Gone</p>`, gone: []string{"Gone"}},
	})
}

// MathML is text a browser draws, but for its annotations, phantoms and
// the choices <maction> does not show.
func TestMath(t *testing.T) {
	checkPages(t, []pageCase{
		{name: "math in a paragraph", page: `<p>Formula <math><mi>VMATH</mi><mo>=</mo><mn>2</mn></math> applies.</p>`, shown: []string{"Formula", "VMATH=2", "applies."}},
		{name: "math hidden by style", page: `<p>Before</p><math style="display:none"><mi>Gone</mi></math><math class="h"><mi>Hidden</mi></math><style>.h{visibility:hidden}</style>`,
			shown: []string{"Before"}, gone: []string{"Gone", "Hidden"}},
		{name: "annotations", page: `<math><semantics><mi>Shown</mi><annotation encoding="text/plain">Gone</annotation><annotation-xml>Hidden</annotation-xml></semantics></math>`,
			shown: []string{"Shown"}, gone: []string{"Gone", "Hidden"}},
		{name: "a phantom", page: `<p>x <math><mphantom><mi>Phantom</mi></mphantom></math></p>`, shown: []string{"x"}, gone: []string{"Phantom"}},
		{name: "maction shows its selection", page: `<math><maction actiontype="toggle" selection="2"><mi>First</mi><mi>Second</mi></maction><maction><mi>One</mi><mi>Two</mi></maction></math>`,
			shown: []string{"Second", "One"}, gone: []string{"First", "Two"}},
		{name: "sizes and colours", page: `<math><mstyle mathsize="0"><mi>Tiny</mi></mstyle><mstyle mathcolor="transparent"><mi>Clear</mi></mstyle>
<mstyle scriptlevel="+20"><mi>Deep</mi></mstyle><mstyle scriptlevel="1"><mi>Script</mi></mstyle><mi mathsize="2em">Big</mi></math>`,
			shown: []string{"Script", "Big"}, gone: []string{"Tiny", "Clear", "Deep"}},
	})
}

// Text drawn in the colour of what lies behind it (a white page unless
// the page paints it) is hidden; a background clipped to the text, or an
// outline, draws it.
func TestColours(t *testing.T) {
	checkStyles(t, []styleCase{
		{"color:#fff", true}, {"color:white;background:white", true}, {"color:#fefefe", true}, {"color:hsl(0, 0%, 100%)", true},
		{"color:rgb(255 255 255 / 1)", true}, {"color:rgba(255,255,255,.5)", true}, {"color:snow", true}, {"color:rgba(0,0,0,0.03)", true},
		{"color:black;background:black", true}, {"color:#123;background-color:#123", true}, {"color:red;background:currentcolor", true},
		{"-webkit-text-fill-color:transparent", true}, {"-webkit-text-fill-color:#fff", true}, {"color:oklch(0.5 0.1 20 / 0)", true},
		{"color:transparent;background:linear-gradient(transparent,transparent);-webkit-background-clip:text", true},
		{"color:transparent;-webkit-text-stroke:0 #000", true},
		{"color:oklch(1 0 0)", true}, {"color:lab(100 0 0)", true}, {"color:hwb(0 100% 0%)", true}, {"color:Canvas", true},
		{"color:color-mix(in srgb, white 100%, black)", true}, {"color:lch(99% 0 0)", true}, {"color:color(srgb 1 1 1)", true},
		{"color:oklab(0.1 0 0);background:#000", true}, {"color:color-mix(in oklab, #fff 98%, #000)", true},
		// In sight.
		{"color:#eee", false}, {"color:#fff;background:#003366", false}, {"color:#000;background:#111", false},
		{"color:white;background:url(night.jpg)", false}, {"color:#fff;background:var(--dark)", false},
		{"color:#fff;background:linear-gradient(#000,#333)", false}, {"color:oklch(0.9 0.1 20)", false},
		{"color:currentcolor", false}, {"color:red", false}, {"color:hsl(210 50% 40%)", false}, {"color:#fff;background:navy", false},
		{"color:transparent;background:linear-gradient(90deg,#f00,#00f);-webkit-background-clip:text;background-clip:text", false},
		{"-webkit-text-fill-color:transparent;-webkit-text-stroke:1px #000", false},
		{"color:white;-webkit-text-stroke-width:2px;-webkit-text-stroke-color:black", false},
		{"color:oklch(0.5 0 0)", false}, {"color:lab(50 0 0)", false}, {"color:CanvasText;background:Canvas", false},
		{"color:color-mix(in srgb, white 50%, black)", false}, {"color:light-dark(#fff, #000)", false},
	})
	checkPages(t, []pageCase{
		{name: "white on the white page", page: `<p>Plain</p><p style="color:#fff">Gone</p><font color="#ffffff">Font</font><font color=ffffff>Bare</font><p style="color:white;background:white">Both</p>`,
			shown: []string{"Plain"}, gone: []string{"Gone", "Font", "Bare", "Both"}},
		{name: "white on a dark parent", page: `<div style="background:#222"><p style="color:white">Panel</p><p style="color:#222">Same</p></div>
<table bgcolor="#000"><tr><td><font color="#fff">Cell</font></td></tr></table>`,
			shown: []string{"Panel", "Cell"}, gone: []string{"Same"}},
		{name: "a dark page", page: `<style>body{background:#111;color:#eee}</style><p>Light</p><p style="color:#111">Dark</p>`,
			shown: []string{"Light"}, gone: []string{"Dark"}},
		{name: "a dark body by attribute", page: `<body bgcolor="black" text="white"><p>Light</p><p><font color="#000">Dark</font></p></body>`,
			shown: []string{"Light"}, gone: []string{"Dark"}},
		{name: "a dark page in dark mode", page: `<style>@media (prefers-color-scheme:dark){body{background:#000;color:#fff}} .x{color:#000}</style><p>Plain</p><p class="x">Moded</p>`,
			shown: []string{"Plain"}, gone: []string{"Moded"}},
		{name: "a child sets its own colour", page: `<div style="color:#fff">Gone<p style="color:#333">Back</p></div>`,
			shown: []string{"Back"}, gone: []string{"Gone"}},
		{name: "gradient text", page: `<h1 style="background:linear-gradient(90deg,#f0c,#09f);-webkit-background-clip:text;-webkit-text-fill-color:transparent">Heading</h1>`,
			shown: []string{"Heading"}},
	})
}

// Shapes of no area, text indented out of a box that clips it, a zoom or
// scaling that shrinks text to nothing, and masks that let nothing through
// hide what they apply to.
func TestShapesZoomsMasks(t *testing.T) {
	checkStyles(t, []styleCase{
		{"clip-path:polygon(0 0,0 0,0 0)", true}, {"clip-path:polygon(0 0, 100% 0, 50% 0)", true},
		{"clip-path:polygon(evenodd, 0 0, 10px 10px, 20px 20px)", true}, {"clip-path:polygon(0 0)", true},
		{"clip-path:ellipse(0 0)", true}, {"clip-path:ellipse(50% 0 at 50% 50%)", true},
		{"text-indent:100%;white-space:nowrap;overflow:hidden", true}, {"text-indent:9999px;white-space:nowrap;overflow:hidden", true},
		{"width:200px;text-indent:300px;white-space:nowrap;overflow-x:clip", true}, {"text-indent:-100vw", true},
		{"zoom:0.01", true}, {"zoom:5%", true}, {"zoom:0.1", true}, {"transform:scale(0.05)", true},
		{"transform:translate(10px) scaleX(0.01)", true}, {"scale:0.05", true}, {"transform:scale3d(0.01, 1, 1)", true},
		{"mask-image:linear-gradient(transparent,transparent)", true},
		{"-webkit-mask-image:linear-gradient(rgba(0,0,0,0), transparent)", true},
		{"mask:linear-gradient(to right, transparent 0%, transparent 100%) no-repeat", true},
		// In sight.
		{"clip-path:polygon(0 0, 100% 0, 100% 100%, 0 100%)", false}, {"clip-path:polygon(50% 0%, 100% 50%, 50% 100%, 0% 50%)", false},
		{"clip-path:ellipse(50% 40% at 50% 50%)", false}, {"clip-path:polygon(0 0, 100% 10px, 50px 100%)", false},
		{"text-indent:100%", false}, {"text-indent:100%;overflow:hidden", false}, {"text-indent:2em;white-space:nowrap;overflow:hidden", false},
		{"zoom:0.5", false}, {"zoom:0", false}, {"zoom:normal", false}, {"zoom:150%", false},
		{"transform:scale(0.5)", false}, {"transform:scale(-1, 1)", false}, {"scale:1.2", false},
		{"mask-image:linear-gradient(#000, transparent)", false}, {"mask-image:url(m.svg)", false},
		{"mask-image:linear-gradient(transparent,transparent), url(m.svg)", false},
	})
	checkPages(t, []pageCase{
		{name: "zooms multiply", page: `<div style="zoom:.2">Fifth<p style="zoom:.2">Gone</p><p style="font-size:16px;zoom:0.5">Tenth</p></div>`,
			shown: []string{"Fifth"}, gone: []string{"Gone", "Tenth"}},
		{name: "a zoom holds whatever size a child sets", page: `<div style="zoom:0.01"><p style="font-size:30px">Tiny</p></div><p>Plain</p>`,
			shown: []string{"Plain"}, gone: []string{"Tiny"}},
		{name: "an image replaced by its text", page: `<style>.logo{width:120px;text-indent:100%;white-space:nowrap;overflow:hidden}</style><h1 class="logo">Brand</h1><p>Plain</p>`,
			shown: []string{"Plain"}, gone: []string{"Brand"}},
	})
}

// A declarative shadow root replaces what its host shows: its own tree,
// and of the host's children those its slots show. Its styles style it
// alone, and the page's do not reach into it.
func TestShadowRoots(t *testing.T) {
	checkPages(t, []pageCase{
		{name: "no slot", page: `<div><template shadowrootmode="open"><b>Shadowtext</b></template><p>Unslotted</p></div><p>Plain</p>`,
			shown: []string{"Shadowtext", "Plain"}, gone: []string{"Unslotted"}},
		{name: "the default slot", page: `<div><template shadowrootmode="open"><slot></slot></template><p>Slotted</p>Loose</div>`,
			shown: []string{"Slotted", "Loose"}},
		{name: "named slots", page: `<my-card><template shadowrootmode="closed"><h2><slot name="title">Fallback</slot></h2></template>
<span slot="title">Title</span><span slot="other">Other</span><span>Default</span></my-card>`,
			shown: []string{"Title"}, gone: []string{"Fallback", "Other", "Default"}},
		{name: "an empty slot shows its own", page: `<div><template shadowrootmode="open"><slot name="x">Fallback</slot></template></div>`,
			shown: []string{"Fallback"}},
		{name: "a hidden slot", page: `<div><template shadowrootmode="open"><style>slot{display:none}</style><slot></slot><p>Inside</p></template><p>Light</p></div>`,
			shown: []string{"Inside"}, gone: []string{"Light"}},
		{name: "styles keep to their tree", page: `<style>.d{display:none}</style><div><template shadowrootmode="open"><style>.h{display:none}</style>
<p class="h">Shadowed</p><p class="d">Encapsulated</p><slot></slot></template><p class="h">Lit</p><p class="d">Dropped</p></div>`,
			shown: []string{"Encapsulated", "Lit"}, gone: []string{"Shadowed", "Dropped"}},
		{name: "an inert template", page: `<template><p>Inert</p><style>p{display:none}</style></template><p>Plain</p>`,
			shown: []string{"Plain"}, gone: []string{"Inert"}},
		{name: "no host", page: `<ul><template shadowrootmode="open"><li>Unhosted</li></template><li>Item</li></ul>
<div><template shadowrootmode="bogus"><b>Bogus</b></template><p>Kept</p></div>`,
			shown: []string{"Item", "Kept"}, gone: []string{"Unhosted", "Bogus"}},
	})
}

// Of the rules that set a property, the more specific wins whatever their
// order: an id over classes, a class over a tag.
func TestSpecificity(t *testing.T) {
	checkPages(t, []pageCase{
		{name: "a class over a later tag", page: `<style>.h{display:none} p{display:block}</style><p class="h">Gone</p><p>Plain</p>`,
			shown: []string{"Plain"}, gone: []string{"Gone"}},
		{name: "an id over a later class", page: `<style>#x{display:block} .h{display:none}</style><p id="x" class="h">Shown</p><p class="h">Hidden</p>`,
			shown: []string{"Shown"}, gone: []string{"Hidden"}},
		{name: "two classes over one", page: `<style>.a.b{visibility:hidden} .a{visibility:visible}</style><p class="a b">Gone</p><p class="a">Seen</p>`,
			shown: []string{"Seen"}, gone: []string{"Gone"}},
		{name: "order among equals, and !important", page: `<style>.a{display:none} .b{display:block} #i{display:none!important} #i.a{display:block}</style>
<p class="a b">Later</p><p id="i" class="a">Important</p>`,
			shown: []string{"Later"}, gone: []string{"Important"}},
		{name: "inline style over any rule", page: `<style>#x.a{display:none}</style><p id="x" class="a" style="display:block">Inline</p>`,
			shown: []string{"Inline"}},
	})
}

// CSS ignores the <!-- and --> that once hid a style sheet from browsers
// without <style>, at its top level only.
func TestHTMLCommentsInStyle(t *testing.T) {
	checkPages(t, []pageCase{
		{name: "a rule inside", page: `<style><!-- .h{display:none} --></style><p class="h">Gone</p><p>Plain</p>`,
			shown: []string{"Plain"}, gone: []string{"Gone"}},
		{name: "between rules", page: "<style><!--\n.a{color:red}\n-->\n<!-- p{visibility:hidden} --></style><p>Gone</p>",
			gone: []string{"Gone"}},
		{name: "in a string", page: `<style>.q::before{content:"-->"} .h{display:none}</style><p class="h">Gone</p>`,
			gone: []string{"Gone"}},
		{name: "inside @media they spoil the rule", page: `<style>@media screen{<!-- .h{display:none}}</style><p class="h">Seen</p>`,
			shown: []string{"Seen"}},
		{name: "inside a block they spoil the declaration", page: `<style>.h{<!-- display:none}</style><p class="h">Seen</p>`,
			shown: []string{"Seen"}},
	})
}

// What a browser draws in an element's place (a canvas, a video, a meter)
// hides the fallback text inside it.
func TestFallbackContent(t *testing.T) {
	checkPages(t, []pageCase{
		{name: "drawn in place", page: `<p>Plain</p><canvas>Canvas</canvas><video controls><source src="a.mp4">Video</video>
<audio src="a.mp3"><p>Audio</p></audio><progress value="1" max="2">Progress</progress><meter value=".5">Meter</meter>`,
			shown: []string{"Plain"}, gone: []string{"Canvas", "Video", "Audio", "Progress", "Meter"}},
		{name: "embedded", page: `<p>Plain</p><object data="a.pdf">Object</object><iframe src="a.html">Frame</iframe>`,
			shown: []string{"Plain"}, gone: []string{"Object", "Frame"}},
	})
}

// A declaration whose value a browser refuses for its property is dropped
// as if it were not written: an earlier one stands.
func TestInvalidValues(t *testing.T) {
	checkStyles(t, []styleCase{
		{`display:none\9`, false}, {`display:none\ `, false}, {"display:none !ie", false}, {"display:nonе", false},
		{`display:block;display:none\9`, false}, {"visibility:hidden;visibility:hiden", true},
		{`display:none;display:block\9`, true}, {"opacity:0;opacity:1px", true}, {"opacity:0;opacity:one", true},
		{"font-size:-1px", false}, {"font-size:0;font-size:big", true}, {`d\ isplay:none`, false},
		{"display:none ! important;display:block", true}, {`display:\6e one`, true}, {"display:inline flow-root;opacity:0", true},
	})
	checkPages(t, []pageCase{
		{name: "in a rule", page: `<style>.h{display:none} .h{display:block\9} .s{display:none\9}</style><p class="h">Gone</p><p class="s">Seen</p>`,
			shown: []string{"Seen"}, gone: []string{"Gone"}},
	})
}

// A box moved far above or left of the page by its offsets, or fixed
// wholly outside the window, is out of sight; offsets a browser does not
// follow (bottom after top, right after left) do not count.
func TestOffsets(t *testing.T) {
	checkStyles(t, []styleCase{
		{"position:relative;top:-10000px", true}, {"position:relative;left:-10000px", true}, {"position:relative;right:9999px", true},
		{"position:relative;bottom:50vw", true}, {"position:fixed;bottom:100%", true}, {"position:fixed;top:100vh", true},
		{"position:fixed;left:100%", true}, {"position:fixed;top:200%", true}, {"position:fixed;right:5000px", true},
		{"position:fixed;top:auto;bottom:100%", true},
		// In sight.
		{"position:relative;top:-10px", false}, {"position:relative;top:0;bottom:9999px", false}, {"position:relative;left:-1em", false},
		{"position:relative;right:-9999px", false}, {"position:relative;left:0;right:9999px", false}, {"position:fixed;bottom:0", false},
		{"position:fixed;top:0;bottom:100%", false}, {"position:fixed;top:90%", false}, {"position:fixed;top:450px", false},
		{"position:absolute;bottom:100%", false}, {"position:sticky;top:-10000px", false}, {"position:static;top:-10000px", false},
	})
}

// A transform that turns a box edge on, flattens it or, with its back face
// hidden, turns its back to the reader hides its text; one that turns,
// mirrors or skews it a little does not.
func TestTransforms(t *testing.T) {
	checkStyles(t, []styleCase{
		{"transform:rotateX(90deg)", true}, {"transform:rotateY(90deg)", true}, {"transform:rotateX(87deg)", true},
		{"transform:rotateX(.25turn)", true}, {"transform:rotate3d(1, 0, 0, 90deg)", true}, {"transform:perspective(500px) rotateX(90deg)", true},
		{"transform:matrix(0,0,0,0,0,0)", true}, {"transform:matrix(1, 0, 0, 0, 0, 0)", true}, {"transform:skewX(89deg)", true},
		{"transform:matrix3d(1,0,0,0, 0,0,0,0, 0,0,1,0, 0,0,0,1)", true}, {"rotate:x 90deg", true}, {"rotate:0 1 0 90deg", true},
		{"transform:rotate(30deg)rotateX(90deg)", true}, {"transform:scale(0.05)", true},
		{"backface-visibility:hidden;transform:rotateY(180deg)", true}, {"backface-visibility:hidden;transform:rotateX(180deg)", true},
		{"backface-visibility:hidden;rotate:y 180deg", true}, {"backface-visibility:hidden;transform:rotateY(120deg)", true},
		// In sight.
		{"transform:rotateX(45deg)", false}, {"transform:rotateY(180deg)", false}, {"transform:rotateX(180deg)", false},
		{"backface-visibility:hidden;transform:scaleX(-1)", false}, {"backface-visibility:hidden;transform:rotate(180deg)", false},
		{"backface-visibility:hidden;transform:rotateY(60deg)", false}, {"transform:matrix(1,0,0,1,10,10)", false},
		{"transform:rotateX(90)", false}, {"transform:rotateX(90deg) frobnicate(1)", false}, {"transform:rotate(45deg) scale(2)", false},
		{"transform:skewX(30deg)", false}, {"transform:rotateX(90deg) rotateX(-90deg)", false}, {"transform:none", false},
		{"transform:matrix3d(1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1)", false}, {"rotate:45deg", false},
		{"transform:matrix(0,0)", false}, {"transform:matrix3d(0)", false},
	})
	checkPages(t, []pageCase{
		{name: "turned further by a parent", page: `<div style="transform:rotateX(70deg)"><p style="transform:rotateX(70deg)">Gone</p><p>Foreshortened</p></div>`,
			shown: []string{"Foreshortened"}, gone: []string{"Gone"}},
	})
}

// A filter that blurs text by half its size or more leaves nothing to
// read; blurs inside one another add up.
func TestBlur(t *testing.T) {
	checkStyles(t, []styleCase{
		{"filter:blur(200px)", true}, {"filter:blur(8px)", true}, {"filter:blur(.5em)", true}, {"filter:grayscale(1) blur(1rem)", true},
		{"font-size:40px;filter:blur(25px)", true}, {"transform:scale(4);filter:blur(10px)", true},
		// In sight.
		{"filter:blur(1px)", false}, {"filter:blur(4px)", false}, {"font-size:40px;filter:blur(10px)", false}, {"filter:blur()", false},
		{"filter:drop-shadow(0 0 20px #000)", false}, {"backdrop-filter:blur(50px)", false},
	})
	checkPages(t, []pageCase{
		{name: "nested blurs", page: `<div style="filter:blur(6px)"><p style="filter:blur(6px)">Gone</p><h1 style="font-size:40px">Heading</h1></div>`,
			shown: []string{"Heading"}, gone: []string{"Gone"}},
	})
}

// A text's shadow draws its glyphs too: transparent text with a shadow
// that stands out is in sight, unless the shadow is blurred away or cast
// off the page.
func TestTextShadows(t *testing.T) {
	checkStyles(t, []styleCase{
		{"color:transparent;text-shadow:0 0 0 #000", false}, {"color:#fff;text-shadow:1px 1px 2px #000", false},
		{"color:transparent;text-shadow:#333 0 0 3px", false}, {"-webkit-text-fill-color:transparent;text-shadow:0 0 0 red", false},
		{"color:transparent;text-shadow:0 0 0 #fff, 1px 1px 0 rgba(0,0,0,.5)", false},
		// Hidden.
		{"color:transparent;text-shadow:0 0 0 transparent", true}, {"color:transparent;text-shadow:0 0 0 #fff", true},
		{"color:transparent;text-shadow:0 0 40px #000", true}, {"color:transparent;text-shadow:-9999px 0 0 #000", true},
		{"color:transparent;text-shadow:0 0 0 currentcolor", true}, {"color:transparent;text-shadow:0 0 0", true},
		{"color:transparent;text-shadow:none", true}, {"color:#fff;text-shadow:1px 1px #fff", true},
	})
	checkPages(t, []pageCase{
		{name: "inherited", page: `<div style="text-shadow:0 0 0 #000"><p style="color:transparent">Shadowed</p><p style="color:transparent;text-shadow:none">Gone</p></div>`,
			shown: []string{"Shadowed"}, gone: []string{"Gone"}},
	})
}

// Colours of every form CSS has are read as a browser paints them (the
// values are Chromium's, read back from a canvas).
func TestColourForms(t *testing.T) {
	tests := []struct {
		css        string
		r, g, b, a int
	}{
		{"oklch(1 0 0)", 255, 255, 255, 255}, {"lab(100 0 0)", 255, 255, 255, 255}, {"hwb(0 100% 0%)", 255, 255, 255, 255},
		{"color-mix(in srgb, white 100%, black)", 255, 255, 255, 255}, {"canvas", 255, 255, 255, 255},
		{"oklch(0.628 0.2577 29.23)", 255, 0, 0, 255}, {"lab(54.29 80.8 69.89)", 255, 0, 0, 255},
		{"oklab(0.62796 0.22486 0.12585)", 255, 0, 0, 255}, {"lch(54.29 106.84 40.85)", 255, 0, 0, 255},
		{"color(display-p3 1 0 0)", 255, 0, 0, 255}, {"color(srgb-linear 0.2159 0.2159 0.2159)", 128, 128, 128, 255},
		{"color-mix(in oklab, white 95%, black)", 238, 238, 238, 255}, {"color-mix(in srgb, red 50%, blue)", 128, 0, 128, 255},
		{"color-mix(in lab, white 90%, black)", 226, 226, 226, 255}, {"hwb(120 20% 30%)", 51, 179, 51, 255},
		{"oklch(0.7 0.1 200)", 64, 177, 183, 255}, {"lch(80% 30 100)", 204, 200, 142, 255}, {"color(xyz 0.5 0.5 0.5)", 204, 183, 180, 255},
		{"color-mix(in oklch, #0d6efd 40%, white)", 165, 201, 255, 255}, {"color-mix(in srgb-linear, #fff, #000)", 188, 188, 188, 255},
		{"color-mix(in hsl, red, blue)", 255, 0, 255, 255}, {"lab(97 0 0)", 246, 246, 246, 255}, {"oklch(0.98 0 0)", 248, 248, 248, 255},
		{"color-mix(in srgb, white 30%, black 30%)", 128, 128, 128, 153}, {"linktext", 0, 0, 238, 255}, {"mark", 255, 255, 0, 255},
		{"buttontext", 0, 0, 0, 255}, {"field", 255, 255, 255, 255}, {"color(srgb 1 1 1 / 50%)", 255, 255, 255, 128},
	}
	for _, tt := range tests {
		c, ok := colourOf(tt.css, black)
		got := []int{int(math.Round(c.r * 255)), int(math.Round(c.g * 255)), int(math.Round(c.b * 255)), int(math.Round(c.a * 255))}
		for i, want := range []int{tt.r, tt.g, tt.b, tt.a} {
			if !ok || !c.known || math.Abs(float64(got[i]-want)) > 2 {
				t.Errorf("colourOf(%q) = %v (known %v), want %d,%d,%d,%d", tt.css, got, c.known, tt.r, tt.g, tt.b, tt.a)
				break
			}
		}
	}
	for _, css := range []string{"color-mix(in srgb, white)", "color-mix(in nowhere, white, black)", "color(rec2020 1 1 1)", "light-dark(#fff, #000)", "highlight"} {
		if c, _ := colourOf(css, black); c.known {
			t.Errorf("colourOf(%q) = %v, want unknown", css, c)
		}
	}
}

// Custom properties are inherited and put into var()s as a browser does:
// a var() of a name not set takes its fallback, and one that comes to no
// valid value leaves its property unset.
func TestVars(t *testing.T) {
	bomb := "--a0:x x x x x x x x"
	for i := 1; i < 8; i++ {
		bomb += fmt.Sprintf(";--a%d:%s", i, strings.Repeat(fmt.Sprintf("var(--a%d) ", i-1), 8))
	}
	checkPages(t, []pageCase{
		{name: "from the root", page: `<style>:root{--hide:none;--tiny:0px} .h{display:var(--hide)} .s{font-size:var(--tiny)}</style>
<p class="h">Gone</p><p class="s">Tiny</p><p>Plain</p>`, shown: []string{"Plain"}, gone: []string{"Gone", "Tiny"}},
		{name: "from a parent", page: `<div style="--o:0;--v:hidden"><p style="opacity:var(--o)">Clear</p><p style="visibility:var(--v)">Unseen</p></div>`,
			gone: []string{"Clear", "Unseen"}},
		{name: "fallbacks", page: `<p style="display:var(--nope, none)">Fallen</p><p style="display:var(--a, var(--b, none))">Deep</p>
<p style="display:var(--nope)">Unset</p>`, shown: []string{"Unset"}, gone: []string{"Fallen", "Deep"}},
		{name: "one of another", page: `<style>:root{--a:none;--b:var(--a)} .h{display:var(--b)}</style><p class="h">Gone</p>`,
			gone: []string{"Gone"}},
		{name: "a cycle", page: `<style>.c{--a:var(--b);--b:var(--a);display:var(--a)}</style><p class="c">Cycled</p>`,
			shown: []string{"Cycled"}},
		{name: "a child sets its own", page: `<style>:root{--h:none} .k{--h:block} .h{display:var(--h)}</style><div class="k"><p class="h">Reset</p></div>`,
			shown: []string{"Reset"}},
		{name: "initial", page: `<div style="--h:none"><p style="--h:initial;display:var(--h)">Initial</p></div>`, shown: []string{"Initial"}},
		{name: "invalid once put in", page: `<style>:root{--x:10px} .h{display:none;display:var(--x)}</style><p class="h">Invalid</p>`,
			shown: []string{"Invalid"}},
		{name: "colours", page: `<div style="background:#000;--fg:#000"><p style="color:var(--fg)">Dark</p></div><p style="color:#fff;background:var(--unset)">Kept</p>`,
			shown: []string{"Kept"}, gone: []string{"Dark"}},
		{name: "values that grow without end", page: `<div style="` + bomb + `"><p style="display:var(--a7)">Bombed</p></div>`,
			shown: []string{"Bombed"}},
	})
}

// An animation that rests on a keyframe that hides (one that fills
// forwards when it ends, a paused one on its first) hides.
func TestAnimations(t *testing.T) {
	const out, in = "@keyframes out{from{opacity:1}to{opacity:0}} ", "@keyframes in{from{opacity:0}to{opacity:1}} "
	checkPages(t, []pageCase{
		hides("forwards", out+".h{animation:out 1s forwards}", true),
		hides("both", out+".h{animation:out 1s ease-in 0s 1 both}", true),
		hides("longhands", out+".h{animation-name:out;animation-duration:1s;animation-fill-mode:forwards}", true),
		hides("to visibility hidden", "@keyframes v{to{visibility:hidden}} .h{animation:v .5s forwards}", true),
		hides("reversed onto the first keyframe", in+".h{animation:in 1s reverse forwards}", true),
		hides("alternating twice", in+".h{animation:in 1s alternate 2 forwards}", true),
		hides("paused", in+".h{animation:in 1s paused}", true),
		hides("a webkit name, quoted", `@-webkit-keyframes "gone"{100%{opacity:0}} .h{animation:gone 2s forwards}`, true),
		// In sight.
		hides("no fill", out+".h{animation:out 1s}", false),
		hides("never ending", out+".h{animation:out 1s infinite forwards}", false),
		hides("reversed", out+".h{animation:out 1s reverse forwards}", false),
		hides("alternating once back", out+".h{animation:out 1s alternate 2 forwards}", false),
		hides("paused before it starts", in+".h{animation:in 1s 2s paused}", false),
		hides("no last keyframe", "@keyframes mid{50%{opacity:0}} .h{animation:mid 1s forwards}", false),
		hides("!important in a keyframe", "@keyframes i{to{opacity:0!important}} .h{animation:i 1s forwards}", false),
		hides("a later animation wins", out+in+".h{animation:out 1s forwards, in 1s forwards}", false),
		hides("keyframes for print", "@media print{@keyframes p{to{opacity:0}}} .h{animation:p 1s forwards}", false),
		hides("no such keyframes", ".h{animation:nowhere 1s forwards}", false),
	})
}
