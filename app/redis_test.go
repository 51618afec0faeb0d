package app

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// silentServer accepts connections and never answers, as a Redis stopped
// with SIGSTOP behaves (the kernel still completes the handshake).
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

func TestRedisCallEndsAtItsDeadline(t *testing.T) {
	addr := silentServer(t)
	tests := []struct {
		name string
		cfg  RedisConfig
	}{
		{"server", RedisConfig{URL: "redis://" + addr}},
		{"cluster", RedisConfig{URL: "redis://", Cluster: addr}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, _, err := newRedis(tt.cfg, redisReadTimeout(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			if err := client.Ping(ctx).Err(); err == nil {
				t.Fatal("a server that never answers answered PING")
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("PING with a 300ms deadline took %s", took)
			}
		})
	}
}
