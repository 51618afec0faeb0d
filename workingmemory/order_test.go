package workingmemory

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"mneme/memory"
	"mneme/userids"
)

func TestCheckTurnOrder(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	at := func(ds ...time.Duration) []memory.Turn {
		out := make([]memory.Turn, len(ds))
		for i, d := range ds {
			out[i] = memory.Turn{Role: memory.RoleUser, Content: "x", At: t0.Add(d)}
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		turns []memory.Turn
		last  time.Time
		index int // of the refused turn; -1: none
		after time.Time
	}{
		{"in order", at(0, time.Minute, 2*time.Minute), time.Time{}, -1, time.Time{}},
		{"same time", at(0, 0, 0), time.Time{}, -1, time.Time{}},
		{"back within the skew", at(10*time.Minute, 5*time.Minute), time.Time{}, -1, time.Time{}},
		{"back past the skew", at(10*time.Minute, 5*time.Minute-time.Nanosecond), time.Time{}, 1, t0.Add(10 * time.Minute)},
		{"an hour back", at(0, -time.Hour), time.Time{}, 1, t0},
		{"back after a jump", at(0, time.Hour, 6*time.Minute), time.Time{}, 2, t0.Add(time.Hour)},
		{"after the session's latest", at(time.Minute), t0, -1, time.Time{}},
		{"before the session's latest", at(-6 * time.Minute), t0, 0, t0},
		{"1970", []memory.Turn{{Role: memory.RoleUser, Content: "x", At: time.Unix(0, 0)}}, t0, 0, t0},
		{"none", nil, t0, -1, time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTurnOrder(tt.turns, tt.last)
			var order *TurnOrderError
			switch {
			case tt.index < 0 && err != nil:
				t.Errorf("CheckTurnOrder = %v, want nil", err)
			case tt.index >= 0 && (!errors.As(err, &order) || order.Index != tt.index || !order.Last.Equal(tt.after) || !order.At.Equal(tt.turns[tt.index].At)):
				t.Errorf("CheckTurnOrder = %#v, want turns[%d] refused after %v", err, tt.index, tt.after)
			}
		})
	}
}

// The record of a conversation spans its earliest to its latest turn, on
// one date or across two, whatever order the turns came in.
func TestSessionRecordSpan(t *testing.T) {
	day := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		at   []time.Duration
		want string
	}{
		{"one day", []time.Duration{10 * time.Hour, 10*time.Hour + 30*time.Minute}, "Conversation on 2026-12-07 10:00–10:30 UTC"},
		{"a late turn within the skew", []time.Duration{10 * time.Hour, 10*time.Hour + 3*time.Minute, 10*time.Hour + time.Minute}, "Conversation on 2026-12-07 10:00–10:03 UTC"},
		{"over midnight", []time.Duration{23*time.Hour + 50*time.Minute, 24*time.Hour + 10*time.Minute}, "Conversation from 2026-12-07 23:50 to 2026-12-08 00:10 UTC"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sess := memory.Session{ID: "s1"}
			for _, d := range tt.at {
				sess.Turns = append(sess.Turns, memory.Turn{Role: memory.RoleUser, Content: "x", At: day.Add(d)})
			}
			if rec := sessionRecord(sess, []memory.NewMemory{{Kind: "budget", Key: "budget"}}); !strings.HasPrefix(rec.Content, tt.want+" (session s1, ") {
				t.Errorf("record %q, want it to begin %q", rec.Content, tt.want)
			}
		})
	}
}

// Turns out of order within one append are refused before they reach the
// store.
func TestAppendTurnsInOrder(t *testing.T) {
	f := newFixture(t, nil)
	now := time.Now().UTC()
	req := memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "budget 10k", At: now.Add(-time.Minute)},
		{Role: memory.RoleUser, Content: "correction: 90k", At: now.Add(-time.Hour)},
	}}
	var order *TurnOrderError
	if _, err := f.svc.AppendTurns(context.Background(), agentSupport, "s-ord", req); !errors.As(err, &order) || order.Index != 1 {
		t.Errorf("append = %v, want turns[1] refused", err)
	}
	if len(f.sessions.open) != 0 {
		t.Errorf("a refused append opened a session")
	}
}

// users is a UserIDs that knows the ids in known and nothing else.
type users struct{ known []string }

func (u users) CheckUserID(_ context.Context, _, id string) error {
	for _, k := range u.known {
		if k != id && userids.Fold(k) == userids.Fold(id) {
			return &userids.CaseConflictError{ID: id, Existing: k}
		}
	}
	return nil
}

// A conversation about an id that differs only by case from a known
// user's is refused, whether appended, ingested now or queued; one in a
// session open about another user is refused as taken.
func TestConversationsFiledAsAsked(t *testing.T) {
	turns := []memory.Turn{{Role: memory.RoleUser, Content: "remember the dock closes at 5"}}
	calls := []struct {
		name string
		call func(f *fixture, user, session string) error
	}{
		{"append", func(f *fixture, user, session string) error {
			_, err := f.svc.AppendTurns(context.Background(), agentSupport, session, memory.AppendRequest{UserID: user, Turns: turns})
			return err
		}},
		{"ingest", func(f *fixture, user, session string) error {
			_, err := f.svc.Ingest(context.Background(), agentSupport, memory.IngestRequest{UserID: user, SessionID: session, Turns: turns}, "")
			return err
		}},
		{"ingest queued", func(f *fixture, user, session string) error {
			_, err := f.svc.IngestAsync(context.Background(), agentSupport, memory.IngestRequest{UserID: user, SessionID: session, Turns: turns}, "")
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, budget)
			f.svc.users = users{known: []string{"carol", "bob"}}
			f.sessions.open["bobs"] = memory.Session{ID: "bobs", Tenant: "acme", UserID: "bob", AgentID: "support-bot", Owner: agentSupport}
			var conflict *userids.CaseConflictError
			if err := c.call(f, "Carol", "s-carol"); !errors.As(err, &conflict) || conflict.Existing != "carol" {
				t.Errorf("about Carol: %v, want a case conflict with carol", err)
			}
			if c.name != "append" {
				if err := c.call(f, "alice", "bobs"); !errors.Is(err, memory.ErrSessionTaken) {
					t.Errorf("alice in bob's session: %v, want ErrSessionTaken", err)
				}
				if err := c.call(f, "bob", "bobs"); err != nil {
					t.Errorf("bob in his session: %v", err)
				}
			}
			if err := c.call(f, "carol", "s-carol"); err != nil {
				t.Errorf("about carol: %v", err)
			}
			if len(f.created.got)+len(f.queue.jobs)+len(f.sessions.open["s-carol"].Turns) == 0 {
				t.Error("nothing was written, queued or appended for carol")
			}
		})
	}
}
