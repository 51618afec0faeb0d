package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// call is one request as the client saw it; status 0 is a transport error.
type call struct {
	kind       string
	status     int
	start, end time.Time
	detail     string
}

type recorder struct {
	mu    sync.Mutex
	calls []call
}

func newRecorder() *recorder { return &recorder{} }

func (r *recorder) add(c call) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

func (r *recorder) all() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}

// window is a fault from its start until its store answered again on every
// replica, plus the grace.
type window struct {
	fault     string
	start     time.Time
	returned  time.Time // the store (or replica) is back
	recovered time.Time // first success on every replica after returned; zero if never
	end       time.Time // recovered + grace, or the end of the run
	note      string
}

func (w window) recovery() time.Duration {
	if w.recovered.IsZero() {
		return -1
	}
	return w.recovered.Sub(w.returned)
}

type check struct {
	name   string
	ok     bool
	detail string
}

type report struct {
	cfg     config
	rec     *recorder
	faults  []window
	begin   time.Time
	elapsed time.Duration
	checks  []check
	facts   []string
	// failedIDs are the request ids of answers no fault explains (5xx but
	// 503); serverLog holds the replicas' log lines that name them.
	failedIDs []string
	serverLog []string
}

func (r *report) add(name string, ok bool, format string, a ...any) {
	r.checks = append(r.checks, check{name: name, ok: ok, detail: fmt.Sprintf(format, a...)})
}

func (r *report) failed() bool {
	for _, c := range r.checks {
		if !c.ok {
			return true
		}
	}
	return false
}

// inWindow tells whether a call overlaps a fault window.
func (r *report) inWindow(c call) bool {
	for _, w := range r.faults {
		if !c.end.Before(w.start) && !c.start.After(w.end) {
			return true
		}
	}
	return false
}

// kindCloseRetry is a session close sent again after one that got no
// answer: a 404 then says the lost attempt closed the session;
// kindGrantDeleteRetry is the same for a grant's delete.
const (
	kindCloseRetry       = "session.close.retry"
	kindGrantDeleteRetry = "grant.delete.retry"
)

// checkStatuses: no 5xx but 503, no transport error, and those only inside
// fault windows; no 4xx the run did not provoke.
func (r *report) checkStatuses() {
	calls := r.rec.all()
	var outside, bad5xx, bad4xx []string
	for _, c := range calls {
		switch {
		case c.status == 503 || c.status == 0:
			if !r.inWindow(c) {
				outside = append(outside, describe(c))
			}
		case c.status >= 500:
			bad5xx = append(bad5xx, describe(c))
			if m := requestIDRE.FindStringSubmatch(c.detail); m != nil {
				r.failedIDs = append(r.failedIDs, m[1])
			}
		case c.status == 404 && (c.kind == kindCloseRetry || c.kind == kindGrantDeleteRetry):
		case c.status >= 400:
			bad4xx = append(bad4xx, describe(c))
		}
	}
	r.add("503s and transport errors only inside fault windows", len(outside) == 0, "%d outside%s", len(outside), sample(outside))
	r.add("no 5xx but 503", len(bad5xx) == 0, "%d%s", len(bad5xx), sample(bad5xx))
	r.add("no unexpected 4xx", len(bad4xx) == 0, "%d%s", len(bad4xx), sample(bad4xx))
}

func (r *report) checkRecovery() {
	var missing []string
	for _, k := range r.cfg.faults {
		seen := false
		for _, w := range r.faults {
			seen = seen || w.fault == k
		}
		if !seen {
			missing = append(missing, k)
		}
	}
	r.add("every configured fault injected", len(missing) == 0, "%d windows; not injected: %v", len(r.faults), missing)
	for _, w := range r.faults {
		ok := !w.recovered.IsZero() && w.recovery() <= r.cfg.maxRecovery
		r.add("recovery after "+w.fault, ok, "%s (limit %s)%s", fmtRecovery(w), r.cfg.maxRecovery, w.note)
	}
}

func fmtRecovery(w window) string {
	if w.recovered.IsZero() {
		return "never recovered"
	}
	return w.recovery().Round(time.Millisecond).String()
}

func describe(c call) string {
	return fmt.Sprintf("%s %d at %s: %s", c.kind, c.status, c.start.UTC().Format("15:04:05.000"), tail(c.detail, 200))
}

func sample(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	n := min(len(xs), 5)
	return "; e.g. " + strings.Join(xs[:n], " | ")
}

func (r *report) print(w io.Writer) {
	calls := r.rec.all()
	fmt.Fprintf(w, "\n== Mneme chaos run: %s of load, %d workers, 3 replicas, faults %s\n", r.elapsed.Round(time.Second), r.cfg.workers, strings.Join(r.cfg.faults, ","))
	type agg struct {
		byStatus map[int]int
		lat      []time.Duration
	}
	kinds := map[string]*agg{}
	for _, c := range calls {
		a := kinds[c.kind]
		if a == nil {
			a = &agg{byStatus: map[int]int{}}
			kinds[c.kind] = a
		}
		a.byStatus[c.status]++
		if c.status >= 200 && c.status < 300 {
			a.lat = append(a.lat, c.end.Sub(c.start))
		}
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "\n%-16s %7s  %-34s %9s %9s %9s\n", "kind", "total", "by status (0 = transport error)", "P50", "P95", "P99")
	total := 0
	for _, k := range names {
		a := kinds[k]
		var st []int
		n := 0
		for s, c := range a.byStatus {
			st = append(st, s)
			n += c
		}
		total += n
		sort.Ints(st)
		var parts []string
		for _, s := range st {
			parts = append(parts, fmt.Sprintf("%d:%d", s, a.byStatus[s]))
		}
		sort.Slice(a.lat, func(i, j int) bool { return a.lat[i] < a.lat[j] })
		fmt.Fprintf(w, "%-16s %7d  %-34s %9s %9s %9s\n", k, n, strings.Join(parts, " "), pct(a.lat, 50), pct(a.lat, 95), pct(a.lat, 99))
	}
	fmt.Fprintf(w, "%-16s %7d\n", "all", total)
	fmt.Fprintf(w, "\nfaults (window = start .. recovery + %s grace):\n", r.cfg.grace)
	for _, f := range r.faults {
		fmt.Fprintf(w, "  %-14s start +%-6s back after %-7s recovery %-10s window %s%s\n", f.fault,
			f.start.Sub(r.begin).Round(time.Second),
			f.returned.Sub(f.start).Round(100*time.Millisecond), fmtRecovery(f),
			f.end.Sub(f.start).Round(100*time.Millisecond), f.note)
	}
	fmt.Fprintln(w)
	for _, f := range r.facts {
		fmt.Fprintln(w, "  "+f)
	}
	fmt.Fprintln(w, "\nchecks:")
	for _, c := range r.checks {
		mark := "PASS"
		if !c.ok {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s: %s\n", mark, c.name, c.detail)
	}
	if len(r.serverLog) > 0 {
		fmt.Fprintln(w, "\nthe replicas' log on those answers:")
		for _, l := range r.serverLog {
			fmt.Fprintln(w, "  "+l)
		}
	}
	if r.failed() {
		fmt.Fprintln(w, "\nRESULT: FAIL")
	} else {
		fmt.Fprintln(w, "\nRESULT: PASS")
	}
}

func pct(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "-"
	}
	i := (len(sorted)*p + 99) / 100
	i = min(max(i-1, 0), len(sorted)-1)
	d := sorted[i]
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Microsecond).String()
}

var requestIDRE = regexp.MustCompile(`"request_id":"([0-9a-f]+)"`)

// serverLines returns up to limit lines of the replicas' logs in dir that
// name one of ids, so that a report of an unexpected error carries the
// server's own account of it even when the work folder is gone.
func serverLines(dir string, ids []string, limit int) []string {
	if len(ids) == 0 {
		return nil
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "replica-*.log"))
	var out []string
	for _, p := range logs {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() && len(out) < limit {
			line := sc.Text()
			for _, id := range ids {
				if strings.Contains(line, id) {
					out = append(out, filepath.Base(p)+": "+tail(line, 1500))
					break
				}
			}
		}
		f.Close()
	}
	return out
}
