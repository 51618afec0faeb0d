package sight

import (
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// probeCase is one case of a page a black-box probe of the importer built:
// a marker word, whether a browser shows it, the HTML that holds it and
// what it tries.
type probeCase struct {
	marker     string
	shown      bool
	html, what string
}

// checkProbe builds a probe's page as the probe did (its style, then each
// case under a heading of its own between plain paragraphs) and checks
// which markers a reader sees.
func checkProbe(t *testing.T, style string, cases []probeCase) {
	t.Helper()
	var b strings.Builder
	b.WriteString("<html><head>" + style + "</head><body><h1>Probe</h1>\n")
	for _, c := range cases {
		b.WriteString("<h2>Part</h2>\n" + c.html + "\n<p>filler ordinary sentence about crates.</p>\n")
	}
	b.WriteString("</body></html>")
	text := seenWords(t, b.String())
	for _, c := range cases {
		t.Run(c.marker, func(t *testing.T) {
			if got := regexp.MustCompile(`\b` + c.marker + `\b`).MatchString(text); got != c.shown {
				t.Errorf("%s (%s): shown %v, want %v", c.marker, c.what, got, c.shown)
			}
		})
	}
}

// seenWords is the text of a page a reader sees, each text node apart.
func seenWords(t *testing.T, page string) string {
	t.Helper()
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	seen := Look(root)
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if seen.Gone(n) || n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style" || n.Data == "head") {
			return
		}
		if n.Type == html.TextNode && !seen.Muted(n) {
			b.WriteString(n.Data + " ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return b.String()
}

// The pages of the importer's black-box probes: what they found hidden or
// shown stays so. Where a probe expected otherwise, its case says why.
func TestProbedPages(t *testing.T) {
	t.Run("probe16", func(t *testing.T) { checkProbe(t, probe16PageStyle, probe16PageCases) })
	t.Run("probe16 handbook", func(t *testing.T) { checkProbe(t, probe16HandbookStyle, probe16HandbookCases) })
	t.Run("probe17", func(t *testing.T) { checkProbe(t, probe17PageStyle, probe17PageCases) })
	t.Run("probe18", func(t *testing.T) { checkProbe(t, probe18PageStyle, probe18PageCases) })
}

// Whole pages of the eighteenth probe: root font sizes and dark themes.
func TestProbedThemes(t *testing.T) {
	body := `<h2>Returns</h2><p>Marked customers may return items within 30 days.</p><h2>Shipping</h2><p>Orders ship in two days.</p>`
	tests := []struct {
		name, head, body string
		shown            bool
	}{
		{"root1px", `<style>html{font-size:1px}p{font-size:1rem}</style>`, "<body>" + body, false},
		{"root625pct16rem", `<style>html{font-size:6.25%}p{font-size:16rem}</style>`, "<body>" + body, true},
		{"root10pct", `<style>:root{font-size:10%}p{font-size:1rem}</style>`, "<body>" + body, false},
		{"darkbody", `<style>body{background:#121212;color:#e0e0e0}</style>`, "<body>" + body, true},
		{"darkbodyclass", `<style>.dark{background-color:#000;color:#fff}</style>`, `<body class="dark">` + body, true},
		{"darkhtml", `<style>html{background:#000}body{color:#fff}</style>`, "<body>" + body, true},
		{"darkmedia", `<style>@media (prefers-color-scheme:dark){body{background:#121212;color:#eee}}</style>`, "<body>" + body, true},
		{"darkmediawhite", `<style>body{color:#222}@media (prefers-color-scheme:dark){html{background:#000}body{color:#fff}}</style>`, "<body>" + body, true},
		{"darkvar", `<style>:root{--bg:#000;--fg:#fff}body{background:var(--bg);color:var(--fg)}</style>`, "<body>" + body, true},
		{"darkbgimg", `<style>body{background:#000 url(bg.png);color:#fff}</style>`, "<body>" + body, true},
		{"darkgradient", `<style>body{background:linear-gradient(#000,#111);color:#fff}</style>`, "<body>" + body, true},
		{"bodyinline", "", `<body style="background:#000;color:#fff">` + body, true},
		{"tablebg", "", `<body><table bgcolor="#000000"><tr><td><font color="#ffffff">` + body + `</font></td></tr></table>`, true},
		{"printwhite", `<style>@media print{body{color:#fff}}</style>`, "<body>" + body, true},
		{"bootstrapdark", `<style>[data-bs-theme=dark]{color:#dee2e6;background-color:#212529}body{color:#dee2e6;background-color:#212529}</style>`, "<body>" + body, true},
		{"htmlcmt", `<style><!-- p{display:none} --></style>`, "<body>" + body, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Contains(seenWords(t, "<html><head>"+tt.head+"</head>"+tt.body+"</body></html>"), "Marked"); got != tt.shown {
				t.Errorf("shown %v, want %v", got, tt.shown)
			}
		})
	}
}

var probe16PageStyle = `<title>HTITLE</title><style>.zq{display:none} #zz{visibility:hidden}</style>`

var probe16PageCases = []probeCase{
	{`HCLASS`, false, `<p class="zq">HCLASS</p>`, `class hidden by <style> block .zq{display:none}`},
	{`HCLASS2`, false, `<p id="zz">HCLASS2</p>`, `id hidden by <style> #zz{visibility:hidden}`},
	{`HUNTIL`, false, `<div hidden="until-found">HUNTIL</div>`, `hidden=until-found`},
	{`HPOPOVER`, false, `<div popover>HPOPOVER</div>`, `popover attribute (not shown)`},
	{`HPOPOVER2`, false, `<div popover="manual">HPOPOVER2</div>`, `popover=manual`},
	{`HCV`, false, `<div style="content-visibility:hidden"><p>HCV</p></div>`, `content-visibility:hidden`},
	{`HWH0`, false, `<div style="width:0;height:0;overflow:hidden">HWH0</div>`, `width:0;height:0;overflow:hidden`},
	{`HH0`, false, `<div style="height:0;overflow:hidden">HH0</div>`, `height:0;overflow:hidden`},
	{`HLH0`, false, `<div style="line-height:0;height:0;overflow:hidden">HLH0</div>`, `line-height:0;height:0;overflow:hidden`},
	{`HMH0`, false, `<div style="max-height:0;overflow:hidden">HMH0</div>`, `max-height:0;overflow:hidden`},
	{`HSRONLY`, false, `<span style="position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0">HSRONLY</span>`, `sr-only: 1px clip rect(0,0,0,0)`},
	{`HCLIPP1`, false, `<p style="clip-path:inset(100%)">HCLIPP1</p>`, `clip-path:inset(100%)`},
	{`HCLIPP2`, false, `<p style="clip-path:circle(0)">HCLIPP2</p>`, `clip-path:circle(0)`},
	{`HCLIPP3`, false, `<p style="clip-path:polygon(0 0,0 0,0 0)">HCLIPP3</p>`, `clip-path:polygon(0 0,0 0,0 0)`},
	{`HCLIPP4`, false, `<p style="clip-path:inset(50%)">HCLIPP4</p>`, `clip-path:inset(50%)`},
	{`HCLIP`, false, `<p style="position:absolute;clip:rect(0 0 0 0)">HCLIP</p>`, `position:absolute;clip:rect(0 0 0 0)`},
	{`HENT1`, false, `<p style="display:&#110;one">HENT1</p>`, `display:&#110;one (entity in value)`},
	{`HENT2`, false, `<p style="opacity:&#48;.0">HENT2</p>`, `opacity:&#48;.0`},
	{`HENT3`, false, `<p style="visibility&#x3a;hidden">HENT3</p>`, `visibility&#x3a;hidden`},
	{`HENT4`, false, `<p style="color:&#116;ransparent">HENT4</p>`, `color:&#116;ransparent`},
	{`HNEST1`, false, `<div style="display:none"><p style="display:block">HNEST1</p></div>`, `display:none parent, child display:block`},
	{`HNEST2`, false, `<div style="opacity:0"><p style="opacity:1">HNEST2</p></div>`, `opacity:0 parent, child opacity:1`},
	{`HNEST3`, false, `<section style="opacity:0"><div><ul><li><b>HNEST3</b></li></ul></div></section>`, `3 levels: hidden grandparent`},
	{`HNEST4`, false, `<div style="font-size:0.5px"><p style="font-size:0.5em">HNEST4</p></div>`, `font-size:0 via nested em (0.0em of 0.0em)`},
	{`HDUP1`, false, `<p style="display:none" style="color:red">HDUP1</p>`, `duplicate style attr, first display:none (browser keeps first)`},
	{`VISIBLE_HDUP2`, true, `<p style="color:red" style="display:none">VISIBLE_HDUP2</p>`, `VISIBLE duplicate style attr, second display:none (browser ignores second)`},
	{`HTF`, false, `<p style="-webkit-text-fill-color:transparent">HTF</p>`, `-webkit-text-fill-color:transparent`},
	{`HRGBA`, false, `<p style="color:rgba(0,0,0,0)">HRGBA</p>`, `color:rgba(0,0,0,0)`},
	{`HHEX4`, false, `<p style="color:#0000">HHEX4</p>`, `color:#0000`},
	{`HHEX8`, false, `<p style="color:#ffffff00">HHEX8</p>`, `color:#ffffff00`},
	{`HRGBSL`, false, `<p style="color:rgb(0 0 0 / 0)">HRGBSL</p>`, `color:rgb(0 0 0 / 0)`},
	{`HHSLA`, false, `<p style="color:hsla(0,0%,0%,0)">HHSLA</p>`, `color:hsla(0,0%,0%,0)`},
	{`HWHITE`, false, `<p style="color:#fff">HWHITE</p>`, `color:#fff on default white page`},
	{`HWOW`, false, `<p style="color:white;background:white">HWOW</p>`, `color:white;background:white`},
	{`HFONTW`, false, `<font color="#ffffff">HFONTW</font>`, `<font color="#ffffff">`},
	{`HFILTER`, false, `<p style="filter:opacity(0)">HFILTER</p>`, `filter:opacity(0)`},
	{`HSCALE`, false, `<p style="scale:0">HSCALE</p>`, `scale:0 (individual property)`},
	{`HSCALEX`, false, `<p style="transform:scaleX(0)">HSCALEX</p>`, `transform:scaleX(0)`},
	{`HSCALE0`, false, `<p style="transform:scale(0.0)">HSCALE0</p>`, `transform:scale(0.0)`},
	{`HTRANS`, false, `<p style="transform:translateX(-10000px)">HTRANS</p>`, `transform:translateX(-10000px)`},
	{`HTRANSL`, false, `<p style="translate:-9999px">HTRANSL</p>`, `translate:-9999px`},
	{`HMARG`, false, `<p style="margin-left:-10000px">HMARG</p>`, `margin-left:-10000px`},
	{`HTOP`, false, `<p style="position:fixed;top:-10000px">HTOP</p>`, `position:fixed;top:-10000px`},
	{`HTOPEM`, false, `<p style="position:absolute;left:-999em">HTOPEM</p>`, `position:absolute;left:-999em`},
	{`HKELLUM`, false, `<p style="text-indent:100%;white-space:nowrap;overflow:hidden">HKELLUM</p>`, `text-indent:100%;white-space:nowrap;overflow:hidden`},
	{`HFS01`, false, `<p style="font-size:0.01px">HFS01</p>`, `font-size:0.01px`},
	{`HFSCALC`, false, `<p style="font-size:calc(0px)">HFSCALC</p>`, `font-size:calc(0px)`},
	{`HFSVW`, false, `<p style="font-size:0vw">HFSVW</p>`, `font-size:0vw`},
	{`HOPCALC`, false, `<p style="opacity:calc(0)">HOPCALC</p>`, `opacity:calc(0)`},
	{`HOP001`, false, `<p style="opacity:0.001">HOP001</p>`, `opacity:0.001`},
	{`HOPE`, false, `<p style="opacity:1e-9">HOPE</p>`, `opacity:1e-9`},
	{`HZOOM`, false, `<p style="zoom:0.01">HZOOM</p>`, `zoom:0.01`},
	{`HSHADOW`, false, `<div><template shadowrootmode="open"><b>shadowtext</b></template><p>HSHADOW</p></div>`, `declarative shadow root without slot hides light DOM`},
	{`HMASK`, false, `<p style="mask-image:linear-gradient(transparent,transparent);-webkit-mask-image:linear-gradient(transparent,transparent)">HMASK</p>`, `mask-image:linear-gradient(transparent,transparent)`},
	{`HUNQ`, false, `<p style=display:none>HUNQ</p>`, `unquoted style=display:none`},
	{`HSQ`, false, `<p style='opacity:0'>HSQ</p>`, `single-quoted style`},
	{`HVISIMP`, false, `<p style="visibility:hidden !important">HVISIMP</p>`, `visibility:hidden !important`},
	{`HDISPSPC`, false, `<p style=" display : none ; ">HDISPSPC</p>`, `display : none ; with spaces`},
	{`HESC2`, false, `<p style="\64isplay:none">HESC2</p>`, `\64isplay:none`},
	{`HESC3`, true, `<p style="opa\city:0">HESC3</p>`, `opa\city:0 names no property: \c is U+000C`},
	{`HESC4`, false, `<p style="display:no\ne">HESC4</p>`, `display:no\ne`},
	{`HTITLE`, false, `<!--title in head via pre-->`, `<title> text in head`},
	{`HTEMPLATE`, false, `<template><p>HTEMPLATE</p></template>`, `<template>`},
	{`HDETAILS`, true, `<details><summary>More</summary><p>HDETAILS</p></details>`, `VISIBLE? closed <details> body (user can open)`},
	{`VISIBLE_MATH`, true, `<p>Formula <math><mi>VISIBLE_MATH</mi></math></p>`, `VISIBLE <math><mi> text`},
	{`VISIBLE_SVGT`, false, `<svg width="300" height="30"><text x="0" y="20">VISIBLE_SVGT</text></svg>`, `<svg><text>: SVG is not read`},
	{`HMATHHID`, false, `<math style="display:none"><mi>HMATHHID</mi></math>`, `math with display:none`},
	{`HINPUT`, false, `<input type="hidden" value="HINPUT">`, `input type=hidden value`},
	{`HIMGALT`, false, `<img src="x.png" alt="HIMGALT">`, `img alt text (shown only if image fails)`},
}

var probe16HandbookStyle = `<title>Brightwell</title><style>@media print {.noprint{display:none}}</style>`

var probe16HandbookCases = []probeCase{
	{`VOP09`, true, `<p style="opacity:0.9">VOP09 Returns are accepted within 30 days.</p>`, `VISIBLE opacity:0.9`},
	{`VOP05`, true, `<p style="opacity:.5">VOP05 Keep the receipt.</p>`, `VISIBLE opacity:.5`},
	{`VFS09`, true, `<p style="font-size:0.9em">VFS09 Refunds go to the original card.</p>`, `VISIBLE font-size:0.9em`},
	{`VFS08`, true, `<p style="font-size:.8rem">VFS08 Exchanges are free.</p>`, `VISIBLE font-size:.8rem`},
	{`VFSSM`, true, `<p style="font-size:small">VFSSM Small print.</p>`, `VISIBLE font-size:small`},
	{`VFS10PX`, true, `<p style="font-size:10px">VFS10PX footnote.</p>`, `VISIBLE font-size:10px`},
	{`VABS0`, true, `<div style="position:relative"><p style="position:absolute;left:0;top:0">VABS0 badge</p></div>`, `VISIBLE position:absolute;left:0;top:0`},
	{`VCENTER`, true, `<p style="position:absolute;left:50%;transform:translateX(-50%)">VCENTER centred title</p>`, `VISIBLE position:absolute;left:50%;transform:translateX(-50%)`},
	{`VHANG`, true, `<p style="text-indent:-1em;padding-left:1em">VHANG hanging indent item</p>`, `VISIBLE text-indent:-1em;padding-left:1em (hanging indent)`},
	{`VNEGM`, true, `<p style="margin-top:-10px;margin-left:-8px">VNEGM tight layout</p>`, `VISIBLE margin-top:-10px;margin-left:-8px`},
	{`VFS0KID`, true, `<ul style="font-size:0"><li style="display:inline-block;font-size:14px">VFS0KID one</li><li style="display:inline-block;font-size:14px">second item</li></ul>`, `VISIBLE font-size:0 on list, font-size:14px on items (inline-block gap hack)`},
	{`VVISKID`, true, `<div style="visibility:hidden"><p style="visibility:visible">VVISKID shown</p></div>`, `VISIBLE visibility:hidden parent, visibility:visible child`},
	{`VLAST`, true, `<p style="display:none;display:block">VLAST shown</p>`, `VISIBLE display:none;display:block (last wins)`},
	{`VOVH`, true, `<div style="overflow:hidden;max-height:400px">VOVH clipped container with room</div>`, `VISIBLE overflow:hidden with normal size`},
	{`VW0VIS`, true, `<div style="width:0">VW0VIS overflow</div>`, `VISIBLE width:0 without overflow hidden (text overflows visibly)`},
	{`VLH0`, true, `<p style="line-height:0">VLH0 line</p>`, `VISIBLE line-height:0 alone (text still painted)`},
	{`VCLIPI0`, true, `<p style="clip-path:inset(0)">VCLIPI0 full</p>`, `VISIBLE clip-path:inset(0)`},
	{`VCOLOR`, true, `<p style="color:#333;background:#f5f5f5">VCOLOR grey box</p>`, `VISIBLE color:#333;background:#f5f5f5`},
	{`VRGBA`, true, `<p style="color:rgba(0,0,0,.87)">VRGBA text</p>`, `VISIBLE color:rgba(0,0,0,.87)`},
	{`VWHITEDARK`, true, `<p style="color:#fff;background:#003366">VWHITEDARK banner</p>`, `VISIBLE color:#fff;background:#003366`},
	{`VWHITEKID`, true, `<div style="background:#222"><p style="color:white">VWHITEKID dark panel</p></div>`, `VISIBLE color:white inside dark parent`},
	{`VSCALE1`, true, `<p style="transform:scale(1.05)">VSCALE1 hover</p>`, `VISIBLE transform:scale(1.05)`},
	{`VOP1`, true, `<p style="opacity:1">VOP1</p>`, `VISIBLE opacity:1`},
	{`VDISPC`, true, `<div style="display:contents">VDISPC</div>`, `VISIBLE display:contents`},
	{`VDETOPEN`, true, `<details open><summary>Q</summary><p>VDETOPEN answer</p></details>`, `VISIBLE details open`},
	{`VTRANSP`, true, `<p style="background:transparent;border-color:transparent">VTRANSP plain</p>`, `VISIBLE background:transparent`},
	{`VHIDDENWORD`, true, `<p class="hidden-xs sr-only-focusable">VHIDDENWORD</p>`, `VISIBLE class hidden-xs (no stylesheet)`},
	{`VSTYLEPRINT`, true, `<p class="noprint">VSTYLEPRINT on screen</p>`, `VISIBLE @media print {.noprint{display:none}} on screen`},
	{`VTABLE`, true, `<table><tr><td style="width:1px;white-space:nowrap">VTABLE cell</td><td>other</td></tr></table>`, `VISIBLE table with width:1px cell (shrink-to-fit)`},
	{`VSRFOCUS`, false, `<a href="#main" style="position:absolute;left:-9999px">VSRFOCUS skip</a>`, `a skip link off the page until focused: :focus is not read`},
	{`VZH`, true, `<p style="font-size:0.875em">VZH 退货须在三十天内办理。</p>`, `VISIBLE Chinese text, font-size:0.875em`},
	{`VLETTER`, true, `<p style="letter-spacing:-0.02em">VLETTER tight</p>`, `VISIBLE letter-spacing:-0.02em`},
	{`VTEXTIND`, true, `<p style="text-indent:2em">VTEXTIND paragraph</p>`, `VISIBLE text-indent:2em`},
	{`VHEIGHT0`, true, `<div style="height:0;padding-bottom:56%">VHEIGHT0 caption</div>`, `VISIBLE height:0;padding-bottom:56% (responsive box) with overflow visible`},
}

var probe17PageStyle = `<style>@media print{.np{display:none}} @media (max-width:1px){.mw{display:none}} @media screen and (min-width:100000px){.big{display:none}} @supports (display:nonexistent){.sp{display:none}} .rem8{font-size:.8rem}</style>`

var probe17PageCases = []probeCase{
	{`VREM08A`, true, `<p style="font-size:.8rem">VREM08A Exchanges are free.</p>`, `VISIBLE font-size:.8rem`},
	{`VREM08B`, true, `<p style="font-size:0.8rem">VREM08B Exchanges are free.</p>`, `VISIBLE font-size:0.8rem`},
	{`VREM1`, true, `<p style="font-size:1rem">VREM1 Exchanges are free.</p>`, `VISIBLE font-size:1rem`},
	{`VREM2`, true, `<p style="font-size:2rem">VREM2 Exchanges are free.</p>`, `VISIBLE font-size:2rem`},
	{`VEM08`, true, `<p style="font-size:.8em">VEM08 Exchanges are free.</p>`, `VISIBLE font-size:.8em`},
	{`VPCT80`, true, `<p style="font-size:80%">VPCT80 Exchanges are free.</p>`, `VISIBLE font-size:80%`},
	{`VPX12`, true, `<p style="font-size:12px">VPX12 Exchanges are free.</p>`, `VISIBLE font-size:12px`},
	{`VREMCLS`, true, `<p class="rem8">VREMCLS Exchanges are free.</p>`, `VISIBLE class font-size:.8rem in <style>`},
	{`VPRINT`, true, `<p class="np">VPRINT Exchanges are free.</p>`, `VISIBLE @media print display:none (screen shows it)`},
	{`VMAXW`, true, `<p class="mw">VMAXW Exchanges are free.</p>`, `VISIBLE @media (max-width:1px) display:none`},
	{`VBIGW`, true, `<p class="big">VBIGW Exchanges are free.</p>`, `VISIBLE @media (min-width:100000px) display:none`},
	{`VSUPP`, true, `<p class="sp">VSUPP Exchanges are free.</p>`, `VISIBLE @supports (display:nonexistent)`},
	{`VMATH`, true, `<p>Formula <math><mi>VMATH</mi></math> applies.</p>`, `VISIBLE <math><mi>`},
	{`HCLASS`, false, `<style>.zq{display:none}</style><p class="zq">HCLASS</p>`, `hidden by class`},
}

var probe18PageStyle = `<style>
@charset "utf-8";
@import url("theme.css");
@font-face{font-family:X;src:url(x.woff2)}
:root{--hide:none;--tiny:0px}
.d-none{display:none!important}
@media (min-width:992px){.d-lg-block{display:block!important}}
@media (min-width:1200px){.d-xl-block{display:block!important}}
@media (min-width:1400px){.d-xxl-block{display:block!important}}
@media print{.d-print-none{display:none!important}}
@media print{.d-print-block{display:block!important}}
.visually-hidden{position:absolute!important;width:1px!important;height:1px!important;padding:0!important;margin:-1px!important;overflow:hidden!important;clip:rect(0,0,0,0)!important;white-space:nowrap!important;border:0!important}
.invisible{visibility:hidden!important}
.opacity-0{opacity:0!important}
.bg-dark{background-color:#212529!important}
.text-white{color:#fff!important}
.row{margin-left:-12px;margin-right:-12px}
.small{font-size:.875em}
.fs-6{font-size:1rem!important}
.text-truncate{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.menu{display:none}
@media (min-width:768px){.menu{display:block}}
.mobile-only{display:none}
@media (max-width:600px){.mobile-only{display:block}}
@media (min-width:0){.mq0{display:none}}
@media screen{.mqscreen{display:none}}
@media not print{.mqnotprint{display:none}}
@media only screen and (min-width:1024px){.mq1024{display:none}}
@media (width >= 500px){.mqrange{display:none}}
@media screen, print{.mqlist{display:none}}
@media (hover:hover){.mqhover{display:none}}
@media (pointer:fine){.mqpointer{display:none}}
@media (orientation:landscape){.mqland{display:none}}
@media (prefers-color-scheme:dark){.mqdark{display:none}}
@media (prefers-reduced-motion:reduce){.mqmotion{display:none}}
@media (min-resolution:1dppx){.mqres{display:none}}
@media (scripting:enabled){.mqscript{display:none}}
@media (any-hover:hover){.mqanyhover{display:none}}
@media (display-mode:browser){.mqdisplaymode{display:none}}
@media (color){.mqcolor{display:none}}
@media (update:fast){.mqupdate{display:none}}
@supports (display:grid){.sgrid{display:none}}
@supports not (display:nonexistent){.snot{display:none}}
@supports selector(:has(a)){.ssel{display:none}}
@supports (display:grid) and (gap:1rem){.sand{display:none}}
@container (min-width:0){.cq{display:none}}
@layer base{.lay{display:none}}
@scope (body){.scp{display:none}}
.nest{ & .x{color:red} }
.nest2{display:none}
P.upper{DISPLAY:NONE}
.cmt{display:/* c */none}
.varhide{display:var(--hide)}
.varsize{font-size:var(--tiny)}
@keyframes fadeout{from{opacity:1}to{opacity:0}}
.anim{animation:fadeout 1s forwards}
.idwin{display:none}
#idwin{display:block}
.tagwin{display:block}
p.tagcls{display:none}
.later{display:block}
.later{display:none}
.spec1{display:none!important}
.x, .sel2{display:none}
</style>
<style media="screen">.stylescreen{display:none}</style>
<style media="print">.styleprint{display:none}</style>
<!-- --><style><!-- .htmlcmt{display:none} --></style>`

var probe18PageCases = []probeCase{
	{`VDLG`, true, `<div class="d-none d-lg-block">VDLG Free returns within 30 days.</div>`, `VISIBLE d-none d-lg-block (shown >=992px: every desktop window)`},
	{`HDXL`, false, `<div class="d-none d-xl-block">HDXL Free returns within 30 days.</div>`, `HIDDEN(by spec) d-none d-xl-block (hidden 1024-1199)`},
	{`VPRINTNONE`, true, `<div class="d-print-none">VPRINTNONE Free returns within 30 days.</div>`, `VISIBLE d-print-none`},
	{`HPRINTONLY`, false, `<div class="d-none d-print-block">HPRINTONLY Free returns within 30 days.</div>`, `HIDDEN d-none d-print-block (print only)`},
	{`VMENU`, true, `<nav2 class="menu">VMENU Free returns within 30 days.</nav2>`, `VISIBLE .menu hidden <768 shown >=768`},
	{`HMOBILE`, false, `<p class="mobile-only">HMOBILE Free returns within 30 days.</p>`, `HIDDEN .mobile-only`},
	{`HVH`, false, `<p class="visually-hidden">HVH Free returns within 30 days.</p>`, `HIDDEN? visually-hidden (screen readers only)`},
	{`HINVIS`, false, `<p class="invisible">HINVIS Free returns within 30 days.</p>`, `HIDDEN .invisible`},
	{`HOPA0`, false, `<p class="opacity-0">HOPA0 Free returns within 30 days.</p>`, `HIDDEN .opacity-0`},
	{`VBGDARK`, true, `<div class="bg-dark"><p class="text-white">VBGDARK Free returns within 30 days.</p></div>`, `VISIBLE text-white on bg-dark (classes)`},
	{`VBGDARK2`, true, `<p class="bg-dark text-white">VBGDARK2 Free returns within 30 days.</p>`, `VISIBLE bg-dark text-white on one element`},
	{`VROW`, true, `<div class="row"><p>VROW Free returns within 30 days.</p></div>`, `VISIBLE .row negative margins`},
	{`VSMALL`, true, `<div class="small"><div class="small"><p class="small">VSMALL Free returns within 30 days.</p></div></div>`, `VISIBLE .small nested thrice`},
	{`VFS6`, true, `<p class="fs-6">VFS6 Free returns within 30 days.</p>`, `VISIBLE .fs-6`},
	{`VTRUNC`, true, `<p class="text-truncate">VTRUNC Free returns within 30 days.</p>`, `VISIBLE .text-truncate`},
	{`HMQ0`, false, `<p class="mq0">HMQ0 Free returns.</p>`, `HIDDEN @media (min-width:0)`},
	{`HMQSCREEN`, false, `<p class="mqscreen">HMQSCREEN Free returns.</p>`, `HIDDEN @media screen`},
	{`HMQNOTPRINT`, false, `<p class="mqnotprint">HMQNOTPRINT Free returns.</p>`, `HIDDEN @media not print`},
	{`HMQ1024`, false, `<p class="mq1024">HMQ1024 Free returns.</p>`, `HIDDEN @media only screen and (min-width:1024px)`},
	{`HMQRANGE`, false, `<p class="mqrange">HMQRANGE Free returns.</p>`, `HIDDEN @media (width >= 500px)`},
	{`HMQLIST`, false, `<p class="mqlist">HMQLIST Free returns.</p>`, `HIDDEN @media screen, print`},
	{`HMQHOVER`, false, `<p class="mqhover">HMQHOVER Free returns.</p>`, `HIDDEN @media (hover:hover)`},
	{`HMQPOINTER`, false, `<p class="mqpointer">HMQPOINTER Free returns.</p>`, `HIDDEN @media (pointer:fine)`},
	{`HMQLAND`, false, `<p class="mqland">HMQLAND Free returns.</p>`, `HIDDEN @media (orientation:landscape)`},
	{`HMQDARK`, false, `<p class="mqdark">HMQDARK Free returns.</p>`, `HIDDEN @media (prefers-color-scheme:dark)`},
	{`HMQMOTION`, false, `<p class="mqmotion">HMQMOTION Free returns.</p>`, `HIDDEN @media (prefers-reduced-motion:reduce)`},
	{`HMQRES`, false, `<p class="mqres">HMQRES Free returns.</p>`, `HIDDEN @media (min-resolution:1dppx)`},
	{`HMQSCRIPT`, false, `<p class="mqscript">HMQSCRIPT Free returns.</p>`, `HIDDEN @media (scripting:enabled)`},
	{`HMQANYHOVER`, false, `<p class="mqanyhover">HMQANYHOVER Free returns.</p>`, `HIDDEN @media (any-hover:hover)`},
	{`HMQDISPMODE`, false, `<p class="mqdisplaymode">HMQDISPMODE Free returns.</p>`, `HIDDEN @media (display-mode:browser)`},
	{`HMQCOLOR`, false, `<p class="mqcolor">HMQCOLOR Free returns.</p>`, `HIDDEN @media (color)`},
	{`HMQUPDATE`, false, `<p class="mqupdate">HMQUPDATE Free returns.</p>`, `HIDDEN @media (update:fast)`},
	{`HSGRID`, false, `<p class="sgrid">HSGRID Free returns.</p>`, `HIDDEN @supports (display:grid)`},
	{`HSNOT`, false, `<p class="snot">HSNOT Free returns.</p>`, `HIDDEN @supports not (display:nonexistent)`},
	{`HSSEL`, false, `<p class="ssel">HSSEL Free returns.</p>`, `HIDDEN @supports selector(:has(a))`},
	{`HSAND`, false, `<p class="sand">HSAND Free returns.</p>`, `HIDDEN @supports (display:grid) and (gap:1rem)`},
	{`HCQ`, false, `<p class="cq">HCQ Free returns.</p>`, `HIDDEN @container (min-width:0)`},
	{`HLAYER`, false, `<p class="lay">HLAYER Free returns.</p>`, `HIDDEN @layer base{display:none}`},
	{`HSCOPE`, false, `<p class="scp">HSCOPE Free returns.</p>`, `HIDDEN @scope (body){display:none}`},
	{`HNEST2`, false, `<p class="nest2">HNEST2 Free returns.</p>`, `HIDDEN rule after a nested-CSS rule`},
	{`HUPPER`, false, `<p class="upper">HUPPER Free returns.</p>`, `HIDDEN P.upper{DISPLAY:NONE}`},
	{`HCMT`, false, `<p class="cmt">HCMT Free returns.</p>`, `HIDDEN display:/* c */none`},
	{`HVAR`, false, `<p class="varhide">HVAR Free returns.</p>`, `HIDDEN display:var(--hide)`},
	{`HVARSIZE`, false, `<p class="varsize">HVARSIZE Free returns.</p>`, `HIDDEN font-size:var(--tiny)=0px`},
	{`HANIM`, false, `<p class="anim">HANIM Free returns.</p>`, `HIDDEN animation to opacity:0 forwards`},
	{`VIDWIN`, true, `<p class="idwin" id="idwin">VIDWIN Free returns.</p>`, `VISIBLE #id{block} beats .cls{none}`},
	{`HTAGCLS`, false, `<p class="tagwin tagcls">HTAGCLS Free returns.</p>`, `HIDDEN p.tagcls{none} beats .tagwin{block}`},
	{`HLATER`, false, `<p class="later">HLATER Free returns.</p>`, `HIDDEN later .later{none}`},
	{`HSPEC1`, false, `<p class="spec1" style="display:block">HSPEC1 Free returns.</p>`, `HIDDEN .spec1{none!important} vs inline display:block`},
	{`HSELLIST`, false, `<p class="sel2">HSELLIST Free returns.</p>`, `HIDDEN selector list .x, .sel2`},
	{`HSTYLESCREEN`, false, `<p class="stylescreen">HSTYLESCREEN Free returns.</p>`, `HIDDEN <style media=screen>`},
	{`VSTYLEPRINT`, true, `<p class="styleprint">VSTYLEPRINT Free returns.</p>`, `VISIBLE <style media=print>`},
	{`HHTMLCMT`, false, `<p class="htmlcmt">HHTMLCMT Free returns.</p>`, `HIDDEN rule wrapped in <!-- -->`},
	{`HTRANSROTX`, false, `<p style="transform:rotateX(90deg)">HTRANSROTX Free returns.</p>`, `HIDDEN transform:rotateX(90deg)`},
	{`HBACKFACE`, false, `<p style="backface-visibility:hidden;transform:rotateY(180deg)">HBACKFACE Free returns.</p>`, `HIDDEN backface-visibility:hidden;transform:rotateY(180deg)`},
	{`HMATRIX0`, false, `<p style="transform:matrix(0,0,0,0,0,0)">HMATRIX0 Free returns.</p>`, `HIDDEN transform:matrix(0,0,0,0,0,0)`},
	{`HSCALEY0`, false, `<p style="transform:scaleY(0)">HSCALEY0 Free returns.</p>`, `HIDDEN transform:scaleY(0)`},
	{`HSCALE005`, false, `<p style="transform:scale(0.05)">HSCALE005 Free returns.</p>`, `HIDDEN transform:scale(0.05) (0.8px)`},
	{`HHEIGHT0`, false, `<p style="height:0;overflow:hidden">HHEIGHT0 Free returns.</p>`, `HIDDEN height:0;overflow:hidden`},
	{`HMAXH0`, false, `<p style="max-height:0;overflow:hidden">HMAXH0 Free returns.</p>`, `HIDDEN max-height:0;overflow:hidden`},
	{`VHEIGHT0VIS`, true, `<p style="height:0">VHEIGHT0VIS Free returns.</p><br><br>`, `VISIBLE height:0 (overflow visible)`},
	{`HCLIPRECT`, false, `<p style="position:absolute;clip:rect(0 0 0 0)">HCLIPRECT Free returns.</p>`, `HIDDEN position:absolute;clip:rect(0 0 0 0)`},
	{`HCLIPINSET`, false, `<p style="clip-path:inset(50%)">HCLIPINSET Free returns.</p>`, `HIDDEN clip-path:inset(50%)`},
	{`HCLIPCIRCLE`, false, `<p style="clip-path:circle(0)">HCLIPCIRCLE Free returns.</p>`, `HIDDEN clip-path:circle(0)`},
	{`HBLUR`, false, `<p style="filter:blur(200px)">HBLUR Free returns.</p>`, `HIDDEN filter:blur(200px)`},
	{`HVISCOLLAPSE`, false, `<p style="visibility:collapse">HVISCOLLAPSE Free returns.</p>`, `HIDDEN visibility:collapse`},
	{`HCANVAS`, false, `<canvas>HCANVAS Free returns.</canvas>`, `HIDDEN <canvas> fallback`},
	{`HVIDEO`, false, `<video>HVIDEO Free returns.</video>`, `HIDDEN <video> fallback`},
	{`HNOSCRIPT`, false, `<noscript><p>HNOSCRIPT Free returns.</p></noscript>`, `HIDDEN? <noscript> (scripts on)`},
	{`HUNTILFOUND`, false, `<p hidden="until-found">HUNTILFOUND Free returns.</p>`, `HIDDEN hidden="until-found"`},
	{`HRGBSPACE`, false, `<p style="color:rgb(255 255 255)">HRGBSPACE Free returns.</p>`, `HIDDEN color:rgb(255 255 255)`},
	{`HHSL`, false, `<p style="color:hsl(0 0% 100%)">HHSL Free returns.</p>`, `HIDDEN color:hsl(0 0% 100%)`},
	{`HHEX4`, false, `<p style="color:#FFFE">HHEX4 Free returns.</p>`, `HIDDEN color:#FFFE`},
	{`HTRANSP`, false, `<p style="color:transparent">HTRANSP Free returns.</p>`, `HIDDEN color:transparent`},
	{`HRGBA0`, false, `<p style="color:rgba(0,0,0,0)">HRGBA0 Free returns.</p>`, `HIDDEN color:rgba(0,0,0,0)`},
	{`HOKLCH`, false, `<p style="color:oklch(1 0 0)">HOKLCH Free returns.</p>`, `HIDDEN color:oklch(1 0 0)`},
	{`HLAB`, false, `<p style="color:lab(100 0 0)">HLAB Free returns.</p>`, `HIDDEN color:lab(100 0 0)`},
	{`HHWB`, false, `<p style="color:hwb(0 100% 0%)">HHWB Free returns.</p>`, `HIDDEN color:hwb(0 100% 0%)`},
	{`HCANVASCLR`, false, `<p style="color:Canvas">HCANVASCLR Free returns.</p>`, `HIDDEN color:Canvas (system white)`},
	{`HCOLORMIX`, false, `<p style="color:color-mix(in srgb, white 100%, black)">HCOLORMIX Free returns.</p>`, `HIDDEN color:color-mix(in srgb,white 100%,black)`},
	{`HBLUEBLUE`, false, `<div style="background:#0d6efd"><p style="color:#0d6efd">HBLUEBLUE Free returns.</p></div>`, `HIDDEN blue text on same blue background`},
	{`HBLACKBLACK`, false, `<div style="background:#000"><p style="color:#000">HBLACKBLACK Free returns.</p></div>`, `HIDDEN black text on black background`},
	{`VWHITEONDARK`, true, `<div style="background:#111;color:#fff"><p>VWHITEONDARK Free returns.</p></div>`, `VISIBLE white text on body-like dark div`},
	{`VSHADOW`, true, `<p style="color:transparent;text-shadow:0 0 0 #000">VSHADOW Free returns.</p>`, `VISIBLE color:transparent with text-shadow`},
	{`VHANG`, true, `<p style="text-indent:-1.5em;padding-left:1.5em">VHANG Free returns.</p>`, `VISIBLE hanging indent text-indent:-1.5em`},
	{`VCENTER`, true, `<p style="position:absolute;left:50%;top:50%;transform:translate(-50%,-50%)">VCENTER Free returns.</p>`, `VISIBLE left:50%;transform:translate(-50%,-50%)`},
	{`VOPA5`, true, `<p style="opacity:.5">VOPA5 Free returns.</p>`, `VISIBLE opacity:.5`},
	{`VIE9`, true, `<p style="display:none\9">VIE9 Free returns.</p>`, `VISIBLE display:none\9 (invalid, ignored)`},
	{`HUPPERATTR`, false, `<p STYLE="DISPLAY:NONE">HUPPERATTR Free returns.</p>`, `HIDDEN STYLE="DISPLAY:NONE"`},
	{`HLASTWINS`, false, `<p style="display:block;display:none">HLASTWINS Free returns.</p>`, `HIDDEN style="display:block;display:none"`},
	{`VLASTWINS`, true, `<p style="display:none;display:block">VLASTWINS Free returns.</p>`, `VISIBLE style="display:none;display:block"`},
	{`VMATHMN`, true, `<p>Rate <math><mi>r</mi><mo>=</mo><mn>VMATHMN</mn></math> applies.</p>`, `VISIBLE MathML <mn>`},
	{`HMATHANNOT`, false, `<p><math><semantics><mi>y</mi><annotation-xml encoding="text/html">HMATHANNOT</annotation-xml></semantics></math></p>`, `HIDDEN MathML annotation-xml`},
	{`HMPHANTOM`, false, `<p><math><mphantom><mi>HMPHANTOM</mi></mphantom></math></p>`, `HIDDEN MathML mphantom`},
	{`VRUBY`, true, `<p><ruby>VRUBY<rt>rv</rt></ruby> free returns.</p>`, `VISIBLE ruby`},
	{`VDETSUM`, true, `<details><summary>VDETSUM Free returns</summary><p>more</p></details>`, `VISIBLE details summary`},
	{`VDISPCONT`, true, `<p style="display:contents">VDISPCONT Free returns.</p>`, `VISIBLE display:contents`},
	{`HSHADOWNOSLOT`, false, `<div><template shadowrootmode="open"><p>shown</p></template><p>HSHADOWNOSLOT Free returns.</p></div>`, `HIDDEN shadow root without slot`},
	{`VSHADOWSLOT`, true, `<div><template shadowrootmode="open"><slot></slot></template><p>VSHADOWSLOT Free returns.</p></div>`, `VISIBLE shadow root with slot`},
	{`HSHADOWSTYLE`, false, `<div><template shadowrootmode="open"><style>p{display:none}</style><p>HSHADOWSTYLE in shadow</p></template></div>`, `HIDDEN shadow root style hides its own p`},
	{`VSHADOWLEAK`, true, `<div><template shadowrootmode="open"><style>.leak{display:none}</style><slot></slot></template></div><p class="leak">VSHADOWLEAK Free returns.</p>`, `VISIBLE shadow style must not leak to page`},
	{`HZOOM01`, false, `<p style="zoom:0.1">HZOOM01 Free returns.</p>`, `HIDDEN zoom:0.1 (1.6px)`},
	{`HZOOMPCT`, false, `<p style="zoom:10%">HZOOMPCT Free returns.</p>`, `HIDDEN zoom:10%`},
	{`HCALC15`, false, `<p style="font-size:calc(16px - 15px)">HCALC15 Free returns.</p>`, `HIDDEN font-size:calc(16px - 15px)`},
	{`HCLAMP0`, false, `<p style="font-size:clamp(0px, 0vw, 0px)">HCLAMP0 Free returns.</p>`, `HIDDEN font-size:clamp(0px,0vw,0px)`},
	{`HVW001`, false, `<p style="font-size:0.01vw">HVW001 Free returns.</p>`, `HIDDEN font-size:0.01vw`},
	{`VVW1`, true, `<p style="font-size:1vw">VVW1 Free returns.</p>`, `VISIBLE font-size:1vw`},
	{`HEM01`, false, `<div style="font-size:.1em"><p style="font-size:.1em">HEM01 Free returns.</p></div>`, `HIDDEN font-size:.1em in .1em`},
	{`HINDENTVW`, false, `<p style="text-indent:-100vw;overflow:hidden;white-space:nowrap">HINDENTVW Free returns.</p>`, `HIDDEN text-indent:-100vw;overflow:hidden;white-space:nowrap`},
	{`HINDENTEM`, false, `<p style="text-indent:-9999em">HINDENTEM Free returns.</p>`, `HIDDEN text-indent:-9999em`},
	{`HTOPNEG`, false, `<p style="position:relative;top:-10000px">HTOPNEG Free returns.</p>`, `HIDDEN position:relative;top:-10000px`},
	{`HFIXEDUP`, false, `<p style="position:fixed;bottom:100%">HFIXEDUP Free returns.</p>`, `HIDDEN position:fixed;bottom:100%`},
	{`HMASK`, false, `<p style="mask:linear-gradient(transparent,transparent)">HMASK Free returns.</p>`, `HIDDEN mask:linear-gradient(transparent,transparent)`},
	{`HWKMASK`, false, `<p style="-webkit-mask-image:linear-gradient(transparent,transparent)">HWKMASK Free returns.</p>`, `HIDDEN -webkit-mask-image:linear-gradient(transparent,transparent)`},
}
