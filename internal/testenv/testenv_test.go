package testenv

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestTenant(t *testing.T) {
	valid := regexp.MustCompile(`^t-[0-9a-f]{8}$`)
	seen := map[string]bool{}
	for range 100 {
		tenant := Tenant(t)
		if !valid.MatchString(tenant) {
			t.Fatalf("Tenant() = %q, want t- and 8 hex digits", tenant)
		}
		if seen[tenant] {
			t.Fatalf("Tenant() repeated %q", tenant)
		}
		seen[tenant] = true
	}
}

// recorder stands in for a test to observe Skip and Fatal without ending
// the real one.
type recorder struct {
	testing.TB
	skipped, fatal string
}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func run(tb testing.TB, fn func(testing.TB)) *recorder {
	r := &recorder{TB: tb}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}

// A missing variable must fail loudly, never skip silently (except in -short
// mode, where every integration test skips).
func TestMissingEnvironment(t *testing.T) {
	t.Setenv(EnvNeo4jURI, "")
	t.Setenv(EnvRedisURL, "")
	tests := []struct {
		name string
		fn   func(testing.TB)
		want string
	}{
		{"neo4j", func(tb testing.TB) { Neo4j(tb) }, "set NEO4J_URI or run `make test`"},
		{"redis", func(tb testing.TB) { RedisURL(tb) }, "set REDIS_URL or run `make test`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.fn)
			if testing.Short() {
				if r.skipped == "" {
					t.Error("want a skip in -short mode")
				}
				return
			}
			if !strings.Contains(r.fatal, tc.want) {
				t.Errorf("fatal = %q, want it to say %q", r.fatal, tc.want)
			}
		})
	}
}
