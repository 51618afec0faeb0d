package policyadmin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// PolicyDigest is "sha256:" and the hex SHA-256 of the modules sorted by
// name, each as its name, a NUL, its source and a NUL: two revisions with the
// same files have the same digest, whatever order they were sent in.
func PolicyDigest(modules []PolicyModule) string {
	sorted := slices.Clone(modules)
	slices.SortFunc(sorted, func(a, b PolicyModule) int { return strings.Compare(a.Name, b.Name) })
	h := sha256.New()
	for _, m := range sorted {
		h.Write([]byte(m.Name))
		h.Write([]byte{0})
		h.Write([]byte(m.Source))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// diffContext is how many unchanged lines surround each change.
const diffContext = 3

// maxDiffCells bounds the LCS table; larger files are shown as replaced.
const maxDiffCells = 4 << 20

// DiffModules returns a unified line diff from the modules a (labelled
// la) to b (lb), file by file in name order; "" when they are equal.
func DiffModules(la string, a []PolicyModule, lb string, b []PolicyModule) string {
	src := func(ms []PolicyModule) map[string]string {
		out := make(map[string]string, len(ms))
		for _, m := range ms {
			out[m.Name] = m.Source
		}
		return out
	}
	as, bs := src(a), src(b)
	var names []string
	for n := range as {
		names = append(names, n)
	}
	for n := range bs {
		if _, ok := as[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out strings.Builder
	for _, n := range names {
		x, inA := as[n]
		y, inB := bs[n]
		if inA && inB && x == y {
			continue
		}
		from, to := la+"/"+n, lb+"/"+n
		if !inA {
			from = "/dev/null"
		}
		if !inB {
			to = "/dev/null"
		}
		fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
		out.WriteString(diffLines(splitLines(x), splitLines(y)))
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// edit is one line of a diff: ' ' kept, '-' removed, '+' added.
type edit struct {
	op   byte
	line string
	a, b int // line numbers (0-based) in a and b before this line
}

// diffLines diffs two line lists by longest common subsequence and prints
// the changes in hunks with diffContext lines around them.
func diffLines(a, b []string) string {
	edits := lcsEdits(a, b)
	var out strings.Builder
	for i := 0; i < len(edits); {
		if edits[i].op == ' ' {
			i++
			continue
		}
		// A hunk runs from diffContext lines before this change to
		// diffContext lines after the last change that is at most
		// 2*diffContext kept lines further.
		start := max(0, i-diffContext)
		end := i
		for j := i; j < len(edits); j++ {
			if edits[j].op != ' ' {
				end = j
			} else if j-end > 2*diffContext {
				break
			}
		}
		end = min(len(edits), end+diffContext+1)
		na, nb := 0, 0
		for _, e := range edits[start:end] {
			if e.op != '+' {
				na++
			}
			if e.op != '-' {
				nb++
			}
		}
		// An empty range is numbered by the line before it, as diff does.
		sa, sb := edits[start].a+1, edits[start].b+1
		if na == 0 {
			sa--
		}
		if nb == 0 {
			sb--
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", sa, na, sb, nb)
		for _, e := range edits[start:end] {
			out.WriteByte(e.op)
			out.WriteString(e.line)
			out.WriteByte('\n')
		}
		i = end
	}
	return out.String()
}

func lcsEdits(a, b []string) []edit {
	// Common prefix and suffix need no table.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var edits []edit
	ia, ib := 0, 0
	keep := func(line string) {
		edits = append(edits, edit{' ', line, ia, ib})
		ia++
		ib++
	}
	del := func(line string) {
		edits = append(edits, edit{'-', line, ia, ib})
		ia++
	}
	add := func(line string) {
		edits = append(edits, edit{'+', line, ia, ib})
		ib++
	}
	for _, l := range a[:pre] {
		keep(l)
	}
	if (len(ma)+1)*(len(mb)+1) > maxDiffCells {
		for _, l := range ma {
			del(l)
		}
		for _, l := range mb {
			add(l)
		}
	} else {
		// t[i][j] is the LCS length of ma[i:] and mb[j:].
		w := len(mb) + 1
		t := make([]int32, (len(ma)+1)*w)
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					t[i*w+j] = t[(i+1)*w+j+1] + 1
				} else {
					t[i*w+j] = max(t[(i+1)*w+j], t[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				keep(ma[i])
				i++
				j++
			case i < len(ma) && (j == len(mb) || t[(i+1)*w+j] >= t[i*w+j+1]):
				del(ma[i])
				i++
			default:
				add(mb[j])
				j++
			}
		}
	}
	for _, l := range a[len(a)-suf:] {
		keep(l)
	}
	return edits
}
