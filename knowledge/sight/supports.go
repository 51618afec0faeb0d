package sight

import (
	"slices"
	"strings"
)

// supports reports whether a browser supports what an @supports condition
// asks for: declarations of properties it knows with values it can read,
// joined by and, or and not, and selector(…). A property this package
// does not know is taken as one no browser has: the rules under it are not
// read.
func supports(cond string) bool {
	parts := topParts(strings.TrimSpace(cond))
	switch {
	case len(parts) == 2 && parts[0] == "not":
		return !supportsOne(parts[1])
	case len(parts)%2 == 0:
		return false
	}
	out := supportsOne(parts[0])
	for i := 1; i < len(parts); i += 2 {
		switch op := parts[i]; {
		case op != parts[1]:
			return false
		case op == "and":
			out = supportsOne(parts[i+1]) && out
		case op == "or":
			out = supportsOne(parts[i+1]) || out
		default:
			return false
		}
	}
	return out
}

// supportsOne reports whether a browser supports one bracketed part of an
// @supports condition.
func supportsOne(part string) bool {
	if inner, ok := strings.CutPrefix(part, "selector("); ok {
		return strings.TrimSpace(strings.TrimSuffix(inner, ")")) != ""
	}
	inner, ok := strings.CutPrefix(part, "(")
	if !ok {
		return false
	}
	inner = strings.TrimSpace(strings.TrimSuffix(inner, ")"))
	if strings.HasPrefix(inner, "(") || strings.HasPrefix(inner, "not ") || strings.HasPrefix(inner, "not(") || strings.HasPrefix(inner, "selector(") {
		return supports(inner)
	}
	prop, val, ok := strings.Cut(inner, ":")
	if !ok {
		return false
	}
	prop = strings.TrimSpace(prop)
	val = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "!important"))
	return (strings.HasPrefix(prop, "--") || slices.Contains(cssProperties, prop)) && valid(prop, val)
}

// valid reports whether a browser takes val as a value of prop, as far as
// this package can tell: of the properties below it knows every value,
// of others it takes any. A value with var() is taken; what it comes to
// is judged where it is used.
func valid(prop, val string) bool {
	switch {
	case strings.HasPrefix(prop, "--"):
		return true
	case val == "":
		return false
	case slices.Contains([]string{"inherit", "initial", "unset", "revert", "revert-layer"}, val), strings.Contains(val, "var("):
		return true
	case prop == "opacity":
		_, ok := measure{pct: 1}.px(val)
		unit := strings.TrimPrefix(val, number.FindString(val))
		return ok && (unit == "" || unit == "%" || strings.Contains(val, "("))
	case prop == "font-size":
		px, ok := fontPx(val, 16, measure{em: 16, rem: 16, vw: screenMin.w, vh: screenMin.h})
		return ok && (px >= 0 || strings.Contains(val, "("))
	}
	if words, ok := cssKeywords[prop]; ok {
		for _, w := range strings.Fields(val) {
			if !slices.Contains(words, w) {
				return false
			}
		}
	}
	return true
}

// topParts splits a condition into its bracketed parts (with any function
// name before the bracket) and the words between them.
func topParts(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '(' {
			j++
		}
		if j < len(s) && s[j] == '(' {
			depth := 0
			for ; j < len(s); j++ {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					if depth--; depth == 0 {
						j++
						break
					}
				}
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// cssKeywords are the values of the properties whose values are keywords
// only, that a page most often hides text with.
var cssKeywords = map[string][]string{
	"display": strings.Fields(`none block inline inline-block flex inline-flex grid inline-grid contents table inline-table
		table-row table-cell table-column table-caption table-row-group table-header-group table-footer-group
		table-column-group list-item flow flow-root run-in ruby ruby-base ruby-text ruby-base-container
		ruby-text-container math -webkit-box -webkit-inline-box -webkit-flex -webkit-inline-flex`),
	"visibility":         {"visible", "hidden", "collapse"},
	"content-visibility": {"visible", "hidden", "auto"},
	"position":           {"static", "relative", "absolute", "fixed", "sticky", "-webkit-sticky"},
	"overflow":           {"visible", "hidden", "clip", "scroll", "auto", "overlay"},
	"float":              {"left", "right", "none", "inline-start", "inline-end"},
	"clear":              {"left", "right", "both", "none", "inline-start", "inline-end"},
}

// cssProperties are the CSS properties browsers know.
var cssProperties = strings.Fields(`accent-color align-content align-items align-self alignment-baseline all anchor-name
	anchor-scope animation animation-composition animation-delay animation-direction animation-duration
	animation-fill-mode animation-iteration-count animation-name animation-play-state animation-range
	animation-range-end animation-range-start animation-timeline animation-timing-function appearance aspect-ratio
	backdrop-filter backface-visibility background background-attachment background-blend-mode background-clip
	background-color background-image background-origin background-position background-position-x
	background-position-y background-repeat background-size baseline-shift baseline-source block-size border
	border-block border-block-color border-block-end border-block-end-color border-block-end-style
	border-block-end-width border-block-start border-block-start-color border-block-start-style
	border-block-start-width border-block-style border-block-width border-bottom border-bottom-color
	border-bottom-left-radius border-bottom-right-radius border-bottom-style border-bottom-width border-collapse
	border-color border-end-end-radius border-end-start-radius border-image border-image-outset
	border-image-repeat border-image-slice border-image-source border-image-width border-inline
	border-inline-color border-inline-end border-inline-end-color border-inline-end-style border-inline-end-width
	border-inline-start border-inline-start-color border-inline-start-style border-inline-start-width
	border-inline-style border-inline-width border-left border-left-color border-left-style border-left-width
	border-radius border-right border-right-color border-right-style border-right-width border-spacing
	border-start-end-radius border-start-start-radius border-style border-top border-top-color
	border-top-left-radius border-top-right-radius border-top-style border-top-width border-width bottom
	box-decoration-break box-shadow box-sizing break-after break-before break-inside caption-side caret-color
	clear clip clip-path clip-rule color color-interpolation color-interpolation-filters color-scheme
	column-count column-fill column-gap column-rule column-rule-color column-rule-style column-rule-width
	column-span column-width columns contain contain-intrinsic-block-size contain-intrinsic-height
	contain-intrinsic-inline-size contain-intrinsic-size contain-intrinsic-width container container-name
	container-type content content-visibility counter-increment counter-reset counter-set cursor cx cy d
	direction display dominant-baseline empty-cells field-sizing fill fill-opacity fill-rule filter flex
	flex-basis flex-direction flex-flow flex-grow flex-shrink flex-wrap float flood-color flood-opacity font
	font-family font-feature-settings font-kerning font-language-override font-optical-sizing font-palette
	font-size font-size-adjust font-stretch font-style font-synthesis font-variant font-variant-alternates
	font-variant-caps font-variant-east-asian font-variant-emoji font-variant-ligatures font-variant-numeric
	font-variant-position font-variation-settings font-weight forced-color-adjust gap grid grid-area
	grid-auto-columns grid-auto-flow grid-auto-rows grid-column grid-column-end grid-column-start grid-row
	grid-row-end grid-row-start grid-template grid-template-areas grid-template-columns grid-template-rows
	hanging-punctuation height hyphenate-character hyphenate-limit-chars hyphens image-orientation
	image-rendering initial-letter inline-size inset inset-block inset-block-end inset-block-start inset-inline
	inset-inline-end inset-inline-start interpolate-size isolation justify-content justify-items justify-self
	left letter-spacing lighting-color line-break line-clamp line-height list-style list-style-image
	list-style-position list-style-type margin margin-block margin-block-end margin-block-start margin-bottom
	margin-inline margin-inline-end margin-inline-start margin-left margin-right margin-top marker marker-end
	marker-mid marker-start mask mask-border mask-clip mask-composite mask-image mask-mode mask-origin
	mask-position mask-repeat mask-size mask-type math-depth math-shift math-style max-block-size max-height
	max-inline-size max-width min-block-size min-height min-inline-size min-width mix-blend-mode object-fit
	object-position offset offset-anchor offset-distance offset-path offset-position offset-rotate opacity order
	orphans outline outline-color outline-offset outline-style outline-width overflow overflow-anchor
	overflow-block overflow-clip-margin overflow-inline overflow-wrap overflow-x overflow-y overscroll-behavior
	overscroll-behavior-block overscroll-behavior-inline overscroll-behavior-x overscroll-behavior-y padding
	padding-block padding-block-end padding-block-start padding-bottom padding-inline padding-inline-end
	padding-inline-start padding-left padding-right padding-top page page-break-after page-break-before
	page-break-inside paint-order perspective perspective-origin place-content place-items place-self
	pointer-events position position-anchor position-area position-try position-try-fallbacks
	position-try-order position-visibility print-color-adjust quotes r resize right rotate row-gap ruby-align
	ruby-position rx ry scale scroll-behavior scroll-margin scroll-margin-block scroll-margin-bottom
	scroll-margin-inline scroll-margin-left scroll-margin-right scroll-margin-top scroll-padding
	scroll-padding-block scroll-padding-bottom scroll-padding-inline scroll-padding-left scroll-padding-right
	scroll-padding-top scroll-snap-align scroll-snap-stop scroll-snap-type scroll-timeline scroll-timeline-axis
	scroll-timeline-name scrollbar-color scrollbar-gutter scrollbar-width shape-image-threshold shape-margin
	shape-outside shape-rendering stop-color stop-opacity stroke stroke-dasharray stroke-dashoffset
	stroke-linecap stroke-linejoin stroke-miterlimit stroke-opacity stroke-width tab-size table-layout
	text-align text-align-last text-anchor text-box text-box-edge text-box-trim text-combine-upright
	text-decoration text-decoration-color text-decoration-line text-decoration-skip-ink text-decoration-style
	text-decoration-thickness text-emphasis text-emphasis-color text-emphasis-position text-emphasis-style
	text-indent text-justify text-orientation text-overflow text-rendering text-shadow text-spacing-trim
	text-transform text-underline-offset text-underline-position text-wrap text-wrap-mode text-wrap-style top
	touch-action transform transform-box transform-origin transform-style transition transition-behavior
	transition-delay transition-duration transition-property transition-timing-function translate
	unicode-bidi user-select vector-effect vertical-align view-timeline view-timeline-axis view-timeline-inset
	view-timeline-name view-transition-class view-transition-name visibility white-space white-space-collapse
	widows width will-change word-break word-spacing writing-mode x y z-index zoom -webkit-appearance
	-webkit-background-clip -webkit-box-orient -webkit-line-clamp -webkit-mask -webkit-mask-image
	-webkit-text-fill-color -webkit-text-stroke -webkit-text-stroke-color -webkit-text-stroke-width
	-webkit-tap-highlight-color -webkit-user-select -webkit-backdrop-filter`)
