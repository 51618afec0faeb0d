package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildMemoryd builds this package's binary into the test's temporary
// directory and returns its path.
func buildMemoryd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "memoryd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build memoryd: %v\n%s", err, out)
	}
	return bin
}

// ownServer starts a server for this test alone with one of the repository's
// scripts (neo4j.sh, redis.sh) and stops it when the test ends. It returns
// the address the start printed and the control, to stop and start the
// server again (env is added to the script's environment).
func ownServer(t *testing.T, script string) (string, func(action string, env ...string) string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
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

// freeAddr returns a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
