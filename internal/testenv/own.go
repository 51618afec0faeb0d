package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
	addr, ctl, _ := ownServer(t, script)
	return addr, ctl
}

// OwnPausableServer is OwnServer for a test that freezes the server:
// pause stops its process with SIGSTOP, as a frozen machine stops, so that
// its port still takes connections and nothing answers; the resume it
// returns sends SIGCONT, and so does the test's end if the test has not.
func OwnPausableServer(t testing.TB, script string) (addr string, pause func() (resume func())) {
	t.Helper()
	addr, _, dir := ownServer(t, script)
	pidFile := filepath.Join(dir, strings.TrimSuffix(script, ".sh")+".pid")
	return addr, func() func() {
		t.Helper()
		raw, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil {
			t.Fatalf("%s: %v", pidFile, err)
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP %s: %v", script, err)
		}
		var once sync.Once
		resume := func() {
			once.Do(func() {
				if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
					t.Errorf("SIGCONT %s: %v", script, err)
				}
			})
		}
		t.Cleanup(resume)
		return resume
	}
}

func ownServer(t testing.TB, script string) (string, func(action string, env ...string) string, string) {
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
	return addr, ctl, dir
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
