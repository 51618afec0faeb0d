package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// OwnServer starts a server for this test alone with one of the
// repository's scripts (neo4j.sh, redis.sh) and stops it when the test
// ends: for a test that restarts a server, or changes its schema, which the
// shared one must not see. It returns the address the start printed and the
// control, to stop and start the server again (env is added to the script's
// environment).
func OwnServer(t testing.TB, script string) (string, func(action string, env ...string) string) {
	t.Helper()
	root := moduleRoot(t)
	dir := filepath.Join(t.TempDir(), strings.TrimSuffix(script, ".sh"))
	ctl := func(action string, env ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(root, "scripts", script), action, dir)
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", script, action, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		return lines[len(lines)-1]
	}
	addr := ctl("start")
	t.Cleanup(func() { ctl("stop") })
	return addr, ctl
}

// moduleRoot is the directory holding go.mod, above the test's own.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
