//go:build chaos

package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	soak       = flag.Duration("chaos.duration", 0, "load time of the passing chaos run (default 2m, 40s with -short)")
	soakFaults = flag.String("chaos.faults", strings.Join(faultKinds, ","), "faults of the passing chaos run")
)

// TestChaosRun runs the tool with every fault (or those -chaos.faults
// names) and expects every check to pass, then with an oracle that forgot one acknowledged write and expects
// it to fail on exactly that.
func TestChaosRun(t *testing.T) {
	repo, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, b := range [][2]string{{"chaos", "./bench/chaos"}, {"memoryd", "./cmd/memoryd"}} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, b[0]), b[1])
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	d := *soak
	if d == 0 {
		d = 2 * time.Minute
		if testing.Short() {
			d = 40 * time.Second
		}
	}
	t.Run("passes", func(t *testing.T) {
		out, code := runChaos(t, repo, bin, "-duration", d.String(), "-workers", "4", "-faults", *soakFaults)
		t.Log(out)
		if code != 0 || !strings.Contains(out, "RESULT: PASS") {
			t.Fatalf("exit %d, want 0 and RESULT: PASS:\n%s", code, out)
		}
		for _, fault := range strings.Split(*soakFaults, ",") {
			if want := "recovery after " + fault; d >= 2*time.Minute && !strings.Contains(out, want) {
				t.Errorf("no %q in the report: a fault did not run", want)
			}
		}
	})
	t.Run("break forget-ack fails", func(t *testing.T) {
		out, code := runChaos(t, repo, bin, "-duration", "25s", "-faults", "kill-replica", "-first-fault", "3s", "-break", "forget-ack")
		t.Log(out)
		if code != 1 || !strings.Contains(out, "RESULT: FAIL") {
			t.Fatalf("exit %d, want 1 and RESULT: FAIL:\n%s", code, out)
		}
		if !strings.Contains(out, "FAIL  every stored write was sent and is known to the oracle: 1 unknown") {
			t.Errorf("the run failed, but not on the forgotten write:\n%s", out)
		}
	})
}

// runChaos runs the tool in its own process group and returns its report
// and exit code. Whatever happens, cleanup kills the group and stops the
// servers the tool started (they run under setsid, outside the group).
func runChaos(t *testing.T, repo, bin string, args ...string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	// Start-up (Neo4j, building, seeding) takes seconds on a quiet machine
	// and minutes on a loaded one; the tool reports what it did when
	// interrupted, and is killed a little later.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "chaos"), append([]string{"-repo", repo, "-memoryd", filepath.Join(bin, "memoryd"), "-dir", dir}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Minute
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGKILL)
		for _, s := range [][]string{{"neo4j.sh", "stop", filepath.Join(dir, "neo4j")}, {"redis.sh", "stop", filepath.Join(dir, "redis")}} {
			if pid, err := os.ReadFile(filepath.Join(s[2], strings.TrimSuffix(s[0], ".sh")+".pid")); err == nil && atoi(string(pid)) > 0 {
				syscall.Kill(atoi(string(pid)), syscall.SIGCONT)
			}
			stop := exec.Command("bash", append([]string{filepath.Join(repo, "scripts", s[0])}, s[1:]...)...)
			if out, err := stop.CombinedOutput(); err != nil {
				t.Logf("%s: %v\n%s", strings.Join(s, " "), err, out)
			}
		}
	})
	err := cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("chaos: %v\nstderr:\n%s", err, tail(stderr.String(), 4000))
	}
	if code != 0 {
		t.Logf("chaos stderr:\n%s", tail(stderr.String(), 4000))
	}
	return stdout.String(), code
}

func atoi(s string) int {
	n := 0
	for _, c := range strings.TrimSpace(s) {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
