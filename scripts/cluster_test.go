package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedisClusterStartStop starts a local cluster, finds three masters
// serving every slot at the addresses it printed, and stops them all.
func TestRedisClusterStartStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server is needed (scripts/redis.sh start installs it): %v", err)
	}
	dir := t.TempDir()
	stdout, stderr, code := script(t, nil, "redis-cluster.sh", "start", dir)
	t.Cleanup(func() { script(t, nil, "redis-cluster.sh", "stop", dir) })
	if code != 0 {
		t.Fatalf("start = %d: %s", code, stderr)
	}
	addrs := strings.Split(strings.TrimSpace(stdout), ",")
	if len(addrs) != 3 {
		t.Fatalf("printed %q, want three addresses", stdout)
	}
	_, port, _ := strings.Cut(addrs[0], ":")
	info, err := exec.Command("redis-cli", "-p", port, "cluster", "info").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cluster_state:ok", "cluster_slots_assigned:16384", "cluster_known_nodes:3", "cluster_size:3"} {
		if !strings.Contains(string(info), want) {
			t.Errorf("cluster info lacks %s:\n%s", want, info)
		}
	}
	var pids []string
	for i := 1; i <= 3; i++ {
		raw, err := os.ReadFile(filepath.Join(dir, "node"+string(rune('0'+i)), "redis.pid"))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, strings.TrimSpace(string(raw)))
	}
	if _, stderr, code := script(t, nil, "redis-cluster.sh", "stop", dir); code != 0 {
		t.Fatalf("stop = %d: %s", code, stderr)
	}
	for _, pid := range pids {
		if _, err := os.Stat("/proc/" + pid + "/cmdline"); err == nil {
			if raw, _ := os.ReadFile("/proc/" + pid + "/cmdline"); strings.Contains(string(raw), "redis-server") {
				t.Errorf("redis-server %s still runs after stop", pid)
			}
		}
	}
}
