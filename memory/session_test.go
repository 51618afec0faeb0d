package memory

import (
	"context"
	"strings"
	"testing"
	"time"
)

// fakeSessions is an in-memory SessionStore.
type fakeSessions struct {
	open     map[string]Session
	claimed  map[string]bool
	finished []string
}

func (f *fakeSessions) Append(_ context.Context, s Session, turns []Turn, _ time.Duration, now time.Time) (Session, error) {
	cur, ok := f.open[s.ID]
	if !ok {
		cur = s
		cur.CreatedAt = now
	} else if cur.UserID != s.UserID {
		return Session{}, ErrForbidden
	}
	cur.Turns = append(cur.Turns, turns...)
	cur.UpdatedAt = now
	f.open[s.ID] = cur
	return cur, nil
}

func (f *fakeSessions) Get(_ context.Context, tenant, id string) (Session, error) {
	s, ok := f.open[id]
	if !ok || s.Tenant != tenant {
		return Session{}, ErrNotFound
	}
	return s, nil
}

func (f *fakeSessions) Claim(ctx context.Context, tenant, id string, _ time.Time) (Session, error) {
	if f.claimed[id] {
		return Session{}, ErrNotFound
	}
	s, err := f.Get(ctx, tenant, id)
	if err == nil {
		f.claimed[id] = true
	}
	return s, err
}

func (f *fakeSessions) Finish(_ context.Context, _, id string) error {
	delete(f.open, id)
	f.finished = append(f.finished, id)
	return nil
}

func sessionFixture(t *testing.T, found []NewMemory) (*fixture, *fakeSessions) {
	t.Helper()
	f := ingestFixture(t, &fakeExtractor{found: found})
	store := &fakeSessions{open: map[string]Session{}, claimed: map[string]bool{}}
	f.svc.sessions = store
	return f, store
}

func TestCloseSessionWritesFindingsAndARecord(t *testing.T) {
	found := []NewMemory{
		{Type: TypeSemantic, Kind: "budget", Key: "budget", Content: "Budget 150,000: 预算15万",
			Entities: []Entity{{ID: "SO-1004", Kind: "order", Name: "SO-1004"}}},
		{Type: TypeProfile, Kind: "preference", Key: "contact_channel", Content: "I prefer email"},
	}
	f, store := sessionFixture(t, found)
	ctx := context.Background()
	if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-1", AppendRequest{UserID: "alice", Turns: []Turn{
		{Role: RoleUser, Content: "预算15万"}, {Role: RoleUser, Content: "I prefer email"},
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.CloseSession(ctx, agentSupport, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 3 || res.Reason != "" || len(store.finished) != 1 {
		t.Fatalf("close = %+v, finished %v", res, store.finished)
	}
	rec := res.Memories[2]
	if rec.Type != TypeEpisodic || rec.Kind != KindSession || rec.SessionID != "s-1" || rec.AgentID != "support-bot" ||
		!strings.Contains(rec.Content, "about budget, contact channel") || !strings.Contains(rec.Content, "SO-1004") ||
		strings.Contains(rec.Content, "150") {
		t.Errorf("record = %+v", rec)
	}
	for i, m := range res.Memories {
		if m.UserID != "alice" || m.SessionID != "s-1" || !strings.HasPrefix(m.IdempotencyKey, "session:s-1:") {
			t.Errorf("memory %d = user %q session %q idem %q", i, m.UserID, m.SessionID, m.IdempotencyKey)
		}
	}
	if _, err := f.svc.CloseSession(ctx, agentSupport, "s-1"); err != ErrNotFound {
		t.Errorf("closing again: err = %v, want ErrNotFound", err)
	}
}

func TestSessionPolicy(t *testing.T) {
	f, _ := sessionFixture(t, nil)
	ctx := context.Background()
	req := AppendRequest{UserID: "alice", Turns: []Turn{{Role: RoleUser, Content: "hi"}}}
	if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-1", req); err != nil {
		t.Fatal(err)
	}
	f.authz.decide = denyAll
	if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-2", req); err != ErrForbidden {
		t.Errorf("denied append: err = %v", err)
	}
	if _, err := f.svc.GetSession(ctx, agentBilling, "s-1"); err != ErrNotFound {
		t.Errorf("denied read: err = %v, want ErrNotFound", err)
	}
	res, err := f.svc.Recall(ctx, agentSupport, RecallRequest{UserID: "alice", SessionID: "s-1", Query: "hi"})
	if err != nil || res.Session != nil {
		t.Errorf("recall without read permission shows the session: %+v, %v", res.Session, err)
	}
}

func TestAppendTurnsValidates(t *testing.T) {
	f, _ := sessionFixture(t, nil)
	turn := Turn{Role: RoleUser, Content: "hi"}
	tests := []struct {
		name, id string
		req      AppendRequest
		field    string
	}{
		{"bad id", "a b", AppendRequest{UserID: "alice", Turns: []Turn{turn}}, "session_id"},
		{"no user", "s", AppendRequest{Turns: []Turn{turn}}, "user_id"},
		{"no turns", "s", AppendRequest{UserID: "alice"}, "turns"},
		{"ttl too long", "s", AppendRequest{UserID: "alice", Turns: []Turn{turn}, TTLSeconds: int(MaxSessionTTL/time.Second) + 1}, "ttl_seconds"},
		{"bad turn", "s", AppendRequest{UserID: "alice", Turns: []Turn{turn, {Role: RoleUser}}}, "turns[1].content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.AppendTurns(context.Background(), agentSupport, tt.id, tt.req)
			if got := fieldOf(t, err); got != tt.field {
				t.Errorf("field = %q, want %q", got, tt.field)
			}
		})
	}
}
