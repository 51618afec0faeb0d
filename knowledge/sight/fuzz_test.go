package sight

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Look reads pages anyone may import: no style, however broken, may make
// it fail.
func FuzzLook(f *testing.F) {
	for _, seed := range []string{
		probe18PageStyle + `<p class="anim varhide">x</p>`,
		`<style>:root{--a:var(--b,none)}@keyframes k{0%,to{opacity:0}}.h{animation:k 1s alternate 3 both paused;display:var(--a)}</style><p class=h>x</p>`,
		`<p style="transform:matrix(1,2) rotate3d(1,0,0) skew() scale(1,2,3,4);rotate:x;scale:1 2 3 4">x</p>`,
		`<p style="color:color-mix(in oklch shorter hue, lab(50 0 0) 10%, color(display-p3 1 0 0 / 50%));text-shadow:1px,0 0 0 0 red">x</p>`,
		`<style><!-- --> @media screen{<!-- .a{}} "-->" </style><p style="filter:blur(1e308px);position:fixed;bottom:1e308%">x</p>`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, page string) {
		root, err := html.Parse(strings.NewReader(page))
		if err != nil {
			return
		}
		Look(root)
	})
}
