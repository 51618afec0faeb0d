package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// faults injects the configured faults in turn and measures each one's
// window: from the fault until every replica answers a recall again.
type faults struct {
	base     context.Context // the whole run's: a fault outlives the load, not an interrupt
	cl       *cluster
	cfg      config
	adminKey string
	logf     func(string, ...any)
	mu       sync.Mutex
	done     []window
	victim   int
}

func newFaults(base context.Context, cl *cluster, cfg config, adminKey string, logf func(string, ...any)) *faults {
	return &faults{base: base, cl: cl, cfg: cfg, adminKey: adminKey, logf: logf}
}

func (f *faults) windows() []window {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]window(nil), f.done...)
}

// run injects faults until ctx ends: every configured kind once, then more
// while at least half an interval of the load's -duration is left. It
// closes covered when every kind has run once.
func (f *faults) run(ctx context.Context, begin time.Time, covered chan<- struct{}) {
	if len(f.cfg.faults) == 0 {
		close(covered)
		<-ctx.Done()
		return
	}
	next := begin.Add(f.cfg.firstFault)
	for i := 0; ; i++ {
		if i == len(f.cfg.faults) {
			close(covered)
		}
		if i >= len(f.cfg.faults) && time.Until(begin.Add(f.cfg.duration)) < f.cfg.faultEvery/2 {
			<-ctx.Done()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		kind := f.cfg.faults[i%len(f.cfg.faults)]
		w := f.inject(kind)
		f.mu.Lock()
		f.done = append(f.done, w)
		f.mu.Unlock()
		f.logf("fault %s: back after %s, recovered %s after that", kind, w.returned.Sub(w.start).Round(100*time.Millisecond), fmtRecovery(w))
		next = next.Add(f.cfg.faultEvery)
		if time.Until(next) < 0 {
			next = time.Now()
		}
	}
}

// inject runs one fault to its end; it is not cut short by the load's end,
// so that every store is back before the checks.
func (f *faults) inject(kind string) window {
	ctx, cancel := context.WithTimeout(f.base, 4*time.Minute)
	defer cancel()
	w := window{fault: kind, start: time.Now()}
	f.logf("fault %s starts", kind)
	var err error
	probe := f.cl.replicas
	switch kind {
	case "kill-replica":
		r := f.cl.replicas[f.victim%len(f.cl.replicas)]
		f.victim++
		w.note = fmt.Sprintf(" (replica %d)", r.index)
		r.kill()
		time.Sleep(2 * time.Second)
		err = f.cl.startReplica(ctx, r, false)
		probe = []*replica{r}
	case "restart-neo4j":
		if err = f.cl.stopNeo4j(ctx); err == nil {
			err = f.cl.startNeo4j(ctx)
		}
	case "restart-redis":
		if err = f.cl.stopRedis(ctx); err == nil {
			err = f.cl.startRedis(ctx)
		}
	case "pause-redis":
		var pid int
		if pid, err = f.cl.redisPID(); err == nil {
			syscall.Kill(pid, syscall.SIGSTOP)
			time.Sleep(f.cfg.pause)
			err = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	w.returned = time.Now()
	if err != nil {
		w.note += " error: " + err.Error()
		f.logf("fault %s: %v", kind, err)
	}
	w.recovered = f.awaitRecovery(ctx, probe)
	if w.recovered.IsZero() {
		w.end = time.Now().Add(f.cfg.grace)
	} else {
		w.end = w.recovered.Add(f.cfg.grace)
	}
	// Keep the window open through the grace before the next fault starts.
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(w.end)):
	}
	return w
}

// awaitRecovery probes each replica directly with a recall, which needs
// Neo4j and Redis, until every one has answered 200 once; it returns when
// the last one did.
func (f *faults) awaitRecovery(ctx context.Context, rs []*replica) time.Time {
	body := []byte(`{"user_id":"alice","query":"budget"}`)
	ok := make([]bool, len(rs))
	var last time.Time
	client := &http.Client{Timeout: 30 * time.Second}
	for {
		all := true
		for i, r := range rs {
			if ok[i] {
				continue
			}
			req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+r.addr+"/v1/recall", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+f.adminKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok[i], last = true, time.Now()
					continue
				}
			}
			all = false
		}
		if all {
			return last
		}
		select {
		case <-ctx.Done():
			return time.Time{}
		case <-time.After(100 * time.Millisecond):
		}
	}
}
