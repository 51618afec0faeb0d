package memory

import (
	"context"
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
	f := newFixture(t, RecallConfig{})
	store := &fakeSessions{open: map[string]Session{}, claimed: map[string]bool{}}
	f.svc.sessions = store
	return f, store
}

// TestRecallHidesAnUnreadableSession: recall shows an open session's turns
// only to a caller policy lets read the session.
func TestRecallHidesAnUnreadableSession(t *testing.T) {
	f, store := sessionFixture(t, nil)
	f.authz.scope = aliceScope
	ctx := context.Background()
	store.open["s-1"] = Session{ID: "s-1", Tenant: "acme", UserID: "alice", AgentID: "support-bot", Owner: agentSupport,
		Turns: []Turn{{Role: RoleUser, Content: "hi"}}}
	res, err := f.svc.Recall(ctx, agentSupport, RecallRequest{UserID: "alice", SessionID: "s-1", Query: "hi"})
	if err != nil || res.Session == nil {
		t.Fatalf("recall with read permission: session %+v, %v", res.Session, err)
	}
	f.authz.decide = denyAll
	res, err = f.svc.Recall(ctx, agentSupport, RecallRequest{UserID: "alice", SessionID: "s-1", Query: "hi"})
	if err != nil || res.Session != nil {
		t.Errorf("recall without read permission shows the session: %+v, %v", res.Session, err)
	}
}
