package sight

import "strings"

// maxVarValue bounds, in bytes, what a value may grow to as var()s are
// put in it: custom properties that each hold several of the one before
// would otherwise grow without end. A browser too refuses such a value.
const maxVarValue = 1 << 16

// substitute puts in the values of the var()s of an element's
// declarations decl, given the custom properties it inherits, and returns
// them with the custom properties it passes on. A custom property of its
// own whose var()s cannot be resolved (of a name not set, in a cycle) is
// not set; a property whose var()s cannot be resolved, or come to a value
// its property refuses, is as if not set (CSS's "invalid at computed-value
// time"), but for a colour whose custom property no rule sets: a linked
// stylesheet this package does not read may set it, so the colour stays
// one it cannot read.
func substitute(decl, inherited map[string]string) (map[string]string, map[string]string) {
	own := false
	uses := false
	for p, v := range decl {
		own = own || strings.HasPrefix(p, "--")
		uses = uses || strings.Contains(v, "var(")
	}
	if !own && !uses {
		return decl, inherited
	}
	vars := inherited
	if own {
		vars = customProperties(decl, inherited)
	}
	if !uses {
		return decl, vars
	}
	out := make(map[string]string, len(decl))
	for p, v := range decl {
		if strings.HasPrefix(p, "--") || !strings.Contains(v, "var(") {
			out[p] = v
			continue
		}
		s, ok, unset := resolveVars(v, func(name string) (string, bool) { v, ok := vars[name]; return v, ok }, 0)
		switch {
		case ok && valid(p, s):
			out[p] = s
		case unset && paintProperties[p]:
			out[p] = v
		}
	}
	return out, vars
}

// paintProperties are the properties of colours that stay unread, rather
// than unset, when their var() names a custom property no rule sets.
var paintProperties = map[string]bool{
	"color": true, "background": true, "background-color": true, "-webkit-text-fill-color": true,
	"-webkit-text-stroke": true, "-webkit-text-stroke-color": true,
}

// customProperties are the custom properties an element with
// declarations decl passes on: those it inherits, and its own with their
// var()s resolved.
func customProperties(decl, inherited map[string]string) map[string]string {
	vars := make(map[string]string, len(inherited)+len(decl))
	for k, v := range inherited {
		vars[k] = v
	}
	// state is 1 while a property is being resolved (so a cycle is
	// found), 2 once it is.
	state := map[string]int{}
	var lookup func(name string) (string, bool)
	lookup = func(name string) (string, bool) {
		raw, mine := decl[name]
		if !mine {
			v, ok := inherited[name]
			return v, ok
		}
		switch state[name] {
		case 1:
			return "", false
		case 2:
			v, ok := vars[name]
			return v, ok
		}
		state[name] = 1
		defer func() { state[name] = 2 }()
		switch raw {
		case "initial":
			delete(vars, name)
			return "", false
		case "inherit", "unset":
			v, ok := inherited[name] // vars holds it already
			if !ok {
				delete(vars, name)
			}
			return v, ok
		}
		v, ok, _ := resolveVars(raw, lookup, 0)
		if !ok {
			delete(vars, name)
			return "", false
		}
		vars[name] = v
		return v, true
	}
	for name := range decl {
		if strings.HasPrefix(name, "--") {
			lookup(name)
		}
	}
	return vars
}

// resolveVars puts in v the values lookup gives its var()s, or their
// fallbacks. ok is false if one cannot be resolved; unset says whether
// only because a name was never set.
func resolveVars(v string, lookup func(string) (string, bool), depth int) (out string, ok, unset bool) {
	var b strings.Builder
	unset = true
	for {
		i := strings.Index(v, "var(")
		if i < 0 {
			b.WriteString(v)
			break
		}
		b.WriteString(v[:i])
		end, depthIn := i+4, 1
		for ; end < len(v) && depthIn > 0; end++ {
			switch v[end] {
			case '(':
				depthIn++
			case ')':
				depthIn--
			}
		}
		if depthIn > 0 {
			return "", false, false
		}
		args := v[i+4 : end-1]
		name, fallback, hasFallback := strings.Cut(args, ",")
		if val, found := lookup(strings.TrimSpace(name)); found {
			b.WriteString(val)
		} else if !hasFallback || depth > 32 {
			return "", false, unset
		} else {
			f, fok, funset := resolveVars(strings.TrimSpace(fallback), lookup, depth+1)
			if !fok {
				return "", false, unset && funset
			}
			b.WriteString(f)
		}
		if b.Len() > maxVarValue {
			return "", false, false
		}
		v = v[end:]
	}
	return strings.Join(strings.Fields(b.String()), " "), true, false
}
