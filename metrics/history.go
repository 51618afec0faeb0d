package metrics

import (
	"slices"
	"sync"
	"time"
)

// History keeps the recent figures of one tenant on this replica in a ring
// of fixed-width buckets, so that the panel can chart them without a
// Prometheus server.
type History struct {
	mu      sync.Mutex
	now     func() time.Time
	buckets [historyBuckets]bucket
	// totals since start, for the figures that need every write.
	bytes, created, conversations int64
}

// The ring: 288 buckets of five minutes, a day.
const (
	historyBuckets = 288
	// BucketWidth is the time one point of the history covers.
	BucketWidth = 5 * time.Minute
	// samplesPerBucket caps the recall samples a bucket keeps for its
	// percentiles; past it, later samples replace earlier ones in turn.
	samplesPerBucket = 512
)

type bucket struct {
	start                                   time.Time
	writes, recalls, deletes, denials, conv int
	latencies                               []float64 // milliseconds
	chars                                   []float64
	charsSum                                float64
	seen                                    int // recall samples offered
}

func newHistory(now func() time.Time) *History { return &History{now: now} }

// maxTenantHistories bounds the tenants whose history a replica keeps, so
// that many tenants cannot grow its memory without end.
const maxTenantHistories = 256

// histories keeps one History per tenant, for at most max tenants: past
// that, the tenant written to longest ago gives way to a new one.
type histories struct {
	mu       sync.Mutex
	now      func() time.Time
	max      int
	byTenant map[string]*History
	used     map[string]time.Time
}

func newHistories(now func() time.Time, most int) *histories {
	return &histories{now: now, max: most, byTenant: map[string]*History{}, used: map[string]time.Time{}}
}

// of returns the history tenant's events go to, making it when needed.
func (hs *histories) of(tenant string) *History {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.byTenant[tenant]
	if h == nil {
		if len(hs.byTenant) >= hs.max {
			oldest := ""
			for t, at := range hs.used {
				if oldest == "" || at.Before(hs.used[oldest]) {
					oldest = t
				}
			}
			delete(hs.byTenant, oldest)
			delete(hs.used, oldest)
		}
		h = newHistory(hs.now)
		hs.byTenant[tenant] = h
	}
	hs.used[tenant] = hs.now()
	return h
}

// read returns tenant's history, or an empty one when it has none.
func (hs *histories) read(tenant string) *History {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if h := hs.byTenant[tenant]; h != nil {
		return h
	}
	return newHistory(hs.now)
}

// at returns the bucket of the current time, resetting one left from a
// previous lap of the ring. Callers hold mu.
func (h *History) at() *bucket {
	start := h.now().Truncate(BucketWidth)
	b := &h.buckets[(start.Unix()/int64(BucketWidth/time.Second))%historyBuckets]
	if !b.start.Equal(start) {
		*b = bucket{start: start}
	}
	return b
}

func (h *History) recall(took time.Duration, chars int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.at()
	b.recalls++
	b.charsSum += float64(chars)
	ms := float64(took) / float64(time.Millisecond)
	if len(b.latencies) < samplesPerBucket {
		b.latencies = append(b.latencies, ms)
		b.chars = append(b.chars, float64(chars))
	} else {
		i := b.seen % samplesPerBucket
		b.latencies[i], b.chars[i] = ms, float64(chars)
	}
	b.seen++
}

func (h *History) write(bytes int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.at().writes++
	h.bytes += int64(bytes)
	h.created++
}

func (h *History) delete(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.at().deletes += n
}

func (h *History) deny() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.at().denials++
}

func (h *History) conversation() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.at().conv++
	h.conversations++
}

// Point is one bucket of the history.
type Point struct {
	Start                                            time.Time
	Writes, Recalls, Deletes, Denials, Conversations int
	// RecallP50 and RecallP95 are in milliseconds; ContextMean in
	// characters. All are 0 without recalls.
	RecallP50, RecallP95, ContextMean float64
}

// Points returns the buckets of the last window, oldest first, one per
// BucketWidth, empty ones included.
func (h *History) Points(window time.Duration) []Point {
	h.mu.Lock()
	defer h.mu.Unlock()
	end := h.now().Truncate(BucketWidth)
	n := min(int(window/BucketWidth), historyBuckets)
	out := make([]Point, 0, n)
	for i := n - 1; i >= 0; i-- {
		start := end.Add(-time.Duration(i) * BucketWidth)
		b := h.buckets[(start.Unix()/int64(BucketWidth/time.Second))%historyBuckets]
		p := Point{Start: start}
		if b.start.Equal(start) {
			p.Writes, p.Recalls, p.Deletes, p.Denials, p.Conversations = b.writes, b.recalls, b.deletes, b.denials, b.conv
			p.RecallP50, p.RecallP95 = percentile(b.latencies, .5), percentile(b.latencies, .95)
			if b.recalls > 0 {
				p.ContextMean = b.charsSum / float64(b.recalls)
			}
		}
		out = append(out, p)
	}
	return out
}

// Figures are the four figures of the service over a window.
type Figures struct {
	Window time.Duration
	// Recalls and Writes count the window's recalls and created memories.
	Recalls, Writes int
	// RecallP50 and RecallP95 are recall latencies in milliseconds.
	RecallP50, RecallP95 float64
	// WritesPerMinute is the write throughput over the window.
	WritesPerMinute float64
	// BytesPerMemory and BytesPer1000Conversations measure storage growth
	// since start: content and embedding bytes of the memories created.
	BytesPerMemory, BytesPer1000Conversations float64
	// ContextMean and ContextP95 are the characters handed over per recall.
	ContextMean, ContextP95 float64
}

// Figures computes the four figures over the last window (at most a day).
func (h *History) Figures(window time.Duration) Figures {
	h.mu.Lock()
	defer h.mu.Unlock()
	window = min(window, historyBuckets*BucketWidth)
	f := Figures{Window: window}
	from := h.now().Add(-window)
	var lat, chars []float64
	var charsSum float64
	for _, b := range h.buckets {
		if b.start.IsZero() || b.start.Add(BucketWidth).Before(from) {
			continue
		}
		f.Recalls += b.recalls
		f.Writes += b.writes
		charsSum += b.charsSum
		lat = append(lat, b.latencies...)
		chars = append(chars, b.chars...)
	}
	f.RecallP50, f.RecallP95 = percentile(lat, .5), percentile(lat, .95)
	f.ContextP95 = percentile(chars, .95)
	if f.Recalls > 0 {
		f.ContextMean = charsSum / float64(f.Recalls)
	}
	f.WritesPerMinute = float64(f.Writes) / window.Minutes()
	if h.created > 0 {
		f.BytesPerMemory = float64(h.bytes) / float64(h.created)
	}
	if h.conversations > 0 {
		f.BytesPer1000Conversations = float64(h.bytes) / float64(h.conversations) * 1000
	}
	return f
}

// percentile is the nearest-rank percentile of xs, 0 when xs is empty.
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}
