package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
)

// shutdownTimeout bounds the HTTP server's graceful shutdown: requests in
// flight get this long to finish before their connections are closed.
const shutdownTimeout = 10 * time.Second

// worker is one long-running part of the App.
type worker struct {
	name string
	run  func(ctx context.Context) error
}

// workers lists what Run runs besides the HTTP server. Each returns once
// its context ends, after finishing its in-flight work within its own
// bound (queue batches: PoolOptions.Drain; recorder and decision log: their
// write timeouts; janitor: its sweep is cancelled and the lock released).
func (a *App) workers() []worker {
	ws := []worker{
		{"decision log", func(ctx context.Context) error { a.Decisions.Run(ctx); return nil }},
		{"policy listener", a.listenPolicy},
		{"recall recorder", a.Recorder.Run},
		{"key last-used", a.Identity.RunTouches},
	}
	if a.tool {
		return ws
	}
	if a.Stalls != nil {
		ws = append(ws, worker{"stall watcher", a.Stalls.Run})
	}
	ws = append(ws, worker{"session expiry", a.SessionExpiry.Run}, worker{"tallies", a.reconcileAtStart})
	if a.janitorRunner != nil {
		ws = append(ws, worker{"janitor", a.janitorRunner.Run})
	}
	if a.cfg.Queue.Workers {
		ws = append(ws, worker{"queue workers", a.QueueWorkers.Run})
	}
	return ws
}

// Run listens on the configured address and runs the HTTP server and every
// worker (queue workers if configured, session expiry, janitor, recall
// recorder, decision log, policy listener) in one group until ctx ends or
// one of them fails; then all stop and Run returns the first error (nil
// after a clean shutdown). The server shuts down first, gracefully, and the
// workers after it, so the requests it finishes can still record recalls
// and decisions. Run runs once per App.
func (a *App) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", a.cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", a.cfg.Server.Addr, err)
	}
	a.log.InfoContext(ctx, "listening", "addr", ln.Addr().String())
	return a.run(ctx, ln)
}

// RunWorkers is Run without the HTTP server, for tests and tools that
// serve the Handler themselves or not at all.
func (a *App) RunWorkers(ctx context.Context) error {
	return a.run(ctx, nil)
}

// StartWorkers runs RunWorkers in a goroutine that the caller owns through
// stop: stop ends the workers, waits for them and returns RunWorkers'
// error. Tools and test harnesses use it around their own calls.
func (a *App) StartWorkers(ctx context.Context) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.RunWorkers(ctx) }()
	var err error
	stopped := false
	return func() error {
		if !stopped {
			cancel()
			err, stopped = <-done, true
		}
		return err
	}
}

func (a *App) run(ctx context.Context, ln net.Listener) error {
	g, gctx := errgroup.WithContext(ctx)
	// The workers' context ends only once the server has shut down (or
	// there is none), so that requests in flight still find them running.
	wctx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWorkers()
	served := make(chan struct{})
	if ln == nil {
		close(served)
	} else {
		g.Go(func() error {
			defer close(served)
			return a.serve(gctx, ln)
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		<-served
		stopWorkers()
		return nil
	})
	for _, w := range a.workers() {
		g.Go(func() error {
			err := w.run(wctx)
			switch {
			case err != nil:
				return fmt.Errorf("%s: %w", w.name, err)
			case wctx.Err() == nil:
				// A worker that quits on its own leaves a part of the
				// service undone: stop everything rather than limp on.
				return fmt.Errorf("%s stopped before shutdown", w.name)
			}
			return nil
		})
	}
	return g.Wait()
}

// serve runs the HTTP server on ln until ctx ends, then shuts it down
// gracefully within shutdownTimeout.
func (a *App) serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           a.Handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// Requests carry ctx's values but not its end: shutdown lets
		// them finish instead of cancelling them.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("http server shutdown: %w", err)
	}
	return nil
}
