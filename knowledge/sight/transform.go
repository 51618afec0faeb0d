package sight

import (
	"math"
	"regexp"
	"strings"
)

// linear is the linear part of a CSS transform in three dimensions: what
// it does to a box's size and facing, leaving out where it moves it.
type linear [3][3]float64

var identity = linear{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

func (a linear) times(b linear) linear {
	var out linear
	for i := range 3 {
		for j := range 3 {
			for k := range 3 {
				out[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return out
}

// flat is the 2×2 matrix of what the page shows of a, looked at from the
// front without perspective.
func (a linear) flat() (p, q, r, s float64) { return a[0][0], a[0][1], a[1][0], a[1][1] }

// narrowest is how much a shrinks the page's view of a box in the
// direction it shrinks it most: 0 for a box turned edge on
// (rotateX(90deg)) or flattened (matrix(0,0,0,0,0,0)), 0.5 for scale(.5).
func (a linear) narrowest() float64 {
	p, q, r, s := a.flat()
	sum, det := p*p+q*q+r*r+s*s, p*s-q*r
	return math.Sqrt(max(0, (sum-math.Sqrt(max(0, sum*sum-4*det*det)))/2))
}

// backFacing reports a box a turns so that its back faces the reader
// (rotateY(180deg)), as opposed to mirrored flat (scaleX(-1)): the normal
// of its plane points away.
func (a linear) backFacing() bool {
	p, q, r, s := a.flat()
	det := a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) - a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) +
		a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
	return det != 0 && (p*s-q*r)/det < 0
}

// transformOf is the linear part of an element's rotate, scale and
// transform, applied in that order as a browser does. A value it cannot
// read counts as none, as a browser drops it.
func transformOf(decl map[string]string) linear {
	out := identity
	if r, ok := rotateProperty(decl["rotate"]); ok {
		out = out.times(r)
	}
	if f := topFields(decl["scale"]); len(f) > 0 && len(f) <= 3 && f[0] != "none" {
		if s, ok := scaleProperty(f); ok {
			out = out.times(s)
		}
	}
	if t, ok := transformList(decl["transform"]); ok {
		out = out.times(t)
	}
	return out
}

var transformFunction = regexp.MustCompile(`^\s*([a-z0-9]+)\(((?:[^()]|\([^()]*\))*)\)`)

// transformList reads a transform's functions into their linear part.
func transformList(v string) (linear, bool) {
	out := identity
	if v == "" || v == "none" {
		return out, false
	}
	for strings.TrimSpace(v) != "" {
		m := transformFunction.FindStringSubmatch(v)
		if m == nil {
			return identity, false
		}
		v = v[len(m[0]):]
		var args []string
		for _, a := range splitTop(m[2], ',') {
			args = append(args, strings.TrimSpace(a))
		}
		f, ok := transformFunc(m[1], args)
		if !ok {
			return identity, false
		}
		out = out.times(f)
	}
	return out, true
}

// transformFunc is the linear part of one transform function.
func transformFunc(name string, args []string) (linear, bool) {
	nums := func(want ...int) ([]float64, bool) {
		var out []float64
		for _, a := range args {
			f, ok := measure{pct: 1}.px(a)
			if !ok {
				return nil, false
			}
			out = append(out, f)
		}
		for _, n := range want {
			if len(out) == n {
				return out, true
			}
		}
		return nil, false
	}
	angle := func() (float64, bool) {
		if len(args) != 1 {
			return 0, false
		}
		d, ok := angleOf(args[0])
		return d * math.Pi / 180, ok
	}
	switch name {
	case "translate", "translatex", "translatey", "translatez", "translate3d", "perspective":
		return identity, true
	case "matrix":
		v, ok := nums(6)
		if !ok {
			return identity, false
		}
		return linear{{v[0], v[2], 0}, {v[1], v[3], 0}, {0, 0, 1}}, true
	case "matrix3d":
		v, ok := nums(16)
		if !ok {
			return identity, false
		}
		var out linear
		for i := range 3 {
			for j := range 3 {
				out[i][j] = v[j*4+i]
			}
		}
		return out, ok
	case "scale", "scalex", "scaley", "scalez", "scale3d":
		v, ok := nums(1, 2, 3)
		s := [3]float64{1, 1, 1}
		switch {
		case !ok:
		case name == "scale" && len(v) <= 2:
			s[0], s[1] = v[0], v[len(v)-1]
		case name == "scale3d" && len(v) == 3:
			s = [3]float64{v[0], v[1], v[2]}
		case len(v) == 1 && name != "scale" && name != "scale3d":
			s[name[5]-'x'] = v[0]
		default:
			ok = false
		}
		return linear{{s[0], 0, 0}, {0, s[1], 0}, {0, 0, s[2]}}, ok
	case "rotate", "rotatez", "rotatex", "rotatey":
		a, ok := angle()
		axis := map[string][3]float64{"rotate": {0, 0, 1}, "rotatez": {0, 0, 1}, "rotatex": {1, 0, 0}, "rotatey": {0, 1, 0}}[name]
		return rotation(axis, a), ok
	case "rotate3d":
		if len(args) != 4 {
			return identity, false
		}
		a, ok := angleOf(args[3])
		args = args[:3]
		v, okAxis := nums(3)
		if !ok || !okAxis {
			return identity, false
		}
		return rotation([3]float64{v[0], v[1], v[2]}, a*math.Pi/180), true
	case "skew", "skewx", "skewy":
		var ax, ay float64
		ok := len(args) >= 1 && len(args) <= 2 && (name == "skew" || len(args) == 1)
		for i, a := range args {
			d, okA := angleOf(a)
			ok = ok && okA
			if i == 0 && name != "skewy" {
				ax = d
			} else {
				ay = d
			}
		}
		return linear{{1, math.Tan(ax * math.Pi / 180), 0}, {math.Tan(ay * math.Pi / 180), 1, 0}, {0, 0, 1}}, ok
	}
	return identity, false
}

// rotation turns by angle a, in radians, about axis.
func rotation(axis [3]float64, a float64) linear {
	n := math.Sqrt(axis[0]*axis[0] + axis[1]*axis[1] + axis[2]*axis[2])
	if n == 0 {
		return identity
	}
	x, y, z := axis[0]/n, axis[1]/n, axis[2]/n
	c, s := math.Cos(a), math.Sin(a)
	t := 1 - c
	return linear{
		{t*x*x + c, t*x*y - s*z, t*x*z + s*y},
		{t*x*y + s*z, t*y*y + c, t*y*z - s*x},
		{t*x*z - s*y, t*y*z + s*x, t*z*z + c},
	}
}

// rotateProperty reads the rotate property: an angle, about z or the axis
// (x, y, z or three numbers) before it.
func rotateProperty(v string) (linear, bool) {
	f := topFields(v)
	if len(f) == 0 || f[0] == "none" {
		return identity, false
	}
	a, ok := angleOf(f[len(f)-1])
	axis := [3]float64{0, 0, 1}
	switch len(f) {
	case 1:
	case 2:
		axis, ok = map[string][3]float64{"x": {1, 0, 0}, "y": {0, 1, 0}, "z": {0, 0, 1}}[f[0]]
		ok = ok && len(f) == 2
	case 4:
		for i := range 3 {
			var okI bool
			axis[i], okI = measure{}.px(f[i])
			ok = ok && okI
		}
	default:
		return identity, false
	}
	return rotation(axis, a*math.Pi/180), ok
}

// scaleProperty reads the one to three factors of the scale property.
func scaleProperty(f []string) (linear, bool) {
	s := [3]float64{1, 1, 1}
	for i, v := range f {
		x, ok := measure{pct: 1}.px(v)
		if !ok {
			return identity, false
		}
		s[i] = x
	}
	if len(f) == 1 {
		s[1] = s[0]
	}
	return linear{{s[0], 0, 0}, {0, s[1], 0}, {0, 0, s[2]}}, true
}

// angleOf reads an angle of a transform in degrees: a number with its unit,
// or 0.
func angleOf(v string) (float64, bool) {
	d, ok := degrees(v)
	return d, ok && (d == 0 || v != number.FindString(v))
}
