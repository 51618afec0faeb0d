package stall

import (
	"context"
	"net/http"
	"sync"
)

// Guard returns next, but a request under way when a stall begins is
// answered at once by refuse, given the stall's *Error, unless next has
// begun its answer already; either way the request's context is cancelled
// with the stall as its cause (context.Cause), so that its work stops as
// soon as the stores let it. A request that arrives during a stall goes to
// next as it is: next refuses it, with Err, in its own words (and counts
// and logs it as it does every answer).
//
// next serves each request on a goroutine of its own, as
// http.TimeoutHandler does; once a request is refused, what next writes
// for it is dropped. Its header goes out when it writes one (or its first
// byte, or flushes), so streamed answers stream.
func (w *Watcher) Guard(next http.Handler, refuse func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		begins := w.next()
		select {
		case <-begins:
			next.ServeHTTP(rw, r)
			return
		default:
		}
		ctx, cancel := context.WithCancelCause(r.Context())
		defer cancel(nil)
		gw := &guarded{w: rw, header: make(http.Header)}
		done := make(chan struct{})
		panicked := make(chan any, 1)
		go func() {
			defer close(done)
			defer func() {
				if p := recover(); p != nil {
					panicked <- p
				}
			}()
			next.ServeHTTP(gw, r.WithContext(ctx))
		}()
		select {
		case <-done:
			select {
			case p := <-panicked:
				panic(p)
			default:
			}
			return
		case <-begins:
		}
		err := w.Err()
		if err == nil { // the stall ended as it began: still, it began
			err = &Error{Store: "a store"}
		}
		cancel(err)
		if !gw.refuse() {
			// The answer is under way: let next finish it, which the
			// cancelled context hastens.
			<-done
			return
		}
		refuse(rw, r, err)
	})
}

// guarded is the ResponseWriter next writes to: its header stays its own
// until next answers, so that a refusal can still take the real writer.
type guarded struct {
	w      http.ResponseWriter
	header http.Header

	mu       sync.Mutex
	answered bool // next wrote its header through
	refused  bool // the guard answered instead; next's writes are dropped
}

func (g *guarded) Header() http.Header { return g.header }

func (g *guarded) WriteHeader(status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writeHeaderLocked(status)
}

func (g *guarded) writeHeaderLocked(status int) {
	if g.answered || g.refused {
		return
	}
	g.answered = true
	h := g.w.Header()
	for k, v := range g.header {
		h[k] = v
	}
	g.w.WriteHeader(status)
}

func (g *guarded) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refused {
		return 0, http.ErrHandlerTimeout
	}
	g.writeHeaderLocked(http.StatusOK)
	return g.w.Write(b)
}

// Flush sends the header and what was written so far.
func (g *guarded) Flush() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refused {
		return
	}
	g.writeHeaderLocked(http.StatusOK)
	if f, ok := g.w.(http.Flusher); ok {
		f.Flush()
	}
}

// refuse takes the real writer for a refusal, unless next answered first.
func (g *guarded) refuse() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.answered {
		return false
	}
	g.refused = true
	return true
}
