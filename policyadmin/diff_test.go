package policyadmin

import (
	"strings"
	"testing"
)

func TestDiffModules(t *testing.T) {
	a := []PolicyModule{
		{Name: "a.rego", Source: "package a\n\nx := 1\ny := 2\nz := 3\n"},
		{Name: "gone.rego", Source: "package gone\n"},
	}
	b := []PolicyModule{
		{Name: "a.rego", Source: "package a\n\nx := 1\ny := 20\nz := 3\n"},
		{Name: "new.rego", Source: "package new\n"},
	}
	got := DiffModules("r1", a, "r2", b)
	want := `--- r1/a.rego
+++ r2/a.rego
@@ -1,5 +1,5 @@
 package a
 
 x := 1
-y := 2
+y := 20
 z := 3
--- r1/gone.rego
+++ /dev/null
@@ -1,1 +0,0 @@
-package gone
--- /dev/null
+++ r2/new.rego
@@ -0,0 +1,1 @@
+package new
`
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if d := DiffModules("r1", a, "r1", a); d != "" {
		t.Errorf("diff of equal revisions: %q", d)
	}
}

func TestDiffHunks(t *testing.T) {
	var lines []string
	for i := range 40 {
		lines = append(lines, strings.Repeat("x", i+1))
	}
	edited := append([]string(nil), lines...)
	edited[2], edited[35] = "changed early", "changed late"
	got := DiffModules("a", []PolicyModule{{Name: "p.rego", Source: strings.Join(lines, "\n")}},
		"b", []PolicyModule{{Name: "p.rego", Source: strings.Join(edited, "\n")}})
	if n := strings.Count(got, "@@ -"); n != 2 {
		t.Errorf("%d hunks, want 2 far-apart changes in 2 hunks:\n%s", n, got)
	}
	if !strings.Contains(got, "@@ -1,6 +1,6 @@") || !strings.Contains(got, "@@ -33,7 +33,7 @@") {
		t.Errorf("hunk headers:\n%s", got)
	}
}

func TestPolicyDigestIgnoresOrder(t *testing.T) {
	a := []PolicyModule{{Name: "a.rego", Source: "x"}, {Name: "b.rego", Source: "y"}}
	b := []PolicyModule{a[1], a[0]}
	if PolicyDigest(a) != PolicyDigest(b) {
		t.Error("digest depends on order")
	}
	// Moving text between names changes the digest.
	c := []PolicyModule{{Name: "a.rego", Source: "xy"}, {Name: "b.rego", Source: ""}}
	if PolicyDigest(a) == PolicyDigest(c) || !strings.HasPrefix(PolicyDigest(a), "sha256:") {
		t.Error("digest does not separate names and sources")
	}
}
