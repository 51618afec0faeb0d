package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// timings are how long each source of a page took, sent back in a
// Server-Timing header so that a slow page names its slow part (browsers'
// developer tools show it; the panel benchmark reports it).
type timings struct {
	mu    sync.Mutex
	names []string
	took  map[string]time.Duration
}

type timingsKey struct{}

// withTimings gives a request somewhere to record its timings.
func withTimings(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), timingsKey{}, &timings{took: map[string]time.Duration{}}))
}

// timed runs f and records how long it took under name. Sources gathered
// at the same time may record at once.
func timed[T any](ctx context.Context, name string, f func() (T, error)) (T, error) {
	t0 := time.Now()
	v, err := f()
	record(ctx, name, time.Since(t0))
	return v, err
}

func record(ctx context.Context, name string, d time.Duration) {
	t, _ := ctx.Value(timingsKey{}).(*timings)
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.took[name]; !ok {
		t.names = append(t.names, name)
	}
	t.took[name] += d
}

// serverTiming is the header's value: "name;dur=ms" per source, in the
// order they were first recorded.
func serverTiming(ctx context.Context) string {
	t, _ := ctx.Value(timingsKey{}).(*timings)
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	parts := make([]string, 0, len(t.names))
	for _, n := range t.names {
		parts = append(parts, fmt.Sprintf("%s;dur=%.1f", n, float64(t.took[n].Microseconds())/1000))
	}
	return strings.Join(parts, ", ")
}
