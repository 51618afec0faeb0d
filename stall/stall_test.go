package stall

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

const (
	testTimeout  = 60 * time.Millisecond
	testInterval = 5 * time.Millisecond
)

// store is a fake store whose pings behave as its mode says, switchable
// while the watcher runs.
type store struct {
	mu   sync.Mutex
	mode string // "answer", "refuse", "hang" (until released or ctx ends)
	// release ends every hanging ping, with an answer.
	release chan struct{}
}

func newStore(t *testing.T, mode string) *store {
	s := &store{mode: mode, release: make(chan struct{})}
	t.Cleanup(func() { s.set("answer") })
	return s
}

// set changes the mode; leaving "hang" releases the pings hanging.
func (s *store) set(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == "hang" && mode != "hang" {
		close(s.release)
		s.release = make(chan struct{})
	}
	s.mode = mode
}

func (s *store) ping(ctx context.Context) error {
	s.mu.Lock()
	mode, release := s.mode, s.release
	s.mu.Unlock()
	switch mode {
	case "refuse":
		return errors.New("connection refused")
	case "hang":
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// watch runs a watcher over stores until the test ends.
func watch(t *testing.T, stores ...Store) *Watcher {
	t.Helper()
	w, err := New(Options{Stores: stores, Timeout: testTimeout, Interval: testInterval, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// eventually waits up to a second for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 1s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func stalledStore(w *Watcher) string {
	var e *Error
	if errors.As(w.Err(), &e) {
		return e.Store
	}
	return ""
}

func TestWatcher(t *testing.T) {
	tests := []struct {
		name string
		// steps switch the stores' modes (neo4j, redis), then wait for
		// the stalled store to read want, and for it to stay so for
		// three timeouts.
		steps []struct{ neo4j, redis, want string }
	}{
		{"both answer", []struct{ neo4j, redis, want string }{{"answer", "answer", ""}}},
		{"a refusal is no stall", []struct{ neo4j, redis, want string }{{"refuse", "refuse", ""}}},
		{"a hang stalls until an answer", []struct{ neo4j, redis, want string }{
			{"answer", "hang", "redis"}, {"answer", "answer", ""},
		}},
		{"a ping failing at its deadline keeps the stall", []struct{ neo4j, redis, want string }{
			{"hang", "answer", "neo4j"},
		}},
		{"a fast refusal ends a stall", []struct{ neo4j, redis, want string }{
			{"hang", "answer", "neo4j"}, {"refuse", "answer", ""},
		}},
		{"the first stalled store is named", []struct{ neo4j, redis, want string }{
			{"hang", "hang", "neo4j"}, {"answer", "hang", "redis"}, {"answer", "answer", ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			neo, red := newStore(t, "answer"), newStore(t, "answer")
			w := watch(t, Store{Name: "neo4j", Ping: neo.ping}, Store{Name: "redis", Ping: red.ping})
			for _, s := range tt.steps {
				neo.set(s.neo4j)
				red.set(s.redis)
				eventually(t, "stalled store "+s.want, func() bool { return stalledStore(w) == s.want })
				// Pings at their deadline (2×timeout) and new pings
				// after it change nothing.
				for end := time.Now().Add(3 * testTimeout); time.Now().Before(end); time.Sleep(time.Millisecond) {
					if got := stalledStore(w); got != s.want {
						t.Fatalf("stalled store = %q, want it to stay %q", got, s.want)
					}
				}
			}
		})
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	ping := func(context.Context) error { return nil }
	tests := []struct {
		name string
		opts Options
	}{
		{"no store", Options{Timeout: time.Second}},
		{"a store without a name", Options{Stores: []Store{{Ping: ping}}, Timeout: time.Second}},
		{"a store without a ping", Options{Stores: []Store{{Name: "redis"}}, Timeout: time.Second}},
		{"no timeout", Options{Stores: []Store{{Name: "redis", Ping: ping}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.opts); err == nil {
				t.Error("New accepted it")
			}
		})
	}
}

func TestGuard(t *testing.T) {
	tests := []struct {
		name string
		// stallFirst stalls the store before the request arrives.
		stallFirst bool
		// answerFirst makes the handler write its header before the
		// stall, which then cannot be refused.
		answerFirst bool
		wantStatus  int
		wantBody    string
		wantHeader  string // the X-Handler header of next's answer
		wantCause   bool   // next's context ends with the stall as cause
	}{
		{name: "no stall: next answers", wantStatus: http.StatusOK, wantBody: "done", wantHeader: "next"},
		{name: "a stall under way: refused at once", wantStatus: http.StatusServiceUnavailable, wantBody: "refused: redis", wantCause: true},
		{name: "a stall after the answer began: next finishes", answerFirst: true, wantStatus: http.StatusAccepted, wantBody: "partly done", wantHeader: "next", wantCause: true},
		{name: "during a stall: next decides", stallFirst: true, wantStatus: http.StatusTeapot, wantBody: "next saw redis stalled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			red := newStore(t, "answer")
			w := watch(t, Store{Name: "redis", Ping: red.ping})
			if tt.stallFirst {
				red.set("hang")
				eventually(t, "a stall", func() bool { return w.Err() != nil })
			}
			started := make(chan struct{})
			causes := make(chan error, 1)
			next := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if err := w.Err(); err != nil {
					rw.WriteHeader(http.StatusTeapot)
					_, _ = io.WriteString(rw, "next saw "+stalledStore(w)+" stalled")
					return
				}
				rw.Header().Set("X-Handler", "next")
				if tt.answerFirst {
					rw.WriteHeader(http.StatusAccepted)
					_, _ = io.WriteString(rw, "partly ")
				}
				close(started)
				if tt.wantStatus == http.StatusOK {
					_, _ = io.WriteString(rw, "done")
					return
				}
				<-r.Context().Done() // a store call that waits for its context
				causes <- context.Cause(r.Context())
				_, _ = io.WriteString(rw, "done")
			})
			refuse := func(rw http.ResponseWriter, r *http.Request, err error) {
				var e *Error
				if !errors.As(err, &e) {
					t.Errorf("refuse got %v, want an *Error", err)
				}
				rw.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(rw, "refused: "+e.Store)
			}
			h := w.Guard(next, refuse)
			rec := httptest.NewRecorder()
			served := make(chan struct{})
			go func() { h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/x", nil)); close(served) }()
			if !tt.stallFirst {
				<-started
				if tt.wantStatus != http.StatusOK {
					red.set("hang")
				}
			}
			select {
			case <-served:
			case <-time.After(time.Second):
				t.Fatal("the guarded request was not answered within 1s")
			}
			if rec.Code != tt.wantStatus || rec.Body.String() != tt.wantBody || rec.Header().Get("X-Handler") != tt.wantHeader {
				t.Errorf("answer = %d %q (X-Handler %q), want %d %q (%q)", rec.Code, rec.Body, rec.Header().Get("X-Handler"), tt.wantStatus, tt.wantBody, tt.wantHeader)
			}
			if tt.wantCause {
				// next may still run after a refusal: wait for its cause.
				select {
				case cause := <-causes:
					if e := (*Error)(nil); !errors.As(cause, &e) {
						t.Errorf("next's context ended with %v, want the stall", cause)
					}
				case <-time.After(time.Second):
					t.Error("next's context did not end within 1s of the stall")
				}
			}
		})
	}
}

// busy is a store whose other callers get answers while its pings wait,
// as a store busy with a burst of requests answers them: one answer
// whenever asked, until silence.
type busy struct {
	mu     sync.Mutex
	silent time.Time // when it stopped answering; zero while it answers
}

func (b *busy) silence() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.silent = time.Now()
}

func (b *busy) answered() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.silent.IsZero() {
		return time.Now()
	}
	return b.silent
}

// A store that leaves its pings waiting while it answers its other callers
// is slow, not stalled; once it answers nothing, it is stalled.
func TestSlowStoreThatAnswersIsNotStalled(t *testing.T) {
	neo := newStore(t, "hang")
	load := &busy{}
	w := watch(t, Store{Name: "neo4j", Ping: neo.ping, Answered: load.answered})
	// Pings time out and fail at their deadline, one after another, while
	// requests are answered.
	for end := time.Now().Add(6 * testTimeout); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if err := w.Err(); err != nil {
			t.Fatalf("a store that answers its requests is stalled: %v", err)
		}
	}
	load.silence()
	eventually(t, "the silent store stalled", func() bool { return stalledStore(w) == "neo4j" })
}
