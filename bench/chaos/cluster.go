package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cluster is what the run starts and owns: Neo4j and Redis through the
// project's scripts, and three memoryd replicas on loopback ports.
type cluster struct {
	cfg      config
	logf     func(string, ...any)
	secret   string
	bin      string
	neoDir   string
	redisDir string
	neoPort  int
	redPort  int
	neo4jURI string
	redisURL string
	replicas []*replica
}

type replica struct {
	index int
	addr  string
	mu    sync.Mutex
	cmd   *exec.Cmd
	exit  chan struct{}
}

func newCluster(cfg config, logf func(string, ...any)) *cluster {
	b := make([]byte, 24)
	rand.Read(b)
	return &cluster{
		cfg: cfg, logf: logf, secret: hex.EncodeToString(b),
		neoDir: filepath.Join(cfg.dir, "neo4j"), redisDir: filepath.Join(cfg.dir, "redis"),
	}
}

func (c *cluster) start(ctx context.Context) error {
	var err error
	if c.neoPort, err = freePort(); err != nil {
		return err
	}
	if c.redPort, err = freePort(); err != nil {
		return err
	}
	c.neo4jURI = fmt.Sprintf("bolt://127.0.0.1:%d", c.neoPort)
	c.redisURL = fmt.Sprintf("redis://127.0.0.1:%d", c.redPort)
	errs := make(chan error, 3)
	go func() { errs <- c.startNeo4j(ctx) }()
	go func() { errs <- c.startRedis(ctx) }()
	go func() { errs <- c.build(ctx) }()
	for range 3 {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		return err
	}
	for i := range 3 {
		port, err := freePort()
		if err != nil {
			return err
		}
		c.replicas = append(c.replicas, &replica{index: i, addr: fmt.Sprintf("127.0.0.1:%d", port)})
	}
	// The first replica loads the demo tenant, once; the others start
	// beside it on the loaded graph.
	if err := c.startReplica(ctx, c.replicas[0], true); err != nil {
		return err
	}
	errs = make(chan error, 2)
	for _, r := range c.replicas[1:] {
		go func() { errs <- c.startReplica(ctx, r, false) }()
	}
	for range 2 {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	return err
}

func (c *cluster) script(ctx context.Context, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(c.cfg.repo, "scripts", args[0])}, args[1:]...)...)
	cmd.Dir = c.cfg.repo
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, tail(out.String(), 600))
	}
	return nil
}

func (c *cluster) startNeo4j(ctx context.Context) error {
	return c.script(ctx, []string{"NEO4J_PORT=" + strconv.Itoa(c.neoPort)}, "neo4j.sh", "start", c.neoDir)
}

func (c *cluster) stopNeo4j(ctx context.Context) error {
	return c.script(ctx, nil, "neo4j.sh", "stop", c.neoDir)
}

func (c *cluster) startRedis(ctx context.Context) error {
	return c.script(ctx, []string{"REDIS_PORT=" + strconv.Itoa(c.redPort)}, "redis.sh", "start", c.redisDir, "--aof")
}

func (c *cluster) stopRedis(ctx context.Context) error {
	return c.script(ctx, nil, "redis.sh", "stop", c.redisDir)
}

// redisPID reads the pid the script recorded, for SIGSTOP and SIGCONT.
func (c *cluster) redisPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(c.redisDir, "redis.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func (c *cluster) build(ctx context.Context) error {
	if c.cfg.memoryd != "" {
		c.bin = c.cfg.memoryd
		return nil
	}
	c.bin = filepath.Join(c.cfg.dir, "memoryd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", c.bin, "./cmd/memoryd")
	cmd.Dir = c.cfg.repo
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build ./cmd/memoryd: %w: %s", err, tail(string(out), 600))
	}
	return nil
}

func (c *cluster) replicaURLs() []string {
	var urls []string
	for _, r := range c.replicas {
		urls = append(urls, "http://"+r.addr)
	}
	return urls
}

// startReplica starts memoryd and waits until it is ready.
func (c *cluster) startReplica(ctx context.Context, r *replica, seed bool) error {
	logPath := filepath.Join(c.cfg.dir, fmt.Sprintf("replica-%d.log", r.index))
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := []string{"-addr", r.addr, "-start-timeout", startWait.String()}
	if seed {
		args = append(args, "-seed")
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append(os.Environ(), "NEO4J_URI="+c.neo4jURI, "NEO4J_USER=", "NEO4J_PASSWORD=",
		"REDIS_URL="+c.redisURL, "MNEME_KEY_SECRET="+c.secret)
	cmd.Stdout, cmd.Stderr = lf, lf
	// The replica dies with the tool: a test that kills the tool's process
	// group kills the replicas too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return fmt.Errorf("replica %d: %w", r.index, err)
	}
	exit := make(chan struct{})
	go func() { cmd.Wait(); lf.Close(); close(exit) }()
	r.mu.Lock()
	r.cmd, r.exit = cmd, exit
	r.mu.Unlock()
	deadline := time.Now().Add(startWait)
	for time.Now().Before(deadline) {
		select {
		case <-exit:
			return fmt.Errorf("replica %d exited during start-up: %s", r.index, tailFile(logPath, 800))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		resp, err := http.Get("http://" + r.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				c.logf("replica %d ready on %s (pid %d)", r.index, r.addr, cmd.Process.Pid)
				return nil
			}
		}
	}
	return fmt.Errorf("replica %d not ready after %s: %s", r.index, startWait, tailFile(logPath, 800))
}

// startWait is how long a replica may take to be ready: start-up loads
// the demo and warms its queries, slow on a busy machine.
const startWait = 6 * time.Minute

// kill sends SIGKILL and waits for the process to go.
func (r *replica) kill() {
	r.mu.Lock()
	cmd, exit := r.cmd, r.exit
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exit
}

func (r *replica) term() {
	r.mu.Lock()
	cmd, exit := r.cmd, r.exit
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exit:
	case <-time.After(15 * time.Second):
		cmd.Process.Signal(syscall.SIGKILL)
		<-exit
	}
}

// stop ends everything the cluster started, whatever state it is in.
func (c *cluster) stop() {
	var wg sync.WaitGroup
	for _, r := range c.replicas {
		wg.Add(1)
		go func() { defer wg.Done(); r.term() }()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if pid, err := c.redisPID(); err == nil {
		syscall.Kill(pid, syscall.SIGCONT)
	}
	if err := c.stopRedis(ctx); err != nil {
		c.logf("stop redis: %v", err)
	}
	if err := c.stopNeo4j(ctx); err != nil {
		c.logf("stop neo4j: %v", err)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return tail(string(b), n)
}
