package scripts

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// script runs one of the harness scripts with extra environment and returns
// its stdout, stderr and exit code.
func script(t *testing.T, env []string, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("./"+name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.String(), errOut.String(), 0
}

// takenPort holds a loopback port open for the test's duration.
func takenPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func TestStartOnATakenPortFailsClearly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds or starts servers")
	}
	port := takenPort(t)
	tests := []struct {
		name   string
		script string
		env    string
	}{
		{"neo4j", "neo4j.sh", "NEO4J_PORT=" + port},
		{"redis", "redis.sh", "REDIS_PORT=" + port},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, stderr, code := script(t, []string{tt.env}, tt.script, "start", dir)
			if code == 0 {
				script(t, nil, tt.script, "stop", dir)
				t.Fatalf("%s start on a taken port succeeded", tt.script)
			}
			if !strings.Contains(stderr, "ERROR") || !strings.Contains(stderr, port) || !strings.Contains(stderr, "in use") {
				t.Errorf("stderr = %q, want an ERROR line naming port %s as in use", stderr, port)
			}
			if _, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(tt.script, ".sh")+".pid")); err == nil {
				t.Errorf("a pid file was left behind")
			}
		})
	}
}

func TestUpPassesExistingServersThrough(t *testing.T) {
	dir := t.TempDir()
	env := []string{
		"NEO4J_URI=neo4j+s://db.example.invalid:7687", "NEO4J_USER=neo4j", "NEO4J_PASSWORD=s3cret with space",
		"REDIS_URL=redis://cache.example.invalid:6379/2",
	}
	stdout, stderr, code := script(t, env, "up.sh", dir)
	if code != 0 {
		t.Fatalf("up.sh = %d: %s", code, stderr)
	}
	written, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	// The env file must reproduce the values exactly when sourced.
	check := exec.Command("bash", "-c", `source "$1"; printf '%s|%s|%s|%s' "$NEO4J_URI" "$NEO4J_USER" "$NEO4J_PASSWORD" "$REDIS_URL"`, "bash", filepath.Join(dir, "env"))
	check.Env = []string{"PATH=" + os.Getenv("PATH")}
	got, err := check.Output()
	if err != nil {
		t.Fatalf("source env: %v\n%s", err, written)
	}
	want := "neo4j+s://db.example.invalid:7687|neo4j|s3cret with space|redis://cache.example.invalid:6379/2"
	if string(got) != want {
		t.Errorf("sourced env = %q, want %q", got, want)
	}
	if stdout != string(written) {
		t.Errorf("stdout %q differs from the env file %q", stdout, written)
	}
	for _, f := range []string{"neo4j.pid", "redis.pid"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists: a server was started although one was given", f)
		}
	}
	if _, stderr, code := script(t, nil, "down.sh", dir); code != 0 {
		t.Errorf("down.sh with nothing started = %d: %s", code, stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		script string
		args   []string
	}{
		{"neo4j.sh", nil},
		{"neo4j.sh", []string{"launch", "/tmp/x"}},
		{"redis.sh", []string{"start"}},
		{"up.sh", nil},
		{"up.sh", []string{"/tmp/x", "--persist"}},
		{"redis-cluster.sh", nil},
		{"redis-cluster.sh", []string{"start"}},
	}
	for _, tt := range tests {
		t.Run(tt.script+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, code := script(t, nil, tt.script, tt.args...)
			if code == 0 || !strings.Contains(stderr, "usage") {
				t.Errorf("exit %d, stderr %q; want non-zero and a usage line", code, stderr)
			}
		})
	}
}

// Neo4j's start-up cache: a start without one records it, the stop writes
// it, the next start uses it and is served; "use" never records one.
func TestNeo4jStartUpCache(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Neo4j three times")
	}
	cache := t.TempDir()
	dir := t.TempDir()
	env := []string{"NEO4J_AOT_DIR=" + cache, "NEO4J_AOT=auto"}
	flags := func() string {
		t.Helper()
		pid, err := os.ReadFile(filepath.Join(dir, "neo4j.pid"))
		if err != nil {
			t.Fatal(err)
		}
		cmdline, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		var aot []string
		for _, a := range strings.Split(string(cmdline), "\x00") {
			if strings.HasPrefix(a, "-XX:AOTCache") {
				aot = append(aot, a)
			}
		}
		return strings.Join(aot, " ")
	}
	start := func(env []string) string {
		t.Helper()
		stdout, stderr, code := script(t, env, "neo4j.sh", "start", dir)
		if code != 0 || !strings.HasPrefix(stdout, "bolt://127.0.0.1:") {
			t.Fatalf("start = %d, stdout %q:\n%s", code, stdout, stderr)
		}
		t.Cleanup(func() { script(t, nil, "neo4j.sh", "stop", dir) })
		return flags()
	}
	// Stopped by a relative path, as make run's scripts do.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	stop := func() {
		t.Helper()
		if _, stderr, code := script(t, env, "neo4j.sh", "stop", rel); code != 0 {
			t.Fatalf("stop = %d:\n%s", code, stderr)
		}
	}

	got := start(env)
	if got == "" {
		t.Skip("this JDK is older than 25: no start-up cache")
	}
	if want := "-XX:AOTCacheOutput=" + filepath.Join(dir, "neo4j.aot"); got != want {
		t.Fatalf("first start's flags %q, want %q", got, want)
	}
	// Caches of other launcher builds: the oldest goes when this one is
	// written, the two newest stay.
	dest, err := os.ReadFile(filepath.Join(dir, "neo4j.aot.dest"))
	if err != nil {
		t.Fatal(err)
	}
	prefix := strings.TrimSuffix(strings.TrimSpace(string(dest)), filepath.Ext(strings.TrimSpace(string(dest))))
	prefix = prefix[:strings.LastIndex(prefix, "-")]
	var others []string
	for i := 1; i <= 3; i++ {
		other := prefix + "-other" + strconv.Itoa(i) + ".aot"
		if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-time.Duration(i) * time.Hour)
		if err := os.Chtimes(other, at, at); err != nil {
			t.Fatal(err)
		}
		others = append(others, other)
	}
	stop()
	if _, err := os.Stat(others[2]); err == nil {
		t.Errorf("the oldest other cache %s was kept", others[2])
	}
	for _, o := range others[:2] {
		if _, err := os.Stat(o); err != nil {
			t.Errorf("a newer other cache is gone: %v", err)
		}
		os.Remove(o)
	}
	written, _ := filepath.Glob(filepath.Join(cache, "*.aot"))
	if len(written) != 1 || written[0] != strings.TrimSpace(string(dest)) {
		t.Fatalf("caches after the first stop: %v, want %s", written, dest)
	}
	if _, err := os.Stat(filepath.Join(dir, "neo4j.aot")); err == nil {
		t.Error("the recorded cache was left in the server's folder")
	}

	if got := start(env); got != "-XX:AOTCache="+written[0] {
		t.Errorf("second start's flags %q, want the written cache %s", got, written[0])
	}
	log, err := os.ReadFile(filepath.Join(dir, "neo4j.log"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(log, []byte("[aot][error")) || !bytes.Contains(log, []byte("READY bolt://")) {
		t.Errorf("the start with the cache did not serve cleanly:\n%s", log)
	}
	stop()

	if got := start([]string{"NEO4J_AOT_DIR=" + t.TempDir(), "NEO4J_AOT=use"}); got != "" {
		t.Errorf("with use and no cache the flags are %q, want none", got)
	}
	stop()
}

// A server started again after a stop comes back on the port its clients
// hold; only when another process took that port does it move, and then
// DIR/env names the new address.
func TestRestartKeepsThePort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	tests := []struct {
		name, script, envName, scheme string
		env                           []string
	}{
		{"redis", "redis.sh", "REDIS_URL", "redis", []string{"REDIS_PORT="}},
		{"neo4j", "neo4j.sh", "NEO4J_URI", "bolt", []string{"NEO4J_PORT=", "NEO4J_AOT=use"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			start := func() string {
				t.Helper()
				stdout, stderr, code := script(t, tt.env, tt.script, "start", dir)
				if code != 0 {
					t.Fatalf("start = %d:\n%s", code, stderr)
				}
				lines := strings.Split(strings.TrimSpace(stdout), "\n")
				return lines[len(lines)-1]
			}
			stop := func() {
				t.Helper()
				if _, stderr, code := script(t, tt.env, tt.script, "stop", dir); code != 0 {
					t.Fatalf("stop = %d:\n%s", code, stderr)
				}
			}
			t.Cleanup(func() { script(t, tt.env, tt.script, "stop", dir) })
			first := start()
			envFile := filepath.Join(dir, "env")
			other := "export OTHER=" + tt.scheme + "://127.0.0.1:1\n"
			writeEnv := func(url string) {
				t.Helper()
				if err := os.WriteFile(envFile, []byte(other+"export "+tt.envName+"="+url+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			writeEnv(first)

			stop()
			if again := start(); again != first {
				t.Fatalf("after a stop the server came back at %s, was at %s", again, first)
			}
			stop()
			// Held by another process: the server moves, and says where.
			_, port, _ := strings.Cut(strings.TrimPrefix(first, tt.scheme+"://"), ":")
			ln, err := net.Listen("tcp", "127.0.0.1:"+port)
			if err != nil {
				t.Fatal(err)
			}
			moved := start()
			ln.Close()
			if moved == first || !strings.HasPrefix(moved, tt.scheme+"://127.0.0.1:") {
				t.Fatalf("with port %s taken the server is at %s", port, moved)
			}
			written, err := os.ReadFile(envFile)
			if err != nil {
				t.Fatal(err)
			}
			if want := other + "export " + tt.envName + "=" + moved + "\n"; string(written) != want {
				t.Errorf("env after the move:\n%s\nwant:\n%s", written, want)
			}
			stop()
			if again := start(); again != moved {
				t.Errorf("after the move a restart came back at %s, want %s", again, moved)
			}
		})
	}
}
