package scripts

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFuzzTargetsListed checks that fuzz.sh runs every fuzz target of the
// module, and only those.
func TestFuzzTargetsListed(t *testing.T) {
	script, err := os.ReadFile("fuzz.sh")
	if err != nil {
		t.Fatal(err)
	}
	listed := regexp.MustCompile(`(?m)^  "(\./\S+) (Fuzz\w+)"$`).FindAllStringSubmatch(string(script), -1)
	var want []string
	for _, m := range listed {
		want = append(want, m[1]+" "+m[2])
	}
	var got []string
	decl := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	err = filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != ".." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			got = append(got, "./"+filepath.ToSlash(filepath.Dir(strings.TrimPrefix(p, "../")))+" "+m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("fuzz.sh lists\n%s\nthe code has\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
}
