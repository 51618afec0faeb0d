package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestStartupFailsClearly: memoryd refuses to start, with a message naming
// the cause, when its configuration is wrong or a store never answers.
func TestStartupFailsClearly(t *testing.T) {
	closed := "bolt://" + freeAddr(t) // nothing listens there
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad flag value", []string{"-embed-dim", "2"}, nil, "-embed-dim (MNEME_EMBED_DIM): 2 is outside"},
		{"bad neo4j uri", nil, map[string]string{"NEO4J_URI": "http://db:7474"}, "-neo4j-uri (NEO4J_URI)"},
		{"neo4j never answers", []string{"-start-timeout", "1500ms"}, map[string]string{
			"NEO4J_URI": closed, "MNEME_KEY_SECRET": "startup-test-secret-0123456789abcdef",
		}, "did not answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := run(ctx, tt.args, func(k string) string { return tt.env[k] }, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run = %v, want an error mentioning %q", err, tt.want)
			}
			if strings.Contains(stderr.String(), `"msg":"listening"`) {
				t.Errorf("memoryd claimed to listen: %s", stderr.String())
			}
		})
	}
}
