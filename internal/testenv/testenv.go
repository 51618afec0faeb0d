// Package testenv gives integration tests the real backing services that
// scripts/up.sh starts (or that NEO4J_URI and REDIS_URL point at): a shared
// Neo4j driver, the Redis URL, and unique tenant ids so tests can share one
// database without seeing each other's data.
//
// In -short mode every helper skips the test. Otherwise a missing variable
// fails the test: an integration test that silently skips proves nothing.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/redis/go-redis/v9"
)

// EmbeddingDimension is the vector size integration tests use for the
// memory vector index. Every test binary shares one Neo4j database and so
// one vector index; it matches embed.DefaultDimension so that every package's
// tests agree on it.
const EmbeddingDimension = 256

// Environment variables read by this package.
const (
	EnvNeo4jURI      = "NEO4J_URI"
	EnvNeo4jUser     = "NEO4J_USER"
	EnvNeo4jPassword = "NEO4J_PASSWORD"
	EnvNeo4jDatabase = "NEO4J_DATABASE"
	EnvRedisURL      = "REDIS_URL"
	// EnvRedisClusterAddrs lists the nodes of a Redis Cluster,
	// comma-separated (scripts/redis-cluster.sh start prints it). When set,
	// EachRedis runs its tests on the cluster too.
	EnvRedisClusterAddrs = "REDIS_CLUSTER_ADDRS"
	// EnvAppOnCluster, when set, runs the end-to-end tests' app
	// (internal/apptest) on the REDIS_CLUSTER_ADDRS cluster instead of
	// the REDIS_URL server.
	EnvAppOnCluster = "MNEME_TEST_APP_ON_CLUSTER"
	EnvKeySecret    = "MNEME_KEY_SECRET"
)

// testKeySecret is the API key secret of tests run without
// MNEME_KEY_SECRET (scripts/test.sh sets one). Every process of a test
// run must agree on it, so it is fixed rather than random.
const testKeySecret = "mneme-test-key-secret-0123456789abcdef"

// KeySecret returns MNEME_KEY_SECRET, or a fixed secret for tests when it is
// unset; replicas and subprocesses of one test run must share it.
func KeySecret() string {
	if s := os.Getenv(EnvKeySecret); s != "" {
		return s
	}
	return testKeySecret
}

// shared is the one driver of this test binary.
var shared struct {
	once   sync.Once
	driver neo4j.DriverWithContext
	err    error
}

// Neo4j returns a driver connected to the test Neo4j, shared by every test of
// the binary; tests must not close it. It skips in -short mode and fails the
// test when NEO4J_URI is unset or the server cannot be reached.
func Neo4j(t testing.TB) neo4j.DriverWithContext {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs Neo4j")
	}
	uri := os.Getenv(EnvNeo4jURI)
	if uri == "" {
		t.Fatalf("integration test: %s is not set; set NEO4J_URI or run `make test` (scripts/up.sh DIR writes DIR/env)", EnvNeo4jURI)
	}
	shared.once.Do(func() {
		shared.driver, shared.err = connect(uri, os.Getenv(EnvNeo4jUser), os.Getenv(EnvNeo4jPassword))
	})
	if shared.err != nil {
		t.Fatalf("integration test: %v", shared.err)
	}
	return shared.driver
}

// Neo4jDatabase returns NEO4J_DATABASE, or "" for the server's default.
func Neo4jDatabase() string { return os.Getenv(EnvNeo4jDatabase) }

func connect(uri, user, password string) (neo4j.DriverWithContext, error) {
	auth := neo4j.NoAuth()
	if user != "" {
		auth = neo4j.BasicAuth(user, password, "")
	}
	driver, err := neo4j.NewDriverWithContext(uri, auth)
	if err != nil {
		return nil, fmt.Errorf("neo4j driver for %s: %w", uri, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := driver.VerifyConnectivity(ctx); err != nil {
		_ = driver.Close(ctx)
		return nil, fmt.Errorf("neo4j at %s is not reachable (is scripts/up.sh running?): %w", uri, err)
	}
	return driver, nil
}

// RedisURL returns REDIS_URL. It skips in -short mode and fails the test when
// the variable is unset.
func RedisURL(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs Redis")
	}
	u := os.Getenv(EnvRedisURL)
	if u == "" {
		t.Fatalf("integration test: %s is not set; set REDIS_URL or run `make test` (scripts/up.sh DIR writes DIR/env)", EnvRedisURL)
	}
	return u
}

// Redis returns a client of the REDIS_URL server, closed when the test
// ends. It skips and fails as RedisURL does.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(RedisURL(t))
	if err != nil {
		t.Fatalf("%s: %v", EnvRedisURL, err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// EachRedis runs fn as the subtest "single" with a client of the REDIS_URL
// server and, when REDIS_CLUSTER_ADDRS is set, again as "cluster" with a
// client of that Redis Cluster, so that what a Redis-backed part does is
// shown to work on both. It skips and fails as RedisURL does.
func EachRedis(t *testing.T, fn func(t *testing.T, rdb redis.UniversalClient)) {
	t.Helper()
	t.Run("single", func(t *testing.T) { fn(t, Redis(t)) })
	if os.Getenv(EnvRedisClusterAddrs) != "" {
		t.Run("cluster", func(t *testing.T) { fn(t, RedisCluster(t)) })
	}
}

// RedisCluster returns a client of the REDIS_CLUSTER_ADDRS cluster, closed
// when the test ends. It skips in -short mode and fails the test when the
// variable is unset or the cluster does not answer.
func RedisCluster(t testing.TB) *redis.ClusterClient {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs a Redis Cluster")
	}
	addrs := os.Getenv(EnvRedisClusterAddrs)
	if addrs == "" {
		t.Fatalf("integration test: %s is not set; start one with scripts/redis-cluster.sh start DIR", EnvRedisClusterAddrs)
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rdb.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() }); err != nil {
		t.Fatalf("%s: %v", EnvRedisClusterAddrs, err)
	}
	return rdb
}

// ScanKeys returns every key matching pattern, with SCAN on each master of
// a cluster or on the one server: what a test must search to show that
// nothing of an erased user is left anywhere.
func ScanKeys(ctx context.Context, rdb redis.UniversalClient, pattern string) ([]string, error) {
	var mu sync.Mutex
	var keys []string
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			keys = append(keys, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return keys, c.ForEachMaster(ctx, scan)
	case *redis.Client:
		return keys, scan(ctx, c)
	}
	return nil, fmt.Errorf("testenv: cannot scan a %T", rdb)
}

// Tenant returns a fresh random tenant id such as "t-1a2b3c4d", so tests that
// share a database never read each other's data. The id is a valid tenant
// name for API keys (no underscore).
func Tenant(t testing.TB) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("tenant id: %v", err)
	}
	return "t-" + hex.EncodeToString(b[:])
}

// Count reads a positive count from the environment variable name, or def
// when it is unset; anything else fails tb.
func Count(tb testing.TB, name string, def int) int {
	tb.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		tb.Fatalf("%s=%q is not a count", name, s)
	}
	return n
}
