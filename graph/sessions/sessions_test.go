package sessions

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/graph/graphtest"
	"mneme/memory"
	"mneme/sessionowners"
)

// The first claim of a session id makes its owner, for good; a later claim
// by anyone returns that owner, and so does a read.
func TestClaimKeepsTheFirstOwner(t *testing.T) {
	g := graphtest.Store(t)
	s := New(g.Runner())
	ctx := t.Context()
	tenant := fmt.Sprintf("t-sess-%d", time.Now().UnixNano())
	alice := sessionowners.Owner{UserID: "alice", AgentID: "support-bot"}
	if _, found, err := s.SessionOwner(ctx, tenant, "s1"); err != nil || found {
		t.Fatalf("owner of an unknown id: found %v, %v", found, err)
	}
	// Concurrent first claims: one wins, and every claim answers with it.
	var wg sync.WaitGroup
	got := make([]sessionowners.Owner, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := alice
			if i%2 == 1 {
				w = sessionowners.Owner{UserID: fmt.Sprintf("bob%d", i), AgentID: "order-bot"}
			}
			o, err := s.ClaimSession(context.Background(), tenant, "s0", w)
			if err != nil {
				t.Errorf("claim %d: %v", i, err)
			}
			got[i] = o
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i] != got[0] {
			t.Errorf("claims answered %v: want one owner", got)
			break
		}
	}

	if o, err := s.ClaimSession(ctx, tenant, "s1", alice); err != nil || o != alice {
		t.Fatalf("first claim = %+v, %v; want alice", o, err)
	}
	bob := sessionowners.Owner{UserID: "bob", AgentID: "order-bot"}
	if o, err := s.ClaimSession(ctx, tenant, "s1", bob); err != nil || o != alice {
		t.Errorf("second claim = %+v, %v; want alice still", o, err)
	}
	o, found, err := s.SessionOwner(ctx, tenant, "s1")
	if err != nil || !found || o != alice {
		t.Errorf("owner = %+v %v %v; want alice", o, found, err)
	}
}

// A Session node written before owners were recorded belongs to the user
// and author of its first memory.
func TestUnrecordedSessionBelongsToItsFirstMemory(t *testing.T) {
	g := graphtest.Store(t)
	s := New(g.Runner())
	ctx := t.Context()
	tenant := fmt.Sprintf("t-sess-old-%d", time.Now().UnixNano())
	at := time.Now().UTC().Add(-time.Hour)
	mem := func(user, agent string, created time.Time) memory.Memory {
		return memory.Memory{
			ID: memory.NewID("mem"), Tenant: tenant, UserID: user, AgentID: agent, SessionID: "old",
			Type: memory.TypeEpisodic, Kind: "note", Content: "said by " + user, Status: memory.StatusActive,
			Sensitivity: memory.SensitivityInternal, Importance: 0.5, Confidence: 1,
			ValidFrom: created, CreatedAt: created, UpdatedAt: created, Version: 1,
		}
	}
	if _, err := g.CreateMemories(ctx, []memory.Memory{mem("carol", "support-bot", at), mem("dave", "order-bot", at.Add(time.Minute))}); err != nil {
		t.Fatal(err)
	}
	want := sessionowners.Owner{UserID: "carol", AgentID: "support-bot"}
	o, found, err := s.SessionOwner(ctx, tenant, "old")
	if err != nil || !found || o != want {
		t.Errorf("owner = %+v %v %v; want carol's", o, found, err)
	}
	o, err = s.ClaimSession(ctx, tenant, "old", sessionowners.Owner{UserID: "dave", AgentID: "order-bot"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("claim (-want +got):\n%s", diff)
	}
}
