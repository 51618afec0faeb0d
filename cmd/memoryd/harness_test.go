package main

import (
	"net"
	"os/exec"
	"path/filepath"
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
