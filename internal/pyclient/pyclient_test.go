package pyclient

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mneme/internal/apptest"
	"mneme/seed"
)

// TestPython runs clients/python/tests and examples/python with pytest
// against the real service, with a fresh tenant and with the demo tenant
// loaded as `make run` loads it (the example's README runs it there). A
// virtual environment that cannot be built fails the test: it is how the
// Python client is tested at all.
func TestPython(t *testing.T) {
	f := apptest.Start(t)
	ds, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.App.LoadDemo(context.Background()); err != nil {
		t.Fatalf("load demo: %v", err)
	}
	demoKeys, err := json.Marshal(ds.KeyOf())
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	venv := pyenv(t, root)
	keys, err := json.Marshal(f.Keys)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(venv, "bin", "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
		"clients/python/tests", "examples/python")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "MNEME_URL="+f.URL, "MNEME_KEYS="+string(keys), "MNEME_DEMO_KEYS="+string(demoKeys), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("pytest:\n%s", out)
	if err != nil {
		t.Fatalf("pytest failed: %v", err)
	}
	if !strings.Contains(string(out), " passed") || strings.Contains(string(out), " skipped") {
		t.Fatalf("pytest ran no test, or skipped some")
	}
}

// pyenv builds (or reuses) the virtual environment and returns its path.
func pyenv(t *testing.T, root string) string {
	t.Helper()
	start := time.Now()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "pyenv.sh"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("scripts/pyenv.sh could not build the Python environment: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	venv := lines[len(lines)-1]
	if _, err := os.Stat(filepath.Join(venv, "bin", "python")); err != nil {
		t.Fatalf("scripts/pyenv.sh printed %q, which holds no python: %v", venv, err)
	}
	t.Logf("python environment %s ready in %s", venv, time.Since(start).Round(time.Millisecond))
	return venv
}
