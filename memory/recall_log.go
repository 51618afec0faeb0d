package memory

import (
	"context"
	"time"
	"unicode/utf8"
)

// RecallRecorder takes note of answered recalls off the request path: it
// counts the accesses of the recalled memories and appends to the recall
// log. Record must return at once; the work happens later or not at all
// (a full queue drops, and says so in its own log).
type RecallRecorder interface {
	Record(r RecallRecord)
}

// RecallLogReader reads the recall log, newest first.
type RecallLogReader interface {
	RecentRecalls(ctx context.Context, tenant, userID string, limit int) ([]RecallRecord, error)
}

// RecallRecord is one answered recall: who asked about which user, what,
// and what came back. It keeps no memory content: the context block handed
// over is rebuilt from the memories (ContextBlock), which a delete erases
// from the one place they live, and ContextChars says how long it was.
type RecallRecord struct {
	At           time.Time        `json:"at"`
	Tenant       string           `json:"tenant"`
	UserID       string           `json:"user_id"`
	Caller       Principal        `json:"caller"`
	Query        string           `json:"query"`
	Memories     []RecalledMemory `json:"memories"`
	ContextChars int              `json:"context_chars,omitempty"`
	Truncated    bool             `json:"truncated,omitempty"`
}

// RecalledMemory is one memory of a recall log entry, with its score's
// parts (for the first maxExplained memories of a recall).
type RecalledMemory struct {
	ID      string   `json:"id"`
	Score   float64  `json:"score"`
	Explain *Explain `json:"explain,omitempty"`
}

// maxExplained and maxExplainList bound what one recall adds to the log.
const (
	maxExplained   = 20
	maxExplainList = 8
)

// maxLoggedQuery caps the question kept in the recall log.
const maxLoggedQuery = 200

// record hands an answered recall to the recorder, unless it was quiet.
func (s *Service) record(ctx context.Context, p Principal, r RecallRequest, res RecallResult, now time.Time) {
	if len(res.Memories) == 0 || r.Quiet {
		return
	}
	q := r.Query
	if utf8.RuneCountInString(q) > maxLoggedQuery {
		q = string([]rune(q)[:maxLoggedQuery])
	}
	rec := RecallRecord{
		At: now, Tenant: p.Tenant, UserID: r.UserID, Query: q,
		Caller:       Principal{Tenant: p.Tenant, Kind: p.Kind, ID: p.ID},
		Memories:     make([]RecalledMemory, len(res.Memories)),
		ContextChars: utf8.RuneCountInString(res.Context), Truncated: res.Truncated,
	}
	for i, m := range res.Memories {
		rec.Memories[i] = RecalledMemory{ID: m.Memory.ID, Score: m.Score}
		if i < maxExplained {
			e := m.Explain
			e.GraphPath, e.Intent = e.GraphPath[:min(len(e.GraphPath), maxExplainList)], e.Intent[:min(len(e.Intent), maxExplainList)]
			rec.Memories[i].Explain = &e
		}
	}
	s.recorder.Record(rec)
}
