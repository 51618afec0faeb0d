// Package sight tells what of an HTML page its reader sees. Text no reader
// sees would otherwise become knowledge every agent reads: a way to slip
// instructions past whoever reviewed the page. Look reads the page's inline
// styles and the simple rules of its <style> elements as a browser applies
// them, on each screen its media conditions tell apart; sight.go walks the
// page, vars.go puts custom properties into var()s, animation.go lays an
// animation's resting keyframe over a style, place.go judges where its
// boxes go and transform.go what transforms do to them, stylesheet.go
// reads the rules, media.go and supports.go decide their conditions,
// values.go and colours.go read lengths, sizes and colours, and
// colourspaces.go converts colours of spaces other than sRGB.
package sight
